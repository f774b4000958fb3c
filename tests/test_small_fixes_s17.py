"""Small correctness fixes: degenerate public parameters of the convex baselines,
the PLD calibration's work, the certificate's own weight check, user kernels kept
by the fitted models, GP regression and sample weights, and streaming ratings files."""

import collections
import inspect

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.validation import has_fit_parameter

import skdp.accounting._subsampled as subsampled
from skdp import BudgetAccountant
from skdp.accounting import calibrate_subsampled_gaussian
from skdp.kernel_methods import (
    PrivateGaussianProcessRegressor,
    PrivateHistogram,
    PrivateKernelClassifier,
    PrivateKernelDensity,
)
from skdp.linear_model import (
    DPSGDClassifier,
    PermutationSGDClassifier,
    PrivateFrankWolfeClassifier,
)
from skdp.linear_model._certificate import gradient_norm_bound
from skdp.linear_model._losses import LogisticLoss
from skdp.linear_model._objective import GLMObjective


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return X, (X[:, 0] > 0).astype(int)


# --------------------------------------------------------------------------
# 1. Degenerate but valid-looking public parameters: a clear ValueError before
#    the accountant is charged, or a correct fit.
# --------------------------------------------------------------------------
REFUSED = [
    # beta = data_norm^2 / 4 underflows to 0: the default step 1 / beta is infinite
    (PermutationSGDClassifier, {"data_norm": 1e-300}, "learning_rate"),
    (PermutationSGDClassifier, {"data_norm": 1e-170}, "learning_rate"),
    # beta = data_norm^2 / 4 overflows (was an OverflowError)
    (PermutationSGDClassifier, {"data_norm": 1e300}, "data_norm"),
    (PermutationSGDClassifier, {"data_norm": 1e300, "strongly_convex": True, "alpha": 0.1},
     "data_norm"),
    # Huber smoothness data_norm^2 / (2 h) overflows: was "use a smaller epsilon"
    (PermutationSGDClassifier, {"loss": "huber", "huber_h": 1e-300, "data_norm": 1e10},
     "data_norm"),
    # the sensitivity 2 R / (alpha b N) overflows: was "use a smaller epsilon"
    (PermutationSGDClassifier, {"strongly_convex": True, "alpha": 1e-310}, "sensitivity"),
    # the sensitivity 2 k eta R / b underflows to 0
    (PermutationSGDClassifier, {"data_norm": 1e-300, "learning_rate": 1e-300}, "sensitivity"),
    # DP-SGD: a weight decay factor 1 - learning_rate * alpha < -1 diverges (NaN weights)
    (DPSGDClassifier, {"learning_rate": 1e300, "alpha": 1e-4}, "alpha"),
    (DPSGDClassifier, {"learning_rate": 10.0, "alpha": 1.0,
                       "learning_rate_schedule": "constant"}, "alpha"),
    # a step learning_rate * data_norm that overflows (NaN weights)
    (DPSGDClassifier, {"learning_rate": 1e300, "data_norm": 1e300}, "learning_rate"),
    # Frank-Wolfe: the vertex-score sensitivity 2 C R / n overflows (noise scale inf)
    (PrivateFrankWolfeClassifier, {"data_norm": 1e300, "l1_radius": 1e300}, "sensitivity"),
    # ... or underflows to 0 (was "float division by zero")
    (PrivateFrankWolfeClassifier, {"data_norm": 1e-300, "l1_radius": 1e-300}, "sensitivity"),
]


@pytest.mark.parametrize("cls, params, word", REFUSED,
                         ids=[f"{c.__name__}-{p}" for c, p, _ in REFUSED])
def test_degenerate_parameters_refused_before_charge(data, cls, params, word):
    X, y = data
    accountant = BudgetAccountant(epsilon=100.0, delta=0.5)
    est = cls(classes=[0, 1], random_state=0, accountant=accountant, **params)
    with pytest.raises(ValueError, match=word) as info:
        est.fit(X, y)
    assert "Nothing was spent" in str(info.value)
    assert accountant.spent is None
    assert not hasattr(est, "coef_")


@pytest.mark.parametrize("cls", [PermutationSGDClassifier, DPSGDClassifier,
                                 PrivateFrankWolfeClassifier])
def test_integer_beyond_float_range_refused(data, cls):
    # float(10**400) is an OverflowError: now the ValueError of any infinite bound.
    X, y = data
    accountant = BudgetAccountant(epsilon=100.0, delta=0.5)
    with pytest.raises(ValueError, match="data_norm must be finite"):
        cls(data_norm=10**400, classes=[0, 1], accountant=accountant).fit(X, y)
    assert accountant.spent is None


WORKING = [
    # 2 / beta overflows to inf: any explicit step is allowed, and the sensitivity is tiny
    (PermutationSGDClassifier, {"data_norm": 1e-300, "learning_rate": 1.0}),
    (PermutationSGDClassifier, {"data_norm": 1e-300, "strongly_convex": True, "alpha": 0.1}),
    (PermutationSGDClassifier, {"epsilon": 1e-300}),
    (PermutationSGDClassifier, {"epsilon": 1e300}),
    (DPSGDClassifier, {"data_norm": 1e-300}),
    (DPSGDClassifier, {"learning_rate": 2.0, "alpha": 1.0}),
    (PrivateFrankWolfeClassifier, {"epsilon": 1e-300}),
    (PrivateFrankWolfeClassifier, {"epsilon": 1e300}),
]


