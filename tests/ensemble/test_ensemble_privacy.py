"""skdp.ensemble under add/remove neighbours: what a fit releases besides the votes.

Each test fits on a dataset ``D`` and on ``D`` plus one record, and checks that
quantities the Privacy sections do not cover by noise (errors, ``n_teachers_``)
cannot tell the two apart with certainty.
"""

import pickle
import threading
import time
import warnings

import numpy as np
import pytest
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from skdp import BudgetAccountant
from skdp.ensemble import ModelAgnosticPrivateClassifier, PrivateQueryAnswerer
from skdp.ensemble._stability import StableVoteRelease
from skdp.ensemble._teachers import vote_counts
from skdp.exceptions import FallbackModelWarning, SparseVectorExhaustedError
from skdp.mechanisms import SparseVector


def _blobs(n, seed):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    return np.c_[4.0 * (2 * y - 1), np.zeros(n)] + rng.normal(size=(n, 2)), y


def _fit_quietly(estimator, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackModelWarning)
        return estimator.fit(*args, **kwargs)


@pytest.mark.parametrize("make", [
    lambda: PrivateQueryAnswerer(DecisionTreeClassifier(max_depth=1), n_teachers=5,
                                 classes=[0, 1], random_state=0),
    lambda: ModelAgnosticPrivateClassifier(DecisionTreeClassifier(max_depth=1), n_teachers=5,
                                           classes=[0, 1], fallback_label=0, random_state=0),
], ids=["answerer", "classifier"])
def test_fit_does_not_reveal_whether_n_reaches_n_teachers(make):
    # n is private under add/remove: refusing n = 4 < n_teachers = 5 but fitting n = 5
    # told the two neighbours apart with certainty (before the budget was even charged).
    X, y = _blobs(5, 0)
    X_public = _blobs(3, 1)[0]
    extra = {} if isinstance(make(), PrivateQueryAnswerer) else {"X_public": X_public}
    small = _fit_quietly(make(), X[:4], y[:4], **extra)
    large = _fit_quietly(make(), X, y, **extra)
    assert small.n_teachers_ == large.n_teachers_ == 5


def test_label_private_split_does_not_reveal_the_row_count():
    # Without X_public the teachers were checked against n - floor(0.2 n): with n_teachers=5,
    # 5 rows (4 expected teacher rows) were refused and 6 rows fitted.
    X, y = _blobs(6, 2)
    clf = ModelAgnosticPrivateClassifier(DecisionTreeClassifier(max_depth=1), n_teachers=5,
                                         classes=[0, 1], fallback_label=0, random_state=0)
    assert _fit_quietly(clf, X[:5], y[:5]).n_teachers_ == _fit_quietly(clf, X, y).n_teachers_


def test_label_private_auto_n_teachers_depends_on_the_query_rows_only():
    # n_teachers="auto" without X_public used max_queries = n (all rows): at epsilon = 20,
    # T = 1, delta = 1e-6 it is 9 teachers for n = 306 and 11 for n = 307, so one added
    # teacher row (whose features the label-private guarantee protects) changed
    # n_teachers_ with certainty. It now uses the number of query rows, which the added
    # teacher row leaves alone (as it does the threshold).
    X, y = _blobs(306, 3)
    clf = ModelAgnosticPrivateClassifier(DecisionTreeClassifier(max_depth=1), max_unstable=1,
                                         epsilon=20.0, classes=[0, 1], fallback_label=0,
                                         random_state=0)
    base = _fit_quietly(clf, X, y)
    base_teachers, base_public, base_threshold = base.n_teachers_, base.n_public_, base.threshold_
    candidates = _blobs(20, 4)
    for row, label in zip(*candidates):
        added = _fit_quietly(clf, np.vstack([X, row]), np.append(y, label))
        if added.n_public_ == base_public:  # the same key: the added row trains a teacher
            break
    else:
        pytest.fail("no candidate row was assigned to the teachers")
    assert added.n_teachers_ == base_teachers
    assert added.threshold_ == base_threshold


