"""``sample_weight`` and ``class_weight`` in the private SVMs (seed 001): the weighted
objective, gradient and duality gap the certified solver uses, the certificate under
weights, unit weights, steering, validation before spending, and one weighted audit."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import optimize
from sklearn.datasets import make_blobs
from sklearn.svm import LinearSVC

from skdp import BudgetAccountant
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF
from skdp.svm import _base
from skdp.svm._solver import (
    _hinge_gap,
    _huber_gradient,
    _huber_value,
    _Signed,
    solve_svm_certified,
)
from skdp.testing import audit_epsilon

import linear_model.test_private_glm_sample_weight as glm_tests

ESTIMATORS = [
    (PrivateLinearSVM, {}),
    (PrivateSVMRFF, {"n_components": 10}),
]
IDS = [cls.__name__ for cls, _ in ESTIMATORS]
FORMATS = [np.asarray, sp.csr_matrix]


@pytest.fixture(scope="module")
def problem():
    """Overlapping blobs scaled to row norms <= 1, labels in {-1, +1}, random weights with
    a fifth of them 0."""
    X, y = make_blobs(300, n_features=4, centers=2, cluster_std=3.0, random_state=0)
    X /= np.linalg.norm(X, axis=1).max()
    rng = np.random.default_rng(0)
    s = rng.uniform(size=300)
    s[rng.random(300) < 0.2] = 0.0
    return X, 2.0 * y - 1.0, s


def _huber_loss(u, h):
    """Huber hinge of ``u = 1 - margin``, written out by cases."""
    return np.where(u > h, u, np.where(u < -h, 0.0, (u + h) ** 2 / (4 * h)))


def _huber_derivative(u, h):
    """Derivative in the margin."""
    return np.where(u > h, -1.0, np.where(u < -h, 0.0, -(u + h) / (2 * h)))


# --------------------------------------------------------------------------
# The weighted quantities the solver computes, against hand-written ones
# --------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS, ids=["dense", "csr"])
def test_weighted_huber_value_and_gradient_by_hand(problem, fmt):
    X, y, s = problem
    C, h, n = 7.0, 0.3, len(y)
    w = np.array([0.9, -1.4, 0.3, 2.0])
    u = 1.0 - y * (X @ w)
    hand_value = 0.5 * w @ w + C / n * np.sum(s * _huber_loss(u, h))
    hand_grad = w + C / n * X.T @ (s * _huber_derivative(u, h) * y)
    Z = _Signed(fmt(X), y, s)
    value, deriv, _ = _huber_value(Z, Z @ w, C / n, h, w)
    assert value == pytest.approx(hand_value, rel=1e-12)
    np.testing.assert_allclose(_huber_gradient(Z, C / n, w, deriv), hand_grad, rtol=1e-12)
    # The weights matter: the unweighted gradient is elsewhere.
    unweighted = w + C / n * X.T @ (_huber_derivative(u, h) * y)
    assert np.linalg.norm(unweighted - hand_grad) > 0.1


@pytest.mark.parametrize("fmt", FORMATS, ids=["dense", "csr"])
def test_weighted_hinge_duality_gap_by_hand(problem, fmt):
    """Weighted primal P(w) = |w|^2/2 + (C/n) sum s_i hinge_i, dual D(a) = (C/n) sum s_i a_i
    - |w(a)|^2/2 at w(a) = (C/n) sum s_i a_i y_i x_i: the solver's gap bounds P - D."""
    X, y, s = problem
    C, n = 20.0, len(y)
    a = np.random.default_rng(1).uniform(size=n)
    a[:50] = 1.0
    w_hand = C / n * X.T @ (s * a * y)
    primal = 0.5 * w_hand @ w_hand + C / n * np.sum(s * np.maximum(0.0, 1.0 - y * (X @ w_hand)))
    dual = C / n * np.sum(s * a) - 0.5 * w_hand @ w_hand
    w, gap, w_error = _hinge_gap(_Signed(fmt(X), y, s), C / n, a, C, 1.0)
    np.testing.assert_allclose(w, w_hand, rtol=1e-12)
    assert np.linalg.norm(w - w_hand) <= w_error
    # The rounding allowance is tiny next to the gap itself.
    assert primal - dual <= gap <= (primal - dual) * (1 + 1e-9) + 1e-12


