"""Exact discrete Laplace / discrete Gaussian samplers and the grid mechanisms."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from skdp.accounting import zcdp_to_dp
from skdp.mechanisms import (
    DiscreteGaussianMechanism,
    DiscreteLaplaceMechanism,
    discrete_gaussian_sigma2,
    discrete_laplace_scale,
    sample_bernoulli_exp,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)
from skdp.mechanisms._discrete import (
    _discrete_gaussian,
    _discrete_laplace,
    _grid_indices,
    _grid_l1_sensitivity,
    _grid_l2_sensitivity_squared,
    _scalar_draws,
    _UniformIntegers,
)
from skdp.testing import audit_epsilon

# --------------------------------------------------------------------------------------
# Samplers against their exact distributions
# --------------------------------------------------------------------------------------


def _laplace_pmf(t, z):
    r = math.exp(-1.0 / t)
    return (1 - r) / (1 + r) * np.exp(-np.abs(z) / t)


def _gaussian_pmf(sigma2, z):
    reach = int(40 * math.sqrt(sigma2)) + 40
    grid = np.arange(-reach, reach + 1)
    norm = np.exp(-grid.astype(float) ** 2 / (2 * sigma2)).sum()
    return np.exp(-np.asarray(z, dtype=float) ** 2 / (2 * sigma2)) / norm


def _chi_square_pvalue(samples, pmf, min_expected=40):
    """Chi-square p-value of integer samples against ``pmf``; bins merged to >= min_expected."""
    n = len(samples)
    reach = int(np.abs(samples).max()) + 1
    support = np.arange(-reach, reach + 1)
    expected = n * pmf(support)
    expected[0] += n * (1 - expected.sum() / n)  # the tails beyond the observed range
    observed = np.bincount(samples + reach, minlength=len(support)).astype(float)
    bins_obs, bins_exp, acc_o, acc_e = [], [], 0.0, 0.0
    for o, e in zip(observed, expected):
        acc_o, acc_e = acc_o + o, acc_e + e
        if acc_e >= min_expected:
            bins_obs.append(acc_o)
            bins_exp.append(acc_e)
            acc_o = acc_e = 0.0
    bins_obs[-1] += acc_o
    bins_exp[-1] += acc_e
    bins_obs, bins_exp = np.array(bins_obs), np.array(bins_exp)
    bins_exp *= bins_obs.sum() / bins_exp.sum()
    return stats.chisquare(bins_obs, bins_exp).pvalue


@pytest.mark.parametrize("t", [Fraction(1, 4), Fraction(3, 2), 1 / 0.3, 200])
def test_discrete_laplace_matches_its_pmf(t):
    z = sample_discrete_laplace(t, size=40_000, rng=1)
    assert z.dtype == np.int64
    assert _chi_square_pvalue(z, lambda k: _laplace_pmf(float(t), k)) > 1e-3
    # The test has power: a scale 10% off is rejected on the same draws.
    assert _chi_square_pvalue(z, lambda k: _laplace_pmf(1.1 * float(t), k)) < 1e-6


@pytest.mark.parametrize("sigma2", [Fraction(1, 10), Fraction(2),
                                    discrete_gaussian_sigma2(1, 1, 1e-5), Fraction(10_000)])
def test_discrete_gaussian_matches_its_pmf(sigma2):
    z = sample_discrete_gaussian(sigma2, size=40_000, rng=2)
    assert z.dtype == np.int64
    assert _chi_square_pvalue(z, lambda k: _gaussian_pmf(float(sigma2), k)) > 1e-3
    if sigma2 > 1:
        assert _chi_square_pvalue(z, lambda k: _gaussian_pmf(1.2 * float(sigma2), k)) < 1e-6


@pytest.mark.parametrize("sampler,args,pmf", [
    (_discrete_laplace, (3, 7), lambda k: _laplace_pmf(7 / 3, k)),
    (_discrete_laplace, (Fraction(0.3).numerator, Fraction(0.3).denominator),
     lambda k: _laplace_pmf(1 / 0.3, k)),
    (_discrete_gaussian, (2, 1), lambda k: _gaussian_pmf(2.0, k)),
    (_discrete_gaussian, (Fraction(24.015).numerator, Fraction(24.015).denominator),
     lambda k: _gaussian_pmf(24.015, k)),
], ids=["laplace-7/3", "laplace-float", "gaussian-2", "gaussian-float"])
def test_python_integer_path_matches_its_pmf(sampler, args, pmf):
    """The Python-integer samplers (any parameter size; the int64 path's fallback)."""
    z = _scalar_draws(sampler, args, 20_000, np.random.default_rng(8))
    assert _chi_square_pvalue(z, pmf) > 1e-3


def test_both_paths_are_taken():
    # Batches of 64 or more draws take the vectorized path (any rational scale of
    # practical size; the Python integers only finish the rare undecided comparisons,
    # with probability about 2**-45 each); fewer draws take the Python-integer path.
    rng = np.random.default_rng(9)
    calls = []
    original = _UniformIntegers.below
    try:
        _UniformIntegers.below = lambda self, n: calls.append(n) or original(self, n)
        sample_discrete_laplace(discrete_laplace_scale(1, 0.3), size=1000, rng=rng)
        sample_discrete_laplace(1 / 0.3, size=1000, rng=rng)
        sample_discrete_gaussian(discrete_gaussian_sigma2(1, 1, 1e-5), size=1000, rng=rng)
        sample_discrete_gaussian(24.015, size=1000, rng=rng)
        assert not calls
        sample_discrete_laplace(discrete_laplace_scale(1, 0.3), size=10, rng=rng)
        assert calls
        calls.clear()
        sample_discrete_gaussian(24.015, size=10, rng=rng)
        assert calls
    finally:
        _UniformIntegers.below = original


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2),
                                   Fraction(7)])
