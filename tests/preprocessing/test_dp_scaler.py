"""skdp.preprocessing: public-bounds scaling and the private standard scaler."""

import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import optimize, stats
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp import BudgetAccountant, PrivacyBudget
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.preprocessing import DPStandardScaler, PublicBoundsScaler
from skdp.preprocessing._dp_scaler import moment_noise_scales, moment_sums
from skdp.testing import audit_epsilon


# --- PublicBoundsScaler ------------------------------------------------------------------------

def test_public_bounds_scaler_maps_bounds_to_range_and_clips():
    X = np.array([[-3.0, 50.0], [0.0, 100.0], [2.0, 175.0], [9.0, 300.0]])
    scaler = PublicBoundsScaler(bounds=[(-2.0, 2.0), (50.0, 250.0)]).fit(X)
    # feature 0: [-2, 2] -> [-1, 1] is x / 2; feature 1: [50, 250] -> [-1, 1] is (x - 150) / 100
    expected = np.array([[-1.0, -1.0], [0.0, -0.5], [1.0, 0.25], [1.0, 1.0]])
    np.testing.assert_allclose(scaler.transform(X), expected)
    unit = PublicBoundsScaler(bounds=(0.0, 4.0), feature_range=(0.0, 1.0), clip=False).fit(X)
    np.testing.assert_allclose(unit.transform(X), X / 4.0)
    inside = X[1:3]
    np.testing.assert_allclose(scaler.inverse_transform(scaler.transform(inside)), inside)


def test_public_bounds_scaler_learns_nothing_from_the_data():
    rng = np.random.default_rng(0)
    a = PublicBoundsScaler(bounds=(0.0, 1.0)).fit(rng.normal(size=(50, 3)))
    b = PublicBoundsScaler(bounds=(0.0, 1.0)).fit(1e6 * rng.normal(size=(7, 3)))
    assert set(vars(a)) == set(vars(b))
    for name, value in vars(a).items():
        np.testing.assert_array_equal(value, getattr(b, name))
    assert not hasattr(a, "privacy_spent_")


def test_bounds_use_the_layout_of_the_kernel_estimators():
    """One pair per feature, as PrivateHistogram and PrivateKernelDensity read ``bounds``."""
    from skdp.kernel_methods import PrivateHistogram
    X = np.array([[10.0, 60.0], [90.0, 190.0]])
    bounds = [(0.0, 100.0), (50.0, 200.0)]
    scaler = PublicBoundsScaler(bounds=bounds).fit(X)
    np.testing.assert_array_equal(scaler.lower_, [0.0, 50.0])
    np.testing.assert_array_equal(scaler.upper_, [100.0, 200.0])
    hist = PrivateHistogram(bins=4, bounds=bounds, random_state=0).fit(X)
    np.testing.assert_array_equal(hist.box_, [[0.0, 100.0], [50.0, 200.0]])


@pytest.mark.parametrize("bounds, match", [
    (None, "needs public bounds"),
    ((1.0, 1.0), "lower < upper"),
    ([(0.0, 1.0), (2.0, 1.0), (0.0, 1.0)], "feature 1 has lower=2 >= upper=1"),
    ((0.0, [1.0, 2.0]), "pair"),
    # The other layout, a pair of bound vectors, is refused, not misread.
    (([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]), r"shape \(2,\) or \(3, 2\); got shape \(2, 3\)"),
    ((np.nan, 1.0), "finite"),
    ((0.0, np.inf), "finite"),
    ((0.0, 1.0, 2.0), "pair"),
    (5.0, "pair"),
])
def test_bad_bounds_are_refused(bounds, match):
    X = np.zeros((4, 3))
    for est in (PublicBoundsScaler(bounds=bounds), DPStandardScaler(bounds=bounds)):
        with pytest.raises(ValueError, match=match):
            est.fit(X)


