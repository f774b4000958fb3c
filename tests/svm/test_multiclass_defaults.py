"""The multi-class ``C="auto"`` rule of PrivateLinearSVM and PrivateSVMRFF.

For ``K > 2`` classes ``n / (C kappa^2) = max(f, m_K r)`` with ``m_K = 16 K^2``
(linear SVM) or ``4 K^2`` (random Fourier features), ``r`` one class problem's
noise per unit sensitivity; binary problems keep ``m = 4``
(docs/guide/svm_and_perturbation.rst).
"""

import math

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import Normalizer

from skdp.mechanisms import gaussian_sigma_analytic
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF


def _data(n=400, d=3, n_classes=5, seed=0):
    return make_classification(n, d, n_informative=d, n_redundant=0, n_classes=n_classes,
                               n_clusters_per_class=1, random_state=seed)


@pytest.mark.parametrize("cls, kw, n_classes, epsilon, mechanism, delta, expected", [
    # F = 3 + 1, r = sqrt(4) / (5 / 5) = 2, m_5 = 16 * 25: n / C = 800
    (PrivateLinearSVM, {}, 5, 5.0, "laplace", 0.0, 400 / 800),
    # F = 4, r = 2 / (3 / 3) = 2, m_3 = 16 * 9: n / C = 288
    (PrivateLinearSVM, {}, 3, 3.0, "laplace", 0.0, 400 / 288),
    # Gaussian: joint release, r = sqrt(3) sigma(1, 1, 1e-6), m_3 = 144
    (PrivateLinearSVM, {}, 3, 1.0, "gaussian", 1e-6,
     400 / (144 * math.sqrt(3) * gaussian_sigma_analytic(1.0, 1.0, 1e-6))),
    # F = 2 * 8, r = 4 / (2 / 4) = 8, m_4 = 4 * 16: n / C = 512
    (PrivateSVMRFF, {"n_components": 8}, 4, 2.0, "laplace", 0.0, 400 / 512),
    # the non-private limit is unchanged: C = 4 n / kappa^2 (linear), n (RFF)
    (PrivateLinearSVM, {}, 5, 1e9, "laplace", 0.0, 4 * 400),
    (PrivateSVMRFF, {"n_components": 8}, 5, 1e9, "laplace", 0.0, 400),
])
def test_multiclass_C_auto_rule(cls, kw, n_classes, epsilon, mechanism, delta, expected):
    X, y = _data(n_classes=n_classes)
    est = cls(epsilon=epsilon, delta=delta, mechanism=mechanism,
              classes=list(range(n_classes)), random_state=0, **kw).fit(X, y)
    assert est.C_ == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("cls, kw", [(PrivateLinearSVM, {}),
                                     (PrivateSVMRFF, {"n_components": 8})])
def test_binary_C_auto_rule_is_unchanged(cls, kw):
    # K = 2 is one problem: m = 4 (r = sqrt(F) / epsilon)
    X, y = _data(n_classes=2)
    est = cls(epsilon=1.0, classes=[0, 1], random_state=0, **kw).fit(X, y)
    n_coef = 16 if "n_components" in kw else 4  # 2 * 8 frequencies, or 3 features + intercept
    assert est.C_ == pytest.approx(400 / (4 * math.sqrt(n_coef)), rel=1e-12)


def _old_rule_C(n, n_coef, n_classes, epsilon, floor):
    return n / max(floor, 4 * math.sqrt(n_coef) * n_classes / epsilon)


@pytest.mark.parametrize("cls, n_coef, floor", [(PrivateLinearSVM, 21, 0.25),
                                                 (PrivateSVMRFF, 200, 1.0)])
def test_multiclass_default_beats_the_majority_where_the_binary_rule_does_not(cls, n_coef, floor):
    # 10 imbalanced classes (largest 21%), 20 features in [0, 1], unit-norm rows, like
    # the real tables; epsilon = 30 is 3 per class problem.
    K = 10
    priors = np.geomspace(1.0, 6.0, K)
    X, y = make_classification(6667, 20, n_informative=10, n_redundant=0, n_classes=K,
                               n_clusters_per_class=1, weights=list(priors / priors.sum()),
                               random_state=0)
    X = Normalizer().transform((X - X.min(0)) / (X.max(0) - X.min(0)))
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    majority = np.mean(y_te == np.bincount(y_tr).argmax())
    old_C = _old_rule_C(len(y_tr), n_coef, K, 30.0, floor)
    new, old = [], []
    for seed in (0, 1):
        new.append(cls(epsilon=30.0, classes=np.arange(K), random_state=seed)
                   .fit(X_tr, y_tr).score(X_te, y_te))
        old.append(cls(epsilon=30.0, C=old_C, classes=np.arange(K), random_state=seed)
                   .fit(X_tr, y_tr).score(X_te, y_te))
    assert np.mean(new) > majority + 0.08, (new, majority)
    assert np.mean(old) < majority, (old, majority)