@pytest.mark.parametrize("base", [
    KNeighborsClassifier(n_neighbors=3),  # fits 2 rows, fails to predict
    QuadraticDiscriminantAnalysis(),  # fails to fit one row per class
], ids=["knn", "qda"])
@pytest.mark.parametrize("kind", ["answerer", "classifier"])
def test_a_teacher_whose_fit_or_predict_fails_abstains(base, kind):
    # With one teacher holding every row, 2 rows used to raise after the charge (with a
    # message stating the teacher's row count, "n_samples_fit = 2") and 6 rows to fit.
    X, y = _blobs(6, 5)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)

    def fit(n):
        kw = dict(n_teachers=1, classes=[0, 1], accountant=acc, random_state=0)
        if kind == "answerer":
            model = PrivateQueryAnswerer(base, **kw).fit(X[:n], y[:n])
            return model, model.answer(X)[1]
        model = _fit_quietly(ModelAgnosticPrivateClassifier(base, fallback_label=0, **kw),
                             X[:n], y[:n], X_public=X)
        return model, None

    (small, small_answered), (large, _) = fit(2), fit(6)
    assert small.n_teachers_ == large.n_teachers_ == 1
    if kind == "answerer":
        assert not small_answered.any()  # the teacher abstains: distance 0 everywhere
        assert large.teachers_[0] is not None

def test_a_teacher_predicting_a_non_label_abstains_on_that_query():
    # A regression stump predicts leaf means: exact labels while its leaves are pure (D),
    # 2/3 once one added record makes a leaf impure (D'). The non-label used to raise after
    # the charge on D' only; now that teacher abstains there, and votes elsewhere.
    X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    y = np.array([0, 0, 1, 1])
    X_added, y_added = np.vstack([X, [[3.0]]]), np.append(y, 0)
    queries = np.array([[-1.5], [1.5]])
    votes = []
    for X_fit, y_fit in ((X, y), (X_added, y_added)):
        teachers = [DecisionTreeRegressor(max_depth=1).fit(X_fit, y_fit)]
        votes.append(vote_counts(teachers, queries, np.array([0, 1])).tolist())
    assert votes == [[[1, 0], [0, 1]], [[1, 0], [0, 0]]]


def test_thesis_calibration_outside_its_proof_is_refused_before_the_charge():
    # The release's sparse vector runs at (epsilon, delta / 2) with cutoff max_unstable = 200
    # > 8 ln(2 / delta): refused (sparse_vector_scales) before anything is spent, also with
    # an integer n_teachers, which used to reach the calibration only after the charge.
    X, y = _blobs(40, 6)
    acc = BudgetAccountant(epsilon=1e3, delta=1e-3)
    kw = dict(n_teachers=3, max_unstable=200, epsilon=200.0, calibration="thesis",
              classes=[0, 1], accountant=acc, random_state=0)
    with pytest.raises(ValueError, match="not proved"):
        PrivateQueryAnswerer(DecisionTreeClassifier(), **kw).fit(X, y)
    for X_public in (X[:5], None):
        with pytest.raises(ValueError, match="not proved"):
            ModelAgnosticPrivateClassifier(DecisionTreeClassifier(), **kw).fit(
                X, y, X_public=X_public)
    assert acc.spent is None


@pytest.mark.parametrize("cls", [PrivateQueryAnswerer, ModelAgnosticPrivateClassifier])
def test_invalid_teacher_parameter_is_refused_before_the_charge(cls):
    # Failing teachers abstain, so a bad parameter must be caught without data.
    from sklearn.linear_model import LogisticRegression
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 2)), np.arange(40) % 2
    acc = BudgetAccountant(10.0, 1e-3)
    clf = cls(LogisticRegression(C=-1.0), epsilon=1.0, delta=1e-5, classes=[0, 1],
              accountant=acc)
    with pytest.raises(ValueError, match="invalid parameter.*before any budget"):
        clf.fit(X, y)
    assert acc.spent is None


