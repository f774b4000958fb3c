"""Solver diagnostics computed from the private data without noise never leave in a pickle.

They are not covered by the privacy guarantee (e.g. ``n_iter_`` differs between
neighbouring datasets with certainty), so every estimator lists them in
``_non_private_attributes`` and ``DPEstimatorMixin.__getstate__`` drops them.
"""

import copy
import pickle

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skdp.kernel_methods import PrivateKernelClassifier, PrivateKernelSVC
from skdp.linear_model import (
    DPLogisticRegressionAMP,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
)
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF

X, Y = make_classification(200, 4, n_informative=3, n_redundant=0, random_state=0)
X_PUBLIC = X[:20] + 0.1

CASES = [
    (DPLogisticRegressionAMP(random_state=0), ("gradient_norm_", "n_iter_"), {}),
    (ObjectivePerturbationClassifier(random_state=0), ("gradient_norm_", "n_iter_"), {}),
    (OutputPerturbationClassifier(random_state=0), ("gradient_norm_", "n_iter_"), {}),
    (PrivateLinearSVM(random_state=0), ("certified_distance_", "n_iter_"), {}),
    (PrivateSVMRFF(n_components=20, random_state=0), ("certified_distance_", "n_iter_"), {}),
    (PrivateKernelSVC(random_state=0), ("n_iter_",), {"X_public": X_PUBLIC}),
    (PrivateKernelClassifier(random_state=0), ("n_iter_",), {"X_public": X_PUBLIC}),
]


@pytest.mark.parametrize("estimator, names, fit_params", CASES,
                         ids=[type(c[0]).__name__ for c in CASES])
def test_diagnostics_are_dropped_from_pickles_and_copies(estimator, names, fit_params):
    fitted = estimator.fit(X, Y, **fit_params)
    assert set(names) == set(fitted._non_private_attributes)
    kept = {name: getattr(fitted, name) for name in names}
    for shared in (pickle.loads(pickle.dumps(fitted)), copy.deepcopy(fitted)):
        for name in names:
            assert not hasattr(shared, name), name
        # Everything else survives, and the shared model predicts the same.
        np.testing.assert_array_equal(shared.predict(X), fitted.predict(X))
        assert shared.privacy_spent_ == fitted.privacy_spent_
    # The data holder's own object keeps its diagnostics.
    for name, value in kept.items():
        assert getattr(fitted, name) is value


def test_diagnostics_differ_between_neighbours_which_is_why_they_are_dropped():
    # Same noise (same seed), neighbouring data: the released coefficients are
    # DP, but the iteration count and gradient norm are exact functions of
    # the data. This pair is the reviewer's: one row's features negated.
    X_a = X / 4
    X_b = X_a.copy()
    X_b[0] *= -1
    a = OutputPerturbationClassifier(random_state=0).fit(X_a, Y)
    b = OutputPerturbationClassifier(random_state=0).fit(X_b, Y)
    assert a.gradient_norm_[0] != b.gradient_norm_[0]
