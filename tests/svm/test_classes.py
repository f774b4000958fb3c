"""Private SVMs (seed 001): noise scales, feature maps, certified solving, audits, errors."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel
from sklearn.svm import LinearSVC

from skdp import BudgetAccountant, PrivacyBudget, PrivacyLeakWarning
from skdp.datasets import make_concentric_spheres
from skdp.exceptions import CertificationError
from skdp.kernel_approximation import RandomFourierFeatures
from skdp.kernel_approximation._rff import sample_frequencies
from skdp.mechanisms import gaussian_sigma_analytic
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF
from skdp.svm._base import svm_noise_scale, svm_sensitivity
from skdp.svm._solver import solve_svm_certified
from skdp.testing import audit_epsilon

# Many fits here leave classes=None, which is incidental to what they test; the
# PrivacyLeakWarning it raises is asserted in tests/utils/test_multiclass.py.
pytestmark = pytest.mark.filterwarnings("ignore:classes=None:skdp.exceptions.PrivacyLeakWarning")


@pytest.fixture(scope="module")
def spheres():
    X, y = make_concentric_spheres(3000, n_features=3, noise=0.1, random_state=0)
    return X[:2000], y[:2000], X[2000:], y[2000:]


# --- noise scales against hand-computed numbers ---------------------------------------------

def test_sensitivity_formula():
    # 2 L C kappa / n: 2 * 1 * 3 * 0.5 / 60 = 0.05
    assert svm_sensitivity(3.0, 60, 0.5) == pytest.approx(0.05)
    assert svm_sensitivity(3.0, 60, 0.5, lipschitz=2.0) == pytest.approx(0.1)


def test_laplace_scale_of_private_svm_rff():
    X, y = make_concentric_spheres(200, random_state=0)
    est = PrivateSVMRFF(epsilon=0.5, C=2.0, n_components=50, tol=0.01, random_state=0).fit(X, y)
    # Delta_2 = 2 C / n (1 + tol) = 0.02 * 1.01; Laplace b = sqrt(2 d_hat) Delta_2 / eps.
    assert est.sensitivity_ == pytest.approx(0.0202)
    assert est.noise_scale_ == pytest.approx(10.0 * 0.0202 / 0.5)
    # ... which is 2^1.5 (1 + tol) C sqrt(d_hat) / (eps n): half of seed 001 Cor. 12.
    cor12 = 2**2.5 * 2.0 * math.sqrt(50) / (0.5 * 200)
    assert est.noise_scale_ == pytest.approx(1.01 * cor12 / 2)


def test_gaussian_scale_of_the_joint_multiclass_release():
    X, y = make_blobs(300, centers=3, random_state=0)
    est = PrivateSVMRFF(epsilon=1.5, delta=3e-6, mechanism="gaussian", C=1.0, n_components=20,
                        gamma=0.1, random_state=0).fit(X, y)
    sens = 2.0 / 300 * 1.01
    assert est.sensitivity_ == pytest.approx(sens)
    # the 3 one-vs-rest vectors are one release of L2 sensitivity sqrt(3) Delta_2
    assert est.noise_scale_ == pytest.approx(
        gaussian_sigma_analytic(math.sqrt(3) * sens, 1.5, 3e-6))
    assert est.coef_.shape == (3, 40)
    assert (est.privacy_spent_.epsilon, est.privacy_spent_.delta) == (1.5, 3e-6)


def test_linear_svm_scale_counts_intercept_and_data_norm():
    X, y = make_blobs(100, n_features=4, centers=2, random_state=0)
    est = PrivateLinearSVM(epsilon=2.0, data_norm=3.0, C=5.0, random_state=0).fit(X, y)
    sens = 2 * 5.0 * 3.0 / 100 * 1.01
    assert est.noise_scale_ == pytest.approx(math.sqrt(5) * sens / 2.0)  # F = 4 + intercept
    assert svm_noise_scale("laplace", 1.0, 9, 0.5, 0.0) == pytest.approx(6.0)


# --- random Fourier features -----------------------------------------------------------------

@pytest.mark.parametrize("kernel, dist, wrong", [
    ("rbf", stats.norm(scale=math.sqrt(2 * 0.7)), stats.norm(scale=math.sqrt(0.7))),
    ("laplacian", stats.cauchy(scale=0.7), stats.cauchy(scale=1.0)),
    ("cauchy", stats.laplace(scale=math.sqrt(0.7)), stats.laplace(scale=0.7)),
])
def test_spectral_samplers(kernel, dist, wrong):
    omega = sample_frequencies(kernel, 0.7, 3, 4000, np.random.default_rng(0)).ravel()
    assert stats.kstest(omega, dist.cdf).pvalue > 1e-3
    assert stats.kstest(omega, wrong.cdf).pvalue < 1e-6


def _cauchy_kernel(X, gamma):
    diff = X[:, None, :] - X[None, :, :]
    return np.prod(1.0 / (1.0 + gamma * diff**2), axis=2)


@pytest.mark.parametrize("kernel, exact", [
    ("rbf", lambda X, g: rbf_kernel(X, gamma=g)),
    ("laplacian", lambda X, g: laplacian_kernel(X, gamma=g)),
    ("cauchy", _cauchy_kernel),
])
def test_gram_matrix_approaches_kernel(kernel, exact):
    X = np.random.default_rng(1).normal(size=(40, 3))
    K = exact(X, 0.5)
    errors = []
    for n_components in (10, 100, 3000):
        Phi = RandomFourierFeatures(kernel=kernel, gamma=0.5, n_components=n_components,
                                    random_state=2).fit_transform(X)
        np.testing.assert_allclose(np.linalg.norm(Phi, axis=1), 1.0, atol=1e-12)
        errors.append(np.abs(Phi @ Phi.T - K).max())
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.1


def test_rff_is_data_independent():
    a = RandomFourierFeatures(n_components=5, random_state=3).fit(np.zeros((2, 2)))
    b = RandomFourierFeatures(n_components=5, random_state=3).fit(np.ones((7, 2)))
    np.testing.assert_array_equal(a.frequencies_, b.frequencies_)
    assert list(a.get_feature_names_out())[:2] == ["randomfourierfeatures0",
                                                   "randomfourierfeatures1"]


# --- certified solving -----------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("C", [0.3, 20.0, 300.0])
def test_hinge_certificate_bounds_distance_to_exact_solution(C):
    X, y = make_blobs(400, n_features=5, centers=2, cluster_std=3.0, random_state=0)
    X /= np.linalg.norm(X, axis=1).max()
    y_pm = 2.0 * y - 1
    radius = 1e-3 * C / len(y)  # 20 times stricter than the estimators' default tol
    sol = solve_svm_certified(X, y_pm, C, radius=radius)
    assert sol.distance_bound <= radius
    ref = LinearSVC(loss="hinge", C=C / len(y), fit_intercept=False, tol=1e-14, random_state=0,
                    max_iter=200_000).fit(X, y).coef_.ravel()
    # liblinear's own error is far below 1e-7 at this tolerance
    assert np.linalg.norm(sol.coef - ref) <= sol.distance_bound + 1e-7


def test_huber_certificate_is_gradient_norm():
    X, y = make_blobs(300, n_features=4, centers=2, cluster_std=3.0, random_state=1)
    X /= np.linalg.norm(X, axis=1).max()
    y_pm = 2.0 * y - 1
    sol = solve_svm_certified(X, y_pm, 50.0, loss="huber", huber_h=0.2, radius=1e-8)
    h, U = 0.2, 50.0 / len(y)
    u = 1.0 - y_pm * (X @ sol.coef)
    dloss = np.where(u > h, -1.0, np.where(u < -h, 0.0, -u / (2 * h) - 0.5))
    grad = sol.coef + U * X.T @ (y_pm * dloss)
    assert np.linalg.norm(grad) == pytest.approx(sol.certificate, rel=1e-6, abs=1e-15)
    assert sol.certificate <= 1e-8


def test_uncertified_solution_is_never_released(spheres):
    X, y, _, _ = spheres
    acc = BudgetAccountant(epsilon=10.0)
    est = PrivateSVMRFF(C=1000.0, gamma=2.0, max_iter=1, random_state=0, accountant=acc)
    with pytest.raises(CertificationError, match="nothing was released"):
        est.fit(X, y)
    for attribute in ("coef_", "random_fourier_features_", "noise_scale_", "privacy_spent_"):
        assert not hasattr(est, attribute)


# --- privacy audits --------------------------------------------------------------------------

class _QuarterNoiseSVM(PrivateLinearSVM):
    _noise_multiplier = 0.25


def _worst_case_pair():
    # 1 feature, no intercept, ||x|| <= 1, C = 1/2: ||w*|| <= sqrt(2C) = 1 keeps every
    # margin <= 1, so w* = (C/n) sum_i y_i x_i. Replacing the last row (x=1, y=-1) by
    # (x=-1, y=-1) moves w* from 0.4 to 0.5: exactly the sensitivity 2C/n = 0.1.
    X0 = np.ones((10, 1))
    X1 = X0.copy()
    X1[-1] = -1.0
    y = np.r_[np.ones(9), 0.0]
    return (X0, y), (X1, y)


def _audit(cls, n_runs):
    def mechanism(data, rng):
        est = cls(epsilon=1.0, data_norm=1.0, fit_intercept=False, C=0.5, classes=[0, 1],
                  random_state=rng)
        return est.fit(*data).coef_[0, 0]

    d0, d1 = _worst_case_pair()
    return audit_epsilon(mechanism, d0, d1, n_runs=n_runs, random_state=0)


def test_worst_case_pair_attains_sensitivity():
    (X0, y), (X1, _) = _worst_case_pair()
    y_pm = 2 * y - 1
    w0 = solve_svm_certified(X0, y_pm, 0.5, radius=1e-12).coef[0]
    w1 = solve_svm_certified(X1, y_pm, 0.5, radius=1e-12).coef[0]
    assert w1 - w0 == pytest.approx(svm_sensitivity(0.5, 10, 1.0))


def test_audit_passes_and_catches_quarter_noise():
    assert _audit(PrivateLinearSVM, 1000).epsilon_lower_bound <= 1.0
    assert _audit(_QuarterNoiseSVM, 1000).epsilon_lower_bound > 1.0


class _QuarterNoiseSVMRFF(PrivateSVMRFF):
    _noise_multiplier = 0.25


def _audit_rff(cls, n_runs):
    # Random features have norm 1 whatever the frequencies; with C = 1/2 every
    # margin stays below 1 and w* = (C/n) sum_i y_i phi(x_i), so flipping the
    # label of x = 0.3 moves w* by 2 (C/n) phi(0.3), of norm exactly 2C/n, for
    # every draw of the (released) frequencies. The auditor, who knows the
    # other rows and sees the frequencies, projects the released weights on
    # phi(0.3) and removes the other rows' part: a 1-D Gaussian mechanism.
    X = np.linspace(-1.0, 1.0, 10)[:, None]
    X[-1] = 0.3
    y0 = np.r_[np.ones(5), np.zeros(4), 1.0]
    y1 = np.r_[np.ones(5), np.zeros(4), 0.0]

    def mechanism(labels, rng):
        est = cls(epsilon=1.0, delta=1e-5, mechanism="gaussian", n_components=1, C=0.5,
                  classes=[0, 1], random_state=rng).fit(X, labels)
        phi = est.random_fourier_features_.transform(X)
        others = 0.5 / 10 * (2 * labels[:-1] - 1) @ (phi[:-1] @ phi[-1])
        return float(est.coef_[0] @ phi[-1] - others)

    return audit_epsilon(mechanism, y0, y1, n_runs=n_runs, delta=1e-5, random_state=0)


def test_rff_gaussian_audit_passes_and_catches_quarter_noise():
    assert _audit_rff(PrivateSVMRFF, 600).epsilon_lower_bound <= 1.0
    assert _audit_rff(_QuarterNoiseSVMRFF, 600).epsilon_lower_bound > 1.0


# --- utility ---------------------------------------------------------------------------------

def test_private_rff_svm_close_to_non_private_and_beats_linear(spheres):
    X, y, X_test, y_test = spheres
    rff = RandomFourierFeatures(gamma=2.0, n_components=200, random_state=0).fit(X)
    baseline = LinearSVC(loss="hinge", C=100.0 / len(y), fit_intercept=False).fit(
        rff.transform(X), y).score(rff.transform(X_test), y_test)
    private = np.mean([
        PrivateSVMRFF(epsilon=1.0, delta=1e-6, mechanism="gaussian", gamma=2.0, C=100.0,
                      n_components=200, random_state=seed).fit(X, y).score(X_test, y_test)
        for seed in range(3)])
    linear = PrivateLinearSVM(epsilon=1.0, delta=1e-6, mechanism="gaussian", data_norm=2.0,
                              C=100.0, random_state=0).fit(X, y).score(X_test, y_test)
    assert baseline > 0.9
    assert private >= 0.9 * baseline
    assert private > linear + 0.2


def test_gaussian_beats_laplace_with_many_coefficients(spheres):
    X, y, X_test, y_test = spheres
    kw = dict(epsilon=0.5, gamma=2.0, C=100.0, n_components=200)
    lap = [PrivateSVMRFF(random_state=s, **kw).fit(X, y) for s in range(3)]
    gau = [PrivateSVMRFF(mechanism="gaussian", delta=1e-6, random_state=s, **kw).fit(X, y)
           for s in range(3)]
    assert gau[0].noise_scale_ < lap[0].noise_scale_ / 3
    assert (np.mean([m.score(X_test, y_test) for m in gau])
            > np.mean([m.score(X_test, y_test) for m in lap]))


def test_huber_loss_and_kernels_fit(spheres):
    X, y, X_test, y_test = spheres
    for kernel in ("laplacian", "cauchy"):
        est = PrivateSVMRFF(epsilon=5.0, delta=1e-6, mechanism="gaussian", kernel=kernel,
                            gamma=2.0, C=100.0, loss="huber", n_components=100,
                            random_state=0).fit(X, y)
        assert est.score(X_test, y_test) > 0.8
        assert est.certified_distance_ <= 0.005 * est.sensitivity_


# --- accounting and bad input ----------------------------------------------------------------

def test_accountant_is_charged_and_kept_by_clone():
    X, y = make_blobs(60, centers=2, random_state=0)
    acc = BudgetAccountant(epsilon=1.0)
    est = PrivateSVMRFF(epsilon=0.4, n_components=5, accountant=acc, random_state=0)
    est.fit(X, y)
    clone(est).fit(X, y)
    assert acc.spent.epsilon == pytest.approx(0.8)


@pytest.mark.parametrize("params, error, match", [
    (dict(gamma=0.0), ValueError, "gamma must be > 0"),
    (dict(gamma=-1.0), ValueError, "gamma"),
    (dict(n_components=0), ValueError, "n_components must be >= 1"),
    (dict(kernel="poly"), ValueError, "kernel must be one of"),
    (dict(C=0.0), ValueError, "C must be > 0"),
    (dict(loss="log"), ValueError, "loss must be one of"),
    (dict(mechanism="exp"), ValueError, "mechanism must be one of"),
    (dict(tol=0.0), ValueError, "tol must be > 0"),
    (dict(delta=1e-6), ValueError, "mechanism='laplace' is pure"),
    (dict(mechanism="gaussian"), ValueError, "mechanism='gaussian' is .*needs delta > 0"),
    (dict(epsilon=0.0), ValueError, "epsilon must be > 0"),
])
def test_bad_parameters_fail_before_spending(params, error, match):
    X, y = make_blobs(40, centers=2, random_state=0)
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(error, match=match):
        PrivateSVMRFF(accountant=acc, **params).fit(X, y)
    assert acc.spent is None


def test_bad_data():
    X, y = make_blobs(40, centers=2, random_state=0)
    X_nan = X.copy()
    X_nan[3, 0] = np.nan
    for est in (PrivateSVMRFF(), PrivateLinearSVM()):
        with pytest.raises(ValueError, match="NaN"):
            est.fit(X_nan, y)
        with pytest.raises(ValueError, match="at least 2 classes"):
            est.fit(X, np.zeros(40))
    with pytest.raises(ValueError, match="data_norm must be > 0"):
        PrivateLinearSVM(data_norm=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="gamma must be > 0"):
        RandomFourierFeatures(gamma=0).fit(X)
    with pytest.raises(ValueError, match="kernel must be one of"):
        RandomFourierFeatures(kernel="linear").fit(X)


def test_no_predict_proba():
    X, y = make_blobs(40, centers=2, random_state=0)
    est = PrivateLinearSVM(random_state=0).fit(X, y)
    assert not hasattr(est, "predict_proba")
    assert est.decision_function(X).shape == (40,)


# --- the label set: a public parameter, or read from y with a PrivacyLeakWarning ------------

SVMS = [PrivateLinearSVM(data_norm=10.0), PrivateSVMRFF(n_components=10)]


@pytest.mark.parametrize("est", SVMS, ids=lambda est: type(est).__name__)
def test_classes_given_no_leak_warning_classes_none_warns(est):
    X, y = make_blobs(60, centers=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clone(est).set_params(classes=[0, 1, 2], random_state=0).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match=f"classes=None in {type(est).__name__}"):
        clone(est).set_params(random_state=0).fit(X, y)


@pytest.mark.parametrize("est", SVMS, ids=lambda est: type(est).__name__)
def test_declared_label_without_rows(est):
    X, y = make_blobs(60, centers=3, random_state=0)
    labels = np.array(["a", "b", "c"])[y]
    fitted = clone(est).set_params(classes=["d", "c", "b", "a"], random_state=0).fit(X, labels)
    np.testing.assert_array_equal(fitted.classes_, ["a", "b", "c", "d"])
    assert fitted.coef_.shape[0] == 4 and fitted.intercept_.shape == (4,)
    assert fitted.decision_function(X).shape == (60, 4)
    assert set(fitted.predict(X)) <= {"a", "b", "c", "d"}
    # A binary problem whose y holds one of the two declared labels still fits.
    one = clone(est).set_params(classes=[0, 1], random_state=0).fit(X, np.ones(60, dtype=int))
    np.testing.assert_array_equal(one.classes_, [0, 1])
    assert one.decision_function(X).shape == (60,)


def test_a_class_without_rows_is_learnt_as_all_negative():
    # At a large epsilon the empty class' one-vs-rest model says "not this class".
    X, y = make_blobs(300, centers=3, random_state=0)
    est = PrivateLinearSVM(epsilon=1e4, data_norm=10.0, C=10.0, classes=[0, 1, 2, 3],
                           random_state=0).fit(X, y)
    assert np.all(est.decision_function(X)[:, 3] < 0)
    assert not np.any(est.predict(X) == 3)


@pytest.mark.parametrize("est", SVMS, ids=lambda est: type(est).__name__)
def test_label_outside_classes_fails_before_spending(est):
    X, y = make_blobs(60, centers=3, random_state=0)
    acc = BudgetAccountant(epsilon=100.0)
    fitted = clone(est).set_params(classes=[0, 1, 2], random_state=0).fit(X, y)
    fitted.set_params(classes=[0, 1], accountant=acc)
    with pytest.raises(ValueError, match="not in classes"):
        fitted.fit(X, y)
    assert acc.spends == []
    np.testing.assert_array_equal(fitted.classes_, [0, 1, 2])  # the old model is kept whole
    assert fitted.coef_.shape[0] == 3


@pytest.mark.parametrize("mechanism, delta", [("laplace", 0.0), ("gaussian", 3e-6)])
def test_binary_y_with_three_declared_classes_is_three_problems(mechanism, delta):
    X, y = make_blobs(60, centers=2, random_state=0)
    est = PrivateLinearSVM(epsilon=3.0, delta=delta, mechanism=mechanism, data_norm=10.0,
                           classes=[0, 1, 2], random_state=0).fit(X, y)
    assert est.coef_.shape == (3, 2)
    assert est.privacy_spent_ == PrivacyBudget(3.0, delta)
    # Three problems, not two: Laplace splits epsilon in three; the Gaussian is one
    # release of the three vectors, of L2 sensitivity sqrt(3) Delta_2.
    if mechanism == "laplace":
        expected = svm_noise_scale(mechanism, est.sensitivity_, 3, 1.0, 0.0)
    else:
        expected = svm_noise_scale(mechanism, math.sqrt(3) * est.sensitivity_, 3, 3.0, delta)
    assert est.noise_scale_ == pytest.approx(expected)


def test_generator_that_cannot_spawn_fits_after_one_charge():
    # A Generator over a legacy RandomState's bit generator has no SeedSequence to spawn
    # from: fit called rng.spawn after the charge and raised TypeError with the budget spent.
    X, y = make_blobs(n_samples=80, centers=2, random_state=0)
    rng = np.random.Generator(np.random.RandomState(0)._bit_generator)
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    PrivateLinearSVM(epsilon=1.0, random_state=rng, accountant=accountant).fit(X, y)
    assert accountant.spent.epsilon == pytest.approx(1.0)
