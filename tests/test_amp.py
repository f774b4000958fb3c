"""Tests of DPLogisticRegressionAMP, its calibration, the softmax loss and the certified solver."""

import dataclasses
import math
import pickle

import numpy as np
import pytest
from joblib import parallel_config
import scipy.sparse as sp
from scipy import optimize
from scipy.special import expit, softmax
from scipy.stats import chi2, norm
from sklearn.base import clone
from sklearn.datasets import load_digits, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer

from skdp import BudgetAccountant, BudgetExceededError, PrivacyBudget
from skdp.datasets import make_synthetic_l
from skdp.exceptions import CertificationError
from skdp.linear_model import DPLogisticRegressionAMP, MultinomialLoss
from skdp.linear_model._amp import (
    amp_calibration,
    eps3_fraction_rule,
    objective_noise_sigma,
    thesis_eps3_fraction,
)
from skdp.linear_model._losses import LogisticLoss
from skdp.linear_model._multinomial import MultinomialObjective
from skdp.linear_model._objective import GLMObjective
from skdp.linear_model._solvers import CertifiedResult, minimize_certified
from skdp.testing import audit_epsilon


@pytest.fixture(scope="module")
def synthetic_l():
    return make_synthetic_l()


@pytest.fixture(scope="module")
def small_binary():
    X, y = make_classification(n_samples=600, n_features=6, n_informative=4,
                               class_sep=2.0, random_state=3)
    return X, y


# --------------------------------------------------------------------------- calibration
def test_calibration_matches_hand_computed_values():
    m, eps, delta = 1000, 1.0, 1e-6
    cal = amp_calibration(eps, delta, n_samples=m, lipschitz=1.0, smoothness=0.25, rank=2,
                          output_fraction=0.01, eps3_fraction=0.9)
    assert cal.eps2 == pytest.approx(0.01) and cal.delta2 == pytest.approx(1e-8)
    assert cal.eps1 == pytest.approx(0.99) and cal.delta1 == pytest.approx(9.9e-7)
    assert cal.eps3 == pytest.approx(0.891)
    assert cal.gamma == pytest.approx(1e-6)  # 1 / m^2
    # Lambda = r beta / (eps1 - eps3) = 2 * 0.25 / 0.099
    assert cal.reg_strength == pytest.approx(5.050505050505, rel=1e-10)
    # sigma1 = (2 / m) / (sqrt(t^2 + 2 eps3) - t), t^2 = 2 ln(1 / 9.9e-7) (chi-square, 2 dof)
    t = math.sqrt(2 * 13.8255609)
    assert cal.sigma1 == pytest.approx(0.002 / (math.sqrt(t * t + 2 * 0.891) - t), rel=1e-6)
    # ... below the thesis' (2 / m)(1 + t) / eps3, valid here since eps3 <= 2 (1 + t).
    assert cal.sigma1 < 0.002 * (1 + t) / 0.891
    # sigma2: the analytic Gaussian at the corrected sensitivity 2 m gamma / Lambda.
    sens = 2 * m * 1e-6 / 5.050505050505
    assert sens == pytest.approx(3.96e-4, rel=1e-9)

    def balle_wang_delta(sigma):
        a, b = sens / (2 * sigma), 0.01 * sigma / sens
        return norm.cdf(a - b) - math.exp(0.01) * norm.cdf(-a - b)

    assert balle_wang_delta(cal.sigma2) == pytest.approx(1e-8, rel=1e-6)
    hand = optimize.brentq(lambda s: balle_wang_delta(s) - 1e-8, 1e-4, 1.0, xtol=1e-15)
    assert cal.sigma2 == pytest.approx(hand, rel=1e-6)
    # The thesis' sigma2 used half the sensitivity: ours is strictly more noise.
    half = optimize.brentq(
        lambda s: norm.cdf(sens / 4 / s - 0.01 * s / (sens / 2))
        - math.exp(0.01) * norm.cdf(-sens / 4 / s - 0.01 * s / (sens / 2)) - 1e-8,
        1e-5, 1.0, xtol=1e-15)
    assert cal.sigma2 == pytest.approx(2 * half, rel=1e-6)


