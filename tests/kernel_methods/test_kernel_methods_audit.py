"""End-to-end privacy audits of the kernel estimators (seeds 000 and 003).

Each audit fits the real estimator with ``random_state=rng`` on a replace-one
pair chosen to attain the sensitivity its docstring claims, returns one scalar
of the released model, and asserts (``_kernel_audit.check_audit``) that the
Clopper-Pearson lower bound on epsilon of ``skdp.testing.audit_epsilon`` stays
<= the claimed epsilon, while a copy whose noise scale is divided by 4 is
caught above it. The audits of :class:`PrivateKernelDensity` and of the
single-query, pure-DP TDDL path are in ``test_kernel_methods.py``.

Where the pair cannot reach the claimed epsilon, the claim is loose (safe):

* multi-class kernel SVC: the ``k`` one-vs-rest functions are released with
  noise for the joint sensitivity ``sqrt(k) Delta``; moving one row to another
  class changes two functions by ``Delta`` each (``sqrt(2) Delta``), and no
  pair we found changes all ``k`` by ``Delta`` at once;
* TDDL with ``T`` public points: every prediction can move by the full
  sensitivity only when all public points coincide in feature space, and then
  the least-squares step releases their mean, which is far more private than
  the ``T``-fold composition (with ``T = 2`` the mean of the two noisy values
  still reaches the full epsilon in its tails, so that is the audited case);
* TDIL: the Laplace draw attains its per-round epsilon_0, but the exponential
  mechanism on ``|<phi(z), w_t - w*>|`` over two net points attains about
  epsilon_0 / 4 of its epsilon_0 here;
* PINP: the paid answer attains its half of the budget; the sparse vector's
  threshold noise (seed 004's constant ``sqrt(32 T log(1/delta))``, about 40
  times the sensitivity here) makes the free/paid decision nearly independent
  of the data, so its half is far from attained.
"""

import math

import numpy as np
import pytest

from _kernel_audit import check_audit, erm_pair
import skdp.kernel_methods._classifiers as classifiers_module
import skdp.kernel_methods._density as density_module
import skdp.kernel_methods._gp as gp_module
import skdp.kernel_methods._idc as idc_module
from skdp.kernel_methods import (
    InteractiveKernelPredictor,
    PrivateGaussianProcessRegressor,
    PrivateHistogram,
    PrivateKernelClassifier,
    PrivateKernelNetClassifier,
    PrivateKernelSVC,
)
from skdp.kernel_methods._functional import public_support
from skdp.kernel_methods._kernels import gaussian_kernel

# Many fits here leave classes=None, which is incidental to what they test; the
# PrivacyLeakWarning it raises is asserted in tests/utils/test_multiclass.py.
pytestmark = pytest.mark.filterwarnings("ignore:classes=None:skdp.exceptions.PrivacyLeakWarning")

EPSILON = 1.0

# The certified-ERM pair shared by the kernel SVC, TDDL, TDIL and PINP audits (see
# ``erm_pair``): 10 rows at 0, alpha = 10, Huber loss. The certified minimizers' values
# at 0 differ by the claimed 2 kappa / (alpha n) (1 + 1e-3) up to the certificate's
# slack (checked in test_kernel_methods.py::test_audit_tddl and in the SVC audit).
ERM_N, ERM_ALPHA = 10, 10.0
ERM_D0, ERM_D1 = erm_pair(ERM_N)
_ORIGIN = np.zeros((1, 1))


# ------------------------------------------------------------- histogram


def _histogram_pair():
    # Replace-one: one of 10 points moves from bin [0, 1) to bin [1, 2]. The
    # frequency vector (1, 0) becomes (0.9, 0.1): L2 change sqrt(2) / n, the claimed
    # sensitivity (histogram_sensitivity), attained exactly.
    X = np.full((10, 1), 0.5)
    X1 = X.copy()
    X1[0] = 1.5
    return X, X1


def _histogram_mechanism(dataset, rng):
    est = PrivateHistogram(bins=2, bounds=(0.0, 2.0), epsilon=EPSILON, delta=1e-5,
                           random_state=rng).fit(dataset)
    # The noise is i.i.d. per bin, so hist[1] - hist[0] (bin volume 1) is the
    # likelihood-ratio direction of the pair.
    return est.hist_[1] - est.hist_[0]


def test_audit_histogram(monkeypatch):
    X0, X1 = _histogram_pair()
    exact = [PrivateHistogram(bins=2, bounds=(0.0, 2.0), epsilon=1e6, delta=1e-5,
                              random_state=0).fit(X) for X in (X0, X1)]
    gap = np.linalg.norm(exact[1].hist_ - exact[0].hist_)
    assert gap == pytest.approx(exact[0].sensitivity_, rel=1e-2)
    # Measured (audit seed 0): 0.13 calibrated, 1.60 under-noised.
    check_audit(_histogram_mechanism, X0, X1, EPSILON, monkeypatch, density_module,
                "functional_noise_sigma", delta=1e-5)


