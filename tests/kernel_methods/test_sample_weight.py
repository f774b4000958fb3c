"""``sample_weight`` and ``class_weight`` in the private kernel ERM classifiers
(:class:`PrivateKernelClassifier`, :class:`PrivateKernelSVC`,
:class:`PrivateKernelNetClassifier`): the weighted objective and its certificate,
the sensitivity under weights, unit weights, steering, validation before spending,
and one weighted audit."""

import math

import numpy as np
import pytest
from _kernel_audit import erm_pair
from scipy.optimize import approx_fprime
from scipy.special import expit
from sklearn.datasets import make_moons
from sklearn.metrics.pairwise import rbf_kernel

import skdp.kernel_methods._classifiers as classifiers_module
from skdp import BudgetAccountant
from skdp.kernel_methods import (
    PrivateKernelClassifier,
    PrivateKernelNetClassifier,
    PrivateKernelSVC,
)
from skdp.kernel_methods._erm import _objective, erm_sensitivity, fit_kernel_erm
from skdp.linear_model._losses import HuberSVMLoss, LogisticLoss
from skdp.testing import audit_epsilon

ESTIMATORS = [
    (PrivateKernelClassifier, {"n_public": 40}),
    (PrivateKernelSVC, {"n_public": 40}),
    # TDIL needs a larger budget before its rounds update the model at all.
    (PrivateKernelNetClassifier, {"n_public": 49, "n_rounds": 30, "epsilon": 20.0, "alpha": 0.5}),
]
IDS = [cls.__name__ for cls, _ in ESTIMATORS]
GAMMA, ALPHA = 1.0, 0.05


@pytest.fixture(scope="module")
def problem():
    """Noisy moons, their RBF kernel matrix, labels in {-1, +1} and random weights
    in [0, 1], a fifth of them 0."""
    X, y = make_moons(120, noise=0.3, random_state=0)
    rng = np.random.default_rng(0)
    w = rng.uniform(size=len(y))
    w[rng.random(len(y)) < 0.2] = 0.0
    return X, y, rbf_kernel(X, gamma=GAMMA), 2.0 * y - 1.0, w


def _hand_logistic(K, y_pm1, w, beta):
    """J(beta) = (1/n) sum_i w_i log(1 + exp(-y_i (K beta)_i)) + (alpha/2) beta^T K beta,
    and the coefficients g of its RKHS gradient sum_i g_i k(., x_i)."""
    n = len(y_pm1)
    z = y_pm1 * (K @ beta)
    value = np.sum(w * np.logaddexp(0.0, -z)) / n + 0.5 * ALPHA * beta @ K @ beta
    return value, w * -expit(-z) * y_pm1 / n + ALPHA * beta


def _hand_gradient(K, y_pm1, w, beta, loss):
    """RKHS gradient coefficients of the weighted objective for any margin loss."""
    return w * loss.derivative(y_pm1 * (K @ beta)) * y_pm1 / len(y_pm1) + ALPHA * beta


def _rkhs_norm(K, coef):
    return math.sqrt(max(coef @ K @ coef, 0.0))


# --------------------------------------------------------------------------
# The solver minimizes the weighted objective, with a valid certificate
# --------------------------------------------------------------------------
def test_weighted_objective_and_gradient_by_hand(problem):
    _, _, K, y_pm1, w = problem
    beta = np.random.default_rng(1).normal(size=len(y_pm1)) / 10
    value, g = _hand_logistic(K, y_pm1, w, beta)
    assert _objective(K, y_pm1, LogisticLoss(), ALPHA, beta, w)[0] == pytest.approx(value,
                                                                                     rel=1e-12)
    # The RKHS gradient sum g_i k(., x_i) is K g in the coefficients beta.
    numeric = approx_fprime(beta, lambda b: _hand_logistic(K, y_pm1, w, b)[0], 1e-7)
    np.testing.assert_allclose(numeric, K @ g, atol=1e-6)

    tol = 1e-6
    beta, grad_norm, _ = fit_kernel_erm(K, y_pm1, LogisticLoss(), ALPHA, tol, sample_weight=w)
    # The reported certificate is the hand-computed weighted gradient norm...
    hand_norm = _rkhs_norm(K, _hand_logistic(K, y_pm1, w, beta)[1])
    assert grad_norm == pytest.approx(hand_norm, rel=1e-6, abs=1e-12)
    assert hand_norm <= tol
    # ... and the point is not the unweighted minimizer.
    assert _rkhs_norm(K, _hand_logistic(K, y_pm1, np.ones_like(w), beta)[1]) > 1e3 * tol