def test_bernoulli_exp_frequencies(gamma):
    rng = np.random.default_rng(3)
    n = 20_000
    hits = sum(sample_bernoulli_exp(gamma, rng) for _ in range(n))
    p = math.exp(-gamma)
    # Two-sided binomial test at 1e-4: a wrong probability (e.g. exp(-gamma / 2)) fails.
    assert stats.binomtest(hits, n, p).pvalue > 1e-4
    if gamma > 0:
        assert stats.binomtest(hits, n, math.exp(-gamma * 0.9)).pvalue < 1e-4


def test_bernoulli_exp_takes_exact_rationals():
    # A float gamma is its exact dyadic value; gamma = 0 is certain.
    assert sample_bernoulli_exp(0, rng=0) == 1
    assert sample_bernoulli_exp(0.0, rng=0) == 1
    with pytest.raises(ValueError, match=">= 0"):
        sample_bernoulli_exp(Fraction(-1, 2), rng=0)
    with pytest.raises(TypeError, match="rational"):
        sample_bernoulli_exp("1/2", rng=0)


def test_uniform_integers_are_uniform_beyond_64_bits():
    src = _UniformIntegers(np.random.default_rng(4), n_words=64)
    n = 3 * 2**64  # needs two words per draw and rejects about 1/4 of them
    top = np.array([src.below(n) >> 64 for _ in range(30_000)])
    assert set(np.unique(top)) == {0, 1, 2}
    assert stats.chisquare(np.bincount(top)).pvalue > 1e-3
    small = np.array([src.below(3) for _ in range(30_000)])
    assert stats.chisquare(np.bincount(small)).pvalue > 1e-3
    assert src.below(1) == 0


def test_sampler_shapes_and_extreme_scales():
    assert sample_discrete_laplace(2, size=(2, 3), rng=0).shape == (2, 3)
    assert isinstance(sample_discrete_gaussian(2, rng=0), np.int64)
    assert sample_discrete_laplace(2, size=0, rng=0).shape == (0,)
    # A tiny scale gives zeros (exactly, without underflow); a huge one stays exact integers.
    assert not sample_discrete_laplace(Fraction(1, 10**30), size=50, rng=0).any()
    big = sample_discrete_gaussian(Fraction(10**24), size=200, rng=0)
    assert 0.5e12 < np.abs(big).mean() < 1.5e12
    with pytest.raises(ValueError, match="size"):
        sample_discrete_laplace(2, size=-1, rng=0)
    with pytest.raises(ValueError, match="> 0"):
        sample_discrete_gaussian(0, rng=0)
    with pytest.raises(ValueError, match="finite"):
        sample_discrete_laplace(float("inf"), rng=0)


# --------------------------------------------------------------------------------------
# Calibration against hand computation
# --------------------------------------------------------------------------------------


def test_laplace_scale_hand_computed():
    assert discrete_laplace_scale(1.0, 0.5) == 2
    assert discrete_laplace_scale(3.0, 2.0) == Fraction(3, 2)
    # Rounded up from the exact Delta / epsilon (the float 0.3's exact value), by at most
    # a relative 2**-23: the privacy loss Delta / t never exceeds epsilon.
    t = discrete_laplace_scale(1.0, 0.3)
    assert 1 / Fraction(0.3) <= t <= (1 / Fraction(0.3)) * (1 + Fraction(1, 2**23))
    assert t.denominator & (t.denominator - 1) == 0 and t.numerator < 2**25
    # Grid g = 1/2, sensitivity 1, d = 3: D = 2 grid steps, L1 = ceil(2) + 3 - 1 = 4; t = 4 / 0.5.
    assert discrete_laplace_scale(1.0, 0.5, granularity=0.5, dimension=3) == 8
    # g = 2**-10, sensitivity 0.001: D = 1.024, ceil = 2 grid steps (d = 1); t = 2 / 0.25.
    assert discrete_laplace_scale(0.001, 0.25, granularity=2**-10) == 8
    mech = DiscreteLaplaceMechanism(epsilon=0.5, sensitivity=2.0, random_state=0)
    assert mech.scale == 4
    mech.epsilon = 2.0  # never cached
    assert mech.scale == 1