@pytest.mark.parametrize("bounds", [
    (False, True),
    np.array([False, True]),
    [(0.0, True), (0.0, 2.0), (0.0, 1.0)],
    ("0", "1"),
])
def test_boolean_or_string_bounds_are_refused(bounds):
    """check_bounds meant to refuse booleans (as the old per-bound check did), but its test
    looked at an object array's dtype, which is never boolean: (False, True) became (0, 1).
    Strings inside, refused by the old check, were parsed: ("0", "1") became (0, 1)."""
    X = np.zeros((4, 3))
    for est in (PublicBoundsScaler(bounds=bounds), DPStandardScaler(bounds=bounds)):
        with pytest.raises(TypeError, match="real numbers"):
            est.fit(X)


def test_bounds_whose_width_overflows_are_refused_before_any_spend():
    """Finite bounds whose width upper - lower overflows gave scale_ = 0 (PublicBoundsScaler:
    every output the same) and infinite statistics (DPStandardScaler), silently."""
    X = np.zeros((4, 2))
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    for est in (PublicBoundsScaler(bounds=(-1e308, 1e308)),
                DPStandardScaler(bounds=(-1e308, 1e308), accountant=acc)):
        with pytest.raises(ValueError, match="width"):
            est.fit(X)
    assert acc.spent is None


@pytest.mark.parametrize("bounds", [(0.0, 1e200), (0.0, 1e-200)])
def test_dp_scaler_refuses_bounds_whose_variance_is_not_a_positive_float(bounds):
    """The variance (half-width^2 times [floor, 1]) overflowed to inf or underflowed to 0,
    so that scale_ was inf or 0 although the Notes promise positive and finite."""
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="width"):
        DPStandardScaler(bounds=bounds, accountant=acc).fit(np.zeros((4, 2)))
    assert acc.spent is None


def test_normalized_values_stay_in_the_unit_interval(monkeypatch):
    """The sensitivity 2 sqrt(d) needs every normalized value in [-1, 1]. Rounding in
    centre = (lower + upper) / 2 moved a value at the bound of narrow bounds far from 0 to
    -4/3 (one row could then move a sum by 7/3, not 2)."""
    import skdp.preprocessing._dp_scaler as module
    seen = []

    def spy(values, lower, upper):
        Z = normalized(values, lower, upper)
        seen.append(np.abs(Z).max())
        return Z

    normalized = module._normalized
    monkeypatch.setattr(module, "_normalized", spy)
    lower, upper = 1.0, 1.0 + 3 * 2.0**-52  # three floats apart
    X = np.array([[lower], [upper], [1.0 + 2.0**-52]])
    DPStandardScaler(bounds=(lower, upper), delta=1e-3, random_state=0).fit(X)
    assert seen and max(seen) <= 1.0, seen


@pytest.mark.parametrize("feature_range", [(1.0, 1.0), (0.0,), (0.0, np.nan), "ab"])
def test_bad_feature_range_is_refused(feature_range):
    est = PublicBoundsScaler(bounds=(0.0, 1.0), feature_range=feature_range)
    with pytest.raises(ValueError, match="feature_range"):
        est.fit(np.zeros((3, 2)))
    assert not hasattr(est, "lower_")


# --- DPStandardScaler: calibration -------------------------------------------------------------

def _balle_wang_delta(sensitivity, sigma, epsilon):
    # Balle and Wang (2018), Thm. 8, written out with scipy's normal CDF.
    a = sensitivity / (2 * sigma)
    b = epsilon * sigma / sensitivity
    return stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b)


# c = sigma_1^2 / sigma_2^2, the largest weight with (b - a)^2 + c (b^2 - a^2)^2 <= 4 on [-1, 1]^2
_C = (11 + 5 * math.sqrt(5)) / 8


@pytest.mark.parametrize("d, epsilon, delta", [(1, 1.0, 1e-5), (9, 0.5, 1e-6), (30, 2.0, 1e-8)])
def test_gaussian_noise_scales_match_hand_computation(d, epsilon, delta):
    sensitivity = 2.0 * math.sqrt(d)  # of (S1, sqrt(c) S2)
    hand = optimize.brentq(lambda s: _balle_wang_delta(sensitivity, s, epsilon) - delta,
                           0.1, 1e4, xtol=1e-12)
    mechanism, s1, s2 = moment_noise_scales(d, epsilon, delta)
    assert mechanism == "gaussian"
    assert s1 == pytest.approx(hand, rel=1e-8)
    assert s1 >= hand * (1 - 1e-10)  # never under the exact calibration
    assert s2 == pytest.approx(hand * 0.600566, rel=1e-6)  # 1 / sqrt(c)