@pytest.mark.parametrize("cls, params", WORKING, ids=[f"{c.__name__}-{p}" for c, p in WORKING])
def test_extreme_but_workable_parameters_fit(data, cls, params):
    X, y = data
    est = cls(classes=[0, 1], random_state=0, **params).fit(X, y)
    assert np.all(np.isfinite(est.coef_)) and np.all(np.isfinite(est.intercept_))


@pytest.mark.parametrize("cls", [PermutationSGDClassifier, DPSGDClassifier,
                                 PrivateFrankWolfeClassifier])
def test_one_row(cls):
    # n = 1 with a public label set and an explicit delta: a valid (noisy) fit.
    est = cls(classes=[0, 1], delta=1e-3, random_state=0).fit([[0.5, -0.5]], [1])
    assert np.all(np.isfinite(est.coef_))
    # With the default delta = 1 / n^2 = 1: a clear error, nothing spent.
    accountant = BudgetAccountant(epsilon=10.0, delta=0.5)
    with pytest.raises(ValueError, match="delta"):
        cls(classes=[0, 1], accountant=accountant).fit([[0.5, -0.5]], [1])
    assert accountant.spent is None


# --------------------------------------------------------------------------
# 2. The PLD calibration evaluates no (multiplier, grid) pair twice
# --------------------------------------------------------------------------
def test_pld_calibration_evaluates_each_point_once(monkeypatch):
    calls = collections.Counter()
    original = subsampled._epsilon

    def counting(noise_multiplier, sample_rate, steps, delta, accountant, neighbours,
                 interval=subsampled._PLD_COARSE):
        calls[(noise_multiplier, interval)] += 1
        return original(noise_multiplier, sample_rate, steps, delta, accountant, neighbours,
                        interval)

    monkeypatch.setattr(subsampled, "_epsilon", counting)
    sigma = calibrate_subsampled_gaussian(0.1, 1e-5, 0.05, 1000, accountant="pld",
                                          neighbours="replace-one")
    assert max(calls.values()) == 1, calls
    # The refinement still runs (a fine-grid evaluation) and the result still meets the target.
    assert any(interval == subsampled._PLD_FINE for _, interval in calls)
    monkeypatch.setattr(subsampled, "_epsilon", original)
    assert subsampled._pld_epsilon(sigma, 0.05, 1000, 1e-5, "replace-one",
                                   subsampled._PLD_FINE) <= 0.1


# --------------------------------------------------------------------------
# 3. gradient_norm_bound refuses weights its guarantee does not cover
# --------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [-0.5, np.nan, np.inf])
def test_gradient_norm_bound_refuses_bad_weights(bad):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    y = np.where(rng.random(20) < 0.5, -1.0, 1.0)
    w = rng.uniform(size=20)
    theta = rng.normal(size=3)
    good = gradient_norm_bound(GLMObjective(X, y, LogisticLoss(), 0.1, sample_weight=w), theta)
    assert np.isfinite(good)
    w[3] = bad
    with pytest.raises(ValueError, match="sample_weight"):
        gradient_norm_bound(GLMObjective(X, y, LogisticLoss(), 0.1, sample_weight=w), theta)


# --------------------------------------------------------------------------
# 4. A user's callable kernel: kept by reference in the parameters (as
#    scikit-learn does), copied into the fitted model
# --------------------------------------------------------------------------
class ScaledLinear:
    """A stateful kernel: ``scale * <a, b>``."""

    def __init__(self, scale=1.0):
        self.scale = scale

    def __call__(self, a, b):
        return self.scale * float(np.dot(a, b))


def test_mutating_a_callable_kernel_after_fit_changes_nothing(data):
    X, y = data
    kernel = ScaledLinear(1.0)
    clf = PrivateKernelClassifier(kernel, kernel_bound=4.0, epsilon=5.0, n_public=20,
                                  classes=[0, 1], random_state=0).fit(X[:, :2], y)
    assert clf.kernel is kernel and clf.get_params()["kernel"] is kernel
    before = clf.decision_function(X[:, :2])
    kernel.scale = 3.0
    np.testing.assert_array_equal(clf.decision_function(X[:, :2]), before)
    assert clone(clf).kernel is not kernel  # clone copies non-estimator parameters

    gp = PrivateGaussianProcessRegressor(ScaledLinear(1.0), epsilon=5.0, random_state=0)
    gp.fit(X[:, :2], np.tanh(X[:, 0]))
    before = gp.predict(X[:, :2])
    gp.kernel.scale = 3.0
    np.testing.assert_array_equal(gp.predict(X[:, :2]), before)


