"""skdp.ensemble: stable-vote answering and model-agnostic private learning (seed 004, Ch. 5)."""

import itertools
import math
import warnings

import joblib
import numpy as np
import pytest
from sklearn.ensemble import StackingClassifier, VotingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp import BudgetAccountant, PrivacyBudget, PrivacyLeakWarning
from skdp.datasets import make_margin_classification
from skdp.ensemble import (
    LabelPrivateBudget,
    ModelAgnosticPrivateClassifier,
    PrivateQueryAnswerer,
    distance_to_instability,
    unanimous_vote_teachers,
)
from skdp.ensemble._stability import (
    ANSWERED,
    StableVoteRelease,
    laplace_difference_sf,
    release_calibration,
)
from skdp.ensemble._teachers import assign_teachers
from skdp.exceptions import FallbackModelWarning, SparseVectorExhaustedError
from skdp.mechanisms import SparseVector
from skdp.testing import audit_epsilon

from common_instances.ensemble import ALL_ZERO_WEIGHTS

# Many fits here leave classes=None, which is incidental to what they test; the
# PrivacyLeakWarning it raises is asserted in tests/utils/test_multiclass.py.
pytestmark = pytest.mark.filterwarnings("ignore:classes=None:skdp.exceptions.PrivacyLeakWarning")

# ---------------------------------------------------------------- distance to instability


def test_distance_to_instability_hand_values():
    counts = [[10, 0, 0], [6, 4, 0], [5, 5, 0], [1, 7, 2], [3, 0, 0], [0, 2, 0]]
    # gaps 10, 2, 0, 5, 3, 2 -> floor((g - 1) / 2) clipped at 0
    assert distance_to_instability(counts).tolist() == [4, 0, 0, 2, 1, 0]


def _neighbour_votes(votes, n_classes):
    """Every vote vector one record can reach: one teacher changes (or gains/loses) its vote."""
    for src, dst in itertools.permutations(range(n_classes), 2):
        if votes[src] > 0:
            v = list(votes)
            v[src] -= 1
            v[dst] += 1
            yield v
    for k in range(n_classes):  # a teacher that gains its first record, or loses its last
        yield [c + (i == k) for i, c in enumerate(votes)]
        if votes[k] > 0:
            yield [c - (i == k) for i, c in enumerate(votes)]


def test_distance_to_instability_has_sensitivity_exactly_one():
    worst = 0
    for n_classes in (2, 3):
        for votes in itertools.product(range(8), repeat=n_classes):
            d0 = distance_to_instability([votes])[0]
            top0 = int(np.argmax(votes))
            for v in _neighbour_votes(votes, n_classes):
                d1 = distance_to_instability([v])[0]
                worst = max(worst, abs(d1 - d0))
                if d0 >= 1:  # positive distance: the majority is the same on every neighbour
                    assert int(np.argmax(v)) == top0, (votes, v)
    assert worst == 1


def test_thesis_distance_formula_has_sensitivity_two():
    # Seed 004, Alg. 9/10: max(0, ct(top) - ct(second) - 1). One teacher moving from the
    # top class to the runner-up takes [3, 0] to [2, 1]: 2 -> 0, a change of 2.
    def thesis(c):
        return max(0, c[0] - c[1] - 1)

    assert thesis([3, 0]) - thesis([2, 1]) == 2
    assert distance_to_instability([[3, 0]])[0] - distance_to_instability([[2, 1]])[0] == 1


# ---------------------------------------------------------------- calibrations


def test_laplace_difference_sf_hand_value_and_symmetry():
    # scales 2 and 1 at x = 3: (4 e^{-1.5} - e^{-3}) / (2 * 3) = 0.140456
    assert laplace_difference_sf(3.0, 2.0, 1.0) == pytest.approx(0.140456, abs=1e-6)
    assert laplace_difference_sf(0.0, 2.0, 1.0) == pytest.approx(0.5)
    assert laplace_difference_sf(-3.0, 2.0, 1.0) == pytest.approx(1 - 0.140456, abs=1e-6)
    # equal scales: (2 + x/a) e^{-x/a} / 4 at a = 2, x = 2: 3 e^{-1} / 4 = 0.275910
    assert laplace_difference_sf(2.0, 2.0, 2.0) == pytest.approx(0.275910, abs=1e-6)
    rng = np.random.default_rng(0)
    z = rng.laplace(0, 3.0, 200_000) - rng.laplace(0, 2.0, 200_000)
    assert np.mean(z > 4.0) == pytest.approx(laplace_difference_sf(4.0, 3.0, 2.0), abs=0.005)