def test_huber_and_softmax_constants_enter_lambda_and_sigma1():
    common = dict(n_samples=500, output_fraction=0.01, eps3_fraction=0.9)
    huber = amp_calibration(1.0, 1e-6, lipschitz=1.0, smoothness=1 / (2 * 0.1), rank=2,
                            trace_bound=5.0, **common)
    assert huber.curvature == pytest.approx(10.0)
    assert huber.reg_strength == pytest.approx(2 * 5.0 / 0.099)
    loss = MultinomialLoss(10)
    soft = amp_calibration(1.0, 1e-6, lipschitz=loss.lipschitz(2.0),
                           smoothness=loss.smoothness(2.0), rank=loss.hessian_rank_bound(650),
                           trace_bound=loss.hessian_trace_bound(2.0), **common)
    assert soft.rank == 18
    # C = min(r beta, 2 T) = min(18 * 2^2 / 2, 2 * 0.9 * 2^2) = 7.2
    assert soft.curvature == pytest.approx(7.2)
    assert soft.reg_strength == pytest.approx(7.2 / 0.099)
    # sigma1 uses the chi-square tail with r = 18 degrees of freedom.
    sens = 2 * 2 * math.sqrt(2) / 500
    t = math.sqrt(chi2.isf(9.9e-7, 18))
    assert soft.sigma1 == pytest.approx(sens / (math.sqrt(t * t + 2 * 0.891) - t), rel=1e-9)
    thesis = sens * (1 + math.sqrt(2 * math.log(1 / 9.9e-7))) / 0.891
    assert soft.sigma1 > 1.2 * thesis  # the thesis formula would under-noise the softmax


def test_objective_noise_meets_the_tail_bound_and_replaces_the_thesis_formula():
    sens, delta1 = 0.02, 1e-4
    for eps3 in (0.05, 1.0, 5.0, 12.0, 40.0):
        for k in (1, 2, 7):
            sigma = objective_noise_sigma(sens, eps3, delta1, k)
            # privacy loss <= (s R + s^2 / 2) / sigma^2 with R / sigma ~ chi_k:
            # it exceeds eps3 exactly when R / sigma > (eps3 sigma^2 - s^2 / 2) / (s sigma).
            radius = (eps3 * sigma**2 - sens**2 / 2) / (sens * sigma)
            assert chi2.sf(radius**2, k) == pytest.approx(delta1, rel=1e-6)
        t = math.sqrt(2 * math.log(1 / delta1))
        thesis = sens * (1 + t) / eps3
        sigma2d = objective_noise_sigma(sens, eps3, delta1, 2)
        if eps3 <= 2 * (1 + t):
            assert sigma2d <= thesis
        else:
            assert sigma2d > thesis  # where the thesis' formula under-noises


@pytest.mark.parametrize("eps1, expected", [
    (0.0099, 0.99),  # capped at 0.99
    (0.099, 0.887 + 0.019 / 0.099**0.373),
    (0.99, 0.887 + 0.019 / 0.99**0.373),
    (9.99, 1 - 0.99 / 9.99),  # the eps1 - eps3 < 1 constraint binds
])
def test_thesis_eps3_rule_low_dimensional(eps1, expected):
    assert thesis_eps3_fraction(eps1) == pytest.approx(expected, rel=1e-12)


def test_thesis_eps3_rule_high_dimensional():
    assert thesis_eps3_fraction(0.5, high_dimensional=True) == pytest.approx(0.97)
    assert thesis_eps3_fraction(50.0, high_dimensional=True) == pytest.approx(1 - 0.99 / 50)


@pytest.mark.parametrize("eps1, curvature, rank, high_dim, expected", [
    (0.99, 0.5, 2, False, 1 - 0.5 * 0.99 / 30),  # Lambda = 30 / eps1^2
    (0.099, 10.0, 2, False, 1 - 10 * 0.099 / 30),
    (0.99, 1.8, 18, False, 1 - 1.8 * 0.99 / (30 * 9)),  # softmax, K = 10: 270 / eps1^2
    (0.99, 0.5, 2, True, 1 - 0.5 * 0.99 / 1000),  # more features than rows
    (9.9, 0.5, 2, False, 1 - 0.99 / 9.9),  # eps1 - eps3 clamped to 0.99
    (0.1, 1000.0, 2, False, 0.5),  # eps1 - eps3 clamped to eps1 / 2
])
def test_default_eps3_rule(eps1, curvature, rank, high_dim, expected):
    f1 = eps3_fraction_rule(eps1, curvature, rank, high_dim)
    assert f1 == pytest.approx(expected, rel=1e-12)
    scale = (1000 if high_dim else 30) * rank / 2
    if f1 == pytest.approx(1 - curvature * eps1 / scale):
        assert curvature / (eps1 - f1 * eps1) == pytest.approx(scale / eps1**2)


