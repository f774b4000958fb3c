"""Kernel ERM learners refuse, before the charge, a regularization ``alpha`` too small for the
certified Newton solver in floating point (it would raise ``CertificationError`` after it)."""

import warnings

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.exceptions import CertificationError
from skdp.kernel_methods import (
    InteractiveKernelPredictor,
    PrivateKernelClassifier,
    PrivateKernelNetClassifier,
    PrivateKernelSVC,
)

ALL = (PrivateKernelSVC, PrivateKernelClassifier, PrivateKernelNetClassifier,
       InteractiveKernelPredictor)


def _data(n=30):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (n, 2))
    return X, (X[:, 0] > 0).astype(int)


def _make(Est, acc, **kw):
    extra = {} if Est is InteractiveKernelPredictor else {"n_public": 20}
    if Est is PrivateKernelNetClassifier:
        extra["n_rounds"] = 5
    return Est(classes=[0, 1], accountant=acc, random_state=0, **extra, **kw)


def _fit(Est, **kw):
    acc = BudgetAccountant(epsilon=float("inf"), delta=0.5)
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _make(Est, acc, **kw).fit(X, y), acc


@pytest.mark.parametrize("Est", ALL)
@pytest.mark.parametrize("settings", [
    # Before the fix each of these charged the accountant, then raised CertificationError
    # (the RBF kernel, kappa = 1, n = 30): the Newton step's Woodbury subtraction
    # g - S M^-1 S K g / n, of relative rounding about u kappa^2 l'' / alpha, gave a
    # direction that was no descent direction (logistic, alpha = 1e-20: slope +150), and
    # the solver stopped at beta = 0.
    {"alpha": 1e-20},
    {"alpha": 1e-150},
    {"alpha": 1e-150, "epsilon": 1e-5},
    {"alpha": 1e-300, "loss": "huber"},
    {"alpha": 1e-18, "kernel_bound": 4.0, "kernel": "poly", "degree": 1},
])
def test_tiny_alpha_is_refused_before_the_charge(Est, settings):
    acc = BudgetAccountant(epsilon=float("inf"), delta=0.5)
    X, y = _data()
    # Some of these were already refused for an overflowing release or noise scale.
    with warnings.catch_warnings(), pytest.raises(ValueError, match="condition|overflow"):
        warnings.simplefilter("ignore")
        _make(Est, acc, gamma=0.5, **settings).fit(X, y)
    assert acc.spends == []


@pytest.mark.parametrize("Est", ALL)
def test_refusal_reads_no_data_and_leaves_the_accountant_untouched(Est):
    acc = BudgetAccountant(epsilon=float("inf"), delta=0.5)
    X, y = _data()
    for X_, y_ in [(X, y), (np.zeros_like(X), y), (X[:2], np.array([0, 1]))]:
        with pytest.raises(ValueError, match="condition"):
            _make(Est, acc, gamma=0.5, alpha=1e-20).fit(X_, y_)
    assert acc.spends == []


@pytest.mark.parametrize("Est", ALL)
def test_moderate_alpha_still_fits(Est):
    # Below the refusal (logistic: kappa^2 / (4 alpha) = 2**48 < 2**52): still certified.
    est, acc = _fit(Est, gamma=0.5, alpha=2.0**-50, loss="logistic")
    assert acc.spent.epsilon == est.privacy_spent_.epsilon == 1.0


def test_refusal_threshold_is_the_hand_computed_condition_number():
    from skdp.kernel_methods._erm import check_newton_conditioning
    from skdp.linear_model._losses import get_loss

    # kappa^2 l''_max / alpha >= 2**52 is refused: logistic l'' <= 1/4, Huber l'' <= 1 / (2 h).
    check_newton_conditioning(get_loss("logistic", 0.5), 1.0, 2.0**-54 * 1.0000001, "x")
    with pytest.raises(ValueError, match="condition"):
        check_newton_conditioning(get_loss("logistic", 0.5), 1.0, 2.0**-54, "x")
    check_newton_conditioning(get_loss("huber", 0.25), 3.0, 18.0 * 2.0**-52 * 1.0000001, "x")
    with pytest.raises(ValueError, match="condition"):
        check_newton_conditioning(get_loss("huber", 0.25), 3.0, 18.0 * 2.0**-52, "x")
    with pytest.raises(ValueError, match="condition"):  # kappa^2 overflows
        check_newton_conditioning(get_loss("logistic", 0.5), 1e200, 1.0, "x")