# ---------------------------------------------------- Gaussian-process regression

_GP_X = np.array([[0.0], [0.5], [3.0]])
_GP_ALPHA, _GP_BOUNDS = 0.5, (-1.0, 1.0)
_GP_C_INV = np.linalg.inv(gaussian_kernel(_GP_X, _GP_X, 1.0) + _GP_ALPHA * np.eye(3))
# The label whose change moves the posterior mean most in the RKHS: the argmax
# j of (C^-1 K C^-1)_jj that gp_mean_sensitivity maximizes over.
_GP_J = int(np.argmax(np.diag(_GP_C_INV @ gaussian_kernel(_GP_X, _GP_X, 1.0) @ _GP_C_INV)))


def _gp_pair():
    # Same public inputs; label j goes from the low to the high end of y_bounds, the
    # largest change d the privacy model allows.
    y0 = np.zeros(3)
    y1 = y0.copy()
    y0[_GP_J], y1[_GP_J] = _GP_BOUNDS
    return y0, y1


def _gp_fit(y, epsilon, rng):
    return PrivateGaussianProcessRegressor(gamma=1.0, alpha=_GP_ALPHA, y_bounds=_GP_BOUNDS,
                                           epsilon=epsilon, delta=1e-5,
                                           random_state=rng).fit(_GP_X, y)


def _gp_mechanism(y, rng):
    released = _gp_fit(y, EPSILON, rng).predict(_GP_X)  # the prior mean (offset) is 0
    # The released values at the inputs are N(m_D, sigma^2 K) with m_D1 - m_D0 =
    # d K C^-1 e_j; the likelihood-ratio statistic (m_D1 - m_D0)^T K^-1 v is
    # proportional to (C^-1 v)_j.
    return _GP_C_INV[_GP_J] @ released


def test_audit_gaussian_process(monkeypatch):
    y0, y1 = _gp_pair()
    exact = [_gp_fit(y, 1e6, 0) for y in (y0, y1)]
    # Mahalanobis distance of the released values = the RKHS distance of the means.
    diff = exact[1].predict(_GP_X) - exact[0].predict(_GP_X)
    K = gaussian_kernel(_GP_X, _GP_X, 1.0)
    assert math.sqrt(diff @ np.linalg.solve(K, diff)) == pytest.approx(exact[0].sensitivity_,
                                                                        rel=1e-2)
    # Measured (audit seed 0): 0.00 calibrated, 1.53 under-noised.
    check_audit(_gp_mechanism, y0, y1, EPSILON, monkeypatch, gp_module,
                "functional_noise_sigma", delta=1e-5)


# ------------------------------------------------------------- kernel SVC


def _svc_mechanism(dataset, rng):
    X, y = dataset
    est = PrivateKernelSVC(alpha=ERM_ALPHA, epsilon=EPSILON, delta=1e-5, random_state=rng)
    # One public support point at 0: the released decision value there (k(0, 0) = 1).
    return est.fit(X, y, X_public=_ORIGIN).dual_coef_[0, 0]


def test_audit_kernel_svc(monkeypatch):
    exact = [PrivateKernelSVC(alpha=ERM_ALPHA, epsilon=1e6, delta=1e-5, random_state=0)
             .fit(X, y, X_public=_ORIGIN) for X, y in (ERM_D0, ERM_D1)]
    gap = exact[1].decision_function(_ORIGIN)[0] - exact[0].decision_function(_ORIGIN)[0]
    assert gap == pytest.approx(exact[0].sensitivity_, rel=1e-2)
    # Measured (audit seed 0): 0.25 calibrated, 1.57 under-noised.
    check_audit(_svc_mechanism, ERM_D0, ERM_D1, EPSILON, monkeypatch, classifiers_module,
                "functional_noise_sigma", delta=1e-5)


def _multiclass_pair():
    # Three classes of 4 rows at 0 (every one-vs-rest margin in the Huber loss's linear
    # zone); one row goes from class 0 to class 1. Functions 0 and 1 move by the
    # one-function sensitivity Delta in opposite directions, function 2 does not:
    # the joint change is sqrt(2) Delta, below the claimed sqrt(3) Delta (see the module
    # docstring).
    X = np.zeros((12, 1))
    y0 = np.repeat([0, 1, 2], 4)
    y1 = y0.copy()
    y1[0] = 1
    return (X, y0), (X, y1)


def _svc_multiclass_mechanism(dataset, rng):
    X, y = dataset
    est = PrivateKernelSVC(alpha=ERM_ALPHA, epsilon=3.0, delta=1e-5, random_state=rng)
    coef = est.fit(X, y, X_public=_ORIGIN).dual_coef_[:, 0]
    # Independent noise per function: coef[1] - coef[0] is the likelihood-ratio direction.
    return coef[1] - coef[0]