# --------------------------------------------------------------------------
# 5. PrivateGaussianProcessRegressor and sample weights
# --------------------------------------------------------------------------
def test_gp_regressor_documents_and_refuses_sample_weight(data):
    X, y = data
    gp = PrivateGaussianProcessRegressor(epsilon=1.0, random_state=0)
    assert not has_fit_parameter(gp, "sample_weight")
    with pytest.raises(TypeError, match="sample_weight"):
        gp.fit(X, np.tanh(X[:, 0]), sample_weight=np.ones(len(y)))
    privacy = inspect.getdoc(PrivateGaussianProcessRegressor).split("Privacy\n-------")[1]
    assert "sample_weight" in privacy.split("\n\n\n")[0].split("See Also")[0]


# --------------------------------------------------------------------------
# 6. load_ratings streams the file instead of holding several copies of it
# --------------------------------------------------------------------------
def _ratings_file(path, n_lines, seed=0):
    rng = np.random.default_rng(seed)
    u, i, r = rng.integers(1, 6041, n_lines), rng.integers(1, 3953, n_lines), rng.integers(
        1, 6, n_lines)
    path.write_text("".join(f"{a}::{b}::{c}::978300760\n" for a, b, c in zip(u, i, r)))
    return path


def test_load_ratings_peak_memory_is_a_small_multiple_of_the_file(tmp_path, monkeypatch):
    import tracemalloc
    import warnings

    import skdp.datasets._ratings as ratings_module
    from skdp.datasets import load_ratings

    path = _ratings_file(tmp_path / "ratings.dat", 100_000)
    # Blocks of a tenth of this (small, fast) file, as 4 MiB blocks are of a large one.
    monkeypatch.setattr(ratings_module, "_BLOCK_SIZE", 1 << 18, raising=False)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = load_ratings(path, items=np.arange(1, 3953))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert data.ratings.shape[1] == 3952 and data.ratings.nnz > 90_000
    # Whole-file parsing peaked at 8.4 times the file (the bytes, a copy with '::'
    # rewritten, a list of lines, their join, pandas' object columns).
    assert peak < 4.0 * size, peak / size


@pytest.mark.parametrize("block_size", [1, 7, 64])
def test_load_ratings_blocks_give_the_same_matrix(tmp_path, monkeypatch, block_size):
    import skdp.datasets._ratings as ratings_module

    path = tmp_path / "ratings.csv"
    path.write_bytes(b"\xef\xbb\xbfuserId,movieId,rating,timestamp\r\n1,10,4,1\r\n\r\n"
                     b"2,10,3,1\n2,30,5,1\r7,40,0,1\r\n2,30,1,1\n\n  \n9,20,2.5,1")
    expected = ratings_module.load_ratings(path, items=[10, 20, 30, 40])
    monkeypatch.setattr(ratings_module, "_BLOCK_SIZE", block_size)
    got = ratings_module.load_ratings(path, items=[10, 20, 30, 40])
    np.testing.assert_array_equal(got.ratings.toarray(), expected.ratings.toarray())
    np.testing.assert_array_equal(got.user_ids, expected.user_ids)
    assert got.ratings.nnz == 5 and got.user_ids.tolist() == [1, 2, 7, 9]


# --------------------------------------------------------------------------
# 7. Density estimators: a box, bin or bandwidth outside the float range is
#    refused before the charge (it fitted, then scored -inf or failed)
# --------------------------------------------------------------------------
DENSITY_REFUSED = [
    # the bin volume 1e-301^2 underflows to 0 (score_samples: ZeroDivisionError)
    (PrivateHistogram, {"bounds": (0.0, 1e-300)}, "volume"),
    # the box volume (2e300)^2 overflows (every score -inf)
    (PrivateHistogram, {"bounds": (-1e300, 1e300)}, "volume"),
    (PrivateKernelDensity, {"bounds": (-1e300, 1e300), "n_public": 20}, "volume"),
    # 1 / (2 h^2) overflows (ZeroDivisionError) or h^2 overflows (OverflowError)
    (PrivateKernelDensity, {"bandwidth": 1e-300, "n_public": 20}, "bandwidth"),
    (PrivateKernelDensity, {"bandwidth": 1e300, "n_public": 20}, "bandwidth"),
]


@pytest.mark.parametrize("cls, params, word", DENSITY_REFUSED,
                         ids=[f"{c.__name__}-{p}" for c, p, _ in DENSITY_REFUSED])
def test_density_degenerate_parameters_refused_before_charge(cls, params, word):
    X = np.random.default_rng(0).normal(size=(50, 2))
    accountant = BudgetAccountant(epsilon=100.0, delta=0.5)
    with pytest.raises(ValueError, match=word):
        cls(random_state=0, accountant=accountant, **params).fit(X)
    assert accountant.spent is None


def test_histogram_too_many_bins_fails_before_charge():
    # 1e12 cells: the counts cannot be allocated; that now fails before the charge.
    X = np.random.default_rng(0).normal(size=(50, 2))
    accountant = BudgetAccountant(epsilon=100.0, delta=0.5)
    with pytest.raises((MemoryError, ValueError)):
        PrivateHistogram(bins=10**6, random_state=0, accountant=accountant).fit(X)
    assert accountant.spent is None