def test_thesis_rule_is_available_by_name(small_binary):
    X, y = small_binary
    clf = DPLogisticRegressionAMP(epsilon=1.0, eps3_fraction="thesis", random_state=0).fit(X, y)
    assert clf.calibration_.eps3 == pytest.approx(0.99 * thesis_eps3_fraction(0.99))


def test_eps3_split_violation_is_a_clear_error():
    with pytest.raises(ValueError, match="0 < eps1 - eps3 < 1"):
        amp_calibration(10.0, 1e-6, n_samples=100, lipschitz=1.0, smoothness=0.25, rank=2,
                        eps3_fraction=0.5)


# --------------------------------------------------------------------------- softmax loss
def _softmax_loss_parts(W, x, y):
    p = softmax(W @ x)
    grad = np.outer(p - np.eye(len(p))[y], x)
    hess = np.kron(np.diag(p) - np.outer(p, p), np.outer(x, x))
    return grad, hess


def test_softmax_constants_hold_and_are_nearly_tight():
    rng = np.random.default_rng(0)
    K, d, norm_x = 4, 3, 1.7
    loss = MultinomialLoss(K)
    worst_grad, worst_eig = 0.0, 0.0
    for _ in range(1000):
        x = rng.normal(size=d)
        x *= norm_x / np.linalg.norm(x)
        W = rng.normal(scale=rng.choice([0.1, 3.0, 30.0]), size=(K, d))
        y = rng.integers(K)
        grad, hess = _softmax_loss_parts(W, x, y)
        worst_grad = max(worst_grad, np.linalg.norm(grad))
        eig = np.linalg.eigvalsh(hess)
        worst_eig = max(worst_eig, eig[-1])
        assert np.sum(eig > 1e-10) <= K - 1
        x2 = rng.normal(size=d)
        x2 *= norm_x / np.linalg.norm(x2)
        _, hess2 = _softmax_loss_parts(W, x2, rng.integers(K))
        diff_rank = np.linalg.matrix_rank(hess - hess2, tol=1e-10)
        assert diff_rank <= loss.hessian_rank_bound(K * d)
    assert worst_grad <= loss.lipschitz(norm_x) + 1e-12
    assert worst_grad > 0.95 * loss.lipschitz(norm_x)  # sqrt(2) is needed, not just 1
    assert worst_eig <= loss.smoothness(norm_x) + 1e-12
    assert worst_eig > 0.9 * loss.smoothness(norm_x)  # 1/2 is needed, not just 1/4
    assert loss.hessian_rank_bound(K * d) == 6 and loss.hessian_rank_bound(4) == 4


def test_softmax_eigenvalue_shift_is_bounded_by_twice_the_trace_bound():
    # What Lemma 4.3.2 needs: sum_i |lambda_i(A + E) - lambda_i(A)| <= C for
    # A = m x (data Hessian) and E the difference of two rows' Hessians.
    rng = np.random.default_rng(2)
    K, d, norm_x = 5, 4, 1.3
    loss = MultinomialLoss(K)
    bound = 2 * loss.hessian_trace_bound(norm_x)
    assert bound < loss.hessian_rank_bound(K * d) * loss.smoothness(norm_x)
    worst = 0.0
    for _ in range(300):
        W = rng.normal(scale=rng.choice([0.1, 1.0, 10.0]), size=(K, d))
        rows = rng.normal(size=(6, d))
        rows *= norm_x / np.linalg.norm(rows, axis=1, keepdims=True)
        labels = rng.integers(K, size=6)
        hessians = [_softmax_loss_parts(W, x, c)[1] for x, c in zip(rows, labels)]
        A = sum(hessians[:5])
        shift = np.abs(np.linalg.eigvalsh(A - hessians[0] + hessians[5])
                       - np.linalg.eigvalsh(A)).sum()
        worst = max(worst, shift)
        assert shift <= bound + 1e-9
    assert worst > 0.3 * bound
    # The trace bound (1 - 1/K) ||x||^2 is reached at uniform probabilities.
    _, hess = _softmax_loss_parts(np.zeros((K, d)), np.full(d, norm_x / 2), 0)
    assert np.trace(hess) == pytest.approx(loss.hessian_trace_bound(norm_x))