def test_thesis_release_calibration_hand_values():
    # Seed 004, Alg. 10 at eps = 1, delta = 1e-6, T = 10, m~ = 1000:
    # lambda = sqrt(32 * 10 * ln(2e6)) = sqrt(4642.77) = 68.1379,
    # w = 2 lambda ln(2 * 1000 / 1e-6) = 136.2758 * 21.41641 = 2918.54.
    sv_delta, thr, query, w = release_calibration(1.0, 1e-6, 10, 1000, "thesis")
    assert sv_delta == 5e-7
    assert thr == pytest.approx(68.1379, abs=1e-4)
    assert query == pytest.approx(2 * 68.1379, abs=2e-4)
    assert w == pytest.approx(2918.54, abs=0.01)
    # The thesis ignores the threshold noise in Lemma 5.3.5; its w still keeps an
    # unstable vote hidden with probability >= 1 - delta / (2 m~): (4x - x^2) / 6 <= x.
    assert laplace_difference_sf(w, query, thr) <= 1e-6 / 2000


def test_lyu_release_calibration_hand_values():
    # Lyu, Su and Li (2017), Alg. 7 at eps = 1, T = c = 1: eps1 = 1 / (1 + 2^(2/3)) = 0.386488,
    # threshold Lap(1 / eps1) = Lap(2.587401), queries Lap(2 / (1 - eps1)) = Lap(3.259921).
    sv_delta, thr, query, w = release_calibration(1.0, 1e-6, 1, 1000, "lyu")
    assert sv_delta == 0.0
    assert thr == pytest.approx(2.587401, abs=1e-6)
    assert query == pytest.approx(3.259921, abs=1e-6)
    # w solves P[Lap(3.26) - Lap(2.59) > w] = delta / m~ = 1e-9; the dominant term gives
    # w ~ a ln(a^2 m~ / (2 (a^2 - b^2) delta)) = 3.259921 * ln(1.351206e9) = 68.539.
    assert laplace_difference_sf(w, query, thr) == pytest.approx(1e-9, rel=1e-6)
    assert w == pytest.approx(68.53, abs=0.02)