def test_laplace_noise_scales_match_hand_computation():
    # L1 sensitivity of (S1, S2 / 2) is 2 d: b1 = 2 d / epsilon, b2 = 2 b1.
    assert moment_noise_scales(3, 0.5, 0.0) == ("laplace", 12.0, 24.0)
    assert moment_noise_scales(1, 2.0, 0.0) == ("laplace", 1.0, 2.0)


def test_sensitivity_bounds_hold_on_a_grid():
    # The per-feature bounds behind the calibration: max over a, b in [-1, 1] of
    # (b - a)^2 + c (b^2 - a^2)^2 (Gaussian) and |b - a| + |b^2 - a^2| / 2 (Laplace) are 4
    # and 2, reached at a = -1, b = 1. A larger weight on the squares (less noise on S2)
    # breaks them, first at b = 1, a = 2 - sqrt(5) (Gaussian).
    a, b = np.meshgrid(np.linspace(-1, 1, 2001), np.linspace(-1, 1, 2001))
    gaussian = (b - a) ** 2 + _C * (b**2 - a**2) ** 2
    assert np.max(gaussian) == pytest.approx(4.0, abs=1e-12)
    assert np.max(np.abs(b - a) + np.abs(b**2 - a**2) / 2) == pytest.approx(2.0, abs=1e-12)
    assert np.max((b - a) ** 2 + 1.02 * _C * (b**2 - a**2) ** 2) > 4.02
    assert np.max(np.abs(b - a) + np.abs(b**2 - a**2) / 1.5) > 2.03
    a0 = 2 - math.sqrt(5)
    assert (1 - a0) ** 2 + _C * (1 - a0**2) ** 2 == pytest.approx(4.0, rel=1e-12)


def test_fitted_scales_delta_and_budget():
    X = np.random.default_rng(0).uniform(-1, 1, size=(400, 3))
    est = DPStandardScaler(epsilon=0.7, bounds=(-2.0, 2.0), random_state=0).fit(X)
    assert est.delta_ == 1.0 / 400**2
    assert est.privacy_spent_ == PrivacyBudget(0.7, 1.0 / 400**2)
    assert est.mechanism_ == "gaussian"
    assert est.noise_scales_ == moment_noise_scales(3, 0.7, 1.0 / 400**2)[1:]
    pure = DPStandardScaler(epsilon=0.7, delta=0.0, bounds=(-2.0, 2.0), random_state=0).fit(X)
    assert pure.mechanism_ == "laplace" and pure.privacy_spent_ == PrivacyBudget(0.7, 0.0)


@pytest.mark.parametrize("delta", [1e-5, 0.0])
def test_released_noise_has_the_calibrated_spread(delta):
    # Many fits on fixed data: n * mean_ and n * (var_ + mean_^2) (in half-width units,
    # bounds [-1, 1]) vary by exactly the noise on S1 and S2 (a Laplace scale b has
    # standard deviation sqrt(2) b). Catches too much noise as well as too little.
    n = 400
    X = np.where(np.arange(n) % 2, 0.5, -0.5)[:, None]
    fits = [DPStandardScaler(delta=delta, bounds=(-1.0, 1.0), random_state=seed).fit(X)
            for seed in range(1500)]
    mean = np.array([f.mean_[0] for f in fits])
    second = np.array([f.var_[0] for f in fits]) + mean**2
    _, s1, s2 = moment_noise_scales(1, 1.0, delta)
    spread = 1.0 if delta else math.sqrt(2)
    assert np.std(n * mean) == pytest.approx(spread * s1, rel=0.07)
    assert np.std(n * second) == pytest.approx(spread * s2, rel=0.07)


# --- DPStandardScaler: audits ------------------------------------------------------------------

