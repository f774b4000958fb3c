"""Teachers must not carry a budget accountant of their own.

Subsample-and-aggregate protects a record through the vote (seed 004, Sec. 5.1), not
through the teachers' own budgets. A teacher estimator sharing a ``BudgetAccountant``
would make that accountant an unnoised output of the private data: a teacher whose rows
hold one class is replaced by a constant vote and charges nothing, and a teacher whose fit
fails abstains after or before its charge, so the accountant's ``spent`` would count the
teachers with two classes, and a neighbouring data set could change that count.
"""

import joblib
import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.ensemble import VotingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp import BudgetAccountant, PrivacyBudget
from skdp.ensemble import ModelAgnosticPrivateClassifier, PrivateQueryAnswerer
from skdp.linear_model import DPLogisticRegressionAMP
from ensemble.test_ensemble import _blobs

# A constant fallback model is incidental here (these fits check that no teacher charges an accountant, not the student).
pytestmark = pytest.mark.filterwarnings("ignore::skdp.exceptions.FallbackModelWarning")


@pytest.mark.parametrize("make", [
    lambda acc: DPLogisticRegressionAMP(epsilon=1.0, delta=1e-6, accountant=acc),
    lambda acc: make_pipeline(StandardScaler(),
                              DPLogisticRegressionAMP(epsilon=1.0, delta=1e-6, accountant=acc)),
])
@pytest.mark.parametrize("ensemble", ["classifier", "answerer"])
def test_a_teacher_with_an_accountant_is_refused_before_any_charge(make, ensemble):
    rng = np.random.default_rng(1)
    X, y = _blobs(400, rng)
    teacher_acc = BudgetAccountant(epsilon=100.0, delta=0.5)
    own_acc = BudgetAccountant(epsilon=100.0, delta=0.5)
    if ensemble == "classifier":
        est = ModelAgnosticPrivateClassifier(make(teacher_acc), n_teachers=4, epsilon=5.0,
                                             classes=[0, 1], accountant=own_acc, random_state=0)
    else:
        est = PrivateQueryAnswerer(make(teacher_acc), n_teachers=4, max_queries=3,
                                   epsilon=5.0, classes=[0, 1], accountant=own_acc, random_state=0)
    with pytest.raises(ValueError, match="accountant"):
        est.fit(X, y)
    assert teacher_acc.spent is None
    assert own_acc.spent is None


def test_the_same_teacher_without_an_accountant_is_accepted():
    rng = np.random.default_rng(2)
    X, y = _blobs(3000, rng)
    est = ModelAgnosticPrivateClassifier(DPLogisticRegressionAMP(epsilon=50.0, delta=1e-6,
                                                                 classes=[0, 1]),
                                         n_teachers=30, max_unstable=3, epsilon=20.0, classes=[0, 1],
                                         random_state=0).fit(X, y)
    assert est.score(X, y) > 0.9


def test_a_student_with_an_accountant_is_allowed():
    # The student learns public rows and released labels only: its charge is post-processing.
    rng = np.random.default_rng(3)
    X, y = _blobs(3000, rng)
    acc = BudgetAccountant(epsilon=100.0, delta=0.5)
    student = DPLogisticRegressionAMP(epsilon=2.0, delta=1e-6, accountant=acc, classes=[0, 1])
    est = ModelAgnosticPrivateClassifier(LogisticRegression(), student=student, n_teachers=30,
                                         max_unstable=3, epsilon=20.0, classes=[0, 1],
                                         random_state=0)
    est.fit(X, y)
    assert acc.spent.epsilon == 2.0


class _ListEnsemble(ClassifierMixin, BaseEstimator):
    """A meta-estimator holding its members in a list (get_params does not descend into it)."""

    def __init__(self, members=()):
        self.members = members

    def fit(self, X, y):
        self.fitted_ = [clone(m).fit(X, y) for m in self.members]
        self.classes_ = self.fitted_[0].classes_
        return self

    def predict(self, X):
        return self.fitted_[0].predict(X)


@pytest.mark.parametrize("make", [
    # The accountant in a dict (GridSearchCV's param_grid) or in a list of estimators: both
    # hidden from get_params(deep=True), both shared by every clone of the teacher.
    lambda acc: GridSearchCV(DPLogisticRegressionAMP(epsilon=1.0, delta=1e-6, classes=[0, 1]),
                             {"accountant": [acc]}, cv=2),
    lambda acc: _ListEnsemble([DPLogisticRegressionAMP(epsilon=1.0, delta=1e-6, classes=[0, 1],
                                                       accountant=acc)]),
    lambda acc: VotingClassifier([("dp", DPLogisticRegressionAMP(
        epsilon=1.0, delta=1e-6, classes=[0, 1], accountant=acc))]),
])
def test_an_accountant_hidden_in_a_container_parameter_is_refused(make):
    rng = np.random.default_rng(4)
    X, y = _blobs(400, rng)
    teacher_acc = BudgetAccountant(epsilon=1000.0, delta=0.5)
    est = ModelAgnosticPrivateClassifier(make(teacher_acc), n_teachers=4, epsilon=5.0,
                                         classes=[0, 1], random_state=0)
    with pytest.raises(ValueError, match="accountant"):
        est.fit(X, y)
    assert teacher_acc.spent is None


class _Settings:
    """An opaque holder the parameter search does not look into."""

    def __init__(self, accountant):
        self.accountant = accountant


class _SpendingTeacher(LogisticRegression):
    """A teacher that charges an accountant reached through an opaque object."""

    def __init__(self, settings=None, C=1.0):
        super().__init__(C=C)
        self.settings = settings

    def fit(self, X, y, sample_weight=None):
        self.settings.accountant.spend(PrivacyBudget(0.1, 0.0), by="teacher")
        return super().fit(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("backend", ["sequential", "threading"])
def test_a_hidden_accountant_is_never_charged_by_a_teacher(backend):
    # The parameter search cannot see inside arbitrary objects; the accountant itself
    # refuses every spend made while a teacher fits (the teacher then abstains).
    rng = np.random.default_rng(4)
    X, y = _blobs(600, rng)
    acc = BudgetAccountant(epsilon=100.0, delta=0.5)
    est = ModelAgnosticPrivateClassifier(_SpendingTeacher(_Settings(acc)), n_teachers=6,
                                         epsilon=5.0, classes=[0, 1], fallback_label=0,
                                         random_state=0, n_jobs=2)
    with joblib.parallel_backend(backend):
        est.fit(X, y)
    assert acc.spent is None
    acc.spend(PrivacyBudget(0.1, 0.0), by="outside a teacher")  # still works elsewhere
    assert acc.spent == PrivacyBudget(0.1, 0.0)