def test_multinomial_objective_gradient_and_hessian():
    rng = np.random.default_rng(1)
    m, d, K = 40, 3, 4
    X = rng.normal(size=(m, d))
    y = rng.integers(K, size=m)
    b = rng.normal(size=K * d)
    obj = MultinomialObjective(X, y, K, reg=0.3, b=b)
    theta = rng.normal(size=K * d)
    W = theta.reshape(K, d)
    Z = X @ W.T
    expected = (np.mean(np.log(np.exp(Z).sum(axis=1)) - Z[np.arange(m), y])
                + 0.15 * theta @ theta + b @ theta)
    value, grad = obj.value_and_grad(theta)
    assert value == pytest.approx(expected, rel=1e-12)
    numeric = optimize.approx_fprime(theta, obj.value, 1e-7)
    np.testing.assert_allclose(grad, numeric, atol=1e-5)
    H = obj.hessian(theta)
    numeric_h = np.array([(obj.value_and_grad(theta + 1e-6 * e)[1]
                           - obj.value_and_grad(theta - 1e-6 * e)[1]) / 2e-6
                          for e in np.eye(K * d)])
    np.testing.assert_allclose(H, numeric_h, atol=1e-6)
    Hs = MultinomialObjective(sp.csr_matrix(X), y, K, reg=0.3, b=b).hessian(theta)
    np.testing.assert_allclose(Hs, H, atol=1e-12)


# --------------------------------------------------------------------------- solver
def _logistic_gradient(X, y_pm1, reg, b, theta):
    z = y_pm1 * (X @ theta)
    return X.T @ (-expit(-z) * y_pm1) / len(y_pm1) + reg * theta + b


@pytest.mark.parametrize("hessian_rows", [None, 300])
def test_newton_certifies_one_over_m_squared(hessian_rows):
    X, y = make_classification(n_samples=5000, n_features=20, random_state=0)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y_pm1 = 2.0 * y - 1
    rng = np.random.default_rng(0)
    b = rng.normal(scale=1e-3, size=20)
    obj = GLMObjective(X, y_pm1, LogisticLoss(), reg=1e-3, b=b)
    gamma = 1 / 5000**2
    res = minimize_certified(obj, np.zeros(20), gamma=gamma, hessian_rows=hessian_rows, rng=rng)
    assert isinstance(res, CertifiedResult)
    independent = np.linalg.norm(_logistic_gradient(X, y_pm1, 1e-3, b, res.x))
    assert independent <= gamma
    assert res.grad_norm == pytest.approx(independent, rel=1e-3, abs=1e-14)
    assert res.n_iter < 60


def test_solver_that_misses_gamma_raises_and_releases_nothing(small_binary):
    X, y = small_binary
    clf = DPLogisticRegressionAMP(epsilon=1.0, max_iter=1, random_state=0)
    with pytest.raises(CertificationError, match="nothing was released"):
        clf.fit(X, y)
    assert not hasattr(clf, "coef_")


def test_scipy_solver_is_certified_or_refused(small_binary):
    X, y = small_binary
    clf = DPLogisticRegressionAMP(epsilon=1.0, solver="BFGS", gamma=1e-5,
                                  random_state=0).fit(X, y)
    assert clf.gradient_norm_[0] <= 1e-5
    with pytest.raises(CertificationError):
        DPLogisticRegressionAMP(epsilon=1.0, solver="CG", gamma=1e-300, max_iter=5,
                                random_state=0).fit(X, y)


def test_released_point_is_certified_against_an_independent_gradient(small_binary):
    X, y = small_binary
    m = len(y)
    clf = DPLogisticRegressionAMP(epsilon=1.0, random_state=7).fit(X, y)
    cal = clf.calibration_
    assert cal.gamma == pytest.approx(1 / m**2)
    assert clf.gradient_norm_[0] <= cal.gamma
    # Rebuild b1 and b2 from the same seed (white box: the binary path spawns
    # one child, which spawns a noise and a solver stream).
    child = np.random.default_rng(7).spawn(1)[0]
    noise_rng, _ = child.spawn(2)
    b1 = noise_rng.normal(0.0, cal.sigma1, size=7)
    b2 = noise_rng.normal(0.0, cal.sigma2, size=7)
    theta_out = np.append(clf.coef_[0], clf.intercept_[0])
    theta_approx = theta_out - b2
    Xa = np.hstack([X, np.ones((m, 1))])
    Xa *= np.minimum(1.0, 1.0 / np.linalg.norm(Xa, axis=1))[:, None]
    grad = _logistic_gradient(Xa, 2.0 * y - 1, cal.reg_strength / m, b1, theta_approx)
    assert np.linalg.norm(grad) <= cal.gamma
    assert np.linalg.norm(grad) == pytest.approx(clf.gradient_norm_[0], rel=1e-2, abs=1e-15)