class _QuarterNoise(DPStandardScaler):
    def _noise_scales(self, n_features, budget):
        mechanism, s1, s2 = super()._noise_scales(n_features, budget)
        return mechanism, s1 / 4, s2 / 4


class _QuarterSquareNoise(DPStandardScaler):
    def _noise_scales(self, n_features, budget):
        mechanism, s1, s2 = super()._noise_scales(n_features, budget)
        return mechanism, s1, s2 / 4


def _audit(cls, differing, statistic, delta, n_runs=1500, n_select=500):
    """Audit on 1 feature in [-1, 1], n = 200, the last row being ``differing[0 or 1]``.

    The other rows alternate between -0.5 and 0.5, so the variance stays far
    above its floor and the noisy moments are never clipped.
    """
    others = np.where(np.arange(199) % 2, 0.5, -0.5)
    d0, d1 = (np.r_[others, v][:, None] for v in differing)

    def mechanism(X, rng):
        est = cls(epsilon=1.0, delta=delta, bounds=(-1.0, 1.0), random_state=rng).fit(X)
        return statistic(est)

    return audit_epsilon(mechanism, d0, d1, n_runs=n_runs, n_select=n_select, delta=delta,
                         random_state=0).epsilon_lower_bound


def _mean(est):
    return est.mean_[0]


def _second_moment(est):
    return est.var_[0] + est.mean_[0] ** 2


@pytest.mark.parametrize("delta", [1e-5, 0.0])
def test_audit_worst_case_pair_passes_and_catches_quarter_noise(delta):
    # A row moving from one bound to the other: the worst case of the joint release.
    assert _audit(DPStandardScaler, (-1.0, 1.0), _mean, delta) <= 1.0
    assert _audit(_QuarterNoise, (-1.0, 1.0), _mean, delta) > 1.0


def test_gaussian_audit_second_worst_case_catches_quarter_noise_on_squares():
    # The Gaussian release's other worst case, a row moving from 2 - sqrt(5) to 1, changes
    # the sum of squares too: the released second moment must carry its own noise. (The
    # Laplace copy with a quarter of the noise on S2 is only 1.56-DP, too close to 1 to
    # audit quickly; the spread test above checks that noise.)
    pair = (2 - math.sqrt(5), 1.0)
    # 3.1 times the honest signal-to-noise ratio of this statistic: more runs than above.
    assert _audit(DPStandardScaler, pair, _second_moment, 1e-5, n_runs=4000) <= 1.0
    assert _audit(_QuarterSquareNoise, pair, _second_moment, 1e-5, n_runs=4000) > 1.0


# --- DPStandardScaler: utility and edge cases --------------------------------------------------

def test_large_n_standardizes_like_standard_scaler():
    rng = np.random.default_rng(1)
    true_mean, true_std = np.array([40.0, -2.0, 0.3]), np.array([8.0, 0.5, 0.05])
    X = rng.normal(true_mean, true_std, size=(20_000, 3))
    bounds = [(0.0, 100.0), (-5.0, 5.0), (0.0, 1.0)]  # public ranges, wider than the data
    est = DPStandardScaler(epsilon=1.0, bounds=bounds, random_state=0).fit(X)
    Xt = est.transform(X)
    np.testing.assert_allclose(Xt.mean(axis=0), 0.0, atol=0.05)
    np.testing.assert_allclose(Xt.std(axis=0), 1.0, rtol=0.05)
    reference = StandardScaler().fit(X)
    # The noise on the mean is s1 / n half-widths; 5 of those bound the error.
    half_width = np.diff(bounds, axis=1).ravel() / 2
    np.testing.assert_array_less(np.abs(est.mean_ - reference.mean_),
                                 5 * est.noise_scales_[0] / 20_000 * half_width)
    np.testing.assert_allclose(est.scale_, reference.scale_, rtol=0.05)
    np.testing.assert_allclose(est.inverse_transform(Xt), np.clip(X, *np.transpose(bounds)), atol=1e-9)


