"""The vectorized exact discrete Gaussian / Laplace samplers at large scales.

The pmf tests have power: each also runs a deliberately wrong sampler (a
denominator off by a factor 1.01, a missing rejection step) through the same
statistics and requires it to be rejected.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import skdp.mechanisms._discrete as discrete
from skdp.mechanisms import (
    DiscreteGaussianMechanism,
    DiscreteLaplaceMechanism,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)
from skdp.mechanisms._discrete import (
    _discrete_gaussian,
    _discrete_laplace,
    _gaussian_draws,
    _laplace_draws,
    _scalar_draws,
)

N_BINS = 60


def _binned(support, weights, n_bins=N_BINS):
    """Integer bin edges (about ``n_bins`` bins of equal mass) and their exact probabilities
    for the pmf proportional to ``weights`` on ``support`` (the mass outside is < 1e-30)."""
    cumulative = np.cumsum(weights) / weights.sum()
    edges = np.unique(support[np.searchsorted(cumulative, np.arange(1, n_bins) / n_bins)])
    cells = np.searchsorted(edges, support, side="right")
    probs = np.bincount(cells, weights=weights, minlength=edges.size + 1)
    return edges, probs / probs.sum()


def _gaussian_bins(sigma2):
    """Bin edges at the normal quantiles and the discrete Gaussian's bin probabilities.

    For sigma <= 2**12 the pmf is summed exactly over the integers. Beyond, the bin
    probability is the normal CDF difference at the half-integers: by Poisson
    summation the discrete Gaussian's normalizer is sigma sqrt(2 pi) up to a relative
    exp(-2 pi^2 sigma^2), and the midpoint rule over unit cells is off by at most
    max|phi''| / 24 per cell, a total below 1 / sigma^2 < 1e-7 per bin.
    """
    sigma = math.sqrt(sigma2)
    if sigma <= 2**12:
        support = np.arange(-int(40 * sigma) - 2, int(40 * sigma) + 3)
        return _binned(support, np.exp(-support.astype(float) ** 2 / (2 * sigma2)))
    edges = np.unique(np.round(sigma * stats.norm.ppf(np.arange(1, N_BINS) / N_BINS)))
    cdf = stats.norm.cdf(np.concatenate([[-np.inf], (edges - 0.5) / sigma, [np.inf]]))
    return edges, np.diff(cdf)


def _chi_square(z, edges, probs):
    counts = np.bincount(np.searchsorted(edges, z, side="right"), minlength=probs.size)
    return stats.chisquare(counts, probs * z.size).pvalue


def _pmf_check(z, sigma2):
    """Chi-square p-value on the quantile bins and two z-scores: of the sample variance
    and of the mean of h(z) = |z| / sigma - z^2 / (2 sigma^2), the most powerful
    statistic against a denominator 2 p q t^2 off by a factor k (whose acceptance
    exp(-k (|y| - mu)^2 / (2 sigma^2)) gives a density proportional to
    exp(-k z^2 / (2 sigma^2) + (k - 1) |z| / sigma) for large sigma)."""
    pvalue = _chi_square(z, *_gaussian_bins(float(sigma2)))
    x = z.astype(float) / math.sqrt(sigma2)
    # For the normal: E x^2 = 1, Var x^2 = 2; E h = sqrt(2 / pi) - 1/2 and Var h =
    # E x^2 + E x^4 / 4 - E |x|^3 - (E h)^2 (the discrete Gaussian's moments agree to a
    # relative 1e-300 beyond sigma = 4).
    h_mean = math.sqrt(2 / math.pi) - 0.5
    h_var = 1 + 3 / 4 - 2 * math.sqrt(2 / math.pi) - h_mean**2
    zscores = ((np.mean(x * x) - 1) / math.sqrt(2 / z.size),
               (np.mean(np.abs(x) - x * x / 2) - h_mean) / math.sqrt(h_var / z.size))
    return pvalue, *zscores


def _honest(pvalue, *zscores):
    return pvalue > 1e-3 and max(map(abs, zscores)) < 4.5


def _caught(pvalue, *zscores):
    return pvalue < 1e-3 or max(map(abs, zscores)) > 4.5


def test_sigma_2_30_matches_the_exact_pmf_and_a_denominator_off_by_1_percent_is_caught(
        monkeypatch):
    """8 million draws: the statistic h has a standardized effect of 0.0025 per draw
    against the factor 1.01 (computed by numerical integration), a z-score near 7."""
    sigma2 = Fraction(2**60)
    n = 8_000_000
    z = sample_discrete_gaussian(sigma2, size=n, rng=11)
    assert z.dtype == np.int64
    assert _honest(*_pmf_check(z, sigma2)), _pmf_check(z, sigma2)
    constants = discrete._gaussian_float_constants
    monkeypatch.setattr(discrete, "_gaussian_float_constants",
                        lambda p, q, t: (constants(p, q, t)[0], 1.01 * constants(p, q, t)[1]))
    wrong = sample_discrete_gaussian(sigma2, size=n, rng=11)
    assert _caught(*_pmf_check(wrong, sigma2)), _pmf_check(wrong, sigma2)


@pytest.mark.parametrize("log2_sigma", [10, 40])
def test_large_sigma_matches_the_exact_pmf_and_a_missing_step_is_caught(log2_sigma,
                                                                       monkeypatch):
    sigma2 = Fraction(2 ** (2 * log2_sigma))
    z = sample_discrete_gaussian(sigma2, size=1_000_000, rng=12)
    assert _honest(*_pmf_check(z, sigma2)), _pmf_check(z, sigma2)
    # A missing rejection step: the exp(-1)^n part of the acceptance exp(-gamma).
    monkeypatch.setattr(discrete, "_bernoulli_exp_integer_vec",
                        lambda rng, n: np.ones(n.size, dtype=bool))
    wrong = sample_discrete_gaussian(sigma2, size=100_000, rng=12)
    assert _caught(*_pmf_check(wrong, sigma2)), _pmf_check(wrong, sigma2)


def test_non_dyadic_sigma2_matches_its_pmf():
    # sigma^2 = (2**50 + 1) / 3: q = 3, nothing is a power of two.
    sigma2 = Fraction(2**50 + 1, 3)
    z = sample_discrete_gaussian(sigma2, size=400_000, rng=12)
    assert _honest(*_pmf_check(z, sigma2)), _pmf_check(z, sigma2)


class _Counter:
    def __init__(self, function):
        self.function, self.calls = function, 0

    def __call__(self, *args):
        self.calls += 1
        return self.function(*args)


def test_exact_completion_is_exercised_and_keeps_the_distribution(monkeypatch):
    """A huge error-bound factor sends many tests to the Python-integer completion:
    the lazy comparison's (more bits of the same uniform) and the remainder's
    (gamma - n possibly above 1). The distribution must not change."""
    sigma2 = Fraction(2**40)
    n = 50_000
    reference = sample_discrete_gaussian(sigma2, size=n, rng=13)
    finish = _Counter(discrete._finish_comparison)  # the lazy comparisons' completion
    remainder = _Counter(discrete._bernoulli_exp)  # Bernoulli(exp(-(gamma - n))) exactly
    monkeypatch.setattr(discrete, "_finish_comparison", finish)
    monkeypatch.setattr(discrete, "_bernoulli_exp", remainder)
    monkeypatch.setattr(discrete, "_ERROR_BOUND_FACTOR", 2.0**47)
    forced = sample_discrete_gaussian(sigma2, size=n, rng=14)
    assert finish.calls > 1000 and remainder.calls > 1000, (finish.calls, remainder.calls)
    assert _honest(*_pmf_check(forced, sigma2)), _pmf_check(forced, sigma2)
    # Same distribution as the default run: a two-sample chi-square on the bins.
    edges, _ = _gaussian_bins(float(sigma2))
    table = [np.bincount(np.searchsorted(edges, x, side="right"), minlength=edges.size + 1)
             for x in (reference, forced)]
    assert stats.chi2_contingency(table).pvalue > 1e-3

    # A completion that answers "not below" whenever the 53 bits do not decide is
    # visibly wrong on the same forced run: the test has power.
    monkeypatch.setattr(discrete, "_finish_comparison", lambda src, scaled, w, den: False)
    wrong = sample_discrete_gaussian(sigma2, size=n, rng=14)
    assert _caught(*_pmf_check(wrong, sigma2)), _pmf_check(wrong, sigma2)


def _two_sample_pvalue(x, y):
    edges = np.unique(np.quantile(np.concatenate([x, y]), np.linspace(0, 1, 30)[1:-1]))
    table = [np.bincount(np.searchsorted(edges, v, side="right"), minlength=edges.size + 1)
             for v in (x, y)]
    return stats.chi2_contingency(table).pvalue


@pytest.mark.parametrize("kind,args", [
    ("gaussian", (1, 3)),                  # t = 1, mu = 1/3
    ("gaussian", (1, 1)),                  # sigma^2 = 1: t = 2
    ("gaussian", (10**30 + 7, 10**28)),    # a huge non-dyadic q
    ("gaussian", (2**61 + 1, 2**59)),      # sigma^2 just above 4 with 62-bit integers
    ("laplace", (2**60 + 1, 2**62)),       # t = 2**62: the largest on the vectorized path
    ("laplace", (3, 7)),
])
def test_vectorized_and_python_paths_agree(kind, args):
    support = np.arange(-400, 401)
    if kind == "gaussian":
        sampler, draws = _discrete_gaussian, _gaussian_draws
        weights = np.exp(-support.astype(float) ** 2 * args[1] / (2 * args[0]))
    else:  # P[z] proportional to exp(-|z| s / t)
        sampler, draws = _discrete_laplace, _laplace_draws
        weights = np.exp(-np.abs(support) * (args[0] / args[1]))
    bins = _binned(support, weights, n_bins=20)
    fast = draws(*args, 200_000, np.random.default_rng(15))
    slow = _scalar_draws(sampler, args, 20_000, np.random.default_rng(16))
    assert _chi_square(fast, *bins) > 1e-3
    assert _chi_square(slow, *bins) > 1e-3
    assert _two_sample_pvalue(fast, slow) > 1e-3


def test_path_choice(monkeypatch):
    vec = _Counter(discrete._discrete_gaussian_vec)
    monkeypatch.setattr(discrete, "_discrete_gaussian_vec", vec)
    # The vectorized path: 2**-60 <= sigma^2 < 2**124 (any rational) and >= 64 draws.
    sample_discrete_gaussian(Fraction(1, 2**60), size=64, rng=0)
    sample_discrete_gaussian(24.015, size=300, rng=0)
    sample_discrete_gaussian(Fraction(2**60 + 1, 3), size=300, rng=0)
    assert vec.calls == 3
    assert not sample_discrete_gaussian(Fraction(1, 2**61), size=300, rng=0).any()
    sample_discrete_gaussian(Fraction(2**60), size=63, rng=0)
    assert vec.calls == 3


def test_huge_sigma_gives_int64_draws_with_the_right_variance():
    sigma2 = Fraction(2**120)  # sigma = 2**60
    z = sample_discrete_gaussian(sigma2, size=100_000, rng=17)
    assert z.dtype == np.int64
    ratio = np.mean((z.astype(float) / 2.0**60) ** 2)
    assert abs(ratio - 1) < 5 * math.sqrt(2 / z.size)
    # The discrete Laplace of scale t = 2**56 (its draws reach 2**63 at 128 t):
    # variance 2 t^2 (1 + O(1 / t^2)), and Var(Z^2) = 20 t^4.
    lap = sample_discrete_laplace(Fraction(2**56), size=100_000, rng=18)
    ratio = np.mean((lap.astype(float) / 2.0**56) ** 2) / 2
    assert abs(ratio - 1) < 5 * math.sqrt(5 / lap.size)


@pytest.mark.parametrize("draw", [
    lambda: sample_discrete_gaussian(Fraction(2**123), size=1000, rng=0),  # vectorized
    lambda: sample_discrete_gaussian(Fraction(2**126), size=300, rng=0),   # Python path
    lambda: sample_discrete_laplace(2**62, size=1000, rng=0),
    lambda: sample_discrete_laplace(2**63, size=300, rng=0),
])
def test_draws_beyond_int64_raise(draw):
    with pytest.raises(OverflowError, match="too large"):
        draw()


def test_large_sigma_speed(capsys):
    """Not a benchmark (run with -s): a floor well above the Python path's ~35,000/s."""
    import time

    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        sample_discrete_gaussian(Fraction(2**60), size=200_000, rng=0)
        best = min(best, time.perf_counter() - start)
    print(f"discrete Gaussian sigma = 2**30: {200_000 / best:,.0f} samples/s")
    assert 200_000 / best > 200_000


@pytest.mark.parametrize("granularity", [2.0**901, 2.0**-901, Fraction(1, 2**2000),
                                         2**1000])
@pytest.mark.parametrize("cls", [DiscreteLaplaceMechanism, DiscreteGaussianMechanism])
def test_granularity_out_of_range_fails_before_any_noise(cls, granularity):
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    kw = {"delta": 1e-5} if cls is DiscreteGaussianMechanism else {}
    with pytest.raises(ValueError, match="2\\*\\*-900 and 2\\*\\*900"):
        cls(epsilon=1.0, granularity=granularity, random_state=rng, **kw)(1.0)
    assert rng.bit_generator.state == before


@pytest.mark.parametrize("granularity", [2.0**900, 2.0**-900])
def test_granularity_at_the_range_ends_is_exact(granularity):
    mech = DiscreteLaplaceMechanism(epsilon=1.0, sensitivity=granularity,
                                    granularity=granularity, random_state=0)
    out = mech(np.array([0.0, 3 * granularity]))
    assert np.all(np.isfinite(out))
    k = out / granularity
    assert np.array_equal(k, np.round(k)) and abs(k[1] - k[0] - 3) < 60