@pytest.mark.parametrize("loss", [LogisticLoss(), HuberSVMLoss(0.5)], ids=["logistic", "huber"])
def test_certificate_holds_for_the_weighted_objective(problem, loss):
    """A certified point lies within tol / alpha of a high-precision weighted minimizer
    (itself certified by the hand-written gradient), and strong convexity, the
    certificate's basis, holds for the weighted objective at arbitrary points."""
    _, _, K, y_pm1, w = problem
    ref, _, _ = fit_kernel_erm(K, y_pm1, loss, ALPHA, 1e-13, sample_weight=w)
    ref_tol = _rkhs_norm(K, _hand_gradient(K, y_pm1, w, ref, loss))
    assert ref_tol <= 1e-12
    distances = []
    for tol in (1e-2, 1e-3, 1e-5):
        beta, _, _ = fit_kernel_erm(K, y_pm1, loss, ALPHA, tol, sample_weight=w)
        assert _rkhs_norm(K, _hand_gradient(K, y_pm1, w, beta, loss)) <= tol
        distances.append(_rkhs_norm(K, beta - ref))
        assert distances[-1] <= (tol + ref_tol) / ALPHA
    assert distances[0] > 1e-6  # the loosest certificate stopped away from the minimizer
    rng = np.random.default_rng(2)
    for _ in range(20):
        point = ref + rng.normal(size=len(ref)) * rng.choice([1e-3, 1e-1, 3.0])
        gradient = _rkhs_norm(K, _hand_gradient(K, y_pm1, w, point, loss))
        assert _rkhs_norm(K, point - ref) <= (gradient + ref_tol) / ALPHA * (1 + 1e-9)


def test_weighted_neighbours_stay_within_the_sensitivity(problem):
    """Replace one row (new features, flipped label, a different weight in [0, 1]):
    the certified weighted minimizers move by at most erm_sensitivity, as re-derived."""
    X, _, _, y_pm1, w = problem
    X1, y1, w1 = X.copy(), y_pm1.copy(), w.copy()
    X1[0], y1[0], w1[0] = [2.0, -1.0], -y_pm1[0], 1.0
    w = w.copy()
    w[0] = 0.6
    n, tol = len(y_pm1), 1e-7
    both = np.vstack([X, X1])
    bound = erm_sensitivity(1.0, ALPHA, n, tol)
    for loss in (LogisticLoss(), HuberSVMLoss(0.5)):
        b0, _, _ = fit_kernel_erm(rbf_kernel(X, gamma=GAMMA), y_pm1, loss, ALPHA, tol,
                                  sample_weight=w)
        b1, _, _ = fit_kernel_erm(rbf_kernel(X1, gamma=GAMMA), y1, loss, ALPHA, tol,
                                  sample_weight=w1)
        distance = _rkhs_norm(rbf_kernel(both, gamma=GAMMA), np.concatenate([b0, -b1]))
        assert 0.1 * bound < distance <= bound


# --------------------------------------------------------------------------
# Estimator behaviour
# --------------------------------------------------------------------------
def _fit(cls, kw, X, y, classes, **fit_kw):
    clf = cls(**{"gamma": GAMMA, "alpha": ALPHA, "bounds": (-2.0, 2.5), "classes": classes,
                 "epsilon": 5.0, "random_state": 0, **kw})
    if "class_weight" in fit_kw:
        clf.set_params(class_weight=fit_kw.pop("class_weight"))
    return clf.fit(X, y, **fit_kw)


@pytest.mark.parametrize("cls, kw", ESTIMATORS, ids=IDS)
def test_unit_weights_fit_exactly_as_no_weights(cls, kw):
    X = np.random.default_rng(3).normal(size=(90, 2))
    y = np.arange(90) % 3  # three one-vs-rest functions
    plain = _fit(cls, kw, X, y, [0, 1, 2])
    ones = _fit(cls, kw, X, y, [0, 1, 2], sample_weight=np.ones(90))
    np.testing.assert_array_equal(plain.dual_coef_, ones.dual_coef_)
    unit_class = _fit(cls, kw, X, y, [0, 1, 2], class_weight={0: 1.0, 2: 1.0})
    np.testing.assert_array_equal(plain.dual_coef_, unit_class.dual_coef_)


@pytest.mark.parametrize("cls, kw", ESTIMATORS, ids=IDS)
def test_weights_steer_the_model(cls, kw):
    """Down-weighting class 0 moves the boundary towards it: more rows are called 1."""
    X, y = make_moons(300, noise=0.4, random_state=4)
    plain = _fit(cls, kw, X, y, [0, 1]).predict(X).mean()
    weighted = _fit(cls, kw, X, y, [0, 1],
                    sample_weight=np.where(y == 1, 1.0, 0.1)).predict(X).mean()
    assert weighted > plain + 0.15, (plain, weighted)