def test_gaussian_sigma2_hand_computed():
    # rho = 0.0305565951976 (Canonne-Kamath-Steinke Cor. 13 at (1, 1e-5), decimal reference
    # of test_zcdp_conversion.py); sigma^2 = 1 / (2 rho) = 16.3630796 (24.015441 with the
    # Lemma 2.1.13 rho 0.0208199 used before).
    sigma2 = discrete_gaussian_sigma2(1.0, 1.0, 1e-5)
    assert 16.3630796 < sigma2 < 16.3630796 * (1 + 2**-22)
    assert sigma2.denominator & (sigma2.denominator - 1) == 0  # dyadic, rounded up
    # Rounded up: the zCDP it gives converts back within (epsilon, delta).
    assert zcdp_to_dp(1 / (2 * float(sigma2)), 1e-5).epsilon <= 1.0
    assert discrete_gaussian_sigma2(3.0, 1.0, 1e-5) == pytest.approx(9 * float(sigma2), rel=1e-6)
    # Grid: g = 1, d = 2, D = 1 gives Delta^2 = 0 + 2 min(0, 0) + 2 = 2;
    # g = 1/2, d = 3, D = 2 gives Q = 3 and Delta^2 = 3 + 2 * 3 + 3 = 12.
    assert discrete_gaussian_sigma2(1.0, 1.0, 1e-5, granularity=1, dimension=2) == \
        pytest.approx(2 * float(sigma2), rel=1e-6)
    assert discrete_gaussian_sigma2(1.0, 1.0, 1e-5, granularity=0.5, dimension=3) == \
        pytest.approx(12 * float(sigma2), rel=1e-6)
    mech = DiscreteGaussianMechanism(epsilon=1.0, delta=1e-5, random_state=0)
    assert mech.sigma2 == sigma2
    mech.delta = 1e-3
    assert mech.sigma2 < sigma2


def test_grid_sensitivity_formulas():
    f = Fraction
    assert _grid_l1_sensitivity(f(1), f(1), 1) == 1
    assert _grid_l1_sensitivity(f(1, 2), f(1), 1) == 1  # ceil(0.5)
    assert _grid_l1_sensitivity(f(1), f(1), 2) == 2
    assert _grid_l1_sensitivity(f(3), None, 5) == 3  # integer query: no rounding term
    assert _grid_l2_sensitivity_squared(f(1), f(1), 1) == 1
    assert _grid_l2_sensitivity_squared(f(1), f(1), 2) == 2
    assert _grid_l2_sensitivity_squared(f(1), f(1, 2), 3) == 12  # D = 2
    # D = 4, d = 3: Q = 15, isqrt(45) = 6: 15 + 12 + 3.
    assert _grid_l2_sensitivity_squared(f(2), f(1, 2), 3) == 30
    # One coordinate: the shift is at most ceil(D), so ceil(D)^2 (the general bound gives
    # 1024^2 + 2046 at D = 1024, 6 at D = 2, 5 at D = 1.5).
    assert _grid_l2_sensitivity_squared(f(1), f(1, 1024), 1) == 1024**2
    assert _grid_l2_sensitivity_squared(f(2), f(1), 1) == 4
    assert _grid_l2_sensitivity_squared(f(3, 2), f(1), 1) == 4
    assert _grid_l2_sensitivity_squared(f(2), None, 7) == 4


@pytest.mark.parametrize("d", [1, 2, 3, 5])
@pytest.mark.parametrize("D", [0.5, 1.0, 1.7, 3.0])
def test_grid_sensitivity_bounds_hold_on_random_neighbours(d, D):
    """The integer L1 / L2 bounds cover every pair at distance D (random search, starting
    just below rounding boundaries where rounding gains the most)."""
    rng = np.random.default_rng(5)
    n = 20_000
    u = rng.uniform(-3, 3, size=(n, d))
    # L1 neighbours: a random direction with |.|_1 = D; L2 neighbours: |.|_2 = D.
    step1 = rng.dirichlet(np.ones(d), size=n) * D * rng.choice([-1, 1], size=(n, d))
    step2 = rng.normal(size=(n, d))
    step2 *= D / np.linalg.norm(step2, axis=1, keepdims=True)
    # Put the start just below a rounding boundary, where rounding gains the most.
    u = np.floor(u) + 0.5 - 1e-9 * rng.uniform(size=(n, d))
    for step, bound, norm in ((step1, _grid_l1_sensitivity, lambda w: np.abs(w).sum(1)),
                              (step2, _grid_l2_sensitivity_squared, lambda w: (w**2).sum(1))):
        w = np.floor(u + step + 0.5) - np.floor(u + 0.5)
        assert norm(w).max() <= bound(Fraction(D), Fraction(1), d)


