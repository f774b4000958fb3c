"""Adversarial checks of the vectorized exact discrete samplers (CKS 2020 Alg. 1-3).

Each test checks one claim the exactness of ``skdp/mechanisms/_discrete.py`` rests
on, against exact rational arithmetic or against a hand-enumerated law, and each
has been run against a deliberately broken variant (see the comments) to show it
can fail.
"""

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import skdp.mechanisms._discrete as discrete
from skdp.mechanisms import sample_discrete_gaussian, sample_discrete_laplace
from skdp.mechanisms._discrete import (
    _FACTORIAL_BITS,
    _INT64_LIMIT,
    _UniformIntegers,
    _bernoulli_exp_minus_one_vec,
    _finish_comparison,
    _gaussian_accept_vec,
    _gaussian_estimate,
    _uniform_below,
)


# --------------------------------------------------------------------------------------
# 1. The float64 estimate of gamma and its error bound, against exact Fractions
# --------------------------------------------------------------------------------------

def _adversarial_cases(seed, n_params):
    """``(p, q, ys)`` over the whole vectorized range 2**-60 <= p / q < 2**124: dyadic,
    non-dyadic and huge (up to 1000-bit) denominators, ``|y|`` next to ``mu = p / (q t)``
    (the cancellation in ``|y| - mu``), far in the tails, and up to ``2**63 - 2**52``."""
    rnd = random.Random(seed)
    y_max = _INT64_LIMIT - 1
    # Exact cancellation |y| q t = p (gamma = 0): sigma^2 = t (t - 1) has mu = t - 1.
    for t in (2, 5, 2**26 + 3, 2**52 + 1, 2**61 + 12345):
        for q in (1, 3**50, 2**200 + 1):
            yield q * t * (t - 1), q, [t - 3, t - 2, t - 1, t, t + 1, 0, y_max]
    # The range ends.
    yield 1, 2**60, [0, 1, 2, 40, y_max]
    yield 2**124 - 1, 1, [0, 2**62 - 2, 2**62 - 1, 2**62, 2**62 + 2**11, y_max]
    yield 3**700 + 1, 3**700 * 2**60 - 1, [0, 1, 2]
    for _ in range(n_params):
        e = rnd.uniform(-60, 124)
        q = rnd.choice([1, 3, 2**80 + rnd.randint(0, 7), rnd.getrandbits(rnd.randint(1, 1000)) | 1])
        p = max(int(Fraction(2.0**e) * q) + rnd.randint(-3, 3), 1)
        if not (p << 60 >= q and p < q << 124):
            continue
        t = math.isqrt(p // q) + 1
        mu = Fraction(p, q * t)
        m, sigma = int(mu), math.sqrt(p / q)
        ys = [m + k for k in range(-2, 3)] + [0, 1, t * rnd.randint(1, 40), rnd.randint(0, y_max)]
        ys += [int(abs(rnd.gauss(float(mu), sigma * rnd.choice([1e-3, 0.1, 1, 3, 6]))))
               for _ in range(6)]
        yield p, q, [rnd.choice([1, -1]) * v for v in ys if 0 <= v <= y_max]


def test_estimate_of_gamma_is_within_its_claimed_error_bound():
    """``|g - gamma| <= err / 1.9`` (the docstring's err >= 1.9 E), ``n`` an integer
    ``<= gamma``, and where the fast path runs (``g < 2**52``, ``fl(r + err) <= 1``):
    ``r = g - n`` exact and ``fl(r - err) <= gamma - n <= fl(r + err)``.

    The largest ratio seen over 50,000 random cases is about 0.15 of err (margin 3.5).
    Caught: err's ``c s |d|`` term dropped, or err's factor 2**-49 made 2**-52."""
    worst = 0.0
    for p, q, ys in _adversarial_cases(seed=0, n_params=300):
        t = math.isqrt(p // q) + 1
        den = 2 * p * q * t * t
        y = np.array(ys, dtype=np.int64)
        g, err, n = _gaussian_estimate(y, p, q, t)
        r = g - n
        for i, yi in enumerate(ys):
            gamma = Fraction((abs(yi) * q * t - p) ** 2, den)
            gap = abs(Fraction(float(g[i])) - gamma)
            assert gap * Fraction(19, 10) <= Fraction(float(err[i])), (p, q, yi)
            worst = max(worst, float(gap / Fraction(float(err[i]))) if err[i] else 0.0)
            assert n[i] == math.floor(n[i]) and 0 <= int(n[i]) <= gamma, (p, q, yi)
            if g[i] < 2.0**52 and r[i] + err[i] <= 1.0:
                assert Fraction(float(r[i])) == Fraction(float(g[i])) - int(n[i])
                rest = gamma - int(n[i])
                assert Fraction(float(r[i] - err[i])) <= rest <= Fraction(float(r[i] + err[i]))
    assert worst > 0.01  # the bound is not vacuous: the estimate does carry rounding error


# --------------------------------------------------------------------------------------
# 2. The lazy comparison's exact completion
# --------------------------------------------------------------------------------------

class _Enumerate:
    """A stand-in for _UniformIntegers whose ``below(n)`` returns a chosen value."""

    def __init__(self, value):
        self.value, self.calls = value, []

    def below(self, n):
        self.calls.append(n)
        return self.value


@pytest.mark.parametrize("den", [1, 7, 24, 97])
def test_finish_comparison_has_exactly_the_conditional_probability(den):
    """Given the first 53 bits ``w`` of U, P(U < scaled / den | w) is
    ``clamp(scaled 2**53 / den - w, 0, 1)``: over all values of the further uniform
    (below den), the completion answers True for exactly that fraction of them."""
    for scaled in (0, 1, den - 1, den, 3 * den + 1):
        r_star = Fraction(scaled, den)
        for w in {0, 1, max(int(r_star * 2**53) - 1, 0), int(r_star * 2**53),
                  min(int(r_star * 2**53) + 1, 2**53 - 1), 2**53 - 1}:
            hits = sum(_finish_comparison(_Enumerate(v), scaled, w, den) for v in range(den))
            expected = min(max(r_star * 2**53 - w, 0), 1)
            assert Fraction(hits, den) == expected, (scaled, w, den)
            # The uniform is drawn below den only when w cannot decide.
            probe = _Enumerate(0)
            _finish_comparison(probe, scaled, w, den)
            assert probe.calls == ([den] if 0 < expected < 1 else [])


class _FirstBitsRng:
    """``integers(0, 2**53)`` returns ``w`` (the first 53 bits of U); any other bound
    returns its largest value (a miss of every Bernoulli(1 / K) step, K >= 2)."""

    def __init__(self, w):
        self.w = w

    def integers(self, low, high, size):
        return np.full(size, self.w if high == 2**53 else high - 1, dtype=np.int64)


@pytest.mark.parametrize("p,q,y", [(1, 4, 0),        # gamma = 1/8: r* 2**53 = 2**50, a tie
                                   (7, 3, 1),        # gamma = 1/168
                                   (7, 3, 0),        # gamma = 49/168
                                   (5, 2, 3),        # gamma = 1/80
                                   (1001, 500, 1)])  # gamma = 1/4004000: err 2**53 < 1
def test_lazy_comparison_is_exact_next_to_the_boundary(p, q, y):
    """The whole vectorized test U < r* (n = 0 here): for each w next to r* 2**53, the
    candidate is rejected (U < r*, then K = 2 is even) for exactly the fraction
    clamp(r* 2**53 - w, 0, 1) of the values of the further uniform below den. The
    decision is "that uniform is below some X" (or constant), so it is checked at
    0, den - 1 and on both sides of the expected X.
    Caught: the proof of "below" as ``w <= lower`` instead of ``w + 1 <= lower``."""
    t = math.isqrt(p // q) + 1
    den = 2 * p * q * t * t
    r_star = Fraction((y * q * t - p) ** 2, den)
    assert r_star < 1
    centre = math.floor(r_star * 2**53)
    for w in range(centre - 2, centre + 3):
        fraction = min(max(r_star * 2**53 - w, 0), 1)
        x = int(fraction * den)  # an integer: (r* 2**53 - w) den is one
        for v in {0, max(x - 1, 0), min(x, den - 1), den - 1}:
            accept = _gaussian_accept_vec(_FirstBitsRng(w), np.array([y]), p, q, t,
                                          _Enumerate(v))
            assert (not accept[0]) == (v < x), (w, v, x)


# --------------------------------------------------------------------------------------
# 3. Bernoulli(exp(-1)) from one uniform below 20!
# --------------------------------------------------------------------------------------

class _ScriptedRng:
    """``integers(0, 20!, size)`` returns the given values; each later call (the
    Bernoulli(1/K) steps beyond K = 21) returns 0 (a hit) or its bound minus one (a miss)
    as scripted by ``later``."""

    def __init__(self, first, later):
        self.first, self.later = np.asarray(first, dtype=np.int64), list(later)

    def integers(self, low, high, size):
        if high == _FACTORIAL_BITS:
            assert size == self.first.size
            return self.first
        return np.full(size, 0 if self.later.pop(0) else high - 1, dtype=np.int64)


def _von_neumann_k(x):
    """Algorithm 1's K for gamma = 1 when its first 20 steps are read off X below 20!:
    K >= k + 1 iff X < 20! / k!, the events nested with P = 1 / k!."""
    return 1 + sum(x < _FACTORIAL_BITS // math.factorial(k) for k in range(1, 21))


def test_bernoulli_exp_minus_one_thresholds_give_the_exact_law_of_k():
    """At every threshold 20!/k! (and one below it) K is 1 + #{k : X < 20!/k!}, so
    P(K >= k + 1) = (20!/k!) / 20! = 1/k!, Algorithm 1's law; the output is K odd."""
    xs = []
    for k in range(1, 21):
        threshold = _FACTORIAL_BITS // math.factorial(k)
        xs += [threshold - 1, threshold, min(threshold + 1, _FACTORIAL_BITS - 1)]
    xs = sorted((set(xs) | {1, _FACTORIAL_BITS - 1}) - {0})  # X = 0 (K >= 21): below
    out = _bernoulli_exp_minus_one_vec(_ScriptedRng(xs, []), len(xs))
    expected = [_von_neumann_k(x) & 1 for x in xs]
    assert out.tolist() == [bool(e) for e in expected]
    assert {_von_neumann_k(x) for x in xs} == set(range(1, 21))


@pytest.mark.parametrize("later,odd", [([False], True),              # K = 21: miss at 1/21
                                       ([True, False], False),       # K = 22
                                       ([True, True, False], True)])  # K = 23
def test_bernoulli_exp_minus_one_goes_on_beyond_k_21(later, odd):
    out = _bernoulli_exp_minus_one_vec(_ScriptedRng([0], later), 1)
    assert out.tolist() == [odd]


def test_bernoulli_exp_minus_one_frequency():
    """10 million draws: sd 1.5e-4 against exp(-1) = 0.368 (a 1% error is 24 sd)."""
    bits = _bernoulli_exp_minus_one_vec(np.random.default_rng(1), 10_000_000)
    p = math.exp(-1)
    assert abs(bits.mean() - p) < 5 * math.sqrt(p * (1 - p) / bits.size)


# --------------------------------------------------------------------------------------
# 4. Uniform integers below small bounds, scaled to 33 bits
# --------------------------------------------------------------------------------------

class _RecordingRng:
    def __init__(self, values):
        self.values, self.highs = values, []

    def integers(self, low, high, size):
        self.highs.append(high)
        return np.asarray(self.values(high), dtype=np.int64)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 2**20 + 1, 2**32 - 1, 2**32, 2**33 - 1, 2**33,
                               3 * 2**40, 2**63 - 1])
def test_uniform_below_maps_equal_blocks(n):
    """numpy draws X below n 2**j (a multiple of n); X >> j maps each block
    [v 2**j, (v + 1) 2**j) to v: every v below n has exactly 2**j preimages."""
    rng = _RecordingRng(lambda high: [0, high - 1, high // 2])
    out = _uniform_below(rng, n, 3)
    (high,) = rng.highs
    j = (high // n).bit_length() - 1
    assert high == n << j and high >= min(n, 2**32)
    assert out.tolist() == [0, n - 1, (high // 2) >> j]
    # The block boundaries: the first and the last preimage of each probed v.
    for v in {0, 1 % n, n // 2, n - 1}:
        first, last = v << j, ((v + 1) << j) - 1
        rng = _RecordingRng(lambda high: [first, last])
        assert _uniform_below(rng, n, 2).tolist() == [v, v]


def test_uniform_below_three_is_uniform():
    counts = np.bincount(_uniform_below(np.random.default_rng(2), 3, 3_000_000), minlength=3)
    assert counts.size == 3 and stats.chisquare(counts).pvalue > 1e-4


# --------------------------------------------------------------------------------------
# 5. The acceptance of each candidate, and the whole pmf, at small sigma
# --------------------------------------------------------------------------------------

ACCEPT_CASES = [  # (p, q, |y| values): gamma from about 0.1 to 6
    (1, 4, [0, 1, 2]),
    (1, 1, [0, 2, 3]),
    (5, 2, [1, 4, 6]),
    (7, 3, [1, 4, 6]),
    (2**60, 1, [2**30 + 2**29, 2**30 + 2**31, 2**30 + 3 * 2**30 + 12345]),
    (2**50 + 1, 3, [0, 2**24, 3 * 2**24 + 7]),
]


def _acceptance_zscores(p, q, ys, n_draws, rng):
    t = math.isqrt(p // q) + 1
    src = _UniformIntegers(rng, n_words=16)
    for y0 in ys:
        gamma = Fraction((y0 * q * t - p) ** 2, 2 * p * q * t * t)
        prob = math.exp(-gamma)
        sign = np.where(rng.integers(0, 2, n_draws) == 1, 1, -1)  # |y| is what counts
        accept = _gaussian_accept_vec(rng, sign * y0, p, q, t, src)
        yield float(gamma), (accept.mean() - prob) / math.sqrt(prob * (1 - prob) / n_draws)


@pytest.mark.parametrize("p,q,ys", ACCEPT_CASES)
def test_acceptance_probability_is_exp_minus_gamma(p, q, ys):
    """Per-candidate test with 1,000,000 draws per |y|: the relative precision at
    acceptance probability P is sqrt((1 - P) / (P 10**6)), 0.7% at P = exp(-3)."""
    rng = np.random.default_rng([17, p % 1000, q % 1000])
    for gamma, z in _acceptance_zscores(p, q, ys, 1_000_000, rng):
        assert abs(z) < 5, (gamma, z)


def test_acceptance_test_catches_a_one_percent_error(monkeypatch):
    """c = 1 / (2 sigma^2) off by 1% (the mutant of tools/mutate_noise.py) at
    sigma^2 = 1 (t = 2, mu = 1/2) and |y| = 3 (gamma = 3.125: the acceptance is off by
    3%, about 13 standard deviations with 4,000,000 draws)."""
    constants = discrete._gaussian_float_constants
    monkeypatch.setattr(discrete, "_gaussian_float_constants",
                        lambda p, q, t: (constants(p, q, t)[0], 1.01 * constants(p, q, t)[1]))
    rng = np.random.default_rng(18)
    ((gamma, z),) = _acceptance_zscores(1, 1, [3], 4_000_000, rng)
    assert gamma == 3.125 and abs(z) > 5, z


def _exact_pmf_pvalue(z, log_weight):
    support = np.arange(-200, 201)
    weights = np.exp(log_weight(support.astype(float)))
    probs = weights / weights.sum()
    keep = probs * z.size >= 20  # cells with at least 20 expected draws; the rest pooled
    counts = np.bincount(np.clip(z, -200, 200) + 200, minlength=support.size)
    observed = np.append(counts[keep], counts[~keep].sum())
    expected = np.append(probs[keep], probs[~keep].sum()) * z.size
    return stats.chisquare(observed, expected).pvalue


@pytest.mark.parametrize("sigma2", [Fraction(1, 4), Fraction(1), Fraction(5, 2), Fraction(7, 3)])
def test_small_sigma_gaussian_matches_the_enumerated_pmf(sigma2):
    z = sample_discrete_gaussian(sigma2, size=2_000_000, rng=19)
    assert _exact_pmf_pvalue(z, lambda x: -x * x / (2 * float(sigma2))) > 1e-4


@pytest.mark.parametrize("t", [1, 2, 3, Fraction(7, 3),
                               Fraction(2**62 - 1, 2**63 - 1),   # s = 2**63 - 1, the largest
                               Fraction(2**62, 2**62 - 1),       # t = 2**62, the largest
                               Fraction(2**62 - 3, 2**60 + 1)])  # both about 2**61, non-dyadic
def test_small_t_laplace_matches_the_enumerated_pmf(t):
    z = sample_discrete_laplace(t, size=2_000_000, rng=20)
    assert _exact_pmf_pvalue(z, lambda x: -np.abs(x) / float(t)) > 1e-4