@pytest.mark.parametrize("cls, kw", ESTIMATORS, ids=IDS)
def test_class_weight_equals_the_same_sample_weight(cls, kw):
    X = np.random.default_rng(5).normal(size=(90, 2))
    y = np.arange(90) % 3
    w = np.random.default_rng(6).uniform(size=90)
    by_class = _fit(cls, kw, X, y, [0, 1, 2], class_weight={2: 0.25}, sample_weight=w)
    by_row = _fit(cls, kw, X, y, [0, 1, 2], sample_weight=np.where(y == 2, 0.25, 1.0) * w)
    np.testing.assert_array_equal(by_class.dual_coef_, by_row.dual_coef_)
    # The weights did something (so the equality above could fail).
    assert not np.array_equal(by_class.dual_coef_, _fit(cls, kw, X, y, [0, 1, 2]).dual_coef_)


@pytest.mark.parametrize("cls, kw", ESTIMATORS, ids=IDS)
def test_bad_weights_fail_before_the_budget_is_charged(cls, kw):
    X = np.random.default_rng(7).normal(size=(40, 2))
    y = np.arange(40) % 2
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    clf = cls(**{**kw, "classes": [0, 1], "epsilon": 1.0, "accountant": accountant,
                 "random_state": 0})
    for bad in (-np.ones(40), np.ones(10), np.ones((40, 1)), np.full(40, np.nan)):
        with pytest.raises(ValueError, match="sample_weight"):
            clf.fit(X, y, sample_weight=bad)
    with pytest.raises(ValueError, match="balanced"):
        clf.set_params(class_weight="balanced").fit(X, y)
    with pytest.raises(ValueError, match="not a class"):
        clf.set_params(class_weight={5: 0.5}).fit(X, y)
    assert accountant.spent is None
    # Protected weights: all zeros are no error (the minimizer is 0, the release is noise).
    clf.set_params(class_weight=None).fit(X, y, sample_weight=np.zeros(40))
    assert clf.n_iter_ == 0
    assert accountant.spent.epsilon == pytest.approx(1.0)
    clf.fit(X, y, sample_weight=np.full(40, 3.0))  # clipped to 1, silently
    with pytest.warns(UserWarning, match="Class weights above 1 were clipped"):
        clf.set_params(class_weight={0: 2.0}).fit(X, y)
    assert accountant.spent.epsilon == pytest.approx(3.0)


def test_zero_weight_rows_still_count_in_n():
    """The calibration uses every row (n is public, the weight sum is not)."""
    X = np.random.default_rng(8).normal(size=(80, 2))
    y = np.arange(80) % 2
    w = np.r_[np.zeros(60), np.ones(20)]
    clf = PrivateKernelSVC(alpha=ALPHA, classes=[0, 1], n_public=20, random_state=0)
    full = clf.fit(X, y).sensitivity_
    assert clf.fit(X, y, sample_weight=w).sensitivity_ == full
    assert clf.fit(X[60:], y[60:]).sensitivity_ == pytest.approx(4 * full)  # dropping rows


# --------------------------------------------------------------------------
# Weighted audit through the cheapest estimator
# --------------------------------------------------------------------------
# TDDL with one public point at 0 and pure DP: one Laplace draw on the prediction
# there. The pair of _kernel_audit.erm_pair (10 rows at 0, row 5's label flipped,
# Huber loss in its linear zone with alpha = 10, so f*(0) = sum_i w_i y_i / (alpha n));
# the other rows weigh 0.5 and the replaced row asks for 4. Clipped to 1, the
# prediction moves by the calibrated sensitivity 2 / (alpha n); a copy that skipped the
# clipping would let it move 4 times as far.
_D0, _D1 = erm_pair(10)
_W = np.array([0.5] * 5 + [4.0] + [0.5] * 4)
_ORIGIN = np.zeros((1, 1))


def _tddl(dataset, epsilon, rng):
    clf = PrivateKernelClassifier(alpha=10.0, loss="huber", classes=[0, 1], epsilon=epsilon,
                                  delta=0.0, random_state=rng)
    return clf.fit(*dataset, X_public=_ORIGIN, sample_weight=_W)


def _weighted_audit():
    return audit_epsilon(lambda dataset, rng: _tddl(dataset, 1.0, rng).dual_coef_[0, 0],
                         _D0, _D1, n_runs=600, n_select=200, delta=0.0, random_state=0)


def test_weighted_audit_clipped_below_epsilon_unclipped_caught(monkeypatch):
    exact = [_tddl(dataset, 1e9, 0) for dataset in (_D0, _D1)]
    gap = exact[1].decision_function(_ORIGIN)[0] - exact[0].decision_function(_ORIGIN)[0]
    assert gap == pytest.approx(exact[0].prediction_sensitivity_, rel=2e-3)  # attained
    honest = _weighted_audit()
    assert honest.epsilon_lower_bound <= 1.0, honest
    # A copy that skipped the weight clipping (weights taken as given).
    monkeypatch.setattr(classifiers_module, "check_bounded_sample_weight",
                        lambda sample_weight, n_samples: np.asarray(sample_weight, dtype=float))
    cheat = _weighted_audit()
    assert cheat.epsilon_lower_bound > 1.0, cheat
