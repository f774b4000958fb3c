"""Exact discrete Laplace and discrete Gaussian noise (safe against floating-point attacks).

Mironov (CCS 2012, "On significance of the least significant bits for
differential privacy") showed that a Laplace sampler working in IEEE doubles
outputs sets of values around ``f(D)`` and around ``f(D')`` that differ, so the
exact output can tell the two data sets apart: the real epsilon is infinite.
The mechanisms here follow Canonne, Kamath and Steinke ("The Discrete
Gaussian for Differential Privacy", NeurIPS 2020, arXiv:2004.00010; "CKS"
below): the noise is an integer drawn *exactly* from its distribution, with
Python integers and :class:`fractions.Fraction` only, from uniform integers
given by a :class:`numpy.random.Generator`, and the released value lies on a
public grid ``g * Z``. No decision depends on a rounded floating-point number,
so the privacy analysis of the ideal distribution holds for the code as run.

The samplers are CKS Algorithm 1 (Bernoulli(exp(-gamma)) for rational gamma),
Algorithm 2 (discrete Laplace) and Algorithm 3 (discrete Gaussian by rejection
from the discrete Laplace).
"""

import math
import numbers
from fractions import Fraction

import numpy as np

from skdp.accounting._composition import zcdp_for_dp
from skdp.mechanisms._base import _AdditiveNoiseMechanism
from skdp.utils._random import check_random_state
from skdp.utils._validation import check_epsilon_delta, check_real

__all__ = [
    "DiscreteGaussianMechanism",
    "DiscreteLaplaceMechanism",
    "discrete_gaussian_sigma2",
    "discrete_laplace_scale",
    "sample_bernoulli_exp",
    "sample_discrete_gaussian",
    "sample_discrete_laplace",
]

# Grid indices (round(value / granularity), or the value itself for integer queries)
# are clamped to [-2**52, 2**52] before the noise, and the noisy indices of a float
# release to [-2**53, 2**53] after it: both stay exact integers in int64 and in doubles.
_MAX_GRID_INDEX = 2**52
_MAX_NOISY_INDEX = 2**53
# Noise draws at or beyond this magnitude are refused (OverflowError): below it, a
# grid index (|index| <= 2**52) plus the noise stays an exact int64.
_INT64_LIMIT = 2**63 - _MAX_GRID_INDEX
# Relative margin taken off the zCDP budget computed in floating point (zcdp_for_dp
# already checks its CKS rho with a rounded-up delta; this also covers its
# conversion="bun-steinke" closed form, accurate to a few units of round-off).
_RHO_MARGIN = Fraction(1) - Fraction(1, 2**40)
# The Laplace t and the Gaussian sigma^2 are rounded up to this many significant
# bits (keeps the sampler's integers small, on its int64 path; costs at most a
# relative 2**-23 of extra noise).
_SCALE_BITS = 24
# Powers of two accepted as a granularity (see _check_granularity).
_GRANULARITY_RANGE = (Fraction(1, 2**900), Fraction(2**900))


# --------------------------------------------------------------------------------------
# Exact uniform integers from a numpy Generator
# --------------------------------------------------------------------------------------

class _UniformIntegers:
    """Exact uniform integers below any bound, from 64-bit words of ``rng.integers``.

    ``below(n)`` takes the top ``k = bit_length(n - 1)`` bits of fresh words
    (as many words as ``k`` needs) and rejects values ``>= n``: every value in
    ``{0, ..., n - 1}`` has probability exactly ``1 / n`` (given uniform words).
    Words are drawn in blocks, because one ``rng.integers`` call costs far more
    than the Python arithmetic that consumes a word.
    """

    def __init__(self, rng, n_words=1024):
        self._rng = rng
        self._n_words = int(min(max(n_words, 16), 1 << 16))
        self._words = []
        self._pos = 0

    def _word(self):
        if self._pos == len(self._words):
            self._words = self._rng.integers(0, 1 << 64, size=self._n_words,
                                             dtype=np.uint64).tolist()
            self._pos = 0
        word = self._words[self._pos]
        self._pos += 1
        return word

    def below(self, n):
        n_bits = (n - 1).bit_length()
        if n_bits == 0:
            return 0
        while True:
            value, have = 0, 0
            while have < n_bits:
                value = (value << 64) | self._word()
                have += 64
            value >>= have - n_bits
            if value < n:
                return value


# --------------------------------------------------------------------------------------
# The samplers (CKS Sec. 5), integer arithmetic only
# --------------------------------------------------------------------------------------

def _bernoulli_exp_at_most_one(src, num, den):
    # CKS Algorithm 1 (von Neumann), gamma = num / den in [0, 1]: K = 1; while a
    # Bernoulli(gamma / K) draw is 1, K += 1; return 1 iff K is odd.
    # Bernoulli(num / (den K)) is "a uniform integer below den K is below num".
    k = 1
    while src.below(den * k) < num:
        k += 1
    return k & 1


def _bernoulli_exp(src, num, den):
    # CKS Sec. 5 (the remark after Algorithm 1), for gamma = num / den > 1: exp(-gamma)
    # is the product of floor(gamma) independent Bernoulli(exp(-1)) draws and one
    # Bernoulli(exp(-(gamma - floor(gamma)))) draw; stop at the first 0.
    whole, num = divmod(num, den)
    for _ in range(whole):
        if not _bernoulli_exp_at_most_one(src, 1, 1):
            return 0
    return _bernoulli_exp_at_most_one(src, num, den)


def _discrete_laplace(src, s, t):
    # CKS Algorithm 2: P[Z = z] proportional to exp(-|z| s / t), s, t >= 1 integers.
    while True:
        u = src.below(t)
        if not _bernoulli_exp(src, u, t):  # keeps U with weight exp(-U / t)
            continue
        v = 0  # V ~ Geometric(1 - exp(-1))
        while _bernoulli_exp_at_most_one(src, 1, 1):
            v += 1
        y = (u + t * v) // s  # U + t V ~ Geometric(1 - exp(-1/t)); Y ~ Geometric(1 - exp(-s/t))
        if src.below(2):  # negative sign; -0 is rejected so that 0 is not counted twice
            if y == 0:
                continue
            return -y
        return y


