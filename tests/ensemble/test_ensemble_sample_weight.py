"""Row weights in subsample-and-aggregate: each teacher is fitted with its own rows' weights.

Seed 004, Sec. 5.1: a record changes one teacher's training set, whatever that teacher's
algorithm does with it. A weight is part of the record, so it reaches the teacher unbounded
(no clipping to [0, 1] is needed, unlike the mechanisms that bound one row's influence).
"""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier

from skdp import BudgetAccountant
from skdp.ensemble import ModelAgnosticPrivateClassifier, PrivateQueryAnswerer
from ensemble.test_ensemble import _blobs

# Many fits here leave classes=None, which is incidental to what they test; the
# PrivacyLeakWarning it raises is asserted in tests/utils/test_multiclass.py.
pytestmark = [
    pytest.mark.filterwarnings("ignore::skdp.exceptions.FallbackModelWarning"),
    pytest.mark.filterwarnings("ignore:classes=None:skdp.exceptions.PrivacyLeakWarning"),
]

QUERIES = [[4.0, 0.0], [-4.0, 0.0], [3.0, 1.0], [-3.0, -1.0]]


class WeightSpy(LogisticRegression):
    """Records, for every teacher fit, its rows' ids (first feature) and the weights it got."""

    fits = []

    def fit(self, X, y, sample_weight=None):
        WeightSpy.fits.append((X[:, 0].copy(), None if sample_weight is None
                               else np.asarray(sample_weight).copy()))
        return super().fit(X[:, 1:], y, sample_weight=sample_weight)

    def predict(self, X):
        return super().predict(X[:, 1:])


def _with_ids(X):
    return np.column_stack([np.arange(len(X), dtype=float), X])


def test_every_teacher_gets_exactly_its_own_rows_weights():
    rng = np.random.default_rng(0)
    X, y = _blobs(600, rng)
    w = rng.uniform(0.0, 5.0, size=len(y))  # weights above 1 are fine here: not clipped
    WeightSpy.fits = []
    PrivateQueryAnswerer(WeightSpy(), n_teachers=6, max_queries=5, epsilon=5.0,
                         random_state=0).fit(_with_ids(X), y, sample_weight=w)
    assert len(WeightSpy.fits) == 6
    seen = np.concatenate([ids for ids, _ in WeightSpy.fits]).astype(int)
    assert np.array_equal(np.sort(seen), np.arange(len(y)))  # every row, once
    for ids, weights in WeightSpy.fits:
        assert np.array_equal(weights, w[ids.astype(int)])


def test_unit_weights_give_the_unweighted_release():
    rng = np.random.default_rng(1)
    X, y = _blobs(3000, rng)
    kw = dict(n_teachers=30, max_unstable=3, max_queries=10, epsilon=20.0, random_state=0)
    plain = PrivateQueryAnswerer(LogisticRegression(), **kw).fit(X, y).answer(QUERIES)
    unit = PrivateQueryAnswerer(LogisticRegression(), **kw).fit(
        X, y, sample_weight=np.ones(len(y))).answer(QUERIES)
    assert all(np.array_equal(a, b) for a, b in zip(plain, unit))
    clf_kw = dict(n_teachers=30, max_unstable=3, epsilon=20.0, random_state=0)
    a = ModelAgnosticPrivateClassifier(LogisticRegression(), **clf_kw).fit(
        X, y, X_public=X[:200])
    b = ModelAgnosticPrivateClassifier(LogisticRegression(), **clf_kw).fit(
        X, y, X_public=X[:200], sample_weight=[1.0] * len(y))
    assert np.array_equal(a.predict(X), b.predict(X)) and a.n_answered_ == b.n_answered_


def test_weights_steer_the_teachers_votes():
    # Class-1 rows weighted 0: every teacher learns class 0 only, and the stable votes
    # on class-1 points say 0, where the unweighted teachers say 1.
    rng = np.random.default_rng(2)
    X, y = _blobs(3000, rng)
    kw = dict(n_teachers=30, max_unstable=3, max_queries=10, epsilon=20.0, random_state=0)
    labels, answered = PrivateQueryAnswerer(LogisticRegression(), **kw).fit(X, y).answer(
        QUERIES)
    assert answered.all() and labels.tolist() == [0, 1, 0, 1]
    w = np.where(y == 1, 0.0, 1.0)
    labels, answered = PrivateQueryAnswerer(LogisticRegression(), **kw).fit(
        X, y, sample_weight=w).answer(QUERIES)
    assert answered.all() and labels.tolist() == [0, 0, 0, 0]