def test_grid_rounding_is_exact_round_half_up():
    tricky = [0.49999999999999994, 0.5, -0.5, -0.49999999999999994, 2.5, -2.5, -1.5,
              2.0**52 - 0.5, -(2.0**52) + 0.5, 5e-324, -5e-324, -0.0, 1 - 2.0**-53, -1.0,
              -0.5000000000000001]
    x = np.concatenate([tricky, np.random.default_rng(10).normal(scale=1e3, size=2000)])
    for g in (1.0, 2.0**-10, 8.0):
        got = _grid_indices(x * g, Fraction(g))
        want = [math.floor(Fraction(v) + Fraction(1, 2)) for v in x]
        assert got.tolist() == want
    # Subnormal quotients (g > 1) round to 0 whatever bits the division loses.
    assert _grid_indices(np.array([5e-324, -5e-324, 1e-310]), Fraction(4)).tolist() == [0, 0, 0]
    # Integers are divided exactly, beyond float precision too: (2**60 + 2**9 - 1) / 2**10
    # is just below 2**50 + 1/2.
    ints = np.array([2**60 + 2**9 - 1, 2**60 + 2**9, -3, 3], dtype=np.int64)
    assert _grid_indices(ints, Fraction(2**10)).tolist() == [2**50, 2**50 + 1, 0, 0]
    assert _grid_indices(np.array([3], dtype=np.uint8), Fraction(1, 4)).tolist() == [12]
    # Beyond +-2**52 the index is clamped (int64's minimum, uint64, huge floats whose
    # quotient overflows to infinity, huge Python integers divided exactly).
    M = 2**52
    assert _grid_indices(np.array([np.iinfo(np.int64).min, 2**60, 5]), None).tolist() == [-M, M, 5]
    assert _grid_indices(np.array([2**64 - 1, 3], dtype=np.uint64), None).tolist() == [M, 3]
    assert _grid_indices(np.array([1e300, -1e300, 2.0**42 + 1]), Fraction(1, 2**10)).tolist() \
        == [M, -M, M]
    assert _grid_indices(np.array([2**62, -(2**62), 7]), Fraction(1, 4)).tolist() == [M, -M, 28]


def test_clamping_is_non_expansive_on_every_pair_around_the_edge():
    # Indices on both sides of +-2**52 (and far beyond): the clamped shift is never larger.
    M = 2**52
    k = np.array([M - 3, M - 1, M, M + 1, M + 2, 2**60, -M - 5, -M, -M + 2, 0], dtype=np.int64)
    for g in (None, Fraction(1)):
        c = _grid_indices(k, g)
        assert np.all(np.abs(c) <= M)
        assert np.all(np.abs(c[:, None] - c[None, :]) <= np.abs(k[:, None] - k[None, :]))


def test_neighbours_straddling_the_clamp_edge_are_released_and_private():
    """x0 = 2**52 - 1 is on the grid, x1 = 2**52 + 1 (L1 distance 2 = sensitivity) is beyond
    it: both are released (a refusal of x1 alone would tell them apart with certainty) and
    the audit stays under epsilon; a copy at 4 epsilon (a quarter of the noise) is caught."""
    def make(epsilon):
        def run(x, rng):
            mech = DiscreteLaplaceMechanism(epsilon=epsilon, sensitivity=2.0, granularity=1.0,
                                            random_state=rng)
            return mech(x) - 2.0**52  # exact: every output is an integer below 2**53
        return run

    x0, x1 = 2.0**52 - 1, 2.0**52 + 1
    res = audit_epsilon(make(1.0), x0, x1, n_runs=3000, random_state=7)
    assert res.epsilon_lower_bound <= 1.0, res
    res = audit_epsilon(make(4.0), x0, x1, n_runs=3000, random_state=8)
    assert res.epsilon_lower_bound > 1.0, res


def test_noisy_index_is_clamped_so_the_float_release_is_exact():
    # t = 2**51 grid steps at the edge 2**52: about 7% of the draws put the noisy index
    # beyond 2**53, where doubles are no longer consecutive integers; they come back as
    # exactly +-2**53 (post-processing), never as a rounded value.
    mech = DiscreteLaplaceMechanism(epsilon=2.0**-48, sensitivity=1.0, granularity=1.0,
                                    random_state=0)
    assert mech._noise_parameter(8) == 2**51
    out = np.concatenate([mech(np.full(8, 2.0**52)) for _ in range(100)])
    assert np.all(np.abs(out) <= 2.0**53) and np.all(out == np.floor(out))
    assert np.sum(out == 2.0**53) > 10
    # Values once refused are released from the clamped index (a huge epsilon: no noise).
    assert DiscreteLaplaceMechanism(epsilon=1e300, random_state=0)(2**53) == 2**52
    tiny = DiscreteGaussianMechanism(epsilon=1e300, delta=0.5, granularity=2.0**-3,
                                     random_state=0)
    assert tiny(np.array([1e300, -1e300, 0.3])).tolist() == [2.0**49, -(2.0**49), 0.25]