def _discrete_gaussian(src, p, q):
    # CKS Algorithm 3, sigma^2 = p / q: t = floor(sigma) + 1; draw Y from the discrete
    # Laplace of scale t and keep it with probability exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))
    # = exp(-(|Y| q t - p)^2 / (2 p q t^2)), all integers.
    t = math.isqrt(p // q) + 1  # floor(sqrt(p / q)) = isqrt(floor(p / q))
    den = 2 * p * q * t * t
    while True:
        y = _discrete_laplace(src, 1, t)
        if _bernoulli_exp(src, (abs(y) * q * t - p) ** 2, den):
            return y


# --------------------------------------------------------------------------------------
# The same algorithms on numpy arrays, for any parameters of practical size
# --------------------------------------------------------------------------------------
# Each step is the scalar algorithm's step applied to all pending candidates at once.
# Uniform integers come from rng.integers with a scalar bound (exact: numpy rejects
# out-of-range words), and each Bernoulli test has exactly the probability the scalar
# algorithm gives it:
#
# * Bernoulli(num / (den K)) with num <= den (the von Neumann steps of Algorithm 1) is
#   "a uniform integer below den K is below num", and a uniform integer below den K is
#   J den + R with J uniform below K and R uniform below den, independent; it is below
#   num <= den iff J = 0 and R < num. So it is [J == 0] and [R < num]: no product den K
#   is formed and nothing overflows, whatever K reaches.
# * The discrete Gaussian's acceptance Bernoulli(exp(-gamma)), gamma = (|Y| q t - p)^2 /
#   (2 p q t^2), has integers far beyond int64. It is decided on a float64 estimate with
#   a rigorous error bound (see _gaussian_accept_vec): the tests "U < r" that decide it
#   compare the first 53 bits of U with bounds on r; only when those bits cannot decide
#   (probability about 2**-48 per test, below 2**-38 in the far tails) is the test
#   finished with Python integers, on more bits of the same U. P(U < r) = r either way:
#   the result is exact.
#
# The vectorized path is taken for Laplace numerators t <= 2**62 (s < 2**63) and for
# 2**-60 <= sigma^2 < 2**124 (sigma < 2**62; a larger sigma overflows int64 anyway);
# other parameters use the Python-integer path above, with the same distribution.

_VEC_MAX_T = 2**62
_VEC_SIGMA2_LOG2 = (-60, 124)
_VEC_MIN_COUNT = 64  # below this, the per-call cost of numpy exceeds the Python path's
_VEC_BATCH = 1 << 16  # candidates per pass (keeps the working arrays in cache)
_INT64_MAX = 2**63 - 1
_TWO53 = float(2**53)
# Factor on the rigorous bound of the float estimate's error (>= 1 keeps every result
# exact; the tests raise it to force the exact Python-integer completion).
_ERROR_BOUND_FACTOR = 1.0


def _uniform_below(rng, n, size):
    """``size`` uniform integers below ``n`` (``1 <= n < 2**63``), as int64.

    numpy draws bounds below ``2**32`` on a slower 32-bit path; a uniform ``X``
    below ``n 2**j`` gives ``X >> j`` uniform below ``n`` (each value has
    ``2**j`` preimages), so small bounds are scaled up to 33 bits first.
    """
    shift = max(33 - n.bit_length(), 0)
    return rng.integers(0, n << shift, size=size) >> shift


def _bernoulli_inverse_vec(rng, k, size):
    """Bernoulli(1 / k) for ``size`` draws (``k >= 1`` a Python int)."""
    if k == 1:
        return np.ones(size, dtype=bool)
    return _uniform_below(rng, k, size) == 0


# 20!/k! for k = 20, 19, ..., 1 (ascending): see _bernoulli_exp_minus_one_vec.
_FACTORIAL_BITS = math.factorial(20)
_FACTORIAL_THRESHOLDS = np.array([_FACTORIAL_BITS // math.factorial(k) for k in range(20, 0, -1)],
                                 dtype=np.int64)


def _bernoulli_exp_minus_one_vec(rng, size):
    """Algorithm 1 with gamma = 1: K = 1; while Bernoulli(1 / K), K += 1; K odd.

    The steps are Bernoulli(1 / 1), ..., so ``K >= k + 1`` has probability
    ``1 / k!``. With one uniform ``X`` below ``20!``, the nested events
    ``X < 20! / k!`` (k = 1, ..., 20) have exactly these probabilities, so
    ``K = 1 + #{k <= 20 : X < 20! / k!}`` has Algorithm 1's law up to 21;
    from there (``X = 0``, probability ``1 / 20!``) the steps go on one by one.
    """
    x = rng.integers(0, _FACTORIAL_BITS, size=size)
    k = 1 + _FACTORIAL_THRESHOLDS.size - np.searchsorted(_FACTORIAL_THRESHOLDS, x, side="right")
    out = (k & 1).astype(bool)
    running = np.flatnonzero(k > _FACTORIAL_THRESHOLDS.size)
    k = _FACTORIAL_THRESHOLDS.size + 1
    while running.size:
        hit = _bernoulli_inverse_vec(rng, k, running.size)
        out[running[~hit]] = k & 1
        running = running[hit]
        k += 1
    return out


def _bernoulli_exp_integer_vec(rng, n):
    """Bernoulli(exp(-n)) for an int64 array ``n >= 0``: ``n`` Bernoulli(exp(-1)) draws,
    stopping at the first 0 (CKS Sec. 5, the remark after Algorithm 1)."""
    out = np.ones(n.size, dtype=bool)
    pending = np.flatnonzero(n > 0)
    j = 0
    while pending.size:
        out[pending] = _bernoulli_exp_minus_one_vec(rng, pending.size)
        j += 1
        pending = pending[out[pending] & (n[pending] > j)]
    return out


def _bernoulli_exp_ratio_vec(rng, num, den):
    """Algorithm 1 for gamma = num / den <= 1 (``num`` an int64 array, ``den`` an int)."""
    out = np.empty(num.size, dtype=bool)
    running = np.arange(num.size)
    k = 1
    while running.size:
        # Bernoulli(num / (den k)): "a uniform integer below den k is below num", drawn
        # directly while den k fits in int64, else as [J == 0] and [R < num] (see above).
        if den * k <= _INT64_MAX:
            hit = _uniform_below(rng, den * k, running.size) < num[running]
        else:
            hit = _bernoulli_inverse_vec(rng, k, running.size)
            out[running[~hit]] = k & 1
            running = running[hit]
            hit = _uniform_below(rng, den, running.size) < num[running]
        out[running[~hit]] = k & 1
        running = running[hit]
        k += 1
    return out


def _geometric_exp_minus_one_vec(rng, size):
    """V: the number of Bernoulli(exp(-1)) ones before the first zero (Algorithm 2)."""
    v = np.zeros(size, dtype=np.int64)
    running = np.arange(size)
    while running.size:
        running = running[_bernoulli_exp_minus_one_vec(rng, running.size)]
        v[running] += 1
    return v


def _laplace_candidates_vec(rng, s, t, m):
    """Algorithm 2 on ``m`` uniform candidates: the accepted draws, in order.

    Returns ``(z, over)``: ``z`` an int64 array of the draws and ``over`` a dict
    ``{position: draw}`` of the draws with ``|draw| >= _INT64_LIMIT`` (Python
    integers; ``z`` holds 0 there), which the caller refuses or tests exactly.
    """
    u = _uniform_below(rng, t, m)
    u = u[_bernoulli_exp_ratio_vec(rng, u, t)]  # keeps U with weight exp(-U / t)
    v = _geometric_exp_minus_one_vec(rng, u.size)
    negative = _uniform_below(rng, 2, u.size).astype(bool)
    # (U + t V) // s in int64 where U + t V fits (V <= (2**63 - 1 - U) // t); the rest
    # (V >= 2 with t near 2**62, or a huge V) in Python integers.
    fits = v <= (_INT64_MAX - u) // t
    y = np.zeros(u.size, dtype=np.int64)
    y[fits] = (u[fits] + t * v[fits]) // s
    over = {}
    for i in np.flatnonzero(~fits | (y >= _INT64_LIMIT)).tolist():
        value = (int(u[i]) + t * int(v[i])) // s
        if value < _INT64_LIMIT:
            y[i] = value
        else:
            y[i] = 0
            over[i] = -value if negative[i] else value
    # A fair sign; -0 is rejected so that 0 is not counted twice (as in the scalar code).
    keep = ~(negative & (y == 0))
    z = np.where(negative, -y, y)
    if over:
        keep[list(over)] = True
        positions = np.cumsum(keep) - 1
        over = {int(positions[i]): value for i, value in over.items()}
    return z[keep], over


def _gaussian_float_constants(p, q, t):
    """``mu = p / (q t)`` and ``c = q / (2 p)`` as correctly rounded doubles.

    (Python's ``int / int`` is correctly rounded for any size of integers.)
    """
    return p / (q * t), q / (2 * p)


def _finish_comparison(src, scaled, w, den):
    """Whether ``U < r* = scaled / den``, given the first 53 bits ``w`` of ``U``.

    ``U = (w + U') 2**-53`` with ``U'`` uniform in ``[0, 1)``: ``U < r*`` iff
    ``U' < X / den`` with ``X = scaled 2**53 - w den``, which is certain for
    ``X >= den``, impossible for ``X <= 0``, and otherwise has probability
    ``X / den``: "a uniform integer below ``den`` is below ``X``".
    """
    x = scaled * 2**53 - w * den
    return x >= den or (x > 0 and src.below(den) < x)


def _gaussian_estimate(y, p, q, t):
    """``(g, err, n)``: the float64 estimate ``g`` of ``gamma``, its error bound ``err``
    and the integer ``n <= gamma`` (a float), as derived in :func:`_gaussian_accept_vec`."""
    mu, c = _gaussian_float_constants(p, q, t)
    a = np.abs(y).astype(np.float64)
    d = a - mu
    g = d * d * c
    s = a + mu
    err = (_ERROR_BOUND_FACTOR * 2.0**-49) * (g + c * s * (np.abs(d) + 2.0**-52 * s))
    n = np.minimum(np.floor(np.maximum(g - err, 0.0)), 2.0**62)
    return g, err, n


def _gaussian_accept_vec(rng, y, p, q, t, src):
    """Algorithm 3's test for int64 candidates ``y``: Bernoulli(exp(-gamma)) with
    ``gamma = (|y| q t - p)^2 / (2 p q t^2) = c (|y| - mu)^2``, ``mu = p / (q t)``,
    ``c = q / (2 p)``, for ``2**-60 <= p / q < 2**124`` and ``|y| < 2**63``.

    Exactness. Let u = 2**-53. In that parameter range every double below is zero or
    normal (mu >= 2**-60, c <= 2**59, |d| is 0 or >= 2**-113, ...), so each operation
    is exact up to a factor (1 + e), |e| <= u. With a = |y|, af = fl(a), mf = fl(mu),
    cf = fl(c), d = fl(af - mf), g = fl(fl(d d) cf) and S = af + mf:
      |d - (a - mu)| <= u (a + mu) (2 + u) <= 2.01 u S =: A,
      |g - c d^2| <= 3.01 u c d^2 <= 3.02 u g,
      c |d^2 - (a - mu)^2| <= c A (2 |d| + A) <= 4.03 u cf S (|d| + 1.005 u S),
    so |g - gamma| <= 2**-50 (g + cf S (|d| + 2**-52 S)) =: E. The computed ``err`` is
    2**-49 times that bracket (its own rounding costs less than a factor 1 - 8u): err >=
    1.9 E, and err >= 16 u g. Hence (each rounding below moves by at most u times a
    value <= g + err, which the margin err - E >= 0.47 err covers):
    * n = min(floor(fl(max(g - err, 0))), 2**62) is an integer with 0 <= n <= gamma;
    * for g < 2**52, r = g - n is exact (a double minus an integer below it, with
      ulp(g) <= 1), and the true remainder r* = gamma - n lies in [r - E, r + E];
      fl(r - err) <= r* <= fl(r + err), and fl(r + err) <= 1 implies r* <= 1.
    exp(-gamma) = exp(-1)^n exp(-r*) for any integer 0 <= n <= gamma: n Bernoulli(
    exp(-1)) draws (stopping at the first 0), then Algorithm 1 for r* <= 1, whose
    steps Bernoulli(r* / K) are [J == 0 for J uniform below K] and [U < r*] for a
    uniform U in [0, 1). With w the first 53 bits of U (U in [w, w + 1) 2**-53):
    w + 1 <= fl(r - err) 2**53 proves U < r*, and w >= fl(r + err) 2**53 proves
    U >= r*. Otherwise U = (w + U') 2**-53 with U' uniform and independent of w, and
    U < r* iff U' < X / D for the integers X = (gamma - n) D 2**53 - w D and
    D = 2 p q t^2: decided exactly by _finish_comparison.
    Entries whose remainder bound exceeds 1 (or g >= 2**52) take the Python-integer
    Bernoulli(exp(-(gamma - n))). No rounding decides a draw: each test has exactly its
    probability, and the bound only chooses which exact method finishes it.
    """
    den = 2 * p * q * t * t
    g, err, n = _gaussian_estimate(y, p, q, t)
    n_int = n.astype(np.int64)

    def exact_gamma_minus_n(i):  # (gamma - n) D, a Python integer >= 0
        return (int(abs(y[i])) * q * t - p) ** 2 - int(n_int[i]) * den

    accept = _bernoulli_exp_integer_vec(rng, n_int)
    # exp(-r*): Algorithm 1 on the lazy comparisons where r* <= 1 is proven.
    r = g - n
    fast = accept & (g < 2.0**52) & (r + err <= 1.0)
    for i in np.flatnonzero(accept & ~fast).tolist():
        accept[i] = _bernoulli_exp(src, exact_gamma_minus_n(i), den)
    lower = (r - err) * _TWO53
    upper = (r + err) * _TWO53
    running = np.flatnonzero(fast)
    k = 1
    while running.size:
        if k > 1:  # Bernoulli(r* / k) = [J == 0] and [U < r*]
            hit = _bernoulli_inverse_vec(rng, k, running.size)
            accept[running[~hit]] = k & 1
            running = running[hit]
        w = rng.integers(0, 2**53, size=running.size)
        wf = w.astype(np.float64)  # exact (w < 2**53)
        below = wf + 1.0 <= lower[running]
        for i in np.flatnonzero(~below & (wf < upper[running])).tolist():
            below[i] = _finish_comparison(src, exact_gamma_minus_n(running[i]), int(w[i]), den)
        accept[running[~below]] = k & 1
        running = running[below]
        k += 1
    return accept


def _discrete_laplace_vec(rng, s, t, count):
    """Algorithm 2 for ``count`` draws at once (``t <= 2**62``, ``s < 2**63``)."""
    out, have = [], 0
    while have < count:
        # About 0.63 of the uniform candidates are kept (fewer for tiny scales, -0).
        m = min(_VEC_BATCH, int(1.7 * (count - have)) + 16)
        z, over = _laplace_candidates_vec(rng, s, t, m)
        z = z[:count - have]  # the first draws of an i.i.d. stream are i.i.d.
        if any(i < z.size for i in over):
            raise OverflowError("a noise draw does not fit in int64; the noise scale is "
                                "too large.")
        out.append(z)
        have += z.size
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def _discrete_gaussian_vec(rng, p, q, count):
    """Algorithm 3 for ``count`` draws at once (``2**-60 <= p / q < 2**124``)."""
    t = math.isqrt(p // q) + 1
    den = 2 * p * q * t * t
    src = _UniformIntegers(rng, n_words=16)  # the exact completions (rare)
    out, have = [], 0
    while have < count:
        # 0.63 Laplace candidates per uniform, accepted with probability above 1/2.
        m = min(_VEC_BATCH, int(2.6 * (count - have)) + 16)
        y, over = _laplace_candidates_vec(rng, 1, t, m)
        keep = _gaussian_accept_vec(rng, y, p, q, t, src)
        for i, value in over.items():  # |Y| >= _INT64_LIMIT: the exact test
            keep[i] = _bernoulli_exp(src, (abs(value) * q * t - p) ** 2, den)
        rank = np.cumsum(keep) - 1
        if any(keep[i] and rank[i] < count - have for i in over):
            raise OverflowError("a noise draw does not fit in int64; the noise scale is "
                                "too large.")
        z = y[keep][:count - have]
        out.append(z)
        have += z.size
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def _laplace_draws(s, t, count, rng):
    if count >= _VEC_MIN_COUNT and t <= _VEC_MAX_T and s <= _INT64_MAX:
        return _discrete_laplace_vec(rng, s, t, count)
    return _scalar_draws(_discrete_laplace, (s, t), count, rng)


def _gaussian_draws(p, q, count, rng):
    low, high = _VEC_SIGMA2_LOG2
    if count >= _VEC_MIN_COUNT and p << -low >= q and p < q << high:
        return _discrete_gaussian_vec(rng, p, q, count)
    return _scalar_draws(_discrete_gaussian, (p, q), count, rng)


def _scalar_draws(sampler, args, count, rng):
    """``count`` draws with Python integers (any parameter size), as int64."""
    src = _UniformIntegers(rng, n_words=16 * count)
    values = [sampler(src, *args) for _ in range(count)]
    if any(abs(v) >= _INT64_LIMIT for v in values):
        raise OverflowError("a noise draw does not fit in int64; the noise scale is too large.")
    return np.array(values, dtype=np.int64)


# --------------------------------------------------------------------------------------
# Public samplers
# --------------------------------------------------------------------------------------

def _check_rational(value, name, *, positive):
    """``value`` as an exact Fraction (ints, Fractions and finite floats, all exact)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a rational number (int, Fraction or float), "
                        f"got {value!r} of type {type(value).__name__}.")
    if isinstance(value, numbers.Rational):
        value = Fraction(int(value.numerator), int(value.denominator))
    else:
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value}.")
        value = Fraction(value)  # exact: a double is a dyadic rational
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value}.")
    return value


def _draw(draws, args, size, rng):
    if size is None:
        shape = ()
    else:
        shape = (size,) if isinstance(size, numbers.Integral) else tuple(size)
        if not all(isinstance(n, numbers.Integral) and n >= 0 for n in shape):
            raise ValueError(f"size must be a non-negative int or a tuple of them, got {size!r}.")
        shape = tuple(int(n) for n in shape)
    out = draws(*args, math.prod(shape), check_random_state(rng)).reshape(shape)
    return out[()] if size is None else out


def sample_bernoulli_exp(gamma, rng=None):
    """Draw one Bernoulli(exp(-gamma)) bit exactly (CKS Algorithm 1).

    Parameters
    ----------
    gamma : int, Fraction or float
        ``>= 0``. Converted exactly to a :class:`fractions.Fraction` (a float
        is the dyadic rational it stores).
    rng : numpy.random.Generator, int or None, default=None
        Source of the uniform integers; ``None`` uses OS entropy.

    Returns
    -------
    bit : int
        ``1`` with probability ``exp(-gamma)``, else ``0``.

    Notes
    -----
    For ``gamma <= 1``: von Neumann's method, ``K = 1`` and while a
    Bernoulli(gamma / K) draw is 1, ``K += 1``; the answer is 1 iff ``K`` is
    odd. For ``gamma > 1`` it is the product of ``floor(gamma)``
    Bernoulli(exp(-1)) draws and one Bernoulli(exp(-(gamma - floor(gamma))))
    draw. Each Bernoulli(a / b) is "a uniform integer below b is below a", so
    only integers are compared. The expected number of uniform draws is at
    most about 3.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from skdp.mechanisms import sample_bernoulli_exp
    >>> sample_bernoulli_exp(Fraction(1, 2), rng=0) in (0, 1)
    True
    """
    gamma = _check_rational(gamma, "gamma", positive=False)
    src = _UniformIntegers(check_random_state(rng), n_words=16)
    return int(_bernoulli_exp(src, gamma.numerator, gamma.denominator))


def sample_discrete_laplace(t, size=None, rng=None):
    """Exact discrete Laplace noise, ``P[Z = z]`` proportional to ``exp(-|z| / t)`` (CKS Alg. 2).

    Parameters
    ----------
    t : int, Fraction or float
        Scale, ``> 0``, converted exactly to a :class:`fractions.Fraction`.
    size : int, tuple of int or None, default=None
        Output shape; ``None`` draws one value.
    rng : numpy.random.Generator, int or None, default=None
        Source of the uniform integers; ``None`` uses OS entropy.

    Returns
    -------
    z : numpy.int64 or ndarray of int64
        The draws.

    Notes
    -----
    With ``t = b / a`` in lowest terms, CKS Algorithm 2 runs with ``s = a``
    and ``t = b``: ``U`` uniform below ``b``, kept with probability
    ``exp(-U / b)``; ``V`` geometric (a run of Bernoulli(exp(-1)) ones);
    ``Y = floor((U + b V) / a)`` is geometric with ratio ``exp(-1 / t)``; a
    fair sign, rejecting ``-0``. In expectation a bounded number of uniform
    integers per draw, whatever ``t`` is. Batches of 64 or more draws with
    ``b <= 2**62`` and ``a < 2**63`` (every scale of practical size) run the
    same steps on numpy int64 arrays (a Bernoulli(``num / (den K)``) of
    Algorithm 1 whose ``den K`` exceeds int64 is drawn as two independent
    uniform integers, below ``K`` and below ``den``, so nothing overflows):
    about 2.5 million draws per second on the project's 2-core machine under
    load; otherwise Python integers (any size): about 150,000 per second.
    numpy's floating-point Laplace: about 16 million per second.

    Examples
    --------
    >>> from skdp.mechanisms import sample_discrete_laplace
    >>> sample_discrete_laplace(2, size=3, rng=0).dtype
    dtype('int64')
    """
    t = _check_rational(t, "t", positive=True)
    return _draw(_laplace_draws, (t.denominator, t.numerator), size, rng)


def sample_discrete_gaussian(sigma2, size=None, rng=None):
    """Exact discrete Gaussian noise, ``P[Z = z]`` proportional to ``exp(-z^2 / (2 sigma2))``.

    Parameters
    ----------
    sigma2 : int, Fraction or float
        The scale squared, ``> 0``, converted exactly to a
        :class:`fractions.Fraction`. (The variance of the discrete Gaussian is
        slightly below ``sigma2``; CKS Cor. 9.)
    size : int, tuple of int or None, default=None
        Output shape; ``None`` draws one value.
    rng : numpy.random.Generator, int or None, default=None
        Source of the uniform integers; ``None`` uses OS entropy.

    Returns
    -------
    z : numpy.int64 or ndarray of int64
        The draws.

    Notes
    -----
    CKS Algorithm 3: rejection sampling from the discrete Laplace of scale
    ``t = floor(sigma) + 1``: a candidate ``Y`` is kept with probability
    ``exp(-(|Y| - sigma2 / t)^2 / (2 sigma2))``, which with
    ``sigma2 = p / q`` is ``exp(-(|Y| q t - p)^2 / (2 p q t^2))``: integers
    only. The expected number of candidates per draw is below 2 (CKS Sec. 5).
    Batches of 64 or more draws with ``2**-60 <= sigma2 < 2**124`` (any
    rational; ``sigma < 2**62``, beyond which the draws overflow int64 anyway)
    run on numpy arrays: the acceptance test compares the first 53 bits of
    each uniform with a float64 estimate of ``exp``'s argument and its
    rigorous error bound, and finishes the rare undecided comparisons
    (about ``2**-48`` of them) with Python integers on further bits of the
    same uniform, so the distribution is exactly Algorithm 3's. About 1.5
    million draws per second on the project's 2-core machine under load, at
    ``sigma = 2**10`` as at ``2**60``; otherwise Python integers (any size):
    about 30,000 to 70,000 per second. Draws with ``|z| >= 2**63 - 2**52``
    raise :class:`OverflowError`.

    Examples
    --------
    >>> from skdp.mechanisms import sample_discrete_gaussian
    >>> sample_discrete_gaussian(4, size=(2, 2), rng=0).shape
    (2, 2)
    """
    sigma2 = _check_rational(sigma2, "sigma2", positive=True)
    return _draw(_gaussian_draws, (sigma2.numerator, sigma2.denominator), size, rng)


# --------------------------------------------------------------------------------------
# Calibration
# --------------------------------------------------------------------------------------

def _check_granularity(granularity):
    """``None`` or the granularity as an exact Fraction: a power of two in
    ``[2**-900, 2**900]`` (finite and ``> 0``), checked before anything is drawn.

    The range keeps the grid arithmetic exact and finite. A release is
    ``g k`` with an integer ``|k| <= 2**53``: for ``g <= 2**900`` it is at most
    ``2**953``, finite, and leaves a factor ``2**70`` below the largest double
    for the arithmetic estimators do on released values (sums over features,
    products with data); for ``g >= 2**-900`` it is zero or at least
    ``2**-900``, a normal double (not subnormal), so ``k g`` and any later
    product keep full precision. (The exactness limit itself is ``2**970``
    above and ``2**-1074`` below.) A finer grid could only hold values below
    ``2**-847`` without clamping them; a coarser one rounds every value of a
    double below ``2**899`` to 0.
    """
    if granularity is None:
        return None
    g = _check_rational(granularity, "granularity", positive=True)
    num, den = g.numerator, g.denominator
    if not ((num == 1 and den & (den - 1) == 0) or (den == 1 and num & (num - 1) == 0)):
        raise ValueError(
            f"granularity must be a power of two (e.g. 2**-10) so that value / granularity "
            f"is exact, got {granularity!r}."
        )
    if not _GRANULARITY_RANGE[0] <= g <= _GRANULARITY_RANGE[1]:
        raise ValueError(
            f"granularity must be between 2**-900 and 2**900 (the grid values g * k, "
            f"|k| <= 2**53, must be normal finite doubles), got {granularity!r}."
        )
    return g


def _checked_sensitivity(sensitivity):
    return Fraction(check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False))


def _grid_l1_sensitivity(sensitivity, granularity, dimension):
    """L1 sensitivity of the integer query ``round(x / g)`` (round half up), an integer.

    With ``D = sensitivity / g`` and ``u = x / g``: ``floor(a) - floor(b) <
    a - b + 1``, so each coordinate of ``round(u) - round(u')`` is an integer
    ``w_i < |u_i - u'_i| + 1``; summed, ``||w||_1 < D + d`` and, being an
    integer, ``||w||_1 <= ceil(D) + d - 1`` (``ceil(D)`` when ``d = 1``). This is
    attained (``u = (0.4, 0.4)``, ``u' = (0.9, 0.9)``, ``D = 1``: ``w = (1, 1)``).
    """
    if granularity is None:
        return sensitivity
    return Fraction(math.ceil(sensitivity / granularity) + dimension - 1)


def _grid_l2_sensitivity_squared(sensitivity, granularity, dimension):
    """Squared L2 sensitivity of the integer query ``round(x / g)``, an integer.

    With ``D = sensitivity / g`` and ``w_i = |round(u_i) - round(u'_i)|``:
    ``w_i < v_i + 1`` where ``v_i = |u_i - u'_i|`` and ``||v||_2 <= D``. Let
    ``a_i = max(w_i - 1, 0)``, an integer with ``a_i <= v_i`` (strictly where
    ``w_i >= 1``), so ``A = sum a_i^2 < D^2`` (or ``w = 0``) and
    ``A <= Q = ceil(D^2) - 1``. Then ``w_i^2 <= a_i^2 + 2 a_i + 1`` and
    ``||w||_2^2 <= Q + 2 sum a_i + d`` with ``sum a_i <= min(A, sqrt(d A))``
    (``a_i <= a_i^2`` for integers; Cauchy-Schwarz). Hence
    ``||w||_2^2 <= Q + 2 min(Q, isqrt(d Q)) + d``, which is below
    ``(D + sqrt(d))^2``: rounding adds at most ``sqrt(d)`` to the L2
    sensitivity. ``d = 1``, ``D = 1`` gives 1; ``d = 2``, ``D = 1`` gives 2
    (attained by ``u = (0.4, 0.4)``, ``u' = (0.9, 0.9)``).
    """
    if granularity is None:
        return sensitivity**2
    if dimension == 1:
        # One coordinate: floor(u + 1/2) - floor(u' + 1/2) <= ceil(u - u'), so the shift
        # is at most ceil(D), tighter than the general bound (4 against 6 at D = 2).
        return Fraction(math.ceil(sensitivity / granularity) ** 2)
    d_squared = (sensitivity / granularity) ** 2
    q = math.ceil(d_squared) - 1
    return Fraction(q + 2 * min(q, math.isqrt(dimension * q)) + dimension)


def _check_dimension(dimension):
    if isinstance(dimension, bool) or not isinstance(dimension, numbers.Integral) or dimension < 1:
        raise ValueError(f"dimension must be a positive integer, got {dimension!r}.")
    return int(dimension)


def _round_up(value, bits=_SCALE_BITS):
    """Smallest dyadic rational ``>= value`` with about ``bits`` significant bits."""
    shift = bits - (value.numerator.bit_length() - value.denominator.bit_length())
    scaled = value * Fraction(2) ** shift
    return Fraction(-((-scaled.numerator) // scaled.denominator)) / Fraction(2) ** shift


def discrete_laplace_scale(sensitivity, epsilon, granularity=None, dimension=1):
    """Scale ``t`` of discrete Laplace noise for pure epsilon-DP, rounded up to a rational.

    A query with integer values and L1 sensitivity ``Delta`` plus i.i.d.
    noise ``P[z]`` proportional to ``exp(-|z| / t)`` is ``(Delta / t)``-DP:
    for any integer shift ``v``, ``P[z] / P[z - v] = exp((|z - v| - |z|) / t)
    <= exp(||v||_1 / t)`` (the geometric mechanism, Ghosh, Roughgarden and
    Sundararajan 2009; the discrete Laplace of CKS). So ``t = Delta /
    epsilon``, computed exactly from the float ``epsilon`` and rounded *up* to
    a dyadic rational with 24 significant bits (at most a relative ``2**-23``
    more noise; small integers keep the sampler on its fast path): the
    privacy loss is at most ``epsilon``.

    Parameters
    ----------
    sensitivity : float
        L1 sensitivity of the query (in the query's units), ``> 0``.
    epsilon : float
        ``> 0``.
    granularity : float or None, default=None
        ``None``: the query is integer-valued and ``Delta = sensitivity``.
        A power of two ``g``: the value is rounded to the grid ``g Z`` and
        ``Delta = ceil(sensitivity / g) + dimension - 1`` grid steps (see
        :class:`DiscreteLaplaceMechanism`).
    dimension : int, default=1
        Number of coordinates released together (matters only with a
        granularity).

    Returns
    -------
    t : fractions.Fraction
        The scale, in grid steps when ``granularity`` is set.

    Examples
    --------
    >>> from skdp.mechanisms import discrete_laplace_scale
    >>> discrete_laplace_scale(1.0, 0.5)
    Fraction(2, 1)
    >>> discrete_laplace_scale(1.0, 0.5, granularity=0.5, dimension=3)
    Fraction(8, 1)
    """
    sensitivity = _checked_sensitivity(sensitivity)
    epsilon = Fraction(check_real(epsilon, "epsilon", low=0.0, low_inclusive=False))
    granularity = _check_granularity(granularity)
    dimension = _check_dimension(dimension)
    # Pure DP of the discrete Laplace (geometric) mechanism: t = Delta_int / epsilon, rounded up.
    return _round_up(_grid_l1_sensitivity(sensitivity, granularity, dimension) / epsilon)


def discrete_gaussian_sigma2(sensitivity, epsilon, delta, granularity=None, dimension=1):
    """``sigma^2`` of discrete Gaussian noise for ``(epsilon, delta)``-DP, rounded up to a rational.

    Canonne, Kamath and Steinke (2020, "CKS") show that for an integer shift
    ``mu`` the Renyi divergence of order ``alpha`` between ``N_Z(mu, sigma^2)``
    and ``N_Z(0, sigma^2)`` is at most ``alpha mu^2 / (2 sigma^2)``, as for the
    continuous Gaussian (their concentrated-DP result for one coordinate). Renyi
    divergences of independent coordinates add, so independent
    ``N_Z(0, sigma^2)`` noise on each coordinate of an integer-vector query of
    L2 sensitivity ``Delta`` is ``rho = Delta^2 / (2 sigma^2)``-zCDP (CKS state
    the multivariate case too). The zCDP budget ``rho`` is the largest
    whose conversion stays within ``(epsilon, delta)`` by CKS Cor. 13
    (:func:`skdp.accounting.zcdp_for_dp`, checked with a rounded-up
    :func:`skdp.accounting.zcdp_delta`; 1.1 to 2 times the ``rho`` of seed
    004, Lemma 2.1.13, so ``sigma`` is 7% to 30% smaller), lowered by a
    relative ``2**-40``, and ``sigma^2 = Delta^2 / (2 rho)`` is rounded *up*
    to a dyadic rational with 24 significant bits.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity of the query (in the query's units), ``> 0``.
    epsilon : float
        ``> 0``.
    delta : float
        In ``(0, 1)``.
    granularity : float or None, default=None
        ``None``: the query is integer-valued and ``Delta = sensitivity``.
        A power of two ``g``: ``Delta^2`` is the integer bound of
        :class:`DiscreteGaussianMechanism` for the rounded query (at most
        ``(sensitivity / g + sqrt(dimension))^2``).
    dimension : int, default=1
        Number of coordinates released together (matters only with a
        granularity).

    Returns
    -------
    sigma2 : fractions.Fraction
        The discrete Gaussian's ``sigma^2``, in grid steps squared when
        ``granularity`` is set.

    Examples
    --------
    >>> from skdp.mechanisms import discrete_gaussian_sigma2
    >>> round(float(discrete_gaussian_sigma2(1.0, 1.0, 1e-5)), 3)
    16.363
    """
    sensitivity = _checked_sensitivity(sensitivity)
    epsilon, delta = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
    granularity = _check_granularity(granularity)
    dimension = _check_dimension(dimension)
    # zCDP -> (epsilon, delta) by CKS Cor. 13 (zcdp_for_dp), with a round-off margin.
    rho = Fraction(zcdp_for_dp(epsilon, delta)) * _RHO_MARGIN
    if rho == 0:
        raise ValueError(f"epsilon={epsilon!r} is too small: its zCDP budget underflows to 0.")
    # CKS (one coordinate) plus additivity of Renyi divergence over coordinates:
    # rho = Delta^2 / (2 sigma^2)  =>  sigma^2 = Delta^2 / (2 rho), rounded up.
    return _round_up(_grid_l2_sensitivity_squared(sensitivity, granularity, dimension)
                     / (2 * rho))


# Largest noise parameter of a grid release (discrete Laplace t, discrete Gaussian sigma), in
# grid steps: beyond it the noise alone exceeds the +-2**53 range of the released indices
# (the release would be mostly the clamp) and draws approach the samplers' int64 limit
# (_INT64_LIMIT), where they raise; only a vanishing epsilon gets there (t ~ F / epsilon).
# Estimators check it with check_grid_noise_parameter before the budget is charged.
MAX_NOISE_STEPS = 2**52


def check_grid_noise_parameter(mechanism, parameter, budget_text):
    """Refuse a noise parameter beyond :data:`MAX_NOISE_STEPS` grid steps (before the charge).

    Parameters
    ----------
    mechanism : {"discrete_laplace", "discrete_gaussian"}
        Noise distribution.
    parameter : fractions.Fraction
        Discrete Laplace ``t`` or discrete Gaussian ``sigma^2``, in grid steps.
    budget_text : str
        The budget that sets it, for the message (e.g. ``"epsilon=1e-20"``).

    Returns
    -------
    parameter : fractions.Fraction
        Unchanged.
    """
    value = Fraction(parameter)
    gaussian = mechanism == "discrete_gaussian"
    if value > (Fraction(MAX_NOISE_STEPS) ** 2 if gaussian else MAX_NOISE_STEPS):
        # log2 of the steps, exact enough for a message and finite for any size.
        log2_steps = (math.log2(value.numerator) - math.log2(value.denominator)) / (
            2 if gaussian else 1)
        raise ValueError(
            f"{budget_text} is too small for the {mechanism} output noise: its "
            f"{'sigma' if gaussian else 'scale t'} would be about 2**{log2_steps:.1f} grid "
            "steps, beyond "
            "2**52 (the released grid indices are kept within +-2**53 and the exact sampler's "
            "draws within int64). Use a larger epsilon.")
    return value


# --------------------------------------------------------------------------------------
# Mechanisms
# --------------------------------------------------------------------------------------

def _round_half_up(u):
    """``floor(u + 1/2)`` of a float64 array, exactly (no rounded ``u + 0.5``).

    ``u - floor(u)`` is exact (Sterbenz's lemma) except for ``u`` in
    ``(-1/2, 0)``, where the computed ``1 + u`` is still ``>= 1/2`` (``1/2`` is
    a double and rounding is monotone), which gives the right answer 0.
    """
    whole = np.floor(u)
    return whole + (u - whole >= 0.5)


def _exact_array(value):
    """``np.asarray(value)``, or an object array of exact ints and Fractions for sequences
    that numpy would round or cannot hold.

    numpy stores a Python sequence mixing integers beyond ``2**53`` with floats
    (or integers ``>= 2**63`` with negatives) as doubles, rounding the integers
    first; rounded twice (to a double, then to the grid) two values ``D`` apart
    can land more than ``ceil(D / g)`` grid steps apart. Integers beyond uint64
    it keeps as objects. Both become exact Python integers and Fractions (of
    finite float64-or-narrower floats), which the grid divides exactly.
    """
    array = np.asarray(value)
    if array.dtype.kind != "O" and (array.dtype.kind != "f" or isinstance(value, np.ndarray)):
        return array
    flat = np.asarray(value, dtype=object).ravel().tolist()
    if array.dtype.kind == "f" and not any(
            isinstance(x, numbers.Integral) and abs(int(x)) > 2**53 for x in flat):
        return array  # every value is exactly the double numpy made of it
    exact = []
    for x in flat:
        if isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_)):
            exact.append(int(x))
        elif isinstance(x, (float, np.float16, np.float32, np.float64)):
            if not math.isfinite(x):
                raise ValueError("value must be finite (no NaN or infinity).")
            exact.append(Fraction(float(x)))  # exact: a double is a dyadic rational
        else:
            raise TypeError(f"value must be numeric (integers or floats), got {x!r} "
                            f"of type {type(x).__name__}.")
    return np.array(exact, dtype=object).reshape(array.shape)


def _integer_valued(x):
    if isinstance(x, Fraction):
        if x.denominator != 1:
            raise ValueError(
                "value must be integer-valued when granularity=None (e.g. counts); for "
                "real values pass a power-of-two granularity such as 2**-10.")
        return x.numerator
    return x


def _grid_indices(value, granularity):
    """The query value as exact grid indices (an int64 array of its shape), before any noise.

    ``granularity=None``: the values must be integers. Otherwise each value
    ``x`` becomes ``floor(x / g + 1/2)`` (round half up) of its exact value:
    for floats ``x / g`` is a power-of-two scaling, exact except in the
    subnormal range where the index is 0 either way; integers (also Python
    integers beyond int64, and sequences mixing integers beyond ``2**53`` with
    floats, read exactly by :func:`_exact_array`) are divided as exact
    rationals. Indices beyond ``+-2**52`` are clamped to ``+-2**52``.

    Clamping keeps the grid sensitivities. ``c(k) = min(max(k, -M), M)`` is
    monotone and 1-Lipschitz: for ``a >= b``, ``0 <= c(a) - c(b) <= a - b``
    (if neither is clamped it is ``a - b``; if ``a > M`` then ``c(a) - c(b)
    = M - c(b) <= a - c(b)``, and ``c(b) >= b`` unless ``b > M``, where the
    difference is 0; symmetrically at ``-M``). So each coordinate of
    ``c(round(u)) - c(round(u'))`` is at most, in absolute value, the same
    coordinate of ``round(u) - round(u')``, and every L1 or L2 bound on the
    rounded query (:func:`_grid_l1_sensitivity`,
    :func:`_grid_l2_sensitivity_squared`) holds for the clamped one. Refusing
    such values instead would let neighbours on either side of the edge be
    told apart by whether a release happens at all. A float ``x / g`` that
    overflows to infinity stands for an index beyond ``M`` and is clamped
    with it. Non-finite *input* is still refused: a query of finite
    sensitivity is finite on both neighbours or on neither, so that refusal
    does not depend on which neighbour is used.
    """
    array = _exact_array(value)
    if array.dtype.kind not in "iufO":
        raise TypeError(f"value must be numeric (integers or floats), got dtype {array.dtype}.")
    if array.dtype.kind == "f":
        if np.finfo(array.dtype).nmant > np.finfo(np.float64).nmant:
            # Rounding a long double to float64 is not exact and can move two values
            # less than D apart by more than ceil(D) grid steps (breaks the bounds below).
            raise TypeError(f"value must not be an extended-precision float ({array.dtype}): "
                            "its conversion to float64 is not exact.")
        array = array.astype(np.float64)  # exact for float16, float32, float64
        if not np.all(np.isfinite(array)):
            raise ValueError("value must be finite (no NaN or infinity).")
    if granularity is None:
        if array.dtype.kind == "O":  # exact ints and Fractions
            array = np.array([_integer_valued(x) for x in array.ravel().tolist()],
                             dtype=object).reshape(array.shape)
        elif array.dtype.kind == "f" and np.any(array != np.floor(array)):
            raise ValueError(
                "value must be integer-valued when granularity=None (e.g. counts); for "
                "real values pass a power-of-two granularity such as 2**-10."
            )
        indices = array
    elif array.dtype.kind == "f":
        exponent = (granularity.numerator.bit_length() - 1
                    - (granularity.denominator.bit_length() - 1))
        # Silent: a warning only for values whose quotient overflows would depend on the data.
        with np.errstate(over="ignore", invalid="ignore"):
            indices = _round_half_up(np.ldexp(array, -exponent))
    else:
        half = Fraction(1, 2)
        indices = np.array([math.floor(x / granularity + half) for x in array.ravel().tolist()],
                           dtype=object).reshape(array.shape)
    # Clamped in a type that holds the input exactly and +-2**52 (int64's minimum and
    # uint64 values above 2**63 are not compared after a conversion that wraps them).
    if indices.dtype.kind == "u":
        return np.minimum(indices.astype(np.uint64), np.uint64(_MAX_GRID_INDEX)).astype(np.int64)
    if indices.dtype.kind == "i":
        indices = indices.astype(np.int64)
    # (np.asarray: np.clip returns a Python integer for a 0-d object array.)
    return np.asarray(np.clip(indices, -_MAX_GRID_INDEX, _MAX_GRID_INDEX)).astype(np.int64)


def _grid_release(indices, noise, granularity):
    """The noisy release from clamped grid indices and integer noise of the same shape.

    ``|index| <= 2**52`` and ``|noise| < 2**63 - 2**52``: the int64 sum is exact. With
    a granularity the result is ``g`` times the sum clamped to ``+-2**53``
    (post-processing of the integer release), an integer that converts to a
    double exactly, times a power of two: an exact multiple of ``g`` (unless
    it overflows the double range, ``g > 2**970``).
    """
    noisy = indices + noise.reshape(indices.shape)
    if granularity is not None:
        noisy = np.clip(noisy, -_MAX_NOISY_INDEX, _MAX_NOISY_INDEX).astype(float)
        noisy *= float(granularity)
    return noisy


class _DiscreteNoiseMechanism(_AdditiveNoiseMechanism):
    """Release ``g * (round(x / g) + Z)`` with exact integer noise ``Z`` (or ``x + Z``)."""

    def __init__(self, *, epsilon, sensitivity=1.0, granularity=None, random_state=None):
        super().__init__(epsilon=epsilon, sensitivity=sensitivity, random_state=random_state)
        self.granularity = granularity

    def _noise_parameter(self, dimension):
        raise NotImplementedError

    def _sampler(self, parameter):
        raise NotImplementedError

    def __call__(self, value):
        """Return the value on the grid plus exact integer noise (same shape as ``value``).

        Parameters
        ----------
        value : int, float or array-like
            The exact query answer: integers when ``granularity=None``.

        Returns
        -------
        noisy : int, float or ndarray
            ``value + Z`` (int64) when ``granularity=None``, else
            ``granularity * (round(value / granularity) + Z)`` (float64, an
            exact multiple of ``granularity``). The index (``value`` or
            ``round(value / granularity)``) is first clamped to
            ``[-2**52, 2**52]``, which keeps the sensitivity (clamping is
            non-expansive), and ``round(value / granularity) + Z`` is then
            clamped to ``[-2**53, 2**53]`` (post-processing) so that the
            float output is exact.
        """
        granularity = _check_granularity(self.granularity)
        indices = _grid_indices(value, granularity)
        # Calibrate (and validate epsilon, delta, sensitivity) before any noise is drawn.
        draws, args = self._sampler(self._noise_parameter(max(indices.size, 1)))
        noisy = _grid_release(indices, draws(*args, indices.size, self._rng), granularity)
        return noisy.item() if noisy.ndim == 0 else noisy


class DiscreteLaplaceMechanism(_DiscreteNoiseMechanism):
    """Add exact discrete Laplace noise on a public grid (pure epsilon-DP, floating-point safe).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0``.
    sensitivity : float, default=1.0
        L1 sensitivity of the query, in the query's units, ``> 0``.
    granularity : float or None, default=None
        ``None``: the query is integer-valued (counts) and non-integer input
        is an error; the output is ``value + Z`` as int64. A power of two
        ``g`` (e.g. ``2**-10``): the value is snapped to the grid and the
        output is ``g * (round(value / g) + Z)``, an exact multiple of ``g``.
        ``g`` must lie in ``[2**-900, 2**900]`` (checked before any draw).
    random_state : int, numpy.random.Generator or None, default=None
        Source of the uniform integers; ``None`` (OS entropy) for real
        releases, an int only for reproducible tests.

    Attributes
    ----------
    scale : fractions.Fraction
        The noise scale ``t`` (in grid steps) for a one-coordinate query;
        recomputed from the parameters on every access.

    Privacy
    -------
    ``epsilon``-DP for any neighbouring relation under which the query's L1
    sensitivity is at most ``sensitivity``; everything the query reads is
    protected. The integer noise has ``P[Z = z]`` proportional to
    ``exp(-|z| / t)`` with ``t >= Delta / epsilon`` (rounded up; the geometric
    mechanism; discrete Laplace of Canonne, Kamath and Steinke 2020), where
    ``Delta`` is the L1 sensitivity of the integer query: ``sensitivity``
    itself, or with a granularity ``ceil(sensitivity / g) + d - 1`` for ``d``
    coordinates, because rounding can move each coordinate by less than one
    more grid step (see Notes). It is safe against floating-point attacks
    (Mironov 2012): the noise is drawn exactly (CKS Algorithms 1 and 2, with
    integer arithmetic on uniform integers), every randomness decision is an
    exact integer comparison, and the output lies on the public grid
    ``g Z``, so the output's low-order bits carry no information beyond the
    ideal mechanism's. skdp's estimators and :class:`LaplaceMechanism` still
    use floating-point noise.

    See Also
    --------
    LaplaceMechanism : Continuous (floating-point) Laplace noise.
    DiscreteGaussianMechanism : Exact discrete Gaussian noise.

    Notes
    -----
    Rounding is ``floor(x / g + 1/2)`` on the exact value of ``x``. For
    ``a >= b``, ``floor(a) - floor(b) < a - b + 1``, so each coordinate of
    the integer query moves by an integer ``w_i < |x_i - x'_i| / g + 1``;
    summing, ``||w||_1 < sensitivity / g + d``, hence
    ``||w||_1 <= ceil(sensitivity / g) + d - 1`` (the bound is attained).
    The scale depends on the number of coordinates ``d`` of each call when a
    granularity is set: :func:`discrete_laplace_scale` gives it for any
    ``d``. Cost: below 1 microsecond per coordinate in large calls (see
    :func:`sample_discrete_laplace`), about 100 per one-value call.

    References
    ----------
    C. L. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for
    Differential Privacy. NeurIPS 2020 (arXiv:2004.00010).
    I. Mironov. On significance of the least significant bits for
    differential privacy. CCS 2012.

    Examples
    --------
    >>> from skdp.mechanisms import DiscreteLaplaceMechanism
    >>> mech = DiscreteLaplaceMechanism(epsilon=0.5, random_state=0)
    >>> mech.scale
    Fraction(2, 1)
    >>> isinstance(mech(10), int)
    True
    >>> out = DiscreteLaplaceMechanism(epsilon=1.0, granularity=2**-4, random_state=0)(0.3)
    >>> (out * 16).is_integer()
    True
    """

    @property
    def scale(self):
        """Noise scale ``t`` in grid steps, one coordinate (:func:`discrete_laplace_scale`)."""
        return self._noise_parameter(1)

    def _noise_parameter(self, dimension):
        return discrete_laplace_scale(self.sensitivity, self.epsilon, self.granularity, dimension)

    def _sampler(self, parameter):
        return _laplace_draws, (parameter.denominator, parameter.numerator)


class DiscreteGaussianMechanism(_DiscreteNoiseMechanism):
    """Add exact discrete Gaussian noise on a public grid (``(epsilon, delta)``-DP via zCDP).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        In ``(0, 1)``.
    sensitivity : float, default=1.0
        L2 sensitivity of the query, in the query's units, ``> 0``.
    granularity : float or None, default=None
        ``None``: the query is integer-valued and non-integer input is an
        error; the output is ``value + Z`` as int64. A power of two ``g``:
        the output is ``g * (round(value / g) + Z)``, an exact multiple of
        ``g``, in ``[2**-900, 2**900]`` (checked before any draw).
    random_state : int, numpy.random.Generator or None, default=None
        Source of the uniform integers; ``None`` (OS entropy) for real
        releases, an int only for reproducible tests.

    Attributes
    ----------
    sigma2 : fractions.Fraction
        The discrete Gaussian's ``sigma^2`` (in grid steps squared) for a
        one-coordinate query; recomputed from the parameters on every access.

    Privacy
    -------
    ``(epsilon, delta)``-DP for any neighbouring relation under which the
    query's L2 sensitivity is at most ``sensitivity``; everything the query
    reads is protected. Each coordinate gets independent noise
    ``N_Z(0, sigma^2)``, ``P[Z = z]`` proportional to
    ``exp(-z^2 / (2 sigma^2))``; by Canonne, Kamath and Steinke (2020) (the
    one-coordinate concentrated-DP bound, added over independent coordinates),
    this is ``Delta^2 / (2 sigma^2)``-zCDP for an integer query of L2
    sensitivity ``Delta``, and zCDP gives ``(epsilon, delta)`` by CKS
    Cor. 13 (:func:`skdp.accounting.zcdp_for_dp`). ``Delta^2`` is
    ``sensitivity^2``, or with a granularity the integer bound of Notes
    (at most ``(sensitivity / g + sqrt(d))^2``). ``sigma^2`` is rounded up.
    This conversion is looser than the exact one-dimensional bound of CKS
    Thm. 7: sigma is about 8% larger than the exact (analytic) continuous
    Gaussian's at epsilon = 1, delta = 1e-5 (9% at epsilon = 0.1,
    delta = 1e-6; 31% and 45% with Lemma 2.1.13, used before). It is safe
    against floating-point attacks (Mironov 2012): the noise is drawn exactly
    (CKS Algorithm 3), every randomness decision is an exact integer
    comparison, and the output lies on the public grid ``g Z``. skdp's
    estimators and :class:`GaussianMechanism` still use floating-point noise.

    See Also
    --------
    GaussianMechanism : Continuous (floating-point) Gaussian noise.
    DiscreteLaplaceMechanism : Exact discrete Laplace noise (pure DP).

    Notes
    -----
    Rounding is ``floor(x / g + 1/2)``. Each coordinate moves by an integer
    ``w_i < v_i + 1`` with ``v_i = |x_i - x'_i| / g`` and ``||v||_2 <= D =
    sensitivity / g``. With ``a_i = max(w_i - 1, 0) <= v_i``, ``sum a_i^2``
    is an integer below ``D^2``, so at most ``Q = ceil(D^2) - 1``, and
    ``||w||_2^2 <= Q + 2 min(Q, isqrt(d Q)) + d``. The noise therefore grows
    with ``d`` when a granularity is set: :func:`discrete_gaussian_sigma2`
    gives ``sigma^2`` for any ``d``. Cost: below 1 microsecond per
    coordinate in large calls, whatever the grid (see :func:`sample_discrete_gaussian`), about
    150 per one-value call.

    References
    ----------
    C. L. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for
    Differential Privacy. NeurIPS 2020 (arXiv:2004.00010).
    I. Mironov. On significance of the least significant bits for
    differential privacy. CCS 2012.

    Examples
    --------
    >>> from skdp.mechanisms import DiscreteGaussianMechanism
    >>> mech = DiscreteGaussianMechanism(epsilon=1.0, delta=1e-5, random_state=0)
    >>> round(float(mech.sigma2), 3)
    16.363
    >>> mech([3, 4]).dtype
    dtype('int64')
    """

    def __init__(self, *, epsilon, delta, sensitivity=1.0, granularity=None, random_state=None):
        super().__init__(epsilon=epsilon, sensitivity=sensitivity, granularity=granularity,
                         random_state=random_state)
        self.delta = delta

    @property
    def sigma2(self):
        """``sigma^2`` in grid steps squared, one coordinate (:func:`discrete_gaussian_sigma2`)."""
        return self._noise_parameter(1)

    def _noise_parameter(self, dimension):
        return discrete_gaussian_sigma2(self.sensitivity, self.epsilon, self.delta,
                                        self.granularity, dimension)

    def _sampler(self, parameter):
        return _gaussian_draws, (parameter.numerator, parameter.denominator)
