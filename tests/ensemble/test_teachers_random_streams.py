"""Teachers' random streams: global generator isolation in threads, BLAS threads restored, one record changes one teacher."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from skdp.ensemble import PrivateQueryAnswerer

ROOT = Path(__file__).resolve().parents[2]

_NESTED = """
import joblib, numpy as np
from sklearn.linear_model import LogisticRegression
from skdp.ensemble import ModelAgnosticPrivateClassifier, PrivateQueryAnswerer
rng = np.random.default_rng(0)
X = rng.normal(size=(200, 2)); y = (X[:, 0] > 0).astype(int)
inner = ModelAgnosticPrivateClassifier(LogisticRegression(), n_teachers=2, classes=[0, 1],
                                       n_jobs=2, epsilon=5, fallback_label=0)
outer = PrivateQueryAnswerer(inner, n_teachers=2, classes=[0, 1], n_jobs=2, epsilon=5,
                             random_state=0)
with joblib.parallel_backend("threading"):
    outer.fit(X, y)
print(sum(t is not None for t in outer.teachers_))
"""


def test_nested_ensemble_teachers_in_threads_do_not_deadlock():
    # A teacher that is itself an ensemble with n_jobs=2, under joblib's threading backend
    # (or as the nested backend of loky workers, which is threading): the outer teacher's
    # thread holds the global-stream lock while the inner ensemble's teachers, in other
    # threads, wait for it; the outer thread waits for them. The fit hung after the charge.
    result = subprocess.run([sys.executable, "-c", _NESTED], cwd=ROOT, capture_output=True,
                            text=True, timeout=40, env={"OMP_NUM_THREADS": "1",
                                                         "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-1] == "2"



class _FakeThreadpools:
    """Stands in for threadpoolctl's controller: one global limit, saved and restored."""

    def __init__(self):
        self.value = 2

    def limit(self, limits):
        from contextlib import contextmanager

        @contextmanager
        def limiter():
            saved, self.value = self.value, limits
            try:
                yield
            finally:
                self.value = saved
        return limiter()


def test_threading_backend_restores_the_callers_blas_threads(monkeypatch):
    # Each teacher limits BLAS to one thread (a process-wide setting, saved at entry and
    # restored at exit). Under the threading backend the limits were entered before the
    # global-stream lock: a waiting teacher saved the running one's limit of 1 as the
    # "original" and restored it last, so the caller's BLAS was left single-threaded
    # (openblas 2 -> 1 threads after a fit, with threadpoolctl).
    import joblib
    from sklearn.linear_model import LogisticRegression

    from skdp.ensemble import PrivateQueryAnswerer, _teachers

    fake = _FakeThreadpools()
    monkeypatch.setattr(_teachers, "_threadpools", lambda: fake)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] > 0).astype(int)
    for _ in range(3):
        with joblib.parallel_backend("threading"):
            PrivateQueryAnswerer(LogisticRegression(), n_teachers=8, classes=[0, 1],
                                 n_jobs=2, epsilon=5, random_state=0).fit(X, y)
        assert fake.value == 2