def _warnings_of(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("kind", ["answerer", "classifier"])
def test_fit_warnings_do_not_reveal_the_row_count(kind):
    # The base class warned "delta >= 1 / n_samples = <1/n>" from the private row count n,
    # which add/remove neighbours keep private: at delta = 0.01 a fit on 99 rows was silent
    # and one on 100 rows warned, with n in the message.
    X, y = _blobs(100, 7)

    def fit(n):
        kw = dict(n_teachers=3, delta=0.01, classes=[0, 1], fallback_label=0, random_state=0)
        if kind == "answerer":
            kw.pop("fallback_label")
            return PrivateQueryAnswerer(DecisionTreeClassifier(max_depth=1), **kw).fit(
                X[:n], y[:n])
        return ModelAgnosticPrivateClassifier(DecisionTreeClassifier(max_depth=1), **kw).fit(
            X[:n], y[:n], X_public=X[:5])

    assert _warnings_of(lambda: fit(99)) == _warnings_of(lambda: fit(100))


class _RowCountWarner(DecisionTreeClassifier):
    # Warns, as many scikit-learn estimators do, with a number read from its own rows
    # (e.g. StratifiedKFold in LogisticRegressionCV: "The least populated class in y has
    # only 2 members").
    def fit(self, X, y, sample_weight=None):
        warnings.warn(f"fitted on {len(y)} rows", UserWarning)
        return super().fit(X, y, sample_weight=sample_weight)

    def predict(self, X):
        warnings.warn(f"predicting with {self.tree_.node_count} nodes", UserWarning)
        return super().predict(X)


@pytest.mark.parametrize("kind", ["answerer", "classifier"])
def test_teacher_warnings_do_not_reach_the_caller(kind):
    # A teacher's warnings depend on its private rows (here their number, which one added
    # record changes); errors from a teacher already abstain for that reason.
    X, y = _blobs(12, 8)
    kw = dict(n_teachers=1, epsilon=5.0, classes=[0, 1], random_state=0)
    if kind == "answerer":
        answerer = PrivateQueryAnswerer(_RowCountWarner(max_depth=1), **kw)
        caught = _warnings_of(lambda: answerer.fit(X, y).answer(X[:3]))
    else:
        clf = ModelAgnosticPrivateClassifier(_RowCountWarner(max_depth=1),
                                             student=DecisionTreeClassifier(),
                                             fallback_label=0, **kw)
        caught = _warnings_of(lambda: clf.fit(X, y, X_public=X[:3]))
        caught = [w for w in caught if w[0] is not FallbackModelWarning]
    assert caught == []


class _SlowSparseVector(SparseVector):
    # Widens the window between the allowance check and the count (a busy server thread).
    def _scales(self):
        time.sleep(0.02)
        return super()._scales()


def _concurrently(call, n_threads=3):
    def run():
        try:
            call()
        except SparseVectorExhaustedError:  # the late ones are refused
            pass

    threads = [threading.Thread(target=run) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_sparse_vector_allowance_holds_under_concurrent_queries():
    # The answerer is an online service: concurrent queries all passed the "exhausted?" check
    # before any of them counted its "bottom", so cutoff = 1 gave 3 bottoms (3 times the
    # per-bottom budget).
    sv = _SlowSparseVector(epsilon=1.0, delta=0.0, threshold=0.0, cutoff=1, calibration="lyu",
                           random_state=0)
    _concurrently(lambda: sv.query(-1e9))
    assert sv.n_below_ == 1
    sv.allow_pickle = True  # refused otherwise (tests/mechanisms/test_sparse_vector.py)
    with pytest.raises(SparseVectorExhaustedError):  # a copy keeps the state, with its own lock
        pickle.loads(pickle.dumps(sv)).query(1e9)


def test_answerer_release_limits_hold_under_concurrent_queries(monkeypatch):
    monkeypatch.setattr(StableVoteRelease, "_sparse_vector_class", _SlowSparseVector)
    unstable = np.array([[0, 0]])  # distance 0: "bottom" with probability 1 - delta / m~
    release = StableVoteRelease(epsilon=1.0, delta=1e-6, max_unstable=1, max_queries=10,
                                calibration="lyu", random_state=np.random.default_rng(0))
    _concurrently(lambda: release.release(unstable))
    assert release.sparse_vector.n_below_ == 1
    release = StableVoteRelease(epsilon=1.0, delta=1e-6, max_unstable=5, max_queries=1,
                                calibration="lyu", random_state=np.random.default_rng(0))
    _concurrently(lambda: release.release(unstable))
    assert release.n_queries == release.sparse_vector.n_queries_ == 1