def test_certification_error_at_tiny_alpha_is_what_the_refusal_prevents():
    # The setting of the first test, fitted by the solver directly: it cannot certify.
    from sklearn.metrics.pairwise import rbf_kernel

    from skdp.kernel_methods._erm import certificate_tolerance, fit_kernel_erm
    from skdp.linear_model._losses import get_loss

    X, y = _data()
    K = rbf_kernel(X, gamma=0.5)
    with warnings.catch_warnings(), pytest.raises(CertificationError):
        warnings.simplefilter("ignore")
        fit_kernel_erm(K, np.where(y == 1, 1.0, -1.0), get_loss("logistic", 0.5), 1e-20,
                       certificate_tolerance(1.0, 30))


@pytest.mark.parametrize("Est", ALL)
@pytest.mark.parametrize("kernel_bound", [1e-200, 1e-280])
def test_tiny_kernel_bound_is_refused_before_the_charge(Est, kernel_bound):
    # Before the fix: CertificationError after the charge in all four estimators (the
    # certificate's underflow allowance sqrt(n 2**-1074) dominates kernel values of 1e-200).
    acc = BudgetAccountant(epsilon=float("inf"), delta=0.5)
    X, y = _data()
    with warnings.catch_warnings(), pytest.raises(ValueError, match="kernel bound"):
        warnings.simplefilter("ignore")
        _make(Est, acc, kernel="linear", kernel_bound=kernel_bound, alpha=1.0).fit(X, y)
    assert acc.spends == []


@pytest.mark.parametrize("kappa", [1e-10, 1e-60])
@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_zero_gradient_is_certified_at_a_small_kernel_bound(kappa, loss):
    # The certificate of g = 0 (or beta = 0) took _exact_sum's top = 0, whose power of two
    # sigma = 2**levels gave an absolute bound of about 4e-14 at n = 30: above
    # tol = 1e-3 kappa / n for kappa <~ 1e-9, so every fit of a small-valued kernel spent,
    # then raised CertificationError (the solver sits at g = 0 exactly there).
    from skdp.kernel_methods._erm import (
        certificate_tolerance,
        fit_kernel_erm,
        rkhs_gradient_norm_bound,
    )
    from skdp.linear_model._losses import get_loss

    X, y = _data()
    Xc = X / np.linalg.norm(X, axis=1, keepdims=True) * kappa
    K, y_pm1 = Xc @ Xc.T, np.where(y == 1, 1.0, -1.0)
    tol = certificate_tolerance(kappa, 30)
    beta, bound, _ = fit_kernel_erm(K, y_pm1, get_loss(loss, 0.5), 1.0, tol)
    assert bound <= tol
    assert rkhs_gradient_norm_bound(K, y_pm1, get_loss(loss, 0.5), 1.0, np.zeros(30)) > 0.0


def test_kernel_bound_at_2_to_minus_500_still_fits():
    est, acc = _fit(PrivateKernelSVC, kernel="linear", kernel_bound=2.0**-500, alpha=1.0)
    assert acc.spent.epsilon == 1.0


def test_tddl_ball_least_squares_underflow_returned_after_the_charge():
    # Before the fix: kernel values near 1e-150 made lam u^2 / lam^2 underflow in
    # ball_least_squares while sum u^2 / lam exceeded radius^2, and brentq raised
    # "f(a) and f(b) must have different signs" after the budget was charged.
    est, acc = _fit(PrivateKernelClassifier, kernel="linear", kernel_bound=1e-150, alpha=1.0)
    assert acc.spent.epsilon == 1.0
    assert np.all(np.isfinite(est.dual_coef_))


@pytest.mark.parametrize("Est, kw", [
    # TDDL released Laplace noise of scale 3.95e-322 (80 subnormal steps) around values whose
    # rounding is absolute there, with a value sensitivity of 9 ulps.
    (PrivateKernelClassifier, {"kernel": "linear", "kernel_bound": 2.0**-500, "alpha": 1e171}),
    # TDIL: the exponential mechanism's scale check raised after the budget was charged.
    (PrivateKernelNetClassifier, {"kernel": "linear", "kernel_bound": 2.0**-500,
                                  "alpha": 1e168}),
    (PrivateKernelNetClassifier, {"gamma": 0.5, "alpha": 1e308}),
])
def test_subnormal_noise_scale_is_refused_before_the_charge(Est, kw):
    acc = BudgetAccountant(epsilon=float("inf"), delta=0.5)
    X, y = _data()
    with warnings.catch_warnings(), pytest.raises(ValueError, match="noise scale"):
        warnings.simplefilter("ignore")
        _make(Est, acc, **kw).fit(X, y)
    assert acc.spends == []
