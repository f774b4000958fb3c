"""ModelAgnosticPrivateClassifier / PrivateQueryAnswerer: parameters refused before the charge."""

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.ensemble import ModelAgnosticPrivateClassifier, PrivateQueryAnswerer


class _Uncloneable:
    """fit and predict, but no get_params: scikit-learn's ``clone`` refuses it."""

    def fit(self, X, y):
        self.label_ = y[0]
        return self

    def predict(self, X):
        return np.full(len(X), self.label_)


@pytest.mark.parametrize("cls", [PrivateQueryAnswerer, ModelAgnosticPrivateClassifier])
def test_uncloneable_estimator_is_refused_before_the_charge(cls):
    # Only a teacher with two classes was cloned (one-class teachers become a constant
    # DummyClassifier): with n_teachers=1, classes=[0, 1], the one-row dataset fitted and
    # its neighbour with a second row of the other class raised TypeError after the charge.
    X, y = np.array([[0.0], [1.0]]), np.array([0, 1])
    kw = dict(n_teachers=1, classes=[0, 1], fallback_label=0) if cls is not \
        PrivateQueryAnswerer else dict(n_teachers=1, classes=[0, 1])
    for rows in (1, 2):  # neighbours: the outcome must not depend on the rows
        acc = BudgetAccountant(10.0, 1e-3)
        with pytest.raises(TypeError, match="clone"):
            cls(_Uncloneable(), accountant=acc, random_state=0, **kw).fit(X[:rows], y[:rows])
        assert acc.spent is None


def test_auto_n_teachers_beyond_an_array_index_is_refused_before_the_charge():
    # At epsilon = 1e-300 "auto" asks for ~1e303 teachers: fit charged the budget, then
    # failed drawing their seeds ("Maximum allowed dimension exceeded").
    from sklearn.linear_model import LogisticRegression
    X, y = np.array([[0.0], [1.0]]), np.array([0, 1])
    acc = BudgetAccountant(10.0, 1e-3)
    with pytest.raises(ValueError, match="n_teachers"):
        PrivateQueryAnswerer(LogisticRegression(), epsilon=1e-300, delta=1e-5, classes=[0, 1],
                             accountant=acc, random_state=0).fit(X, y)
    assert acc.spent is None