def test_variance_floor_keeps_scale_positive():
    # Constant data: the true variance is 0, the released one is at least the floor.
    X = np.full((500, 2), 3.0)
    est = DPStandardScaler(epsilon=1.0, bounds=(0.0, 10.0), random_state=0).fit(X)
    floor = est.noise_scales_[1] / 500 * 5.0**2
    assert np.all(est.var_ >= floor) and np.all(np.isfinite(est.scale_))
    # Noise far larger than the data: the variance is the largest possible, and the
    # scaler reduces to centring with the bounds' half-width.
    tiny = DPStandardScaler(epsilon=1e-3, bounds=(0.0, 10.0), random_state=0).fit(X[:5])
    np.testing.assert_array_equal(tiny.scale_, 5.0)
    assert np.all(np.isfinite(tiny.transform(X)))


def test_transform_clips_to_bounds_unless_told_not_to():
    X = np.random.default_rng(0).uniform(0, 1, size=(300, 1))
    est = DPStandardScaler(bounds=(0.0, 1.0), random_state=0).fit(X)
    far = np.array([[5.0]])
    assert est.transform(far) == est.transform(np.array([[1.0]]))
    assert est.set_params(clip=False).transform(far) > est.transform(np.array([[1.0]]))


@pytest.mark.parametrize("X, params, error, match", [
    (np.zeros((10, 2)), dict(bounds=None), ValueError, "needs public bounds"),
    (np.zeros((10, 2)), dict(bounds=(1.0, 0.0)), ValueError, "lower < upper"),
    (np.r_[np.zeros((9, 2)), [[np.nan, 0.0]]], dict(bounds=(0.0, 1.0)), ValueError, "NaN"),
    (np.r_[np.zeros((9, 2)), [[np.inf, 0.0]]], dict(bounds=(0.0, 1.0)), ValueError, "infinity"),
    (np.zeros((10, 2)), dict(bounds=(0.0, 1.0), epsilon=0.0), ValueError, "epsilon"),
    (np.zeros((10, 2)), dict(bounds=(0.0, 1.0), clip="yes"), TypeError, "clip"),
    (np.zeros((10, 2)), dict(bounds=(0.0, 1.0), random_state="x"), TypeError, "random_state"),
])
def test_bad_input_refused_before_any_spend(X, params, error, match):
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    est = DPStandardScaler(accountant=acc, **params)
    with pytest.raises(error, match=match):
        est.fit(X)
    assert acc.spent is None
    assert not hasattr(est, "mean_")


# --- PublicBoundsScaler: sparse input ----------------------------------------------------------

@pytest.mark.parametrize("bounds, feature_range", [((-4.0, 4.0), (-1.0, 1.0)),
                                                   ([(0.0, 4.0), (0.0, 8.0)], (0.0, 1.0))])
@pytest.mark.parametrize("fmt", [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix])
def test_public_bounds_scaler_keeps_sparse_input_sparse(bounds, feature_range, fmt):
    X = np.array([[0.0, 3.0], [2.0, 0.0], [-5.0, 9.0], [0.0, 0.0]])
    est = PublicBoundsScaler(bounds=bounds, feature_range=feature_range).fit(fmt(X))
    np.testing.assert_array_equal(est.min_, 0.0)  # exactly: zeros stay zeros
    Xt = est.transform(fmt(X))
    assert sp.issparse(Xt)
    dense = PublicBoundsScaler(bounds=bounds, feature_range=feature_range).fit(X).transform(X)
    np.testing.assert_array_equal(Xt.toarray(), dense)
    np.testing.assert_allclose(est.inverse_transform(Xt).toarray(),
                               np.clip(X, est.lower_, est.upper_))


def test_public_bounds_scaler_refuses_sparse_input_whose_zeros_would_move():
    X = sp.csr_matrix(np.array([[0.0, 3.0], [2.0, 0.0]]))
    with pytest.raises(ValueError, match="sends 0 to 0"):
        PublicBoundsScaler(bounds=(-1.0, 4.0)).fit(X)  # 0 -> -0.6
    est = PublicBoundsScaler(bounds=(-1.0, 4.0)).fit(X.toarray())
    with pytest.raises(ValueError, match="sends 0 to 0"):
        est.transform(X)
    assert not est.__sklearn_tags__().input_tags.sparse
    assert PublicBoundsScaler(bounds=(-1.0, 1.0)).__sklearn_tags__().input_tags.sparse



