"""Session 19 privacy review of skdp/ensemble and the sparse vector / exponential mechanisms."""

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


@pytest.mark.parametrize("epsilon", [1e-300, 1e-200, 1e200, 1e300])
def test_lyu_release_threshold_scales_as_one_over_epsilon_at_extremes(epsilon):
    # The Lyu threshold solves P[Lap(q) - Lap(t) > w] = delta / m~ with both scales
    # proportional to 1 / epsilon, so w * epsilon is the same at every epsilon. The closed
    # form squared the scales (overflow at 1e-200: brentq saw NaN; underflow at 1e200:
    # ZeroDivisionError), so valid budgets crashed with an unclear error.
    from skdp.ensemble._stability import laplace_difference_sf, release_calibration
    _, thr_1, query_1, w_1 = release_calibration(1.0, 1e-6, 10, 1000, "lyu")
    _, thr, query, w = release_calibration(epsilon, 1e-6, 10, 1000, "lyu")
    assert w * epsilon == pytest.approx(w_1, rel=1e-9)
    assert laplace_difference_sf(w, query, thr) <= 1e-9
    assert laplace_difference_sf(w / (1 + 1e-6), query, thr) > 1e-9  # tight, not just large


@pytest.mark.parametrize("epsilon, sensitivity", [(1e300, 1e-20), (1e-300, 1e20)])
def test_degenerate_noise_scales_are_refused(epsilon, sensitivity):
    # A Laplace scale that rounds to 0 or a subnormal (1e300, 1e-20) gives a (nearly)
    # deterministic comparison: no finite epsilon covers it. An infinite one (1e-300, 1e20)
    # gives NaN or infinite noise. Refused from the parameters alone.
    from skdp.mechanisms import (
        SparseVector, exponential_mechanism, report_noisy_max, sparse_vector_scales)
    with pytest.raises(ValueError, match="noise scale"):
        sparse_vector_scales(epsilon, 0.0, 1, sensitivity, "lyu")
    with pytest.raises(ValueError, match="noise scale"):
        SparseVector(epsilon=epsilon, delta=0.0, threshold=0.0, cutoff=1,
                     sensitivity=sensitivity, calibration="lyu", random_state=0)
    with pytest.raises(ValueError, match="noise scale"):
        report_noisy_max([1.0, 1.0], epsilon=epsilon, sensitivity=sensitivity,
                         random_state=0)
    with pytest.raises(ValueError, match="noise scale"):
        exponential_mechanism([1.0, 1.0], epsilon=epsilon, sensitivity=sensitivity,
                              random_state=0)



def test_exponential_mechanism_refuses_a_factor_that_underflows_to_zero():
    # epsilon / (2 sensitivity) = 0 (1e-300 / 2e30): checking 1 / factor divided by zero.
    from skdp.mechanisms import exponential_mechanism
    with pytest.raises(ValueError, match="noise scale"):
        exponential_mechanism([1.0, 0.0], epsilon=1e-300, sensitivity=1e30, random_state=0)


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


def test_thesis_release_threshold_is_finite_at_tiny_delta():
    # w = 2 lambda ln(2 m~ / delta) (seed 004, Alg. 8 line 1): 2 m~ / delta overflowed to
    # inf at delta = 1e-320, so w = inf (no vote could ever be answered) and "auto" failed
    # with "cannot convert float infinity to integer".
    import math
    from skdp.ensemble._stability import release_calibration
    _, thr, _, w = release_calibration(1.0, 1e-320, 10, 1000, "thesis")
    assert w == pytest.approx(2 * thr * (math.log(2000) - math.log(1e-320)), rel=1e-12)


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
