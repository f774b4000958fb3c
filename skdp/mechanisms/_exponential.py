"""The exponential mechanism and report-noisy-max."""

import numpy as np

from skdp.utils._random import check_random_state
from skdp.utils._validation import check_real

__all__ = ["exponential_mechanism", "report_noisy_max"]


def _check_scores(scores):
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError("scores must be a non-empty 1-D array.")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite.")
    return scores


def check_noise_scale(scale):
    """Refuse a noise scale that is not a positive normal float (from public parameters only).

    A scale that rounds to 0 or to a subnormal (``epsilon = 1e300`` with a
    tiny sensitivity) makes the noise vanish or take a handful of values: the
    output is then (nearly) deterministic, which no finite epsilon covers. An
    infinite scale (``epsilon = 1e-300`` with a huge sensitivity) gives NaN.
    """
    if not np.finfo(float).tiny <= scale < np.inf:
        raise ValueError(
            f"the noise scale sensitivity / epsilon (times the mechanism's constant) is "
            f"{scale!r}, outside the positive normal floats: epsilon is too large or too "
            "small for this sensitivity to be represented.")
    return scale


def _shifted(scores):
    # The selection depends only on differences of scores. Subtracting the largest first
    # keeps the noise from being rounded to the spacing of large scores (at 2^53 it is 2:
    # ties, resolved to the first index, skewed the distribution); the differences of
    # nearby scores are exact in floating point (Sterbenz).
    return scores - scores.max()


def exponential_mechanism(utilities, *, epsilon, sensitivity=1.0, monotonic=False,
                          random_state=None):
    """Pick an index with probability proportional to ``exp(epsilon u / (2 Delta))``.

    McSherry and Talwar (2007). The draw uses the Gumbel-max trick, which
    samples exactly from that distribution. For utilities that are monotone
    in the data (all move in the same direction between neighbours) the
    factor 2 can be dropped (``monotonic=True``).

    Parameters
    ----------
    utilities : array-like of shape (n_candidates,)
        Utility of each candidate; higher is better.
    epsilon : float
        > 0.
    sensitivity : float, default=1.0
        Largest change of any utility between neighbouring datasets, > 0.
    monotonic : bool, default=False
        Whether the utilities are monotone.
    random_state : int, numpy.random.Generator or None, default=None
        Noise source.

    Returns
    -------
    index : int
        The selected candidate.

    Raises
    ------
    ValueError
        If the noise scale ``2 sensitivity / epsilon`` (``sensitivity /
        epsilon`` for monotone utilities) is 0, subnormal or infinite.

    Notes
    -----
    **Privacy.** ``epsilon``-DP (McSherry and Talwar 2007, Thm. 6).
    """
    utilities = _check_scores(utilities)
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False)
    rng = check_random_state(random_state)
    factor = exponential_mechanism_factor(epsilon, sensitivity, monotonic)
    return int(np.argmax(factor * _shifted(utilities) + rng.gumbel(size=utilities.shape)))


def exponential_mechanism_factor(epsilon, sensitivity=1.0, monotonic=False):
    """``epsilon / (2 Delta)`` (``epsilon / Delta`` if monotonic), checked for floats.

    Its inverse is the scale of the Gumbel noise on the utilities: a factor of
    ``inf`` made the tied best utilities NaN (``inf * 0``), always won by the
    first of them; 0 made NaN of a difference that overflowed to ``-inf``
    (``0 * -inf``), always won by that candidate. Callers that charge a budget
    call this before the charge (it reads parameters only).

    Raises
    ------
    ValueError
        If the noise scale is 0, subnormal or infinite.
    """
    factor = epsilon / (sensitivity if monotonic else 2.0 * sensitivity)
    check_noise_scale(1.0 / factor if factor > 0.0 else np.inf)
    return factor


def report_noisy_max(scores, *, epsilon, sensitivity=1.0, random_state=None):
    """Return the index of the largest score after adding ``Lap(2 Delta / epsilon)`` to each.

    Dwork and Roth (2014), Claim 3.9 (which needs only ``Lap(Delta/epsilon)``
    for monotone counting queries; the factor 2 here covers scores that can
    move in opposite directions, such as Frank-Wolfe's vertex scores).

    Parameters
    ----------
    scores : array-like of shape (n_candidates,)
        Score of each candidate; higher is better.
    epsilon : float
        > 0.
    sensitivity : float, default=1.0
        Largest change of any single score between neighbours, > 0.
    random_state : int, numpy.random.Generator or None, default=None
        Noise source.

    Returns
    -------
    index : int
        The selected candidate.

    Raises
    ------
    ValueError
        If the noise scale ``2 sensitivity / epsilon`` is 0, subnormal or
        infinite.

    Notes
    -----
    **Privacy.** ``epsilon``-DP: only the index is released, never the noisy
    scores.
    """
    scores = _check_scores(scores)
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False)
    check_noise_scale(2.0 * sensitivity / epsilon)
    rng = check_random_state(random_state)
    return int(np.argmax(_shifted(scores)
                         + rng.laplace(0.0, 2.0 * sensitivity / epsilon, size=scores.shape)))