# --------------------------------------------------------------------------- estimator
def test_defaults_are_hyperparameter_free(small_binary):
    X, y = small_binary
    m = len(y)
    clf = DPLogisticRegressionAMP(epsilon=0.5, random_state=0).fit(X, y)
    cal = clf.calibration_
    assert clf.delta_ == pytest.approx(1 / m**2)
    assert clf.privacy_spent_ == PrivacyBudget(0.5, 1 / m**2)
    assert cal.eps2 == pytest.approx(0.005) and cal.delta2 == pytest.approx(0.01 / m**2)
    assert cal.eps3 == pytest.approx(eps3_fraction_rule(0.495, 0.5, 2, False) * 0.495)
    assert cal.lipschitz == 1.0 and cal.smoothness == 0.25 and cal.rank == 2
    assert clf.multi_class_ == "binary" and clf.coef_.shape == (1, 6)
    assert clf.n_iter_.shape == (1,) and clf.gradient_norm_.shape == (1,)


def test_bad_input_fails_before_any_noise_or_spend(small_binary):
    X, y = small_binary
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    cases = [
        (dict(), X, np.zeros(len(y)), "at least 2 classes"),
        (dict(), X_nan, y, "NaN"),
        (dict(epsilon=0.0), X, y, "epsilon"),
        (dict(epsilon=-1.0), X, y, "epsilon"),
        (dict(epsilon=10.0, eps3_fraction=0.5), X, y, "0 < eps1 - eps3 < 1"),
        (dict(loss="hinge"), X, y, "loss"),
        (dict(data_norm=0.0), X, y, "data_norm"),
        (dict(output_fraction=1.0), X, y, "output_fraction"),
        (dict(gamma=-1.0), X, y, "gamma"),
        (dict(solver="sgd"), X, y, "solver"),
        (dict(multi_class="multinomial", loss="huber"), X, y, "multinomial"),
        (dict(delta=1.5), X, y, "delta"),
    ]
    for params, Xc, yc, match in cases:
        rng = np.random.default_rng(0)
        state = rng.bit_generator.state
        accountant = BudgetAccountant(epsilon=100.0, delta=0.5)
        clf = DPLogisticRegressionAMP(random_state=rng, accountant=accountant, **params)
        with pytest.raises(ValueError, match=match):
            clf.fit(Xc, yc)
        assert rng.bit_generator.state == state, params  # no noise drawn
        assert accountant.spent is None, params  # nothing spent
        assert not hasattr(clf, "coef_")


def test_one_vs_rest_splits_the_budget_and_parallel_is_reproducible():
    X, y = make_classification(n_samples=900, n_features=5, n_informative=4, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=0)
    serial = DPLogisticRegressionAMP(epsilon=3.0, multi_class="ovr", random_state=1).fit(X, y)
    with parallel_config(backend="threading"):
        parallel = DPLogisticRegressionAMP(epsilon=3.0, multi_class="ovr", n_jobs=2,
                                           random_state=1).fit(X, y)
    np.testing.assert_array_equal(serial.coef_, parallel.coef_)
    assert serial.coef_.shape == (3, 5) and serial.multi_class_ == "ovr"
    assert serial.calibration_.epsilon == pytest.approx(1.0)
    assert serial.calibration_.delta == pytest.approx(1 / 900**2 / 3)
    assert serial.privacy_spent_ == PrivacyBudget(3.0, 1 / 900**2)
    assert np.all(serial.gradient_norm_ <= serial.calibration_.gamma)
    proba = serial.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_huber_has_no_predict_proba(small_binary):
    X, y = small_binary
    clf = DPLogisticRegressionAMP(loss="huber", random_state=0).fit(X, y)
    assert not hasattr(clf, "predict_proba")
    assert clf.calibration_.smoothness == pytest.approx(5.0)
    assert clf.score(X, y) > 0.8


def test_sparse_input_gives_the_same_model(small_binary):
    X, y = small_binary
    dense = DPLogisticRegressionAMP(random_state=3).fit(X, y)
    sparse = DPLogisticRegressionAMP(random_state=3).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-6, atol=1e-9)