def test_public_bounds_scaler_sparse_transform_clips_like_dense_or_refuses():
    # Bounds (1, 2) onto (1, 2) send 0 to 0, but clipping sends 0 to 1: fitted on dense data,
    # a sparse transform left the unstored zeros at 0, outside feature_range.
    X = np.array([[0.0, 1.5], [1.2, 0.0]])
    est = PublicBoundsScaler(bounds=(1.0, 2.0), feature_range=(1.0, 2.0)).fit(X)
    with pytest.raises(ValueError, match="contain 0"):
        est.transform(sp.csr_matrix(X))
    # clip=False: the same map, dense or sparse.
    est.set_params(clip=False)
    np.testing.assert_array_equal(est.transform(sp.csr_matrix(X)).toarray(), est.transform(X))


@pytest.mark.parametrize("bounds, feature_range", [((-1e300, 2e300), (-1e10, 1e10)),
                                                   ((-1e-200, 2e-200), (-1e-200, 1e-200))])
def test_public_bounds_scaler_maps_bounds_to_range_when_products_overflow(bounds, feature_range):
    # low * upper == lower * high decided whether the map sends 0 to 0; both products
    # overflowed to -inf (or underflowed to -0.0), so the offset was set to 0 wrongly.
    est = PublicBoundsScaler(bounds=bounds, feature_range=feature_range).fit(np.zeros((2, 1)))
    out = est.transform(np.array([[bounds[0]], [bounds[1]]])).ravel()
    np.testing.assert_allclose(out, feature_range, rtol=1e-12)
    assert not est.__sklearn_tags__().input_tags.sparse


def test_identity_transform_returns_a_new_array():
    # with_mean=False, with_std=False, clip=False: StandardScaler returns a copy; the caller's
    # array was returned itself, so writing to the output changed the input.
    X = np.random.default_rng(0).uniform(-1, 1, size=(50, 2))
    est = DPStandardScaler(bounds=(-1.0, 1.0), with_mean=False, with_std=False, clip=False,
                           random_state=0).fit(X)
    assert not np.shares_memory(est.transform(X), X)
    assert not np.shares_memory(est.inverse_transform(X), X)

# --- DPStandardScaler: with_mean, with_std, sparse input ---------------------------------------

def _sparse_data(seed=0, n=3000, d=4):
    rng = np.random.default_rng(seed)
    return rng.normal(2.0, 3.0, size=(n, d)) * (rng.random((n, d)) < 0.3)


def test_moment_sums_of_sparse_input_count_the_unstored_zeros():
    # Hand computation: bounds (-2, 6) map x to z = (clip(x) - 2) / 4, so z(0) = -0.5.
    X = sp.csc_matrix(np.array([[0.0, 8.0], [4.0, 0.0], [0.0, -6.0]]))
    sums, squares = moment_sums(X, np.array([-2.0, -2.0]), np.array([6.0, 6.0]))
    np.testing.assert_allclose(sums, [-0.5 + 0.5 - 0.5, 1.0 - 0.5 - 1.0])
    np.testing.assert_allclose(squares, [0.25 + 0.25 + 0.25, 1.0 + 0.25 + 1.0])


