"""Defaults of the subsample-and-aggregate ensembles, and what fit keeps when votes fail."""

import warnings

import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
from sklearn.tree import DecisionTreeClassifier

from skdp import BudgetAccountant
from skdp.ensemble import (ModelAgnosticPrivateClassifier, PrivateQueryAnswerer,
                           unanimous_vote_teachers)
from skdp.ensemble._answerer import resolve_max_unstable
from skdp.exceptions import FallbackModelWarning


def _data(n, seed=0):
    return make_classification(n, 10, n_informative=5, class_sep=1.5, random_state=seed)


@pytest.mark.parametrize("epsilon, m, expected", [(1.0, 1000, 1), (0.1, 1000, 1),
                                                  (1e6, 1000, 1000), (1e6, 37, 37)])
def test_auto_max_unstable_allows_only_abstentions_that_cost_no_teacher(epsilon, m, expected):
    auto = resolve_max_unstable("auto", epsilon=epsilon, delta=1e-6, max_queries=m,
                                calibration="lyu")
    assert auto == expected
    base = unanimous_vote_teachers(epsilon, 1e-6, 1, m)
    assert unanimous_vote_teachers(epsilon, 1e-6, auto, m) == base
    if auto < m:  # one more abstention would cost teachers
        assert unanimous_vote_teachers(epsilon, 1e-6, auto + 1, m) > base


def test_auto_max_unstable_in_between_and_under_the_thesis_calibration():
    # epsilon = 1e3: Lyu et al.'s query noise 2 T / eps2 stays small for a few abstentions.
    auto = resolve_max_unstable("auto", epsilon=1e3, delta=1e-6, max_queries=1000,
                                calibration="lyu")
    assert 1 < auto < 1000
    # "thesis" is refused beyond its proof (T > 8 ln(2 / delta) at large epsilon): the
    # bisection skips those T instead of failing.
    thesis = resolve_max_unstable("auto", epsilon=1e6, delta=1e-6, max_queries=1000,
                                  calibration="thesis")
    assert 1 <= thesis < 1000
    for bad, error in (("x", TypeError), (0, ValueError), (2.0, TypeError)):
        with pytest.raises(error, match="max_unstable"):
            resolve_max_unstable(bad, epsilon=1.0, delta=1e-6, max_queries=10,
                                 calibration="lyu")


def test_defaults_resolve_from_public_quantities():
    X, y = _data(3000)
    clf = ModelAgnosticPrivateClassifier(DecisionTreeClassifier(), classes=[0, 1],
                                         random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackModelWarning)
        clf.fit(X, y, X_public=X[:1000])
    # epsilon = 1, delta = 1e-6, 1000 public points: one abstention, 169 teachers.
    assert (clf.max_unstable_, clf.n_teachers_) == (1, 169)
    ans = PrivateQueryAnswerer(DecisionTreeClassifier(), classes=[0, 1], random_state=0)
    ans.fit(X, y)
    assert (ans.max_unstable_, ans.n_teachers_) == (1, 169)


def test_tree_teachers_on_too_little_data_keep_a_fallback_model_instead_of_raising():
    # Tree teachers, defaults, epsilon = 1: 169 teachers on ~12 rows each never agree
    # enough. fit raised "no public point was answered" after the budget was charged.
    X, y = _data(2500)
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    clf = ModelAgnosticPrivateClassifier(DecisionTreeClassifier(), classes=[0, 1],
                                         accountant=acc, random_state=0)
    with pytest.warns(FallbackModelWarning, match="constant model"):
        clf.fit(X, y)
    assert clf.fallback_ in ("uniform", "most_frequent")
    assert clf.predict(X[:5]).shape == (5,) and clf.predict_proba(X[:5]).shape == (5, 2)
    assert acc.spent.epsilon == pytest.approx(1.0)


# LogisticRegressionCV (scikit-learn >= 1.8) announces changes of its own defaults: incidental.
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_a_student_that_cannot_fit_gives_a_fallback_not_an_error():
    X, y = _data(3000)
    # 500 folds of at most 300 answered points: the student's fit raises (after the charge,
    # on released labels only; it raised out of fit).
    clf = ModelAgnosticPrivateClassifier(LogisticRegression(),
                                         student=LogisticRegressionCV(cv=500),
                                         epsilon=1e6, classes=[0, 1], random_state=0)
    with pytest.warns(FallbackModelWarning, match="student's fit raised"):
        clf.fit(X, y, X_public=X[:300])
    assert clf.fallback_ == "most_frequent" and clf.n_answered_ > 100


@pytest.mark.parametrize("base", [LogisticRegression(), DecisionTreeClassifier(max_depth=5)],
                         ids=["logistic", "tree"])
def test_huge_epsilon_defaults_come_close_to_the_non_private_model(base):
    # Every vote of 3 teachers that agree is answered; disagreements are skipped (an
    # abstention each, all allowed), and the student learns the teachers' labels.
    X, y = _data(6000, seed=1)
    X_test, y_test = X[4000:], y[4000:]
    clf = ModelAgnosticPrivateClassifier(base, epsilon=1e6, classes=[0, 1], random_state=0)
    clf.fit(X[:4000], y[:4000])
    assert clf.n_teachers_ == 3 and clf.fallback_ is None
    assert clf.max_unstable_ == clf.n_public_ + 1  # every query, the label vote included
    twin = base.fit(X[:4000], y[:4000]).score(X_test, y_test)
    assert clf.score(X_test, y_test) > twin - 0.03
