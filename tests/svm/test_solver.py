"""Certified SVM solver: the Huber fallback of the hinge solve (Rubinstein et al. 2012)."""

import math

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skdp.linear_model._base import add_intercept_column
from skdp.svm import PrivateLinearSVM
from skdp.svm._solver import solve_svm_certified
from skdp.utils._clipping import clip_rows_l2


def _binarized(k):
    X, y = make_classification(3000, 8, n_informative=4, random_state=0)
    X[:k] = X[:k] > 0
    return X, y


@pytest.mark.parametrize("k", [2625, 2626])
def test_hinge_fit_certifies_on_degenerate_rows(k):
    # Binarized rows put many duplicates on the margin: the hinge duality gap alone could
    # not be certified for k = 2626 (CertificationError after the charge); the certified
    # Huber solution is released instead, within the same radius of the hinge minimizer.
    X, y = _binarized(k)
    est = PrivateLinearSVM(epsilon=1, C=10, data_norm=3, classes=[0, 1], random_state=0)
    est.fit(X, y)
    radius = 0.5 * est.tol * 2 * 10 * 3 / 3000
    assert est.certified_distance_ <= radius
    assert est.privacy_spent_.epsilon == 1


def test_huber_smoothing_bound_against_hinge_minimizer():
    # ||w_h - w*|| <= sqrt(C h) / 2 for the minimizers of the Huber-smoothed and hinge
    # objectives ||w||^2 / 2 + (C/n) sum loss: the bound the fallback rests on.
    X, y = make_classification(400, 5, n_informative=3, flip_y=0.2, random_state=1)
    F = clip_rows_l2(add_intercept_column(X), 2.0)
    ypm = np.where(y == 1, 1.0, -1.0)
    C, radius = 50.0, 1e-7
    hinge = solve_svm_certified(F, ypm, C, loss="hinge", radius=radius)
    for h in (0.3, 0.1, 0.01):
        huber = solve_svm_certified(F, ypm, C, loss="huber", huber_h=h, radius=radius)
        gap = np.linalg.norm(huber.coef - hinge.coef)
        assert gap <= math.sqrt(C * h) / 2 + 2 * radius