def test_zero_weight_rows_are_ignored_by_the_solver_but_count_in_n(problem):
    X, y, s = problem
    C, radius = 30.0, 1e-4 * 30.0 / len(y)
    keep = s > 0
    full = solve_svm_certified(X, y, C, radius=radius, sample_weight=s)
    # Dropping the zero-weight rows with C rescaled to keep C/n gives the same problem.
    dropped = solve_svm_certified(X[keep], y[keep], C * keep.sum() / len(y), radius=radius,
                                  sample_weight=s[keep])
    assert np.linalg.norm(full.coef - dropped.coef) <= full.distance_bound + dropped.distance_bound
    # ...while dropping them at the same C is a different problem.
    same_c = solve_svm_certified(X[keep], y[keep], C, radius=radius, sample_weight=s[keep])
    assert np.linalg.norm(full.coef - same_c.coef) > 100 * radius


# --------------------------------------------------------------------------
# The certificate holds for the weighted objective
# --------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("fmt", FORMATS, ids=["dense", "csr"])
@pytest.mark.parametrize("C", [0.5, 30.0, 300.0])
def test_weighted_hinge_certificate_against_liblinear(problem, fmt, C):
    X, y, s = problem
    n = len(y)
    radius = 1e-3 * C / n
    sol = solve_svm_certified(fmt(X), y, C, radius=radius, sample_weight=s)
    assert sol.distance_bound <= radius
    # liblinear minimizes |w|^2/2 + c sum_i s_i hinge_i: the same objective at c = C/n.
    ref = LinearSVC(loss="hinge", C=C / n, fit_intercept=False, tol=1e-14, random_state=0,
                    max_iter=200_000).fit(X, y, sample_weight=s).coef_.ravel()
    assert np.linalg.norm(sol.coef - ref) <= sol.distance_bound + 1e-7
    unweighted = solve_svm_certified(X, y, C, radius=radius).coef
    assert np.linalg.norm(unweighted - ref) > 10 * radius


@pytest.mark.parametrize("fmt", FORMATS, ids=["dense", "csr"])
def test_weighted_huber_certificate_against_a_precise_minimizer(problem, fmt):
    X, y, s = problem
    C, h, n = 50.0, 0.2, len(y)
    radius = 1e-3 * C / n
    sol = solve_svm_certified(fmt(X), y, C, loss="huber", huber_h=h, radius=radius,
                              sample_weight=s)
    assert sol.distance_bound <= radius

    def objective(w):
        u = 1.0 - y * (X @ w)
        return (0.5 * w @ w + C / n * np.sum(s * _huber_loss(u, h)),
                w + C / n * X.T @ (s * _huber_derivative(u, h) * y))

    # The certified distance covers the hand-written weighted gradient norm...
    assert np.linalg.norm(objective(sol.coef)[1]) <= sol.distance_bound
    # ...and the solution is within the certified distance of a precise weighted minimizer.
    ref = optimize.minimize(objective, np.zeros(4), jac=True, method="BFGS",
                            options={"gtol": 1e-12, "maxiter": 10_000}).x
    assert np.linalg.norm(objective(ref)[1]) < 1e-9
    assert np.linalg.norm(sol.coef - ref) <= sol.distance_bound + 1e-9
    assert np.linalg.norm(solve_svm_certified(X, y, C, loss="huber", huber_h=h,
                                              radius=radius).coef - ref) > 10 * radius