@pytest.mark.parametrize("max_unstable, lyu, thesis", [(1, 169, 2209), (10, 1103, 6983)])
def test_unanimous_vote_teachers(max_unstable, lyu, thesis):
    assert unanimous_vote_teachers(1.0, 1e-6, max_unstable, 1000, "lyu") == lyu
    assert unanimous_vote_teachers(1.0, 1e-6, max_unstable, 1000, "thesis") == thesis
    for cal, b in (("lyu", lyu), ("thesis", thesis)):
        _, thr, query, w = release_calibration(1.0, 1e-6, max_unstable, 1000, cal)
        # answered iff dist + Lap(query) > w + Lap(thr); a unanimous vote of b has dist (b-1)/2
        assert laplace_difference_sf(w - (b - 1) // 2, query, thr) >= 0.99
        assert laplace_difference_sf(w - (b - 3) // 2, query, thr) < 0.99


# ---------------------------------------------------------------- audit of the release


class _QuarterNoise(SparseVector):
    def _scales(self):
        thr, query, redraw = super()._scales()
        return 0.25 * thr, 0.25 * query, redraw


class _QuarterNoiseRelease(StableVoteRelease):
    _sparse_vector_class = _QuarterNoise  # same threshold w, a quarter of the noise


def _release_mechanism(release_class, calibration):
    """First abstention's position when the answerer releases five votes (T = 1)."""
    def run(counts, rng):
        release = release_class(epsilon=1.0, delta=1e-6, max_unstable=1, max_queries=5,
                                calibration=calibration, random_state=rng)
        _, status = release.release(counts)
        return float(np.sum(status == ANSWERED))
    return run


def _worst_case_votes(calibration):
    # Minimal stable gap at the threshold: dist ~ w on every query for D0; the added
    # record flips one teacher from the top class to the runner-up on every query of D1.
    w = release_calibration(1.0, 1e-6, 1, 5, calibration)[3]
    dist = int(round(w))
    top, second = 2 * dist + 1 + 10, 10  # gap 2 dist + 1 -> dist; after the flip: dist - 1
    d0 = np.tile([top, second], (5, 1))
    d1 = np.tile([top - 1, second + 1], (5, 1))
    assert (distance_to_instability(d0) - distance_to_instability(d1) == 1).all()
    return d0, d1


def test_audit_answerer_release_lyu_within_epsilon_and_catches_quarter_noise():
    d0, d1 = _worst_case_votes("lyu")
    honest = audit_epsilon(_release_mechanism(StableVoteRelease, "lyu"), d0, d1,
                           n_runs=15_000, delta=1e-6, random_state=1)
    assert honest.epsilon_lower_bound <= 1.0, honest
    cheat = audit_epsilon(_release_mechanism(_QuarterNoiseRelease, "lyu"), d0, d1,
                          n_runs=15_000, delta=1e-6, random_state=2)
    assert cheat.epsilon_lower_bound > 1.0, cheat


def test_audit_answerer_release_thesis_within_epsilon():
    d0, d1 = _worst_case_votes("thesis")
    honest = audit_epsilon(_release_mechanism(StableVoteRelease, "thesis"), d0, d1,
                           n_runs=10_000, delta=1e-6, random_state=3)
    assert honest.epsilon_lower_bound <= 1.0, honest


# ---------------------------------------------------------------- the answerer


def _blobs(n, rng, n_classes=2):
    centers = np.array([[4.0, 0.0], [-4.0, 0.0], [0.0, 4.0]])[:n_classes]
    y = rng.integers(0, n_classes, size=n)
    return centers[y] + rng.normal(size=(n, 2)), y


def test_assignment_depends_on_the_record_only():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    key = (12345, 67890)
    teacher = assign_teachers(X, 7, key)
    X_new = np.insert(X, 123, rng.normal(size=3), axis=0)
    assert np.array_equal(np.delete(assign_teachers(X_new, 7, key), 123), teacher)
    assert np.array_equal(assign_teachers(X[::-1], 7, key), teacher[::-1])
    assert np.bincount(teacher, minlength=7).min() > 40  # roughly balanced
    X_neg = X.copy()
    X_neg[0, 0] = 0.0
    X_pos = X_neg.copy()
    X_pos[0, 0] = -0.0
    assert assign_teachers(X_neg, 7, key)[0] == assign_teachers(X_pos, 7, key)[0]


def test_teacher_assignment_survives_insertion_of_a_record():
    rng = np.random.default_rng(1)
    X, y = _blobs(300, rng)
    knn = KNeighborsClassifier(n_neighbors=1)  # a teacher keeps its training rows in _fit_X

    def chunks(X, y):
        ans = PrivateQueryAnswerer(knn, n_teachers=6, max_queries=5, random_state=0).fit(X, y)
        return [frozenset(map(tuple, t._fit_X)) for t in ans.teachers_]

    before = chunks(X, y)
    new = np.array([[0.5, 0.25]])
    after = chunks(np.insert(X, 17, new, axis=0), np.insert(y, 17, 1))
    changed = [j for j in range(6) if before[j] != after[j]]
    assert len(changed) == 1
    assert after[changed[0]] == before[changed[0]] | {tuple(new[0])}


def test_answerer_answers_stable_votes_and_hides_unstable_ones():
    rng = np.random.default_rng(2)
    X, y = _blobs(6000, rng, n_classes=3)
    ans = PrivateQueryAnswerer(LogisticRegression(), n_teachers=60, max_unstable=3,
                               max_queries=10, epsilon=20.0, random_state=0).fit(X, y)
    assert ans.n_teachers_ == 60 and len(ans.teachers_) == 60
    labels, answered = ans.answer([[4.0, 0.0], [-4.0, 0.0], [0.0, 4.0]])
    assert answered.all() and labels.tolist() == [0, 1, 2]
    assert ans.n_answered_ == 3 and ans.privacy_spent_ == PrivacyBudget(20.0, 1e-6)
    # A vote split between classes 1 and 2: abstain, and do not leak the majority.
    labels, answered = ans.answer([[-2.0, 2.0]])
    assert not answered[0] and labels[0] == ans.classes_[0]
    assert ans.n_abstained_ == 1


def test_answerer_refuses_after_max_unstable_abstentions():
    rng = np.random.default_rng(3)
    X, y = _blobs(3000, rng)
    ans = PrivateQueryAnswerer(LogisticRegression(), n_teachers=30, max_unstable=2,
                               max_queries=100, epsilon=20.0, random_state=0).fit(X, y)
    labels, answered = ans.answer([[0.0, 0.0]] * 3 + [[4.0, 0.0]])  # split votes first
    assert answered.tolist() == [False] * 4
    assert (ans.n_abstained_, ans.n_refused_) == (2, 2)
    with pytest.raises(SparseVectorExhaustedError):
        ans.answer([[4.0, 0.0]])


def test_fitted_answerer_refuses_pickling_and_copying_without_opt_in(tmp_path):
    """A copy would hold the teachers and answer a fresh allowance of queries."""
    import copy
    import pickle
    rng = np.random.default_rng(3)
    X, y = _blobs(3000, rng)
    ans = PrivateQueryAnswerer(LogisticRegression(), n_teachers=30, max_unstable=2,
                               max_queries=100, epsilon=20.0, classes=[0, 1], random_state=0)
    pickle.loads(pickle.dumps(ans))  # unfitted: nothing private
    ans.fit(X, y)
    for write in (pickle.dumps, lambda obj: joblib.dump(obj, tmp_path / "ans.joblib"),
                  copy.deepcopy):
        with pytest.raises(pickle.PicklingError, match="teachers.*fork.*allow_pickle=True"):
            write(ans)
    ans.answer([[0.0, 0.0]] * 2)  # two abstentions: the allowance is used up
    ans.allow_pickle = True
    restored = pickle.loads(pickle.dumps(ans))
    with pytest.raises(SparseVectorExhaustedError):
        restored.answer([[4.0, 0.0]])  # the copy continues where the original stands


def test_answerer_refuses_query_number_max_queries_plus_one():
    rng = np.random.default_rng(4)
    X, y = _blobs(3000, rng)
    ans = PrivateQueryAnswerer(LogisticRegression(), n_teachers=30, max_unstable=1,
                               max_queries=3, epsilon=20.0, random_state=0).fit(X, y)
    labels, answered = ans.answer([[4.0, 0.0], [-4.0, 0.0], [4.0, 0.0], [4.0, 0.0]])
    assert answered.tolist() == [True, True, True, False]
    assert ans.n_refused_ == 1
    with pytest.raises(SparseVectorExhaustedError, match="max_queries"):
        ans.answer([[4.0, 0.0]])


def test_answerer_thesis_threshold_and_empty_or_single_class_teachers():
    rng = np.random.default_rng(5)
    X, y = _blobs(12, rng)
    ans = PrivateQueryAnswerer(LogisticRegression(), n_teachers=12, max_unstable=10,
                               max_queries=1000, calibration="thesis", random_state=0).fit(X, y)
    assert ans.threshold_ == pytest.approx(2918.54, abs=0.01)
    assert any(t is None for t in ans.teachers_)  # some teachers get no record
    assert all(t is None or hasattr(t, "predict") for t in ans.teachers_)


# ---------------------------------------------------------------- the classifier


def test_student_matches_non_private_model_on_margin_data():
    X, y = make_margin_classification(150_000, random_state=0)
    X_pub, _ = make_margin_classification(500, random_state=1)
    X_test, y_test = make_margin_classification(10_000, random_state=2)
    baseline = LogisticRegression().fit(X, y).score(X_test, y_test)
    clf = ModelAgnosticPrivateClassifier(LogisticRegression(), n_teachers=300, max_unstable=5,
                                         epsilon=3.0, random_state=0).fit(X, y, X_public=X_pub)
    assert clf.n_answered_ >= 0.9 * 500
    assert clf.score(X_test, y_test) >= baseline - 0.02
    assert clf.privacy_spent_ == PrivacyBudget(3.0, 1e-6)
    assert not hasattr(clf, "teachers_")  # only the student is kept


def test_classifier_charges_the_accountant_once_and_bad_input_spends_nothing():
    rng = np.random.default_rng(6)
    X, y = _blobs(2000, rng)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    base = LogisticRegression()
    bad = [
        (dict(n_teachers=0), ValueError, "n_teachers"),
        (dict(max_unstable=0), ValueError, "max_unstable"),
        (dict(estimator=StandardScaler()), TypeError, "predict"),
        (dict(student=StandardScaler()), TypeError, "student"),
        (dict(calibration="tight"), ValueError, "calibration"),
        (dict(delta=0.0), ValueError, "delta"),
        (dict(n_teachers=2.5), TypeError, "n_teachers"),
        (dict(fallback_label=[0, 1]), ValueError, "fallback_label"),
    ]
    for params, error, match in bad:
        clf = ModelAgnosticPrivateClassifier(base, n_teachers=20, epsilon=5.0, accountant=acc)
        with pytest.raises(error, match=match):
            clf.set_params(**params).fit(X, y, X_public=X[:10])
    with pytest.raises(ValueError, match="features"):
        ModelAgnosticPrivateClassifier(base, n_teachers=20, epsilon=5.0, accountant=acc).fit(
            X, y, X_public=np.zeros((10, 3)))
    with pytest.raises(ValueError, match="public_fraction"):
        ModelAgnosticPrivateClassifier(base, n_teachers=20, epsilon=5.0, public_fraction=1.0,
                                       accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="max_unstable"):
        PrivateQueryAnswerer(base, n_teachers=20, max_unstable=0, accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="max_queries"):
        PrivateQueryAnswerer(base, n_teachers=20, max_queries=0, accountant=acc).fit(X, y)
    assert acc.spent is None  # every refusal came before the budget was charged
    ModelAgnosticPrivateClassifier(base, n_teachers=60, max_unstable=2, epsilon=5.0,
                                   delta=1e-4, accountant=acc, random_state=0).fit(
        X, y, X_public=X[:50])
    assert acc.spent.epsilon == pytest.approx(5.0) and acc.spent.delta == pytest.approx(1e-4)


def test_label_private_fallback_records_the_weaker_guarantee():
    rng = np.random.default_rng(7)
    X, y = _blobs(5000, rng)
    clf = ModelAgnosticPrivateClassifier(LogisticRegression(), n_teachers=60, max_unstable=2,
                                         epsilon=10.0, public_fraction=0.2,
                                         random_state=0).fit(X, y)
    spent = clf.privacy_spent_
    assert isinstance(spent, LabelPrivateBudget) and (spent.epsilon, spent.delta) == (10.0, 1e-6)
    assert spent.n_query_rows == clf.n_public_
    assert abs(clf.n_public_ - 1000) < 100  # about public_fraction of the rows
    assert "labels" in spent.scope and "not protected" in spent.scope
    assert clf.score(X, y) > 0.95


def test_answerer_filler_does_not_reveal_the_private_labels():
    rng = np.random.default_rng(11)
    X, y = _blobs(3000, rng)
    queries = [[4.0, 0.0], [0.0, 0.0], [-4.0, 0.0]]  # class 0, a split vote, class 1
    for y_labels, filler, answers in (
            (np.array([5, 7])[y], 0, [5, 7]),
            (np.array(["negative", "yes"])[y], None, ["negative", "yes"])):
        ans = PrivateQueryAnswerer(LogisticRegression(), n_teachers=30, max_unstable=2,
                                   max_queries=10, epsilon=20.0, random_state=0)
        labels, answered = ans.fit(X, y_labels).answer(queries)
        assert answered.tolist() == [True, False, True]
        # The abstention used to carry classes_[0], the smallest private label.
        assert labels[1] == filler and labels[1] != ans.classes_[0]
        assert labels[[0, 2]].tolist() == answers
        assert (labels.dtype == object) == (filler is None)  # no string width of private labels


# ---------------------------------------------------------------- the label set


def _ensembles(**params):
    base = LogisticRegression()
    return [PrivateQueryAnswerer(base, n_teachers=30, max_unstable=2, max_queries=10,
                                 epsilon=20.0, random_state=0, **params),
            ModelAgnosticPrivateClassifier(base, n_teachers=30, max_unstable=2, epsilon=20.0,
                                           random_state=0, **params)]


def _fit(est, X, y):
    return est.fit(X, y, X_public=X[:20]) if hasattr(est, "student") else est.fit(X, y)


@pytest.mark.parametrize("index", [0, 1], ids=["answerer", "model_agnostic"])
def test_declared_classes_are_public_and_none_warns(index):
    X, y = _blobs(1000, np.random.default_rng(13))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        _fit(_ensembles(classes=[1, 0])[index], X, y)
    with pytest.warns(PrivacyLeakWarning, match="classes=None"):
        _fit(_ensembles()[index], X, y)


def test_declared_label_without_rows_is_counted_but_never_released():
    rng = np.random.default_rng(14)
    X, y = _blobs(3000, rng)  # labels 0 and 1; label 2 is declared, no row has it
    queries = [[4.0, 0.0], [-4.0, 0.0], [0.0, 4.0]]
    ans, clf = _ensembles(classes=[0, 1, 2])
    labels, answered = ans.fit(X, y).answer(queries)
    assert ans.classes_.tolist() == [0, 1, 2]
    assert answered[:2].all() and labels[:2].tolist() == [0, 1]
    assert 2 not in labels[answered]  # no teacher learned label 2
    # 15 public points near each of the two answered queries: enough for a student
    # (10 per declared class).
    public = np.repeat(np.array(queries[:2]), 15, axis=0) + 0.3 * rng.normal(size=(30, 2))
    clf.fit(X, y, X_public=public)
    # classes_ is the declared label set; the student knows the released labels only.
    assert clf.classes_.tolist() == [0, 1, 2] and clf.student_.classes_.tolist() == [0, 1]
    proba = clf.predict_proba(X[:5])
    assert proba.shape == (5, 3) and np.all(proba[:, 2] == 0)
    assert np.allclose(proba[:, :2], clf.student_.predict_proba(X[:5]))
    assert np.all(np.isneginf(clf.predict_log_proba(X[:5])[:, 2]))
    scores = clf.decision_function(X[:5])  # the binary student scores class 1: (-s, s, lowest)
    s = clf.student_.decision_function(X[:5])
    assert scores.shape == (5, 3) and np.array_equal(scores[:, :2], np.column_stack([-s, s]))
    assert np.all(scores[:, 2] < -1e300) and np.all(np.isfinite(scores))


def test_label_outside_the_declared_classes_spends_nothing():
    X, y = _blobs(1000, np.random.default_rng(15))
    acc = BudgetAccountant(epsilon=100.0, delta=0.5)
    for est in _ensembles(classes=[0, 2], accountant=acc):
        with pytest.raises(ValueError, match="not in classes"):
            _fit(est, X, y)
    for params, match in ((dict(classes=[0, 1], fallback_label=3), "fallback_label=3"),
                          (dict(classes=[0]), "at least 2 classes")):
        clf = ModelAgnosticPrivateClassifier(LogisticRegression(), n_teachers=30,
                                             accountant=acc, **params)
        with pytest.raises(ValueError, match=match):
            _fit(clf, X, y)
    assert acc.spent is None


def _one_class_released(fallback_label=None, accountant=None, classes=None):
    rng = np.random.default_rng(12)
    X, y = _blobs(3000, rng)
    X_pub = np.array([4.0, 0.0]) + 0.3 * rng.normal(size=(6, 2))  # deep in class 0
    clf = ModelAgnosticPrivateClassifier(LogisticRegression(), n_teachers=30, max_unstable=2,
                                         epsilon=20.0, delta=1e-5, fallback_label=fallback_label,
                                         classes=classes, accountant=accountant, random_state=0)
    with pytest.warns(FallbackModelWarning, match="6 of 6 public points were answered"):
        return clf.fit(X, y, X_public=X_pub)


def test_one_released_class_gives_a_constant_fallback_at_no_extra_cost():
    acc = BudgetAccountant(epsilon=25.0, delta=1e-4)
    clf = _one_class_released(accountant=acc)
    assert clf.fallback_ == "most_frequent" and clf.classes_.tolist() == [0]
    assert (clf.n_answered_, clf.n_abstained_) == (6, 0)
    # Post-processing of the released labels: the declared budget, charged once.
    assert clf.privacy_spent_ == PrivacyBudget(20.0, 1e-5)
    assert acc.spent.epsilon == pytest.approx(20.0) and acc.spent.delta == pytest.approx(1e-5)
    X_test = np.random.default_rng(13).normal(scale=5.0, size=(50, 2))
    assert clf.predict(X_test).tolist() == [0] * 50
    assert np.array_equal(clf.predict_proba(X_test), np.ones((50, 1)))
    assert not hasattr(clf, "decision_function")  # the constant model has none
    assert clf.score(X_test, np.zeros(50, dtype=int)) == 1.0
    # A released label wins over the public fallback_label.
    assert _one_class_released(fallback_label=1).classes_.tolist() == [0]


def test_constant_fallback_keeps_the_declared_classes():
    # The user review's reproduction: with classes=[0, 1] the fallback used to give
    # classes_ == [0] and one predict_proba column, which broke roc_auc_score(y, p[:, 1]).
    clf = _one_class_released(classes=[0, 1])
    assert clf.fallback_ == "most_frequent" and clf.classes_.tolist() == [0, 1]
    X_test = np.random.default_rng(13).normal(scale=5.0, size=(50, 2))
    proba = clf.predict_proba(X_test)
    assert np.array_equal(proba, np.column_stack([np.ones(50), np.zeros(50)]))
    assert np.array_equal(clf.predict_log_proba(X_test)[:, 1], np.full(50, -np.inf))
    y_test = (X_test[:, 0] < 0).astype(int)
    assert roc_auc_score(y_test, proba[:, 1]) == 0.5
    assert clf.predict(X_test).tolist() == [0] * 50
    # The public fallback_label, with no label released, keeps the declared set too.
    rng = np.random.default_rng(8)
    X, y = _blobs(2000, rng)
    nothing = ModelAgnosticPrivateClassifier(LogisticRegression(), n_teachers=20, epsilon=0.1,
                                             classes=["no", "yes"], fallback_label="yes",
                                             random_state=0)
    with pytest.warns(FallbackModelWarning, match="'constant'"):
        nothing.fit(X, np.array(["no", "yes"])[y], X_public=X[:20])
    assert nothing.classes_.tolist() == ["no", "yes"]
    assert np.array_equal(nothing.predict_proba(X[:3]), [[0.0, 1.0]] * 3)


def test_declared_classes_work_in_stacking_and_soft_voting():
    # Class 2 has 0.6% of the rows: no vote for it is stable, the student never sees it.
    # StackingClassifier and soft VotingClassifier then used to get too few columns.
    rng = np.random.default_rng(14)
    y = rng.choice(3, size=3000, p=[0.497, 0.497, 0.006])
    X = np.array([[4.0, 0.0], [-4.0, 0.0], [0.0, 4.0]])[y] + rng.normal(size=(3000, 2))
    clf = ModelAgnosticPrivateClassifier(LogisticRegression(), n_teachers=30, max_unstable=2,
                                         epsilon=20.0, classes=[0, 1, 2], random_state=0)
    assert clf.fit(X, y).student_.classes_.tolist() == [0, 1]
    assert clf.classes_.tolist() == [0, 1, 2] and clf.predict_proba(X[:4]).shape == (4, 3)
    stack = StackingClassifier([("private", clf)], cv=2, stack_method="predict_proba")
    vote = VotingClassifier([("private", clf), ("lr", LogisticRegression())], voting="soft")
    for meta in (stack, vote):
        assert meta.fit(X, y).score(X, y) > 0.95


def test_no_released_label_keeps_a_uniform_or_the_public_constant_model():
    rng = np.random.default_rng(8)
    X, y = _blobs(2000, rng)
    acc = BudgetAccountant(epsilon=1.0, delta=1e-4)
    # 20 teachers: a distance of at most 9, far below the threshold at epsilon = 0.1.
    clf = ModelAgnosticPrivateClassifier(LogisticRegression(), n_teachers=20, epsilon=0.1,
                                         accountant=acc, classes=[0, 1], random_state=0)
    # It raised "no public point was answered" after the budget was charged.
    with pytest.warns(FallbackModelWarning, match="0 of 20 .*'uniform'.* predicts 0"):
        clf.fit(X, y, X_public=X[:20])
    assert clf.fallback_ == "uniform" and clf.classes_.tolist() == [0, 1]
    assert np.array_equal(clf.predict_proba(X[:3]), np.full((3, 2), 0.5))
    assert clf.predict(X[:3]).tolist() == [0, 0, 0]
    assert acc.spent.epsilon == pytest.approx(0.1)  # the budget of that fit, charged once
    with pytest.warns(FallbackModelWarning, match="0 of 20 .*'constant'.* predicts 'no'"):
        clf.set_params(fallback_label="no", classes=None).fit(
            X, np.array(["no", "yes"])[y], X_public=X[:20])
    assert clf.fallback_ == "constant" and clf.classes_.tolist() == ["no"]
    assert clf.n_answered_ == 0 and clf.threshold_ > 9
    assert clf.predict(X[:5]).tolist() == ["no"] * 5
    assert clf.privacy_spent_ == PrivacyBudget(0.1, 1e-6)
    assert acc.spent.epsilon == pytest.approx(0.2)  # one more fit, nothing extra


def test_label_private_setting_without_query_rows_uses_the_fallback():
    rng = np.random.default_rng(14)
    X, y = _blobs(20, rng)
    clf = ModelAgnosticPrivateClassifier(LogisticRegression(), n_teachers=2,
                                         public_fraction=1e-9, fallback_label=1, random_state=0)
    with pytest.warns(FallbackModelWarning, match="0 of 0"):
        clf.fit(X, y)
    assert clf.n_public_ == clf.privacy_spent_.n_query_rows == 0
    assert clf.fallback_ == "constant" and clf.predict(X).tolist() == [1] * 20


@parametrize_with_checks([ModelAgnosticPrivateClassifier(
    DecisionTreeClassifier(max_depth=3), n_teachers=3, epsilon=1e4, fallback_label=0,
    random_state=0)], expected_failed_checks=lambda est: ALL_ZERO_WEIGHTS)
def test_every_sklearn_check_passes_with_a_fallback_label(estimator, check):
    # With fallback_label, the fallback when nothing is released is that constant instead.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackModelWarning)
        check(estimator)


def test_teachers_on_local_dask_cluster_give_the_same_model():
    distributed = pytest.importorskip("dask.distributed")
    rng = np.random.default_rng(9)
    X, y = _blobs(4000, rng)
    X_pub = _blobs(200, rng)[0]
    clf = ModelAgnosticPrivateClassifier(DecisionTreeClassifier(max_depth=3),
                                         student=LogisticRegression(), n_teachers=60,
                                         max_unstable=2, epsilon=10.0, random_state=0)
    reference = clf.fit(X, y, X_public=X_pub).student_.coef_.copy()
    with distributed.LocalCluster(n_workers=1, processes=False, host="127.0.0.1",
                                  protocol="tcp", dashboard_address=None) as cluster, \
            distributed.Client(cluster), joblib.parallel_backend("dask"):
        on_dask = clf.fit(X, y, X_public=X_pub).student_.coef_.copy()
    assert np.array_equal(reference, on_dask)
    assert clf.n_answered_ > 150


def test_pipeline_and_clone_keep_working():
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(10)
    X, y = _blobs(3000, rng)
    pipe = make_pipeline(StandardScaler(), ModelAgnosticPrivateClassifier(
        LogisticRegression(), n_teachers=60, max_unstable=2, epsilon=10.0, random_state=0))
    pipe.fit(X, y)  # label-private fallback: X_public would not pass through the scaler
    assert pipe.score(X, y) > 0.95
    assert clone(pipe).get_params()["modelagnosticprivateclassifier__n_teachers"] == 60
    assert math.isfinite(pipe[-1].threshold_)


def test_too_few_answered_points_keep_their_majority_instead_of_a_student():
    # Post-processing of the released labels: a student fitted on a handful of points
    # predicts worse than their majority, so under 10 answered points per class the
    # constant model of the released labels is kept.
    rng = np.random.default_rng(16)
    X, y = _blobs(3000, rng)
    queries = np.array([[4.0, 0.0]] * 3 + [[-4.0, 0.0]] * 2)
    _, clf = _ensembles(classes=[0, 1])
    with pytest.warns(FallbackModelWarning, match="fewer than 20"):
        clf.fit(X, y, X_public=queries + 0.1 * rng.normal(size=queries.shape))
    assert clf.n_answered_ == 5 and clf.fallback_ == "most_frequent"
    assert clf.predict(X[:50]).tolist() == [0] * 50  # the released majority, 3 of 5
    many = np.repeat(np.array([[4.0, 0.0], [-4.0, 0.0]]), 12, axis=0)
    clf.fit(X, y, X_public=many + 0.1 * rng.normal(size=many.shape))
    assert clf.n_answered_ == 24 and clf.fallback_ is None