def test_a_quotient_overflowing_to_infinity_is_clamped_without_a_warning():
    # x / g = 1e300 * 2**100 overflows; a RuntimeWarning ("invalid value", inf - inf in
    # the rounding) would be raised only for such values: data-dependent output.
    mech = DiscreteLaplaceMechanism(epsilon=1e300, granularity=2.0**-100, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = mech(np.array([1e300, -1e300, 0.0]))
    assert out.tolist() == [2.0**-48, -(2.0**-48), 0.0]

def test_integer_scalars_and_python_integers_beyond_int64_are_released():
    # A scalar integer on a grid (a 0-d object array of Python integers) and integers
    # that numpy holds only as objects (beyond uint64, or >= 2**63 next to negatives):
    # released from the clamped index like any other value. A refusal of 2**64 alone would
    # tell it from its neighbour 2**64 - 1 (uint64, released) with certainty.
    M = 2**52
    noiseless = DiscreteLaplaceMechanism(epsilon=1e300, random_state=0)
    assert noiseless(2**64) == M and noiseless(2**64 - 1) == M
    assert noiseless([2**64, -(2**70), 5]).tolist() == [M, -M, 5]
    assert noiseless([2**63, -1]).tolist() == [M, -1]
    on_grid = DiscreteLaplaceMechanism(epsilon=1e300, granularity=0.25, random_state=0)
    assert on_grid(3) == 3.0 and on_grid(np.int8(-128)) == -128.0
    assert on_grid(2**70) == M / 4 and on_grid([2**70, 1]).tolist() == [M / 4, 1.0]
    with pytest.raises(TypeError, match="numeric"):
        noiseless([2**64, "3"])


def test_python_integers_next_to_floats_are_not_rounded_to_doubles_first():
    # numpy turns [2**53 + 3, 0.5] into doubles, rounding 2**53 + 3 to 2**53 + 4, which
    # crosses the grid's half-step at g = 8: index 2**50 + 1 instead of 2**50. Against the
    # neighbour 2**53 - 5 (index 2**50 - 1, distance 8 = one grid step) that is a shift of
    # 2 steps, beyond ceil(8 / g) = 1: the grid sensitivity would not hold.
    mech = DiscreteLaplaceMechanism(epsilon=1e300, granularity=8.0, random_state=0)
    assert mech([2**53 + 3, 0.5]).tolist() == [2.0**53, 0.0]
    assert mech([2**53 - 5, 0.5]).tolist() == [2.0**53 - 8, 0.0]
    assert mech([2**64 + 3, -1.5, 2**53 + 3]).tolist() == [2.0**55, -0.0, 2.0**53]
    integers = DiscreteLaplaceMechanism(epsilon=1e300, random_state=0)
    assert integers([2**64 + 1, 2.0, -3]).tolist() == [2**52, 2, -3]
    with pytest.raises(ValueError, match="integer-valued"):
        integers([2**64 + 1, 2.5])
    with pytest.raises(ValueError, match="finite"):
        mech([2**64, float("nan")])
    # An object array is read the same way (exactly), whatever made it.
    assert mech(np.array([2**53 + 3, 0.5], dtype=object)).tolist() == [2.0**53, 0.0]
    with pytest.raises(TypeError, match="numeric"):
        mech(np.array(["3"], dtype=object))


# --------------------------------------------------------------------------------------
# The rounding term is in the sensitivity: exact privacy loss on straddling pairs
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("g", [1.0, 2.0**-10, 4.0])
def test_laplace_rounding_term_bounds_the_exact_privacy_loss(g):
    # Neighbours at L1 distance g in d = 2 coordinates that both cross a rounding boundary:
    # the integer query moves by (1, 1), L1 = 2, not 1.
    x0 = np.array([0.4, 0.4]) * g
    x1 = np.array([0.9, 0.9]) * g
    w = _grid_indices(x1, Fraction(g)) - _grid_indices(x0, Fraction(g))
    assert np.abs(w).sum() == 2
    mech = DiscreteLaplaceMechanism(epsilon=1.0, sensitivity=g, granularity=g)
    # max_z log P[z] / P[z - w] = |w|_1 / t exactly; without "+ d - 1" it would be 2 epsilon.
    assert np.abs(w).sum() / mech._noise_parameter(2) == 1


@pytest.mark.parametrize("d,D", [(2, 1.0), (3, 2.0), (1, 1.0)])
def test_gaussian_rounding_term_bounds_the_exact_zcdp(d, D):
    g = 2.0**-3
    x0 = np.full(d, 0.5 - 2**-20) * g  # just below a boundary
    x1 = x0 + D / math.sqrt(d) * g  # L2 distance D * g, each coordinate crosses
    w = _grid_indices(x1, Fraction(g)) - _grid_indices(x0, Fraction(g))
    mech = DiscreteGaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=D * g, granularity=g)
    rho = float((w**2).sum() / (2 * mech._noise_parameter(d)))
    assert zcdp_to_dp(rho, 1e-5).epsilon <= 1.0
    # The bound is tight here: leaving the sqrt(d) rounding term out overspends.
    assert (w**2).sum() == _grid_l2_sensitivity_squared(Fraction(D), Fraction(1), d)
    if d > 1:
        assert zcdp_to_dp(rho * (w**2).sum() / D**2, 1e-5).epsilon > 1.0