# --------------------------------------------------------------------------
# Estimator behaviour
# --------------------------------------------------------------------------
# The estimator-level tests of the GLM classifiers hold verbatim for the SVMs: unit weights
# fit bit-identically, weights steer the model, class_weight equals the same sample_weight
# ('balanced' refused), bad weights are refused before the accountant is charged (all-zero
# weights accepted, weights above 1 clipped silently).
@pytest.mark.parametrize("test", [
    glm_tests.test_unit_weights_fit_exactly_as_no_weights,
    glm_tests.test_weights_steer_the_model,
    glm_tests.test_class_weight_equals_the_same_sample_weight,
    glm_tests.test_bad_weights_fail_before_the_budget_is_charged,
], ids=lambda test: test.__name__[5:])
@pytest.mark.parametrize("cls, kw", ESTIMATORS, ids=IDS)
def test_glm_weight_behaviour_holds(test, cls, kw):
    test(cls, kw)


@pytest.mark.parametrize("cls, kw", ESTIMATORS, ids=IDS)
def test_weighted_sparse_input_matches_dense(problem, cls, kw):
    X, y, s = problem
    dense = cls(epsilon=1.0, C=20.0, classes=[-1, 1], random_state=0, **kw).fit(
        X, y, sample_weight=s)
    sparse = cls(epsilon=1.0, C=20.0, classes=[-1, 1], random_state=0, **kw).fit(
        sp.csr_matrix(X), y, sample_weight=s)
    # Both are certified close to the same minimizer; the noise is the same draw.
    assert (np.linalg.norm(sparse.coef_ - dense.coef_)
            <= dense.certified_distance_ + sparse.certified_distance_ + 1e-12)


@pytest.mark.parametrize("cls, kw", ESTIMATORS, ids=IDS)
def test_class_weights_act_and_bad_ones_are_refused_before_spending(cls, kw):
    X = np.random.default_rng(3).normal(size=(60, 2))
    y = np.arange(60) % 3
    accountant = BudgetAccountant(epsilon=10.0)
    clf = cls(epsilon=1.0, classes=[0, 1, 2], accountant=accountant, random_state=0, **kw)
    for class_weight, match in (("balanced", "balanced"), ({1: -1.0}, "class_weight"),
                                ({5: 0.5}, "not a class")):
        with pytest.raises(ValueError, match=match):
            clf.set_params(class_weight=class_weight).fit(X, y)
    assert accountant.spent is None
    weighted = clf.set_params(class_weight={2: 0.25}).fit(X, y).coef_
    plain = clf.set_params(class_weight=None).fit(X, y).coef_
    assert not np.array_equal(plain, weighted)  # same noise draw: the weights moved the model
    sensitivity = clf.sensitivity_
    # Protected weights: all-zero weights release a noise-only model (w* = 0, certified at
    # once up to rounding), calibrated as before: n counts the zero-weight rows.
    clf.fit(X, y, sample_weight=np.zeros(60))
    assert clf.certified_distance_ < 1e-12
    assert clf.sensitivity_ == sensitivity
    assert accountant.spent.epsilon == pytest.approx(3.0)


# --------------------------------------------------------------------------
# Weighted audit
# --------------------------------------------------------------------------
# The worst-case pair of tests/svm/test_classes.py (1 feature, no intercept, C = 1/2, n = 10,
# the last row x = 1 replaced by x = -1, label -1): the other rows weigh 0.5 and the
# replaced row asks for 4. Every margin stays below 1, so w* = (C/n) sum_i s_i y_i x_i:
# 0.175 against 0.275 with the weight clipped to 1, exactly the sensitivity 2C/n = 0.1
# the noise is calibrated to; a copy that skipped the clipping would move w* four times
# as far (0.025 against 0.425).
_X0 = np.ones((10, 1))
_X1 = _X0.copy()
_X1[-1] = -1.0
_Y = np.r_[np.ones(9), 0.0]
_W = np.r_[np.full(9, 0.5), 4.0]


