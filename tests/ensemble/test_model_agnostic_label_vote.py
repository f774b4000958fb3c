"""The label vote of ModelAgnosticPrivateClassifier (fallback_label="vote", the default)."""

import warnings

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from skdp.ensemble import ModelAgnosticPrivateClassifier
from skdp.ensemble._model_agnostic import _label_vote_counts
from skdp.exceptions import FallbackModelWarning


def test_label_vote_counts_each_teachers_most_frequent_label():
    classes = np.array([3, 5, 7])
    y = np.array([5, 5, 3, 7, 7, 3, 3, 5])
    assignment = np.array([0, 0, 0, 1, 1, 2, 2, 2])  # teacher 3 has no row: abstains
    # Teacher 0 votes 5 (two rows of three), teacher 1 votes 7, teacher 2 votes 3.
    assert _label_vote_counts(y, assignment, 4, classes).tolist() == [[1, 1, 1]]
    # A tie takes the smallest label.
    assert _label_vote_counts(np.array([7, 5]), np.array([0, 0]), 1, classes).tolist() == [[0, 1, 0]]


def test_one_added_row_moves_one_teachers_vote_at_most():
    # The release's sensitivity argument: a record changes only its own teacher's rows.
    rng = np.random.default_rng(0)
    classes = np.arange(3)
    y, assignment = rng.integers(0, 3, 200), rng.integers(0, 9, 200)
    base = _label_vote_counts(y, assignment, 9, classes)[0]
    for label in range(3):
        for teacher in range(9):
            moved = _label_vote_counts(np.append(y, label), np.append(assignment, teacher), 9,
                                       classes)[0]
            assert np.abs(moved - base).sum() <= 2 and moved.sum() == base.sum()


def _noise_data(n=6000, seed=0):
    # Features carry no signal: the teachers (trees) disagree on every public point, while
    # the label prior is 70% class 2, 20% class 1, 10% class 0.
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 5))
    y = rng.choice([0, 1, 2], size=n, p=[0.1, 0.2, 0.7])
    return X, y


def test_fallback_is_the_released_majority_label_not_the_smallest_class():
    X, y = _noise_data()
    X_public = np.random.default_rng(1).uniform(size=(50, 5))
    kw = dict(n_teachers=41, max_unstable=1, epsilon=5.0, classes=[0, 1, 2], random_state=0)
    with pytest.warns(FallbackModelWarning):
        clf = ModelAgnosticPrivateClassifier(DecisionTreeClassifier(random_state=0), **kw)
        clf.fit(X, y, X_public=X_public)
    assert clf.fallback_ == "constant" and clf.n_answered_ == 0
    assert set(clf.predict(X[:20]).tolist()) == {2}
    # fallback_label=None keeps the data-independent uniform model (predicts classes[0]).
    with pytest.warns(FallbackModelWarning):
        old = ModelAgnosticPrivateClassifier(DecisionTreeClassifier(random_state=0),
                                             fallback_label=None, **kw)
        old.fit(X, y, X_public=X_public)
    assert old.fallback_ == "uniform" and set(old.predict(X[:20]).tolist()) == {0}


def test_label_vote_is_one_more_query_of_the_release():
    # max_unstable="auto" and n_teachers="auto" count the label vote as a query, and the
    # public points' statistics do not count it.
    X, y = _noise_data(2000)
    X_public = np.random.default_rng(1).uniform(size=(30, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackModelWarning)
        clf = ModelAgnosticPrivateClassifier(DecisionTreeClassifier(random_state=0),
                                             epsilon=1e6, classes=[0, 1, 2], random_state=0)
        clf.fit(X, y, X_public=X_public)
    assert clf.max_unstable_ == 31 and clf.n_public_ == 30
    assert clf.n_answered_ + clf.n_abstained_ + clf.n_refused_ == 30