def test_audit_kernel_svc_multiclass(monkeypatch):
    pair = _multiclass_pair()
    exact = [PrivateKernelSVC(alpha=ERM_ALPHA, epsilon=1e6, delta=1e-5, random_state=0)
             .fit(X, y, X_public=_ORIGIN) for X, y in pair]
    gap = np.linalg.norm(exact[1].dual_coef_ - exact[0].dual_coef_)
    assert gap == pytest.approx(math.sqrt(2) * exact[0].sensitivity_, rel=1e-2)
    # Measured (audit seed 0): 0.53 calibrated, 4.10 under-noised (epsilon = 3: at
    # epsilon = 1 the sqrt(2) / sqrt(3) attainment leaves the under-noised copy at the
    # audit's resolution).
    check_audit(_svc_multiclass_mechanism, *pair, 3.0, monkeypatch, classifiers_module,
                "functional_noise_sigma", delta=1e-5)


# ------------------------------------------- TDDL with delta > 0 and several public points

_TWO_AT_ORIGIN = np.zeros((2, 1))


def _tddl_composed_mechanism(dataset, rng):
    X, y = dataset
    est = PrivateKernelClassifier(alpha=ERM_ALPHA, loss="huber", epsilon=EPSILON, delta=1e-5,
                                  random_state=rng).fit(X, y, X_public=_TWO_AT_ORIGIN)
    # Both public points sit at 0, so both noisy predictions (each Laplace at the
    # composed scale of tddl_laplace_scale, T = 2) move by the full sensitivity; the
    # least-squares fit of Alg. 2 line 2 then releases their mean as the value at 0.
    return est.dual_coef_[0].sum()


def test_audit_tddl_composed(monkeypatch):
    exact = [PrivateKernelClassifier(alpha=ERM_ALPHA, loss="huber", epsilon=1e9, delta=1e-5,
                                     random_state=0).fit(X, y, X_public=_TWO_AT_ORIGIN)
             for X, y in (ERM_D0, ERM_D1)]
    gap = exact[1].dual_coef_.sum() - exact[0].dual_coef_.sum()
    assert gap == pytest.approx(exact[0].prediction_sensitivity_, rel=2e-3)
    # Measured (audit seed 0): 0.47 calibrated, 2.55 under-noised.
    check_audit(_tddl_composed_mechanism, ERM_D0, ERM_D1, EPSILON, monkeypatch,
                classifiers_module, "tddl_laplace_scale", delta=1e-5)


# ----------------------------------------------------------- TDIL (Alg. 3)

# The public net: n_public = 2 points of the scrambled Halton sequence over the box
# (20.7 and -29.3, so k between them is e^-2500 = 0); the data sit at the first one.
_NET_BOUNDS = (-50.0, 50.0)
_NET = public_support(_NET_BOUNDS, 2, 1)
_NET_D0, _NET_D1 = erm_pair(ERM_N, at=_NET[0, 0])
# The value sensitivity of the pair (one value moves by this much).
_VALUE_SENS = 2.0 / (ERM_ALPHA * ERM_N)


def _tdil_mechanism(dataset, rng):
    X, y = dataset
    # One round: the exponential mechanism picks a net point by |<phi(z), w*>| (0 at
    # both points for D0; 0.02 at the data's point for D1), then the update at it is
    # +-step when the Laplace-noised value differs from 0 by more than the threshold.
    # A threshold at D1's value puts the event "update up" in the tail where the
    # Laplace ratio is exp(epsilon_0).
    est = PrivateKernelNetClassifier(alpha=ERM_ALPHA, loss="huber", bounds=_NET_BOUNDS,
                                     n_public=2, n_rounds=1, threshold=_VALUE_SENS,
                                     epsilon=EPSILON, delta=0.0, random_state=rng).fit(X, y)
    return est.dual_coef_[0, 0]


def test_audit_tdil(monkeypatch):
    # Measured (audit seed 0): 0.32 calibrated, 1.64 under-noised.
    check_audit(_tdil_mechanism, _NET_D0, _NET_D1, EPSILON, monkeypatch, idc_module,
                "tddl_laplace_scale")


# ----------------------------------------------------------- PINP (Alg. 1)


def _pinp_mechanism(dataset, rng):
    X, y = dataset
    # One query at 0, one paid answer allowed. With a small public threshold about
    # half the answers are paid (the sparse vector's noise, about 40 times the
    # sensitivity, dwarfs the disagreement); a paid answer is w*(0) + Laplace.
    service = InteractiveKernelPredictor(alpha=ERM_ALPHA, loss="huber", max_updates=1,
                                         threshold=_VALUE_SENS, epsilon=EPSILON, delta=1e-6,
                                         random_state=rng)
    return service.fit(X, y).decision_function(_ORIGIN)[0]


def test_audit_pinp(monkeypatch):
    # Measured (audit seed 0): 0.23 calibrated, 1.58 under-noised.
    check_audit(_pinp_mechanism, ERM_D0, ERM_D1, EPSILON, monkeypatch, idc_module,
                "tddl_laplace_scale", delta=1e-6)
