"""skdp.svm / kernel_approximation: calibrations at the edge of the floats."""

import warnings

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.kernel_approximation import RandomFourierFeatures
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF
from skdp.svm._base import svm_sensitivity
from skdp.svm._solver import solve_svm_certified


def _data(n=50):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    return X, (X[:, 0] > 0).astype(int)


def _fit_charged(est, X, y, acc=None):
    acc = BudgetAccountant(epsilon=10.0) if acc is None else acc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.set_params(accountant=acc, classes=[0, 1], random_state=0).fit(X, y)
    return acc


def _assert_refused(est, match):
    X, y = _data()
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match=match):
        _fit_charged(est, X, y, acc)
    assert acc.spent is None


def test_subnormal_sensitivity_under_states_the_solver_outputs_distance():
    # C = 1e-323, n = 3, one feature: the exact minimizers of the pair below are
    # +-C/3 (2 C / 3 apart), but in subnormal floats the solver returns +-1 ulp,
    # 2 ulps apart, while the calibrated sensitivity rounds to 1 ulp: the noise
    # would cover half the real move (the relative-error rounding model of the
    # certificate does not hold below the normal range).
    C, n = 1e-323, 3
    X0 = np.zeros((n, 1))
    X0[0, 0] = 1.0
    X1 = -X0
    exact = svm_sensitivity(C, n, 1.0)
    sens = exact * 1.01
    w0 = solve_svm_certified(X0, np.ones(n), C, radius=1.0).coef[0]
    w1 = solve_svm_certified(X1, np.ones(n), C, radius=1.0).coef[0]
    assert abs(w0 - w1) > sens  # the defect the estimators must refuse to calibrate on


@pytest.mark.parametrize("est", [PrivateLinearSVM(C=1e-323), PrivateLinearSVM(C=1e-200),
                                 PrivateSVMRFF(C=1e-320, n_components=5)])
def test_subnormal_calibration_is_refused_before_the_charge(est):
    _assert_refused(est, "C=")


@pytest.mark.parametrize("est", [PrivateLinearSVM(C=1e200), PrivateLinearSVM(C=1e300),
                                 PrivateLinearSVM(C=1e300, loss="huber"),
                                 PrivateLinearSVM(C=1.0, data_norm=1e250),
                                 PrivateSVMRFF(C=1e200, n_components=5)])
def test_overflowing_calibration_is_refused_before_the_charge(est):
    # Was: OverflowError or CertificationError (gradient norm inf) after the charge.
    _assert_refused(est, "C=")


@pytest.mark.parametrize("est", [PrivateLinearSVM(tol=1e-14), PrivateSVMRFF(tol=1e-13,
                                                                              n_components=5)])
def test_tol_below_the_rounding_floor_is_refused_before_the_charge(est):
    # The certificate's rounding bound n eps C kappa alone exceeds the radius
    # tol C kappa / n once n (n + 1) eps >= tol: every fit would charge, then raise.
    _assert_refused(est, "tol=")


def test_moderate_parameters_still_fit():
    X, y = _data()
    for est in (PrivateLinearSVM(C=1e-100), PrivateLinearSVM(C=1e40),
                PrivateLinearSVM(C=1.0, tol=1e-9), PrivateSVMRFF(n_components=5, C=1e30)):
        acc = _fit_charged(est, X, y)
        assert acc.spent is not None and np.all(np.isfinite(est.coef_))


def test_certificate_pays_for_underflow():
    # Below the normal range the rounding errors are absolute (2**-1075 per
    # operation), not relative: the certificate may not claim distance 0.
    n = 3
    X = np.zeros((n, 1))
    X[0, 0] = 1.0
    sol = solve_svm_certified(X, np.ones(n), 1e-323, radius=1.0)
    assert sol.distance_bound > 0.0


@pytest.mark.parametrize("kernel", ["rbf", "laplacian", "cauchy"])
def test_rff_projection_overflow_keeps_norm_one_and_fits(kernel):
    # X @ frequencies overflows to inf (or inf - inf = nan) for a legal finite row;
    # cos/sin then gave NaN features and a CertificationError after the charge,
    # whose occurrence reveals that such a row is in the data.
    X, y = _data()
    X[0] = [1e308, -1e308]
    X[1] = [1e308, 1e308]
    rff = RandomFourierFeatures(kernel=kernel, n_components=20, random_state=0).fit(X)
    Phi = rff.transform(X)
    assert np.all(np.isfinite(Phi))
    np.testing.assert_allclose(np.linalg.norm(Phi, axis=1), 1.0)
    est = PrivateSVMRFF(kernel=kernel, n_components=20)
    acc = _fit_charged(est, X, y)
    assert acc.spent is not None and np.all(np.isfinite(est.decision_function(X)))


@pytest.mark.parametrize("est", [PrivateLinearSVM(epsilon=5e-324),
                                 PrivateLinearSVM(epsilon=1e-300, C=1e10),
                                 PrivateLinearSVM(epsilon=1e-300, delta=1e-300, C=1e10,
                                                  mechanism="gaussian"),
                                 PrivateSVMRFF(epsilon=1e-310, n_components=5, C=1.0)])
def test_infinite_noise_scale_is_refused_before_the_charge(est):
    # Was: the fit spent the budget and released coef_ = +-inf (or nan).
    _assert_refused(est, "epsilon")

