"""Objective and output perturbation (seed 004 Ch. 4, seed 002): calibrations refused before the charge.

Calibration failures of objective and output perturbation that depend on no data
must be refused before the accountant is charged, and a fit that is charged must
release finite weights (a non-finite release spends the budget for nothing).
"""

import warnings

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.linear_model import ObjectivePerturbationClassifier, OutputPerturbationClassifier


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return X, (X[:, 0] > 0).astype(int)


def _refused_before_charge_or_finite(clf, must_refuse=False):
    X, y = _data()
    accountant = BudgetAccountant(epsilon=float("inf"), delta=0.5)
    clf.set_params(accountant=accountant, classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            clf.fit(X, y)
        except ValueError as error:
            assert "Nothing was spent" in str(error)
            assert accountant.spent is None and not hasattr(clf, "coef_")
            return
    assert not must_refuse, "fitted with noise that underflows to 0"
    assert np.all(np.isfinite(clf.coef_)) and np.all(np.isfinite(clf.intercept_))


@pytest.mark.parametrize("params, must_refuse", [
    (dict(epsilon=1e-307), False),  # scale sensitivity / epsilon overflows: +-inf weights
    (dict(alpha=5e-324), False),  # sensitivity 2 R / (n Lambda) overflows: +-inf weights
    (dict(epsilon=1e300, alpha=1e300), True),  # scale underflows to 0: the bare minimizer
])
def test_output_perturbation_noise_out_of_float_range_is_refused_before_the_charge(
        params, must_refuse):
    _refused_before_charge_or_finite(OutputPerturbationClassifier(**params), must_refuse)


@pytest.mark.parametrize("params", [
    dict(epsilon=5e-324),  # epsilon_2 = 0: ZeroDivisionError after the charge
    dict(certification_fraction=1e-320),  # certification scale overflows: +-inf weights
    dict(data_norm=1e300),  # smoothness data_norm^2 / 4 overflows: OverflowError after
])
def test_objective_perturbation_calibration_failure_is_refused_before_the_charge(params):
    _refused_before_charge_or_finite(ObjectivePerturbationClassifier(**params))


@pytest.mark.parametrize("cls", [ObjectivePerturbationClassifier, OutputPerturbationClassifier])
def test_tol_below_the_certificates_float_floor_is_refused_before_the_charge(cls):
    # data_norm = 1e-200 makes the default tol 1e-5 data_norm / n about 2**-686, far
    # below the certificate's absolute floor from subnormal rounding (about 2**-537):
    # no point can be certified, so every fit spent its budget, then raised
    # CertificationError.
    X, y = _data()
    accountant = BudgetAccountant(epsilon=float("inf"), delta=0.5)
    clf = cls(data_norm=1e-200, classes=[0, 1], random_state=0, accountant=accountant)
    with pytest.raises(ValueError, match="Nothing was spent"):
        clf.fit(X * 1e-200, y)
    assert accountant.spent is None


def test_objective_perturbation_noise_beyond_the_float_resolution_is_refused_before_the_charge():
    # At epsilon = 1e-12 the linear term b / n is about 1e11 / n: one ulp of the
    # minimizer moves the gradient by far more than tol = 1e-5 / n, so no float point is
    # certifiable and every fit spent its budget, then raised CertificationError.
    X, y = _data()
    accountant = BudgetAccountant(epsilon=float("inf"), delta=0.5)
    clf = ObjectivePerturbationClassifier(epsilon=1e-12, classes=[0, 1], random_state=0,
                                          accountant=accountant)
    with pytest.raises(ValueError, match="Nothing was spent"):
        clf.fit(X, y)
    assert accountant.spent is None
    # Where the resolution allows it (epsilon = 1e-8 here) the fit certifies.
    ObjectivePerturbationClassifier(epsilon=1e-8, classes=[0, 1], random_state=0).fit(X, y)