def test_label_private_fallback_weights_the_teachers_rows_only():
    # Without X_public the query rows are unlabeled: their weights are not used.
    rng = np.random.default_rng(3)
    X, y = _blobs(2000, rng)
    w = rng.uniform(0.5, 2.0, size=len(y))
    WeightSpy.fits = []
    clf = ModelAgnosticPrivateClassifier(WeightSpy(), student=LogisticRegression(),
                                         n_teachers=8, max_unstable=2, epsilon=20.0,
                                         public_fraction=0.3, fallback_label=0,
                                         random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the student's convergence on the id column is noise
        clf.fit(_with_ids(X), y, sample_weight=w)
    ids = np.concatenate([ids for ids, _ in WeightSpy.fits]).astype(int)
    assert len(ids) == len(y) - clf.privacy_spent_.n_query_rows
    for ids, weights in WeightSpy.fits:
        assert np.array_equal(weights, w[ids.astype(int)])


@pytest.mark.parametrize("cls", [PrivateQueryAnswerer, ModelAgnosticPrivateClassifier])
def test_bad_weights_and_unweightable_teachers_are_refused_before_any_spend(cls):
    rng = np.random.default_rng(4)
    X, y = _blobs(500, rng)
    acc = BudgetAccountant(epsilon=50.0, delta=1e-2)
    extra = {} if cls is PrivateQueryAnswerer else {"X_public": X[:20]}
    for w, match in [(-np.ones(len(y)), "non-negative"), (np.full(len(y), np.nan), "finite"),
                     (np.ones(len(y) - 1), "shape"), (np.ones((len(y), 1)), "shape")]:
        with pytest.raises(ValueError, match=match):
            cls(LogisticRegression(), n_teachers=10, epsilon=5.0, accountant=acc).fit(
                X, y, sample_weight=w, **extra)
    # Refused whatever the weights: they are protected, so whether they are all 1 must not
    # decide whether fit raises.
    for w in [np.ones(len(y)) * 0.5, np.ones(len(y)), 1.0]:
        with pytest.raises(TypeError, match="KNeighborsClassifier.*sample_weight"):
            cls(KNeighborsClassifier(), n_teachers=10, epsilon=5.0, accountant=acc).fit(
                X, y, sample_weight=w, **extra)
    assert acc.spent is None
    # Without weights such a teacher is fine.
    cls(KNeighborsClassifier(), n_teachers=10, epsilon=5.0, accountant=acc,
        **({} if cls is PrivateQueryAnswerer else {"fallback_label": 0})).fit(X, y, **extra)
    assert acc.spent is not None


def _teacher_calls(X, y, w):
    WeightSpy.fits = []
    PrivateQueryAnswerer(WeightSpy(), n_teachers=6, max_queries=5, epsilon=5.0,
                         classes=[0, 1], random_state=0).fit(_with_ids(X), y, sample_weight=w)
    return [(ids.tolist(), None if weights is None else weights.tolist())
            for ids, weights in WeightSpy.fits]


def test_one_weighted_record_changes_how_one_teacher_is_fitted_only():
    # Neighbours: D (unit weights) and D plus one record of weight 2. Whether a teacher is
    # fitted with or without sample_weight may depend on its own rows only: an estimator
    # may treat fit(X, y) and fit(X, y, sample_weight=ones) differently (a user's
    # estimator, or floating point), so a global switch would change every teacher.
    rng = np.random.default_rng(6)
    X, y = _blobs(601, rng)
    calls = _teacher_calls(X[:-1], y[:-1], np.ones(len(y) - 1))
    calls_neighbour = _teacher_calls(X, y, np.r_[np.ones(len(y) - 1), 2.0])
    assert len(calls) == len(calls_neighbour) == 6
    assert sum(a != b for a, b in zip(calls, calls_neighbour)) == 1