class _DrawsPerRow:
    """Draws one number per row from its ``random_state`` (None, an int or a RandomState)."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def get_params(self, deep=True):
        return {"random_state": self.random_state}

    def set_params(self, **params):
        self.random_state = params["random_state"]
        return self

    def fit(self, X, y):
        from sklearn.utils import check_random_state
        rs = check_random_state(self.random_state)
        rs.random_sample(len(X))
        self.cut_ = rs.uniform(-1.0, 1.0)
        return self

    def predict(self, X):
        return (X[:, 0] > self.cut_).astype(int)


@pytest.mark.parametrize("backend", ["sequential", "threading"])
@pytest.mark.parametrize("make_state", [lambda: None, lambda: 3,
                                        lambda: np.random.RandomState(0)])
def test_one_record_changes_one_teacher_whatever_the_random_state(backend, make_state):
    # A RandomState object given as random_state is one mutable object: clone deep-copies
    # it, so each teacher starts from a copy in the same state and the user's object does
    # not advance (a shared object would let one record shift every later teacher).
    import joblib

    from skdp.ensemble import PrivateQueryAnswerer
    from skdp.ensemble._teachers import vote_counts

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    X_query = rng.normal(size=(100, 2))
    state = make_state()
    before = state.get_state()[1].copy() if isinstance(state, np.random.RandomState) else None
    fits = []
    for n in (199, 200):
        np.random.seed(1)
        with joblib.parallel_backend(backend):
            fits.append(PrivateQueryAnswerer(_DrawsPerRow(state), n_teachers=10, classes=[0, 1],
                                             n_jobs=2, epsilon=5, random_state=2)
                        .fit(X[:n], y[:n]))
    votes = [[vote_counts([t], X_query, np.array([0, 1])) for t in f.teachers_] for f in fits]
    cuts = [[t.cut_ for t in f.teachers_] for f in fits]
    changed = sum(not np.array_equal(a, b) for a, b in zip(*votes))
    assert changed <= 1 and sum(a != b for a, b in zip(*cuts)) == 1
    if before is not None:
        np.testing.assert_array_equal(state.get_state()[1], before)


def _changed_teachers(answerer_0, answerer_1, X_query):
    changed = 0
    for t0, t1 in zip(answerer_0.teachers_, answerer_1.teachers_):
        if (t0 is None) != (t1 is None) or (
                t0 is not None and np.any(t0.predict(X_query) != t1.predict(X_query))):
            changed += 1
    return changed


def test_nested_random_state_is_seeded_so_one_record_changes_one_teacher():
    # A Pipeline's random_state sits at "mlpclassifier__random_state": draw_seeds saw none,
    # so every teacher's MLP drew from NumPy's global generator, in turn. How much a teacher
    # drew (a shuffle of its rows per epoch) depends on its rows, so one added record moved
    # the global stream for the later teachers: from the same global state, 4 of 20
    # teachers changed, while the distance to instability allows for one changed vote.
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline

    def make():
        return make_pipeline(MLPClassifier(hidden_layer_sizes=(4,), max_iter=30))

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=400) > 0).astype(int)
    X_query = rng.normal(size=(500, 2))
    fits = []
    for n in (399, 400):  # neighbours (the last record added), same global state
        np.random.seed(123)
        fits.append(PrivateQueryAnswerer(make(), n_teachers=20, classes=[0, 1],
                                         random_state=7).fit(X[:n], y[:n]))
    assert _changed_teachers(*fits, X_query) <= 1
    # The teachers' seeds come from random_state alone: another global state, same model.
    np.random.seed(5)
    again = PrivateQueryAnswerer(make(), n_teachers=20, classes=[0, 1],
                                 random_state=7).fit(X, y)
    assert _changed_teachers(fits[1], again, X_query) == 0


class _GlobalShuffle:
    """A teacher that draws from NumPy's global generator (no random_state), by row count."""

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self

    def fit(self, X, y):
        half = np.random.permutation(len(X))[: max(1, len(X) // 2)]  # draws len(X) numbers
        self.sign_ = 1 if np.mean(y[half]) >= 0.5 else 0
        self.jitter_ = np.random.uniform()
        return self

    def predict(self, X):
        return np.where(X[:, 0] > self.jitter_ - 0.5, self.sign_, 1 - self.sign_)


def test_global_generator_draws_do_not_tie_the_teachers_together():
    # No random_state to seed: each teacher's fit now runs on its own stream of the global
    # generators (restored afterwards), so one added record changes at most its teacher.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] > 0).astype(int)
    X_query = rng.normal(size=(200, 2))
    fits, states = [], []
    for n in (299, 300):
        np.random.seed(11)
        fits.append(PrivateQueryAnswerer(_GlobalShuffle(), n_teachers=20, classes=[0, 1],
                                         random_state=4).fit(X[:n], y[:n]))
        states.append(np.random.get_state())
    assert _changed_teachers(*fits, X_query) <= 1
    # ... and the caller's global state is left as it was.
    np.random.seed(11)
    untouched = np.random.get_state()
    assert all(np.array_equal(state[1], untouched[1]) and state[2] == untouched[2]
               for state in states)


@pytest.mark.timeout(20)
def test_global_stream_isolation_nests_without_deadlock():
    # A teacher that is itself an ensemble enters the isolation again in the same thread.
    from skdp.ensemble._teachers import _own_global_streams
    before = np.random.get_state()[1].copy()
    with _own_global_streams([1]):
        outer = np.random.random()
        with _own_global_streams([2]):
            inner = np.random.random()
        assert np.random.random() != outer  # the outer stream continues after the inner one
    with _own_global_streams([2]):
        assert np.random.random() == inner
    np.testing.assert_array_equal(np.random.get_state()[1], before)