@pytest.mark.parametrize("fmt", [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix])
def test_sparse_fit_is_the_dense_release(fmt):
    X = _sparse_data()
    Xs = fmt(X)
    if fmt is sp.coo_matrix:  # a duplicate entry (summed, as toarray does) and a stored zero
        Xs = sp.coo_matrix((np.r_[Xs.data, 1.5, -1.5, 0.0], (np.r_[Xs.row, 0, 0, 1],
                                                            np.r_[Xs.col, 0, 0, 1])),
                           shape=X.shape)
    params = dict(epsilon=0.5, bounds=(-10.0, 10.0), with_mean=False, random_state=3)
    dense = DPStandardScaler(**params).fit(Xs.toarray())
    sparse = DPStandardScaler(**params).fit(Xs)
    np.testing.assert_allclose(sparse.mean_, dense.mean_, rtol=1e-12)
    np.testing.assert_allclose(sparse.var_, dense.var_, rtol=1e-12)
    Xt = sparse.transform(Xs)
    assert sp.issparse(Xt) and Xt.nnz <= Xs.nnz
    np.testing.assert_allclose(Xt.toarray(), dense.transform(Xs.toarray()), rtol=1e-12)
    np.testing.assert_allclose(sparse.inverse_transform(Xt).toarray(),
                               np.clip(Xs.toarray(), -10.0, 10.0), atol=1e-12)


def test_sparse_transform_clips_stored_entries_and_leaves_input_alone():
    est = DPStandardScaler(bounds=(-1.0, 1.0), with_mean=False, random_state=0).fit(
        np.random.default_rng(0).uniform(-1, 1, size=(2000, 1)))
    X = sp.csr_matrix(np.array([[5.0], [0.0], [-0.5]]))
    before = X.data.copy()
    out = est.transform(X).toarray().ravel()
    np.testing.assert_allclose(out, np.array([1.0, 0.0, -0.5]) / est.scale_[0])
    np.testing.assert_array_equal(X.data, before)


@pytest.mark.parametrize("params, X, match", [
    (dict(bounds=(-5.0, 5.0)), sp.csr_matrix(np.eye(4)), "with_mean=False"),
    (dict(bounds=(1.0, 5.0), with_mean=False), sp.csr_matrix(np.eye(4)), "contain 0"),
    (dict(bounds=(-5.0, 5.0), with_std="no"), np.eye(4), "with_std"),
    (dict(bounds=(-5.0, 5.0), with_mean=1), np.eye(4), "with_mean"),
])
def test_bad_sparse_or_flag_input_refused_before_any_spend(params, X, match):
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises((TypeError, ValueError), match=match):
        DPStandardScaler(accountant=acc, **params).fit(X)
    assert acc.spent is None


def test_sparse_transform_needs_zero_inside_the_bounds_when_clipping():
    est = DPStandardScaler(bounds=(1.0, 5.0), with_mean=False, random_state=0).fit(
        np.full((50, 1), 3.0))
    with pytest.raises(ValueError, match="contain 0"):
        est.transform(sp.csr_matrix(np.ones((2, 1))))
    assert sp.issparse(est.set_params(clip=False).transform(sp.csr_matrix(np.ones((2, 1)))))


@pytest.mark.parametrize("with_mean, with_std", [(True, False), (False, True), (False, False)])
def test_with_mean_and_with_std_follow_standard_scaler(with_mean, with_std):
    X = np.random.default_rng(1).normal([40.0, -2.0], [8.0, 0.5], size=(20_000, 2))
    bounds = [(0.0, 100.0), (-5.0, 5.0)]
    params = dict(epsilon=2.0, bounds=bounds, random_state=0)
    full = DPStandardScaler(**params).fit(X)
    est = DPStandardScaler(with_mean=with_mean, with_std=with_std, **params).fit(X)
    reference = StandardScaler(with_mean=with_mean, with_std=with_std).fit(X)
    for name in ("mean_", "var_", "scale_"):
        assert (getattr(est, name) is None) == (getattr(reference, name) is None), name
    # The same release whatever the options: only what transform uses changes.
    assert est.privacy_spent_ == full.privacy_spent_
    if est.mean_ is not None:
        np.testing.assert_array_equal(est.mean_, full.mean_)
    expected = X - (full.mean_ if with_mean else 0.0)
    expected = expected / (full.scale_ if with_std else 1.0)
    np.testing.assert_allclose(est.transform(X), expected)
    np.testing.assert_allclose(est.transform(X), reference.transform(X), rtol=0.05, atol=0.05)
    np.testing.assert_allclose(est.inverse_transform(est.transform(X)), X, atol=1e-9)


