"""Public default rules of PrivateLinearSVM and PrivateSVMRFF (Rubinstein et al. 2012)."""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer
from sklearn.svm import SVC, LinearSVC

from skdp import BudgetAccountant
from skdp.mechanisms import gaussian_sigma_analytic
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF


def _data(n=400, d=3, n_classes=2, seed=0):
    return make_classification(n, d, n_informative=d, n_redundant=0, n_classes=n_classes,
                               n_clusters_per_class=1, random_state=seed)


@pytest.mark.parametrize("epsilon, data_norm, mechanism, delta, expected", [
    (1.0, 1.0, "laplace", 0.0, 400 / (4 * 2.0)),  # n / (kappa^2 4 sqrt(F) / epsilon), F = 4
    (1e6, 1.0, "laplace", 0.0, 4 * 400),  # non-private limit: C = 4 n / kappa^2
    (1.0, 2.0, "laplace", 0.0, 400 / (4 * 4 * 2.0)),
    (1.0, 1.0, "gaussian", 1e-6, 400 / (4 * gaussian_sigma_analytic(1.0, 1.0, 1e-6))),
])
def test_linear_svm_C_auto_rule(epsilon, data_norm, mechanism, delta, expected):
    X, y = _data()
    est = PrivateLinearSVM(epsilon=epsilon, delta=delta, data_norm=data_norm,
                           mechanism=mechanism, classes=[0, 1], random_state=0)
    assert est.C == "auto"
    assert est.fit(X, y).C_ == pytest.approx(expected, rel=1e-12)


def test_linear_svm_C_auto_uses_one_class_problems_budget():
    # K = 3: r = sqrt(F) / (epsilon / K) = 2 / 1, multiplier 16 K^2 = 144
    # (tests/svm/test_multiclass_defaults.py pins the multi-class multiplier).
    X, y = _data(n_classes=3)
    est = PrivateLinearSVM(epsilon=3.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert est.C_ == pytest.approx(400 / (144 * 2.0 / 1.0), rel=1e-12)


@pytest.mark.parametrize("epsilon, mechanism, delta", [
    (1.0, "laplace", 0.0), (1e6, "laplace", 0.0), (50.0, "laplace", 0.0),
    (1.0, "gaussian", 1e-6), (1e6, "gaussian", 1e-6),
])
def test_rff_defaults(epsilon, mechanism, delta):
    X, y = _data()
    est = PrivateSVMRFF(epsilon=epsilon, delta=delta, mechanism=mechanism, classes=[0, 1],
                        random_state=0).fit(X, y)
    assert est.coef_.shape == (1, 200)
    assert est.gamma_ == 1.0  # 1 / data_norm**2
    ratio = (math.sqrt(200) / epsilon if mechanism == "laplace"
             else gaussian_sigma_analytic(1.0, epsilon, delta))
    assert est.C_ == pytest.approx(400 / max(1.0, 4 * ratio), rel=1e-12)


@pytest.mark.parametrize("cls, kw", [(PrivateLinearSVM, {}),
                                     (PrivateSVMRFF, {"n_components": 20})])
def test_C_auto_enters_the_calibration_like_a_given_C(cls, kw):
    X, y = _data()
    auto = cls(classes=[0, 1], random_state=5, **kw).fit(X, y)
    given = cls(C=auto.C_, classes=[0, 1], random_state=5, **kw).fit(X, y)
    assert auto.sensitivity_ == given.sensitivity_ and auto.noise_scale_ == given.noise_scale_
    np.testing.assert_array_equal(auto.coef_, given.coef_)


@pytest.mark.parametrize("cls, param", [(PrivateLinearSVM, "C"), (PrivateSVMRFF, "C")])
def test_bad_auto_strings_refused_before_the_charge(cls, param):
    X, y = _data()
    acc = BudgetAccountant(epsilon=5.0)
    with pytest.raises(ValueError, match=f"{param} must be 'auto'"):
        cls(classes=[0, 1], accountant=acc, **{param: "big"}).fit(X, y)
    assert acc.spent is None


def test_tiny_epsilon_with_C_auto_is_refused_naming_epsilon_or_finite():
    # n / (C kappa^2) is capped at 1e12: at epsilon 1e-300 the noise is huge but finite,
    # at 5e-324 its scale overflows and the fit is refused before the charge.
    X, y = _data()
    est = PrivateLinearSVM(epsilon=1e-300, classes=[0, 1], random_state=0).fit(X, y)
    assert est.C_ == pytest.approx(400 / 1e12) and np.all(np.isfinite(est.coef_))
    acc = BudgetAccountant(epsilon=5.0)
    with pytest.raises(ValueError, match="epsilon"):
        PrivateLinearSVM(epsilon=5e-324, classes=[0, 1], accountant=acc).fit(X, y)
    assert acc.spent is None


def _unit_rows_table():
    # Rows scaled to unit norm (data_norm=1): the old defaults (C=1, gamma=1/n_features)
    # predicted the majority class here at any epsilon.
    X, y = make_classification(3000, 20, n_informative=5, weights=[0.75], flip_y=0.01,
                               random_state=2)
    return X[:2000], y[:2000], X[2000:], y[2000:]


@pytest.mark.parametrize("cls, twin, slack", [
    (PrivateLinearSVM, LinearSVC(), 0.015),
    # 100 random features approximate SVC's kernel to about 2 points here (300: 0.5).
    (PrivateSVMRFF, SVC(), 0.03),
])
def test_default_at_huge_epsilon_matches_scikit_learn_on_unit_rows(cls, twin, slack):
    X_tr, y_tr, X_te, y_te = _unit_rows_table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = make_pipeline(Normalizer(), cls(epsilon=1e6, classes=[0, 1], random_state=0))
        t = make_pipeline(Normalizer(), twin)
        private, baseline = p.fit(X_tr, y_tr).score(X_te, y_te), t.fit(X_tr, y_tr).score(X_te, y_te)
    assert baseline > 0.85  # the majority class is 0.74 (the old defaults' score)
    assert private >= baseline - slack
