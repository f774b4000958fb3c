"""Defects found by the session-19 privacy review of the functional-perturbation family
(PrivateKernelDensity, PrivateHistogram, PrivateGaussianProcessRegressor; seed 003)."""

import warnings

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.kernel_methods import PrivateGaussianProcessRegressor, PrivateKernelDensity


def _accountant():
    return BudgetAccountant(epsilon=float("inf"), delta=0.5)


def _rows(n=30, d=1):
    return np.random.default_rng(0).normal(size=(n, d))


@pytest.mark.parametrize("bandwidth, d", [(1e-160, 1), (1e-155, 1), (1e77, 4)])
def test_kde_bandwidth_out_of_float_range_is_refused_before_spending(bandwidth, d):
    # h = 1e-160: h^2 is subnormal and 1 / (2 h^2) overflows, so the support kernel matrix was
    # NaN and a NaN density was released after the accountant was charged. h = 1e77 in 4
    # dimensions: the normalizer is subnormal and kde_sensitivity raised OverflowError.
    acc = _accountant()
    est = PrivateKernelDensity(bandwidth=bandwidth, n_public=20, accountant=acc, random_state=0)
    with pytest.raises(ValueError, match="bandwidth"):
        est.fit(_rows(d=d))
    assert acc.spends == []


@pytest.mark.parametrize("make, data", [
    # The normalizer (2 pi h^2)^(-1) ~ 7e306 puts the noise scale at inf (epsilon = 1e-3).
    (lambda acc: PrivateKernelDensity(bandwidth=1.5e-154, n_public=20, epsilon=1e-3,
                                      accountant=acc, random_state=0), (_rows(d=2),)),
    # A finite noise scale (3.7e307) whose draws overflow, and a label range whose
    # intermediate C^{-1} y overflows.
    (lambda acc: PrivateGaussianProcessRegressor(y_bounds=(-1e307, 1e307), accountant=acc,
                                                 random_state=0),
     (_rows(), np.zeros(30))),
    (lambda acc: PrivateGaussianProcessRegressor(y_bounds=(-1e300, 1e300), alpha=1e-6,
                                                 accountant=acc, random_state=0),
     (_rows(), np.zeros(30))),
], ids=["kde-sigma-inf", "gp-noise-overflow", "gp-mean-overflow"])
def test_release_that_would_overflow_is_refused_before_spending(make, data):
    acc = _accountant()
    with pytest.raises(ValueError, match="overflow"):
        make(acc).fit(*data)
    assert acc.spends == []


def test_release_scale_guard_keeps_ordinary_fits():
    # The guard is a public bound: it must not refuse realistic settings (small h in several
    # dimensions, small alpha, small epsilon).
    X = _rows(200, 3)
    kde = PrivateKernelDensity(bandwidth=0.05, n_public=300, epsilon=1e-3, random_state=0).fit(X)
    assert np.all(np.isfinite(kde.dual_coef_))
    gp = PrivateGaussianProcessRegressor(alpha=1e-8, epsilon=1e-3, random_state=0)
    gp.fit(X, np.clip(X[:, 0], -1, 1))
    assert np.all(np.isfinite(gp.predict(X)))


def test_gp_label_warning_is_emitted_before_the_charge():
    # Labels outside y_bounds are reported with a UserWarning. It was emitted after the
    # accountant was charged: with warnings turned into errors the fit then failed, half
    # done, with the budget spent, and only when the private labels left y_bounds.
    X = _rows()
    y = np.full(30, 5.0)
    acc = _accountant()
    est = PrivateGaussianProcessRegressor(accountant=acc, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        with pytest.raises(UserWarning, match="outside y_bounds"):
            est.fit(X, y)
    assert acc.spends == []
    with pytest.warns(UserWarning, match="30 of 30 labels"):
        est.fit(X, y)
    assert len(acc.spends) == 1