# --------------------------------------------------------------------------------------
# Empirical audits on worst-case neighbours
# --------------------------------------------------------------------------------------


class _UnderNoisedLaplace(DiscreteLaplaceMechanism):
    def _noise_parameter(self, dimension):
        return super()._noise_parameter(dimension) / 4


class _UnderNoisedGaussian(DiscreteGaussianMechanism):
    def _noise_parameter(self, dimension):
        return super()._noise_parameter(dimension) / 16  # sigma / 4


class _NoRoundingTermLaplace(DiscreteLaplaceMechanism):
    def _noise_parameter(self, dimension):  # t = (sensitivity / g) / epsilon: rounding ignored
        return Fraction(self.sensitivity) / Fraction(self.granularity) / Fraction(self.epsilon)


def _counts(cls, **kw):
    def run(d, rng, n):
        return cls(random_state=rng, **kw)(np.full(n, d))
    return run


@pytest.mark.parametrize("honest,cheat,kw,n_runs", [
    (DiscreteLaplaceMechanism, _UnderNoisedLaplace, {"epsilon": 1.0}, 40_000),
    (DiscreteGaussianMechanism, _UnderNoisedGaussian, {"epsilon": 1.0, "delta": 1e-5}, 60_000),
], ids=["laplace", "gaussian"])
def test_audit_counts(honest, cheat, kw, n_runs):
    """Counts 0 vs 1: the real mechanism stays under its claim, noise / 4 is caught."""
    delta = kw.get("delta", 0.0)
    res = audit_epsilon(_counts(honest, **kw), 0, 1, n_runs=n_runs, delta=delta,
                        vectorized=True, random_state=1)
    assert res.epsilon_lower_bound <= kw["epsilon"], res
    res = audit_epsilon(_counts(cheat, **kw), 0, 1, n_runs=n_runs, delta=delta,
                        vectorized=True, random_state=2)
    assert res.epsilon_lower_bound > kw["epsilon"], res


def test_audit_grid_straddling_pair():
    """x = 0.49 vs 0.99 with g = 1 and sensitivity 0.5 round to 0 and 1: the integer
    sensitivity is ceil(0.5) = 1. Calibrated to it, the audit stays under epsilon; the copy
    that uses sensitivity / g = 0.5 (the rounding left out) is caught."""
    kw = {"epsilon": 1.0, "sensitivity": 0.5, "granularity": 1.0}

    def make(cls):
        def run(x, rng):
            return cls(random_state=rng, **kw)(x)
        return run

    res = audit_epsilon(make(DiscreteLaplaceMechanism), 0.49, 0.99, n_runs=10_000, random_state=3)
    assert res.epsilon_lower_bound <= 1.0, res
    res = audit_epsilon(make(_NoRoundingTermLaplace), 0.49, 0.99, n_runs=10_000, random_state=4)
    assert res.epsilon_lower_bound > 1.0, res


# --------------------------------------------------------------------------------------
# The grid, the API, bad input
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls,kw", [(DiscreteLaplaceMechanism, {}),
                                    (DiscreteGaussianMechanism, {"delta": 1e-6})])
@pytest.mark.parametrize("g", [2.0**-10, 1.0, 4.0])
def test_outputs_are_exact_multiples_of_the_granularity(cls, kw, g):
    x = np.random.default_rng(6).normal(scale=100, size=(20, 3))
    mech = cls(epsilon=0.7, sensitivity=3 * g, granularity=g, random_state=0, **kw)
    out = mech(x)
    assert out.shape == x.shape and out.dtype == np.float64
    k = out / g
    assert np.array_equal(k, np.round(k))
    # The snapped value (not x itself) is what the noise is added to.
    parameter = float(mech._noise_parameter(x.size))  # Laplace t or Gaussian sigma^2
    spread = parameter if cls is DiscreteLaplaceMechanism else math.sqrt(parameter)
    assert np.abs(k - np.floor(x / g + 0.5)).max() < 20 * spread


def test_integer_queries_return_integers():
    mech = DiscreteLaplaceMechanism(epsilon=1.0, random_state=0)
    assert isinstance(mech(5), int)
    assert mech(np.array([1, 2, 3], dtype=np.uint8)).dtype == np.int64
    assert mech([2.0, 3.0]).dtype == np.int64  # integral floats are counts too
    assert mech(np.zeros(0)).shape == (0,)


def test_same_seed_same_output_and_none_uses_os_entropy():
    x = np.arange(50)
    for cls, kw in ((DiscreteLaplaceMechanism, {}), (DiscreteGaussianMechanism, {"delta": 1e-5})):
        a = cls(epsilon=0.1, random_state=7, **kw)(x)
        b = cls(epsilon=0.1, random_state=7, **kw)(x)
        assert np.array_equal(a, b)
        c = cls(epsilon=0.1, random_state=None, **kw)(x)
        d = cls(epsilon=0.1, random_state=None, **kw)(x)
        assert not np.array_equal(c, d)  # 50 draws of scale >= 10 never all coincide


