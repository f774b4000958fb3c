"""Kernel classifiers (seed 000, seed 003): kernels that are not positive semi-definite, and releases that overflow after the charge."""

import warnings

import numpy as np
import pytest
from sklearn.gaussian_process.kernels import (
    RBF,
    ConstantKernel,
    DotProduct,
    Exponentiation,
    Matern,
    PairwiseKernel,
    RationalQuadratic,
)

from skdp import BudgetAccountant
from skdp.kernel_methods import (
    InteractiveKernelPredictor,
    PrivateKernelClassifier,
    PrivateKernelNetClassifier,
    PrivateKernelSVC,
)

ERM_CLASSIFIERS = (PrivateKernelSVC, PrivateKernelClassifier, PrivateKernelNetClassifier)
ALL = ERM_CLASSIFIERS + (InteractiveKernelPredictor,)


def _accountant():
    return BudgetAccountant(epsilon=float("inf"), delta=0.5)


def _make(Est, acc, **kw):
    extra = {} if Est is InteractiveKernelPredictor else {"n_public": 20}
    if Est is PrivateKernelNetClassifier:
        extra["n_rounds"] = 5
    return Est(classes=[0, 1], accountant=acc, random_state=0, **extra, **kw)


def _spike(a, b, M=50.0):
    """``k(x, x) = 1``; PSD on ``{x_0 > 5}`` and on ``{x_0 < 5}`` apart, not jointly.

    ``rbf(a, b) + M (g(a) h(b) + h(a) g(b))`` with ``g, h`` the indicators of the two
    half-lines: the Gram matrix of a point on each side is ``[[1, M], [M, 1]]``.
    """
    g_a, g_b = float(a[0] > 5), float(b[0] > 5)
    return float(np.exp(-np.sum((a - b) ** 2))) + M * (g_a * (1 - g_b) + (1 - g_a) * g_b)