# --- pipelines ---------------------------------------------------------------------------------

def _disparate_scales(n=3000):
    # Public by construction: make_classification's features lie in about [-8, 8]
    # before the known scaling and shift below; the bounds come from that, not the data.
    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_redundant=0,
                               class_sep=1.5, random_state=0)
    scale = np.array([1e3, 1.0, 1e-2, 50.0, 1.0, 1e4])
    shift = np.array([5e3, 0.0, 1.0, 0.0, 10.0, 0.0])
    bounds = np.column_stack([shift - 8 * scale, shift + 8 * scale])
    return X * scale + shift, y, bounds


def test_pipeline_spends_the_sum_and_beats_raw_features():
    X, y, bounds = _disparate_scales(6000)
    X, X_test, y, y_test = X[:3000], X[3000:], y[:3000], y[3000:]
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    amp = DPLogisticRegressionAMP(epsilon=0.5, delta=2e-6, classes=[0, 1], random_state=0,
                                  accountant=acc)
    private = make_pipeline(
        DPStandardScaler(epsilon=0.5, delta=2e-6, bounds=bounds, random_state=0,
                         accountant=acc), amp).fit(X, y)
    spent = [step.privacy_spent_ for _, step in private.steps]
    assert acc.spent == spent[0] + spent[1] == PrivacyBudget(1.0, 4e-6)
    free_acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    free = make_pipeline(PublicBoundsScaler(bounds=bounds), clone(amp).set_params(
        epsilon=1.0, accountant=free_acc)).fit(X, y)
    assert free_acc.spent == PrivacyBudget(1.0, 2e-6)  # the model's budget only
    raw = clone(amp).set_params(epsilon=1.0, accountant=None).fit(X, y)
    raw_score = raw.score(X_test, y_test)
    assert private.score(X_test, y_test) > raw_score + 0.1
    assert free.score(X_test, y_test) > raw_score + 0.1


def test_cross_validation_counts_every_fit_of_both_steps():
    X, y, bounds = _disparate_scales(n=600)
    acc = BudgetAccountant(epsilon=float("inf"), delta=0.5)
    pipe = make_pipeline(
        DPStandardScaler(epsilon=0.3, delta=1e-6, bounds=bounds, accountant=acc),
        DPLogisticRegressionAMP(epsilon=0.7, delta=1e-6, classes=[0, 1], accountant=acc))
    cross_val_score(pipe, X, y, cv=3)
    assert [s.by for s in acc.spends] == ["DPStandardScaler", "DPLogisticRegressionAMP"] * 3
    assert acc.spent.epsilon == pytest.approx(3.0)
    # A refused scaler fit spends nothing and stops the pipeline before the model.
    small = BudgetAccountant(epsilon=0.2, delta=1e-3)
    with pytest.raises(Exception, match="exceed"):
        clone(pipe).set_params(dpstandardscaler__accountant=small).fit(X, y)
    assert small.spent is None


def test_pickle_round_trip_keeps_the_release():
    X = np.random.default_rng(0).uniform(0, 1, size=(100, 2))
    est = DPStandardScaler(bounds=(0.0, 1.0), random_state=0).fit(X)
    copy = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(copy.transform(X), est.transform(X))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the calibration's own, in mechanisms
def test_a_failing_noise_calibration_spends_nothing():
    # A calibration that fails on a public setting (here the discrete noise, whose zCDP
    # budget underflows at epsilon=delta=1e-300: with CKS Cor. 13 a moderate delta alone
    # buys a finite rho of about e delta^2 / 2; the analytic Gaussian failed at epsilon=1e300
    # until it got a closed form there) must fail before the accountant is charged, not
    # spend the budget on a fit that releases nothing.
    acc = BudgetAccountant(epsilon=1.0, delta=0.5)
    with pytest.raises(ValueError, match="underflows"):
        DPStandardScaler(epsilon=1e-300, delta=1e-300, bounds=(-1.0, 1.0), noise="discrete",
                         accountant=acc, random_state=0).fit(np.zeros((20, 2)))
    assert acc.spent is None