@pytest.mark.parametrize("kwargs,value,error,match", [
    ({}, 1.5, ValueError, "integer-valued"),
    ({}, [1, 2.25], ValueError, "integer-valued"),
    ({}, float("nan"), ValueError, "finite"),
    ({}, "3", TypeError, "numeric"),
    ({"granularity": 0.1}, 1.0, ValueError, "power of two"),
    ({"granularity": 3}, 1.0, ValueError, "power of two"),
    ({"granularity": 0.0}, 1.0, ValueError, "> 0"),
    ({"granularity": -0.5}, 1.0, ValueError, "> 0"),
    ({"granularity": 1.0}, [1.0, float("inf")], ValueError, "finite"),
    ({"epsilon": 0.0}, 1, ValueError, "epsilon"),
    ({"epsilon": -1.0}, 1, ValueError, "epsilon"),
    ({"epsilon": float("inf")}, 1, ValueError, "epsilon"),
    ({"sensitivity": 0.0}, 1, ValueError, "sensitivity"),
])
@pytest.mark.parametrize("cls", [DiscreteLaplaceMechanism, DiscreteGaussianMechanism])
def test_bad_input_fails_before_any_noise(cls, kwargs, value, error, match):
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    params = {"epsilon": 1.0, "random_state": rng, **kwargs}
    if cls is DiscreteGaussianMechanism:
        params["delta"] = 1e-5
    with pytest.raises(error, match=match):
        cls(**params)(value)
    assert rng.bit_generator.state == before  # nothing drawn


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-3])
def test_gaussian_refuses_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        DiscreteGaussianMechanism(epsilon=1.0, delta=delta)(3)


def test_extreme_budgets_give_clear_errors():
    # The zCDP budget underflows only if delta is tiny too: with the CKS conversion,
    # delta alone allows rho = e delta^2 / 2 (sigma = 60653 at delta = 1e-5).
    with pytest.raises(ValueError, match="too small"):
        discrete_gaussian_sigma2(1.0, 1e-200, 1e-300)
    assert float(discrete_gaussian_sigma2(1.0, 1e-200, 1e-5)) ** 0.5 == pytest.approx(
        1 / (math.e**0.5 * 1e-5), rel=1e-4)
    with pytest.raises(OverflowError, match="too large"):
        DiscreteLaplaceMechanism(epsilon=1e-300, random_state=0)(3)
    # A huge epsilon is a tiny, exact scale: the value comes back unchanged.
    assert DiscreteLaplaceMechanism(epsilon=1e300, random_state=0)(7) == 7


def test_samplers_speed_is_reported(capsys):
    """Not a benchmark: prints samples per second (run with -s) and checks a floor that
    catches an accidental slow path (e.g. rng.integers called per uniform integer)."""
    import time

    for name, draw in (
        ("laplace t=10", lambda: sample_discrete_laplace(10, size=20_000, rng=0)),
        ("gaussian s2=24", lambda: sample_discrete_gaussian(24, size=20_000, rng=0)),
    ):
        best = min(_timed(draw, time) for _ in range(3))
        rate = 20_000 / best
        print(f"{name}: {rate:,.0f} samples/s")
        assert rate > 5_000


def _timed(fn, time):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def test_mechanism_pickles_and_keeps_parameters():
    import pickle

    mech = DiscreteGaussianMechanism(epsilon=0.5, delta=1e-6, sensitivity=2.0,
                                     granularity=2**-8, random_state=3)
    copy = pickle.loads(pickle.dumps(mech))
    assert (copy.epsilon, copy.delta, copy.sensitivity, copy.granularity) == (0.5, 1e-6, 2.0, 2**-8)
    assert np.array_equal(copy([0.1, 0.2]), mech([0.1, 0.2]))


def test_output_shape_follows_the_input():
    mech = DiscreteLaplaceMechanism(epsilon=1.0, granularity=0.25, random_state=0)
    for shape in [(), (3,), (2, 2), (1, 0)]:
        out = mech(np.zeros(shape))
        assert np.shape(out) == shape


def test_docstring_examples_run():
    import doctest

    import skdp.mechanisms._discrete as module

    result = doctest.testmod(module)
    assert result.attempted >= 10 and result.failed == 0


# --------------------------------------------------------------------------------------
# Review (adversarial) regressions
# --------------------------------------------------------------------------------------


def test_extended_precision_floats_are_exact_or_refused():
    """x and x' = x - 1 (L1 distance 1, g = 1) must move the grid index by at most
    ceil(1) = 1. In x86 long double, 1.5 - 0.9 * 2**-53 rounds to the float64 1.5 (index 2)
    while 0.5 - 0.9 * 2**-53 rounds below 0.5 (index 0): w = 2 if the value is rounded
    through float64 first, twice the calibrated sensitivity."""
    tiny = np.longdouble(0.9) * np.longdouble(2.0) ** -53
    pair = np.array([1.5, 0.5], dtype=np.longdouble) - tiny
    for granularity in (Fraction(1), None):
        try:
            got = _grid_indices(pair, granularity)
        except (TypeError, ValueError):
            continue  # refused: nothing released
        exact = [math.floor(Fraction(*v.as_integer_ratio()) + Fraction(1, 2)) for v in pair]
        assert granularity is not None and got.tolist() == exact
    mech = DiscreteLaplaceMechanism(epsilon=1.0, granularity=1.0, random_state=0)
    try:
        out = [mech(np.array([v])) for v in pair]
    except TypeError:
        return
    assert pair.dtype.itemsize <= 8, out  # only plain doubles may be accepted