def _weighted_audit():
    def mechanism(X, rng):
        clf = PrivateLinearSVM(epsilon=1.0, data_norm=1.0, fit_intercept=False, C=0.5,
                               classes=[0, 1], random_state=rng)
        return clf.fit(X, _Y, sample_weight=_W).coef_[0, 0]
    return audit_epsilon(mechanism, _X0, _X1, n_runs=600, random_state=0)


def test_weighted_audit_clipped_below_epsilon_unclipped_caught(monkeypatch):
    y_pm = 2 * _Y - 1
    s = np.minimum(_W, 1.0)
    w0 = solve_svm_certified(_X0, y_pm, 0.5, radius=1e-12, sample_weight=s).coef[0]
    w1 = solve_svm_certified(_X1, y_pm, 0.5, radius=1e-12, sample_weight=s).coef[0]
    assert w1 - w0 == pytest.approx(_base.svm_sensitivity(0.5, 10, 1.0))  # the worst case
    honest = _weighted_audit()
    assert honest.epsilon_lower_bound <= 1.0, honest
    # A copy that skipped the weight clipping (weights taken as given).
    monkeypatch.setattr(_base, "check_bounded_sample_weight",
                        lambda sample_weight, n_samples: None if sample_weight is None
                        else np.asarray(sample_weight, dtype=float))
    cheat = _weighted_audit()
    assert cheat.epsilon_lower_bound > 1.0, cheat


@pytest.mark.parametrize("loss", ["hinge", "huber"])
@pytest.mark.parametrize("fmt", FORMATS, ids=["dense", "csr"])
def test_multiclass_string_labels_class_times_sample_weight_against_a_reference(fmt, loss):
    """Every one-vs-rest problem of a fit with string labels (one label without rows) uses
    the row weights sample_weight * class_weight[label of the row]: the noise-free
    coefficients are the precise weighted minimizers, within the certified distance."""
    rng = np.random.default_rng(1)
    n, C = 240, 50.0
    X = rng.normal(size=(n, 4))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)  # no clipping
    labels = np.array(["b", "a", "c"])
    y = labels[np.argmax(X[:, :3] + 0.3 * rng.normal(size=(n, 3)), axis=1)]
    s = rng.uniform(size=n)
    s[:20], s[20:30] = 0.0, -0.0
    class_weight = {"a": 0.5, "c": 0.8}
    est = PrivateLinearSVM(1.0, C=C, loss=loss, huber_h=0.2, fit_intercept=False,
                           classes=["a", "b", "c", "d"], class_weight=class_weight, tol=1e-3,
                           max_iter=500, random_state=0)
    est._noise_multiplier = 0.0  # the certified minimizers themselves
    est.fit(fmt(X), y, sample_weight=s)
    w = s * np.array([class_weight.get(label, 1.0) for label in y])
    assert est.coef_.shape == (4, 4)
    for k, label in enumerate(est.classes_[:3]):  # liblinear needs rows of both signs
        t = np.where(y == label, 1.0, -1.0)
        slack = 1e-8  # liblinear's own precision
        if loss == "hinge":
            ref = LinearSVC(loss="hinge", C=C / n, fit_intercept=False, tol=1e-11,
                            random_state=0, max_iter=10**7).fit(X, t, sample_weight=w)
            ref = ref.coef_.ravel()
        else:
            def objective(v):
                u = 1.0 - t * (X @ v)
                return (0.5 * v @ v + C / n * np.sum(w * _huber_loss(u, 0.2)),
                        v + C / n * X.T @ (w * _huber_derivative(u, 0.2) * t))

            ref = optimize.minimize(objective, np.zeros(4), jac=True, method="BFGS",
                                    options={"gtol": 1e-13, "maxiter": 10_000}).x
            # 1-strong convexity: the reference is within its gradient norm of the minimizer.
            slack = np.linalg.norm(objective(ref)[1]) + 1e-12
        assert np.linalg.norm(est.coef_[k] - ref) <= est.certified_distance_ + slack, label
