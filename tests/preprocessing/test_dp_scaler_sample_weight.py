"""DPStandardScaler: sample_weight and noise="discrete" (exact integer noise on a public grid)."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from skdp import BudgetAccountant
from skdp.mechanisms import discrete_gaussian_sigma2, discrete_laplace_scale
from skdp.preprocessing import DPStandardScaler
from skdp.preprocessing._dp_scaler import discrete_moment_noise, moment_sums
from skdp.testing import audit_epsilon

BOUNDS = [(0.0, 4.0), (-1.0, 1.0)]


class _NoNoise(DPStandardScaler):
    def _noise_scales(self, n_features, budget):
        mechanism, _, _ = super()._noise_scales(n_features, budget)
        return mechanism, 0.0, 0.0


class _QuarterNoise(DPStandardScaler):
    def _noise_scales(self, n_features, budget):
        mechanism, s1, s2 = super()._noise_scales(n_features, budget)
        return mechanism, s1 / 4, s2 / 4

    def _discrete_noise(self, n_features, n_samples, budget):
        mechanism, k, m, p1, p2 = super()._discrete_noise(n_features, n_samples, budget)
        if mechanism == "discrete_gaussian":  # sigma^2: a quarter of sigma is 1/16 of it
            return mechanism, k, m, p1 / 16, p2 / 16
        return mechanism, k, m, p1 / 4, p2 / 4


# --- hand-computed weighted statistics -------------------------------------------------------

def test_weighted_sums_by_hand_dense_and_sparse():
    X = np.array([[1.0, 0.5], [3.0, -2.0], [0.0, 0.0]])  # -2 is clipped to -1
    w = np.array([0.5, 1.0, 0.25])
    # z = (x - centre) / half-width: feature 0 (centre 2, hw 2): -0.5, 0.5, -1; feature 1: 0.5, -1, 0.
    sums, squares = moment_sums(X, np.array([0.0, -1.0]), np.array([4.0, 1.0]), w)
    np.testing.assert_allclose(sums, [0.5 * -0.5 + 0.5 - 0.25, 0.5 * 0.5 - 1.0])
    np.testing.assert_allclose(squares, [0.5 * 0.25 + 0.25 + 0.25, 0.5 * 0.25 + 1.0])
    sparse = moment_sums(sp.csr_matrix(X), np.array([0.0, -1.0]), np.array([4.0, 1.0]), w)
    np.testing.assert_allclose(sparse, (sums, squares), rtol=1e-15, atol=1e-15)


def test_noiseless_weighted_fit_divides_by_the_public_n():
    X = np.array([[1.0, 0.5], [3.0, -0.5], [4.0, 0.0], [2.0, 1.0]])
    w = np.array([0.5, 1.0, 0.0, 0.25])
    est = _NoNoise(epsilon=1.0, delta=1e-3, bounds=BOUNDS).fit(X, sample_weight=w)
    z = (X - [2.0, 0.0]) / [2.0, 1.0]
    m1, m2 = w @ z / 4, w @ z**2 / 4  # public n = 4, zero-weight row included
    np.testing.assert_allclose(est.mean_, [2.0, 0.0] + np.array([2.0, 1.0]) * m1)
    np.testing.assert_allclose(est.var_, np.array([4.0, 1.0]) * (m2 - m1**2))


@pytest.mark.parametrize("delta", [1e-5, 0.0])
def test_discrete_noiseless_limit_matches_the_rounded_sums(delta):
    # With a huge epsilon the noise is a fraction of a grid step: the release is the exact
    # weighted mean over n, up to the grid (weights to 2**-10, values to 1/K).
    rng = np.random.default_rng(3)
    X = rng.uniform(0.0, 4.0, size=(300, 1))
    w = rng.uniform(0.0, 1.0, size=300)
    est = DPStandardScaler(epsilon=1e9, delta=delta, bounds=(0.0, 4.0), noise="discrete",
                           random_state=0).fit(X, sample_weight=w)
    z = (X[:, 0] - 2.0) / 2.0
    assert est.mean_[0] == pytest.approx(2.0 + 2.0 * (w @ z) / 300, abs=1e-3)
    assert est.var_[0] == pytest.approx(4.0 * ((w @ z**2) / 300 - ((w @ z) / 300) ** 2),
                                        abs=1e-3)


# --- unit weights, zero weights -------------------------------------------------------------

@pytest.mark.parametrize("noise", ["continuous", "discrete"])
@pytest.mark.parametrize("delta", [None, 0.0])
def test_unit_weights_are_exactly_the_unweighted_fit(noise, delta):
    X = np.random.default_rng(0).uniform(0, 4, size=(50, 2))
    a = DPStandardScaler(delta=delta, bounds=BOUNDS, noise=noise, random_state=7).fit(X)
    b = DPStandardScaler(delta=delta, bounds=BOUNDS, noise=noise, random_state=7).fit(
        X, sample_weight=np.ones(50))
    c = DPStandardScaler(delta=delta, bounds=BOUNDS, noise=noise, random_state=7).fit(
        X, sample_weight=1.0)
    for other in (b, c):
        np.testing.assert_array_equal(a.mean_, other.mean_)
        np.testing.assert_array_equal(a.var_, other.var_)


def test_zero_weight_is_the_centre_of_the_bounds():
    # A zero-weight row contributes what a row at the centre (z = 0) does.
    X = np.array([[1.0, 0.5], [3.0, -0.5], [4.0, 1.0]])
    centred = X.copy()
    centred[2] = [2.0, 0.0]
    for noise in ("continuous", "discrete"):
        a = DPStandardScaler(bounds=BOUNDS, noise=noise, random_state=1).fit(
            X, sample_weight=[1.0, 1.0, 0.0])
        b = DPStandardScaler(bounds=BOUNDS, noise=noise, random_state=1).fit(centred)
        np.testing.assert_allclose(a.mean_, b.mean_, rtol=1e-12)
        np.testing.assert_allclose(a.var_, b.var_, rtol=1e-12)


# --- bad weights are refused before any charge ----------------------------------------------

@pytest.mark.parametrize("noise", ["continuous", "discrete"])
@pytest.mark.parametrize("weights, match", [
    ([1.0, -0.5, 1.0], "non-negative"),
    ([1.0, np.nan, 1.0], "finite"),
    ([1.0, 1.0], "shape"),
])
def test_bad_weights_are_refused_before_any_spend(noise, weights, match):
    acc = BudgetAccountant(epsilon=5.0, delta=1e-3)
    with pytest.raises(ValueError, match=match):
        DPStandardScaler(bounds=BOUNDS, noise=noise, accountant=acc).fit(
            np.zeros((3, 2)), sample_weight=weights)
    assert acc.spent is None


def test_bad_noise_option_is_refused_before_any_spend():
    acc = BudgetAccountant(epsilon=5.0, delta=1e-3)
    with pytest.raises(ValueError, match="noise"):
        DPStandardScaler(bounds=BOUNDS, noise="gaussian", accountant=acc).fit(np.zeros((3, 2)))
    assert acc.spent is None


# --- discrete calibration by hand -----------------------------------------------------------

def test_discrete_gaussian_parameters_by_hand():
    mechanism, k, m, s1, s2 = discrete_moment_noise(3, 1000, 1.0, 1e-5)
    assert (mechanism, k, m) == ("discrete_gaussian", 2**16, 2**10)
    unit = discrete_gaussian_sigma2(1.0, 1.0, 1e-5)
    rho = 0.030556595197639566  # CKS Cor. 13 at (1, 1e-5), decimal reference (test_zcdp_conversion.py)
    assert 1 / (2 * rho) <= unit <= 1 / (2 * rho) * (1 + 2**-22)  # rounded up to 24 bits
    assert s1 == 4 * 3 * (2**26) ** 2 * unit  # (2 sqrt(d) M K)^2 times sigma^2 at sensitivity 1
    assert s2 == s1 * 2**32 * Fraction(250, 693)  # K^2 / c', c' = 2.772 <= (11 + 5 sqrt 5) / 8
    assert Fraction(693, 250) <= (11 + 5 * math.sqrt(5)) / 8


def test_discrete_laplace_parameters_by_hand():
    mechanism, k, m, t1, t2 = discrete_moment_noise(2, 1000, 0.5, 0.0)
    assert (mechanism, k, m) == ("discrete_laplace", 2**16, 2**10)
    assert discrete_laplace_scale(1.0, 0.5) == 2
    assert t1 == 2 * 2 * 2**26 * 2  # 2 d M K / epsilon
    assert t2 == 2 * 2**16 * t1


def test_discrete_grid_shrinks_to_keep_integers_in_int64():
    # n K^2 M < 2**62: at n = 2**40 rows, K^2 < 2**12, so K = 2**5.
    assert discrete_moment_noise(1, 2**40, 1.0, 1e-5)[1] == 2**5
    with pytest.raises(ValueError, match="grid"):
        discrete_moment_noise(1, 2**53, 1.0, 1e-5)


def test_discrete_release_lies_on_the_public_grid():
    X = np.random.default_rng(0).uniform(-1, 1, size=(64, 1))
    est = DPStandardScaler(bounds=(-1.0, 1.0), noise="discrete", delta=1e-5,
                           random_state=0).fit(X)
    _, k, m, _, _ = discrete_moment_noise(1, 64, 1.0, 1e-5)
    noisy_sum = est.mean_[0] * 64 * k * m  # mean_ = noisy T1 / (M K n), not clipped here
    assert noisy_sum == round(noisy_sum)
    assert est.mechanism_ == "discrete_gaussian"


@pytest.mark.parametrize("delta", [1e-5, 0.0])
def test_discrete_noise_has_the_calibrated_spread(delta):
    n = 400
    X = np.where(np.arange(n) % 2, 0.5, -0.5)[:, None]
    fits = [DPStandardScaler(delta=delta, bounds=(-1.0, 1.0), noise="discrete",
                             random_state=seed).fit(X) for seed in range(1000)]
    mean = np.array([f.mean_[0] for f in fits])
    s1 = fits[0].noise_scales_[0]
    spread = 1.0 if delta else math.sqrt(2)  # a (discrete) Laplace of scale t: sd ~ sqrt(2) t
    assert np.std(n * mean) == pytest.approx(spread * s1, rel=0.08)


# --- audits ----------------------------------------------------------------------------------

def _audit(cls, rows, weights, delta, noise="continuous", n_runs=1500):
    """1 feature in [-1, 1], n = 200: the last row is ``rows[b]`` with weight ``weights[b]``."""
    others = np.where(np.arange(199) % 2, 0.5, -0.5)
    rest = np.linspace(0.2, 1.0, 199)  # fractional weights: the weighted code runs
    d0, d1 = (np.c_[np.r_[others, r], np.r_[rest, w]] for r, w in zip(rows, weights))

    def mechanism(data, rng):
        est = cls(epsilon=1.0, delta=delta, bounds=(-1.0, 1.0), noise=noise, random_state=rng)
        return est.fit(data[:, :1], sample_weight=data[:, 1]).mean_[0]

    return audit_epsilon(mechanism, d0, d1, n_runs=n_runs, n_select=500, delta=delta,
                         random_state=0).epsilon_lower_bound


@pytest.mark.parametrize("delta", [1e-5, 0.0])
def test_weight_zero_against_one_stays_under_epsilon(delta):
    assert _audit(DPStandardScaler, (1.0, 1.0), (0.0, 1.0), delta) <= 1.0


# (Continuous Laplace: the same weighted sums as the continuous Gaussian case, and the
# unweighted Laplace audit of test_preprocessing.py checks its noise.)
@pytest.mark.parametrize("noise, delta", [("continuous", 1e-5), ("discrete", 1e-5),
                                          ("discrete", 0.0)])
def test_weighted_worst_case_passes_and_catches_quarter_noise(noise, delta):
    pair = ((-1.0, 1.0), (1.0, 1.0))
    assert _audit(DPStandardScaler, *pair, delta, noise) <= 1.0
    assert _audit(_QuarterNoise, *pair, delta, noise) > 1.0


def test_discrete_rounding_is_round_half_up_of_the_exact_value():
    # z K = 1/2 - 2**-54 (and w M the same) round to 0: a float "+ 0.5" rounds
    # 1 - 2**-54 up to 1.0 and gave 1. (Either index keeps the privacy bound, which holds
    # for any k in [-K, K] and omega in [0, M]; the documented rounding is round half up.)
    from skdp.preprocessing._dp_scaler import _discrete_sums
    K, M = 2**16, 2**10
    just_below_half = 0.5 - 2.0**-54
    X = np.array([[just_below_half / K], [0.5 / K], [-0.5 / K]])
    lower, upper = np.array([-1.0]), np.array([1.0])
    sums, squares = _discrete_sums(X, lower, upper, None, K, M)
    assert sums.tolist() == [M * (0 + 1 + 0)] and squares.tolist() == [M * 1]
    w = np.array([just_below_half / M, 1.0, 1.0])
    sums, _ = _discrete_sums(np.ones((3, 1)), lower, upper, w, K, M)
    assert sums.tolist() == [(0 + M + M) * K]


@pytest.mark.parametrize("noise", ["continuous", "discrete"])
def test_weights_above_one_are_clipped_silently(noise):
    # A refusal (or a warning) only when some weight is above 1 would reveal that record.
    X = np.array([[0.5, -1.0], [1.0, 2.0], [-2.0, 0.0]])
    fits = []
    for weights in ([1.0, 1.5, 1.0], [1.0, 1.0, 1.0]):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fits.append(DPStandardScaler(bounds=BOUNDS, noise=noise, epsilon=1e6, delta=1e-3,
                                         random_state=0).fit(X, sample_weight=weights))
    np.testing.assert_array_equal(fits[0].mean_, fits[1].mean_)