@pytest.mark.parametrize("cls,kw", [(DiscreteLaplaceMechanism, {}),
                                    (DiscreteGaussianMechanism, {"delta": 1e-5})])
def test_copies_of_an_unseeded_mechanism_draw_fresh_noise(cls, kw):
    """random_state=None: a pickled or deep-copied mechanism (joblib ships copies to its
    workers) must not replay the original's noise; two releases with the same noise give
    away the exact difference of the two query answers."""
    import copy
    import pickle

    mech = cls(epsilon=0.1, **kw)
    x = np.zeros(50, dtype=np.int64)
    for twin in (pickle.loads(pickle.dumps(mech)), copy.deepcopy(mech)):
        assert twin.random_state is None
        assert not np.array_equal(mech(x), twin(x))


@pytest.mark.parametrize("d", [1, 2])
def test_grid_bounds_hold_on_every_pair_of_a_dyadic_lattice(d):
    """Every pair of points of the lattice (Z / 8)^d in [-2, 2]^d: exact half-grid points
    (the round-half-up ties), negative values and -0.0 included; distances D in steps of 1/8."""
    axis = np.r_[np.arange(-16, 17) / 8, -0.0]
    u = np.array(np.meshgrid(*[axis] * d)).reshape(d, -1).T
    idx = _grid_indices(u, Fraction(1))
    assert idx.tolist() == [[math.floor(Fraction(v) + Fraction(1, 2)) for v in row] for row in u]
    v = u[:, None, :] - u[None, :, :]
    w = idx[:, None, :] - idx[None, :, :]
    l1v, l2v = np.abs(v).sum(-1), (v**2).sum(-1)
    l1w, l2w = np.abs(w).sum(-1), (w**2).sum(-1)
    for k in range(1, 25):
        D = Fraction(k, 8)  # k / 8 and k^2 / 64 are exact doubles
        assert l1w[l1v <= k / 8].max() <= _grid_l1_sensitivity(D, Fraction(1), d)
        assert l2w[l2v <= k * k / 64].max() <= _grid_l2_sensitivity_squared(D, Fraction(1), d)


def test_audit_two_coordinates_straddling_the_grid():
    """u = (0.4, 0.4) vs (0.9, 0.9), g = 1, L1 sensitivity 1: the integer query moves by
    (1, 1), L1 = 2 = ceil(1) + d - 1. The calibrated mechanism stays under epsilon; the
    copy without the "+ d - 1" rounding term (true epsilon 2) is caught."""
    kw = {"epsilon": 1.0, "sensitivity": 1.0, "granularity": 1.0}

    def make(cls):
        def run(x, rng):
            return float(np.sum(cls(random_state=rng, **kw)(x)))
        return run

    x0, x1 = np.array([0.4, 0.4]), np.array([0.9, 0.9])
    res = audit_epsilon(make(DiscreteLaplaceMechanism), x0, x1, n_runs=8000, random_state=5)
    assert res.epsilon_lower_bound <= 1.0, res
    res = audit_epsilon(make(_NoRoundingTermLaplace), x0, x1, n_runs=8000, random_state=6)
    assert res.epsilon_lower_bound > 1.0, res


def test_half_up_rounding_moves_by_at_most_ceil_of_the_distance():
    # |floor(a + 1/2) - floor(b + 1/2)| <= ceil(|a - b|): the integer floor(a') - floor(b')
    # is < (a' - b') + 1, so at most ceil(a' - b'). Checked on the grid indices, with the
    # float pairs where a rounded a + 0.5 would break it (0.5 - 2**-54 rounds up to 1).
    g = Fraction(1, 4)
    edge = 0.5 - 2.0**-54
    a = np.array([edge, edge, -edge, 0.5, 1.5, 2.5, -0.5, 1e15 + 0.5]) * 0.25
    b = np.array([-0.5, edge - 1.0, edge, -0.5, 0.5, 1.5, -1.5, 1e15 - 0.5]) * 0.25
    rng = np.random.default_rng(0)
    a = np.concatenate([a, rng.uniform(-3, 3, 2000)])
    b = np.concatenate([b, a[8:] + rng.choice([-1, 1], 2000) * rng.uniform(0, 0.6, 2000)])
    moved = np.abs(_grid_indices(a, g) - _grid_indices(b, g))
    bound = [math.ceil(abs(Fraction(x) - Fraction(y)) / g) for x, y in zip(a, b)]
    assert np.all(moved <= np.array(bound))
    assert _grid_indices(np.array([edge * 0.25]), g)[0] == 0  # exact, not fl(u + 0.5)
