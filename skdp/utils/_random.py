"""Random state handling.

All randomness in skdp comes from a :class:`numpy.random.Generator` built
here. ``None`` draws fresh entropy from the operating system, which is what a
real release needs; an integer seed makes runs reproducible for tests and
benchmarks but lets anyone who knows the seed subtract the noise. ``"secure"``
draws from a cryptographically secure generator (ChaCha20, keyed from the
operating system), for releases where an attacker might reconstruct the state
of NumPy's default generator from what it released.
"""

import numbers
import os

import numpy as np

__all__ = ["check_random_state", "child_random_state", "secure_generator",
           "spawn_random_states"]


def secure_generator():
    """A Generator over ChaCha20 (20 rounds) with a fresh 256-bit key from the OS.

    ChaCha20 is a cryptographic stream cipher: its output cannot be predicted
    from earlier output, unlike NumPy's default PCG64. It comes from the optional
    ``randomgen`` package (``pip install "skdp[secure]"``); drawing Gaussian noise
    with it takes about 1.5 to 3 times as long as with PCG64 (a small share of a
    fit). Not reproducible: every call gets a new key.

    Returns
    -------
    rng : numpy.random.Generator
    """
    try:
        from randomgen import ChaCha
    except ImportError as error:
        raise ImportError(
            'random_state="secure" needs the optional randomgen package: '
            'pip install "skdp[secure]" (or pip install randomgen)') from error
    key = int.from_bytes(os.urandom(32), "little")
    return np.random.Generator(ChaCha(key=key, counter=0, rounds=20))


def _is_secure(rng):
    return type(rng.bit_generator).__name__ == "ChaCha" and \
        type(rng.bit_generator).__module__.startswith("randomgen")


def check_random_state(random_state):
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    random_state : None, "secure", int, numpy.random.Generator or numpy.random.RandomState
        ``None`` uses fresh OS entropy (safe for releases). ``"secure"`` uses a
        cryptographically secure generator (:func:`secure_generator`). An int seeds a new
        generator (reproducible, unsafe for releases). A ``Generator`` is used
        as is. A legacy ``RandomState`` (as scikit-learn's checks pass) seeds a
        new generator from 128 bits it draws.

    Returns
    -------
    rng : numpy.random.Generator
        The generator to draw all noise from.
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, str) and random_state == "secure":
        return secure_generator()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be non-negative, got {random_state}.")
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**32, size=4, dtype=np.uint64))
    raise TypeError(
        "random_state must be None, 'secure', an int, a numpy Generator or RandomState, "
        f"got {random_state!r}."
    )


def spawn_random_states(rng, n):
    """Derive ``n`` independent generators from ``rng`` (for parallel jobs).

    Parameters
    ----------
    rng : numpy.random.Generator
        The parent generator.
    n : int
        How many children to make.

    Returns
    -------
    children : list of numpy.random.Generator
        Statistically independent generators; reproducible when ``rng`` is.
        The children of a secure generator are secure generators with keys of
        their own.
    """
    if _is_secure(rng):
        return [secure_generator() for _ in range(n)]
    try:
        return rng.spawn(n)
    except TypeError:
        # A bit generator built without a SeedSequence (e.g. over a legacy RandomState's)
        # cannot spawn: seed each child with 128 bits drawn from the parent instead.
        return [np.random.default_rng(seed)
                for seed in rng.integers(0, 2**32, size=(n, 4), dtype=np.uint64)]


def child_random_state(random_state):
    """An independent child of a Generator or RandomState, of the same type.

    ``clone`` gives each clone of an estimator one (see
    :meth:`skdp.base.DPEstimatorMixin.__sklearn_clone__`): a deep copy would
    make every clone draw the same noise. Deterministic given the parent's
    seed and the number of children taken before, so runs stay reproducible.

    Parameters
    ----------
    random_state : numpy.random.Generator or numpy.random.RandomState

    Returns
    -------
    child : numpy.random.Generator or numpy.random.RandomState
    """
    if isinstance(random_state, np.random.RandomState):
        # 128 bits drawn from the parent's stream seed the child.
        return np.random.RandomState(random_state.randint(0, 2**32, size=4, dtype=np.uint32))
    return spawn_random_states(random_state, 1)[0]