def test_accuracy_close_to_non_private_on_synthetic_l(synthetic_l):
    X_train, X_test, y_train, y_test = synthetic_l
    baseline = LogisticRegression().fit(X_train, y_train).score(X_test, y_test)
    scores = [DPLogisticRegressionAMP(epsilon=1.0, random_state=s).fit(X_train, y_train)
              .score(X_test, y_test) for s in range(3)]
    assert baseline > 0.94
    assert np.mean(scores) > baseline - 0.04
    # epsilon = 0.01 is far noisier: the comparison is meaningful.
    tiny = DPLogisticRegressionAMP(epsilon=0.01, random_state=0).fit(X_train, y_train)
    assert tiny.score(X_test, y_test) < np.mean(scores) - 0.1


def _digits():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    X /= np.linalg.norm(X, axis=1, keepdims=True)  # per-row, privacy-free
    return X[:1400], X[1400:], y[:1400], y[1400:]


def test_multinomial_beats_one_vs_rest_on_digits():
    X_train, X_test, y_train, y_test = _digits()
    soft = [DPLogisticRegressionAMP(epsilon=3.0, random_state=s).fit(X_train, y_train)
            .score(X_test, y_test) for s in range(2)]
    ovr = [DPLogisticRegressionAMP(epsilon=3.0, multi_class="ovr", random_state=s)
           .fit(X_train, y_train).score(X_test, y_test) for s in range(2)]
    clf = DPLogisticRegressionAMP(epsilon=3.0, random_state=0).fit(X_train, y_train)
    assert clf.multi_class_ == "multinomial" and clf.coef_.shape == (10, 64)
    assert clf.calibration_.rank == 18
    np.testing.assert_allclose(clf.predict_proba(X_test).sum(axis=1), 1.0)
    assert np.mean(soft) > np.mean(ovr) + 0.2


def test_pipeline_cross_validation_grid_search_and_pickling(small_binary):
    X, y = small_binary
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    pipe = make_pipeline(Normalizer(),
                         DPLogisticRegressionAMP(epsilon=1.0, random_state=0,
                                                 accountant=accountant))
    scores = cross_val_score(pipe, X, y, cv=3)
    assert len(scores) == 3 and accountant.spent.epsilon == pytest.approx(3.0)
    search = GridSearchCV(pipe, {"dplogisticregressionamp__epsilon": [0.5, 1.0]}, cv=2)
    search.fit(X, y)  # 2 x 2 fits, then the refit of the best
    best = search.best_params_["dplogisticregressionamp__epsilon"]
    assert accountant.spent.epsilon == pytest.approx(3.0 + 3.0 + best)
    with pytest.raises(BudgetExceededError):
        clone(pipe).set_params(dplogisticregressionamp__epsilon=5.0).fit(X, y)
    clf = DPLogisticRegressionAMP(epsilon=1.0, random_state=0).fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))
    assert clone(clf).get_params() == clf.get_params()


# --------------------------------------------------------------------------- audit
class _UnderNoisedAMP(DPLogisticRegressionAMP):
    """AMP whose objective noise sigma1 is divided by 4 (must be caught)."""

    def _calibrate(self, *args, **kwargs):
        cal = super()._calibrate(*args, **kwargs)
        return dataclasses.replace(cal, sigma1=cal.sigma1 / 4)


# Worst case for the Huber loss: around theta = 0 every margin lies in the
# linear zone, so each row's gradient is exactly -y x and replacing one row
# moves the data gradient by 2 Delta / m, the sensitivity the proof uses.
_X = np.array([[1.0]] * 5 + [[-1.0]] * 5)
_D0 = (_X, np.array([1] * 5 + [0] * 5))
_D1 = (_X, np.array([1] * 5 + [0] * 4 + [1]))


def _audit(estimator_class, n_runs):
    def mechanism(dataset, rng):
        X, y = dataset
        clf = estimator_class(epsilon=1.0, loss="huber", fit_intercept=False, gamma=1e-9,
                              random_state=rng)
        return clf.fit(X, y).coef_[0, 0]
    return audit_epsilon(mechanism, _D0, _D1, n_runs=n_runs, delta=1 / 10**2,
                         random_state=12345)


def test_audit_stays_below_epsilon_and_catches_sigma1_over_4():
    honest = _audit(DPLogisticRegressionAMP, 2000)
    assert honest.epsilon_lower_bound <= 1.0
    cheat = _audit(_UnderNoisedAMP, 2000)
    assert cheat.epsilon_lower_bound > 1.0, cheat