def _pair(n=8, at=10.0):
    X = np.full((n, 1), at)
    y0 = (np.arange(n) < n // 2).astype(int)
    y1 = y0.copy()
    y1[n // 2] = 1
    return X, y0, y1


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_indefinite_callable_is_refused_where_it_would_move_the_svc_release_50_times():
    # Before the fix: the private rows at x = 10 and the public support in [-3, 3] are each
    # PSD for the callable above, so support_factor accepted it, but f(u) = sum_i beta_i
    # k(u, x_i) = M sum_i beta_i: one flipped label moved every released value by
    # 2 M / (alpha n) = 25, 50 times the calibrated 2 kappa / (alpha n) = 0.5. An audit of
    # decision_function(0) at epsilon = 1, delta = 1e-5 (300 runs per side) gave a lower
    # bound of 4.2. Now a kernel that is not PSD by construction is checked on public
    # points (the support plus a fixed data-independent probe set) before the charge.
    X, y0, _ = _pair()
    acc = _accountant()
    with pytest.raises(ValueError, match="positive semi-definite"):
        _make(PrivateKernelSVC, acc, kernel=_spike, kernel_bound=1.0, alpha=0.5,
              loss="huber").fit(X, y0)
    assert acc.spends == []


@pytest.mark.parametrize("Est", ALL)
@pytest.mark.parametrize("kernel", [
    _spike,
    lambda a, b: float(np.tanh(a @ b + 1.0)),  # the sigmoid kernel as a callable
    # Barely indefinite: a narrower Gaussian subtracted (negative spectral density at high
    # frequencies); smallest eigenvalue about -6e-3 on the support and probe points, far
    # beyond the rounding tolerance (about 4e-11 here).
    lambda a, b: float(np.exp(-np.sum((a - b) ** 2)) - 0.01 * np.exp(-4 * np.sum((a - b) ** 2))),
    lambda a, b: float(np.exp(-np.sum((a - b) ** 2)) + 0.1 * (a[0] - b[0])),  # not symmetric
], ids=["spike", "sigmoid-callable", "barely-indefinite", "asymmetric"])
def test_indefinite_callable_is_refused_before_the_charge(Est, kernel):
    X, y0, _ = _pair()
    acc = _accountant()
    with pytest.raises(ValueError, match="positive semi-definite"):
        _make(Est, acc, kernel=kernel, kernel_bound=1.0).fit(X, y0)
    assert acc.spends == []


@pytest.mark.parametrize("Est", ALL)
@pytest.mark.parametrize("kernel, params", [
    ("rbf", {"gamma": -0.05}),   # exp(+0.05 ||a - b||^2): unbounded off the diagonal
    ("laplacian", {"gamma": -1.0}),
    ("chi2", {"gamma": -1.0}),
    ("poly", {"degree": 2.5}),   # a fractional power of a PSD kernel need not be PSD
    ("poly", {"gamma": -1.0}),   # (c - <a, b>)^3 has negative odd-power coefficients
    ("rbf", {"gamma": 0.0}),
], ids=["rbf-gamma", "laplacian-gamma", "chi2-gamma", "poly-degree", "poly-gamma",
        "rbf-gamma0"])
def test_named_kernel_parameters_in_kernel_params_are_validated(Est, kernel, params):
    # kernel_params overrode the validated gamma / degree after their checks: an rbf kernel
    # with gamma < 0 kept k(x, x) = 1 (so kappa = 1) while |k(a, b)| grew without bound.
    X = np.abs(np.random.default_rng(0).normal(size=(8, 1)))
    y = np.arange(8) % 2
    acc = _accountant()
    kw = {"kernel_bound": 10.0} if kernel == "poly" else {}
    with pytest.raises((ValueError, TypeError)):
        _make(Est, acc, kernel=kernel, kernel_params=params, **kw).fit(X, y)
    assert acc.spends == []


@pytest.mark.parametrize("Est", ALL)
@pytest.mark.parametrize("kernel", [
    RBF(1.0) + ConstantKernel(-0.5),          # K = rbf - 0.5 * 1 1^T, indefinite
    ConstantKernel(-1.0) * RBF(1.0) + ConstantKernel(2.0),
    RationalQuadratic(alpha=-1.0),
    Matern(nu=-0.5),
    PairwiseKernel(metric="rbf", gamma=-1.0),
    PairwiseKernel(metric="poly", pairwise_kernels_kwargs={"coef0": -1.0}),
], ids=["rbf-minus-constant", "negative-constant-product", "rq-alpha", "matern-nu",
        "pairwise-gamma", "pairwise-poly-coef0"])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_indefinite_sklearn_kernel_objects_are_refused_before_the_charge(Est, kernel):
    X = np.random.default_rng(0).normal(size=(8, 1))
    y = np.arange(8) % 2
    acc = _accountant()
    with pytest.raises(ValueError):
        _make(Est, acc, kernel=kernel, kernel_bound=4.0).fit(X, y)
    assert acc.spends == []


@pytest.mark.parametrize("kernel, kw", [
    (lambda a, b: float(np.exp(-np.sum((a - b) ** 2))), {"kernel_bound": 1.0}),
    (RBF(0.7) * ConstantKernel(2.0) + DotProduct(1.0) ** 2, {"kernel_bound": 20.0}),
    (Exponentiation(RBF(1.0), 0.5), {}),
    (Matern(nu=1.5) + RationalQuadratic(alpha=2.0), {}),
    (PairwiseKernel(metric="laplacian", gamma=0.5), {"kernel_bound": 1.0}),
    ("poly", {"kernel_bound": 50.0, "kernel_params": {"degree": 2, "coef0": 0.5}}),
    ("rbf", {"kernel_params": {"gamma": 0.5}}),
], ids=["rbf-callable", "sum-product", "exponentiation", "matern-rq", "pairwise",
        "poly-params", "rbf-params"])
@pytest.mark.parametrize("Est", ALL)
def test_positive_semi_definite_kernels_are_still_accepted(Est, kernel, kw):
    X = np.random.default_rng(0).normal(size=(12, 1))
    y = (X[:, 0] > 0).astype(int)
    est = _make(Est, None, kernel=kernel, alpha=1.0, epsilon=5.0, **kw).fit(X, y)
    assert np.all(np.isfinite(est.decision_function(X)))


@pytest.mark.parametrize("Est, kw", [
    (PrivateKernelClassifier, {"kernel": "linear", "kernel_bound": 1e300, "alpha": 1e-5}),
    (PrivateKernelClassifier, {"kernel": "linear", "kernel_bound": 1e150, "alpha": 1e-140}),
    (PrivateKernelSVC, {"kernel": "linear", "kernel_bound": 1e308, "alpha": 1e-3}),
], ids=["tddl-huge-kappa", "tddl-tiny-alpha", "svc-huge-kappa"])
def test_release_that_could_overflow_is_refused_before_the_charge(Est, kw):
    # TDDL: the ball least squares of Alg. 2 line 2 squared a radius of 1e305 and raised
    # OverflowError after the budget was charged.
    X = np.random.default_rng(0).normal(size=(10, 1))
    y = (X[:, 0] > 0).astype(int)
    acc = _accountant()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match="overflow"):
            _make(Est, acc, **kw).fit(X, y)
    assert acc.spends == []
