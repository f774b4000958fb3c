import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from _dummy import NoisyCentroidClassifier
from skdp import BudgetAccountant, BudgetExceededError, PrivacyBudget
from skdp.model_selection import PrivateParameterSelector


@pytest.fixture(scope="module")
def data():
    return make_classification(3000, 5, n_informative=3, class_sep=2.0, random_state=0)


def test_selects_the_clearly_better_candidate(data):
    X, y = data
    # epsilon = 1e-4 drowns the centroids in noise; epsilon = 50 barely perturbs them.
    picks = [
        PrivateParameterSelector(NoisyCentroidClassifier(), {"epsilon": [1e-4, 50.0]},
                                 epsilon=1.0, random_state=seed).fit(X, y).best_params_["epsilon"]
        for seed in range(10)
    ]
    assert picks.count(50.0) >= 9


def test_budget_is_the_max_and_charged_once(data):
    X, y = data
    acc = BudgetAccountant(epsilon=3.0)
    inner = NoisyCentroidClassifier(accountant=acc)
    sel = PrivateParameterSelector(inner, {"epsilon": [0.5, 2.0]}, epsilon=1.0, accountant=acc,
                                   random_state=0).fit(X, y)
    assert sel.privacy_spent_ == PrivacyBudget(2.0, 0.0)
    assert [s.budget for s in acc.spends] == [PrivacyBudget(2.0, 0.0)]
    assert sel.best_estimator_.accountant is None  # inner fits are not double-counted
    with pytest.raises(BudgetExceededError):
        sel.fit(X, y)  # 2.0 + 2.0 > 3.0, refused before any fit
    assert len(acc.spends) == 1


def test_candidates_train_on_disjoint_parts(data):
    X, y = data
    sel = PrivateParameterSelector(NoisyCentroidClassifier(), {"epsilon": [1.0, 2.0, 3.0]},
                                   random_state=0).fit(X, y)
    assert len(sel.candidate_params_) == 3
    assert sel.predict(X[:5]).shape == (5,)
    assert not hasattr(sel, "predict_proba")  # the inner model has none


def test_bad_input(data):
    X, y = data
    with pytest.raises(TypeError, match="epsilon"):
        PrivateParameterSelector(LogisticRegression(), {"C": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="disjoint parts"):
        PrivateParameterSelector(NoisyCentroidClassifier(), {"epsilon": [1.0, 2.0]}).fit(X[:5], y[:5])
    with pytest.raises(ValueError, match="epsilon"):
        PrivateParameterSelector(NoisyCentroidClassifier(), {"epsilon": [1.0]}, epsilon=0).fit(X, y)
