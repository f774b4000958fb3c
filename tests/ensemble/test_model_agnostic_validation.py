"""ModelAgnosticPrivateClassifier / PrivateQueryAnswerer: parameters refused before the charge, and
a label-private split (no ``X_public``) that never fails after it because of its random keyed-hash
split; the errors it can still raise after the charge carry no data-dependent count."""

import re
import warnings

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from skdp import BudgetAccountant
from skdp.ensemble import (
    LabelPrivateBudget,
    ModelAgnosticPrivateClassifier,
    PrivateQueryAnswerer,
    _answerer,
)
from skdp.ensemble._teachers import fit_teachers
from skdp.exceptions import FallbackModelWarning

# Estimators here are fitted without classes= (incidental: these tests are about validation order).
pytestmark = pytest.mark.filterwarnings("ignore:classes=None:skdp.exceptions.PrivacyLeakWarning")


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


def _fit_counting(clf, X, y):
    """Fit with a fresh accountant; return (error or None, accountant)."""
    acc = BudgetAccountant(epsilon=1e3, delta=1e-2)
    try:
        clf.set_params(accountant=acc).fit(X, y)
    except Exception as exc:  # noqa: BLE001 - the test inspects whatever is raised
        return exc, acc
    return None, acc


@pytest.fixture
def teacher_data(monkeypatch):
    """Spy on the teachers' training: a list of (rows, classes) the split left them."""
    seen = []

    def spy(estimator, X, y, *args, **kwargs):
        seen.append((len(y), np.unique(y).size))
        return fit_teachers(estimator, X, y, *args, **kwargs)

    monkeypatch.setattr(_answerer, "fit_teachers", spy)
    return seen


@pytest.mark.filterwarnings("ignore::skdp.exceptions.FallbackModelWarning")
@pytest.mark.parametrize("seed", range(4))
def test_label_private_split_with_fewer_rows_than_teachers_does_not_fail(seed, teacher_data):
    # The reviewer's case: 100 rows, 80 teachers, about 80 expected teacher rows; seed 0
    # drew 76, and fit failed after charging with "n_samples=76" in the message.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = ModelAgnosticPrivateClassifier(DecisionTreeClassifier(), n_teachers=80, epsilon=1.0,
                                         random_state=seed, fallback_label=0)
    error, acc = _fit_counting(clf, X, y)
    assert error is None, error
    assert acc.spent.epsilon == pytest.approx(1.0)
    assert isinstance(clf.privacy_spent_, LabelPrivateBudget)
    assert clf.n_teachers_ == 80
    assert teacher_data == [(100 - clf.n_public_, 2)]
    if seed == 0:
        assert teacher_data[0][0] == 76  # fewer rows than teachers, as the reviewer found


def test_label_private_split_never_fails_on_its_random_part_after_charging(teacher_data):
    # Tiny data and a large public_fraction: over these seeds the rows left to the 3
    # teachers are sometimes none at all, often fewer than the teachers, often of one class.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 2))
    y = np.r_[np.ones(2, dtype=int), np.zeros(10, dtype=int)]
    for seed in range(30):
        clf = ModelAgnosticPrivateClassifier(DecisionTreeClassifier(), n_teachers=3,
                                             public_fraction=0.7, epsilon=50.0,
                                             random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FallbackModelWarning)
            error, acc = _fit_counting(clf, X, y)
        if error is not None:
            # The one failure left after the charge: no label released, no fallback_label.
            assert isinstance(error, RuntimeError), error
            assert "no label was released" in str(error)
            assert re.search(r"\d", str(error)) is None, str(error)  # no data-dependent count
        assert acc.spent.epsilon == pytest.approx(50.0)
    # The loop met the splits it is about.
    assert len(teacher_data) == 30
    assert any(n == 0 for n, _ in teacher_data)
    assert any(0 < n < 3 for n, _ in teacher_data)
    assert any(n >= 3 and k == 1 for n, k in teacher_data)


def test_label_private_split_with_no_teacher_row_uses_the_fallback():
    # Identical rows hash alike, so either every row is a query or none is.
    X = np.zeros((10, 2))
    y = np.r_[np.zeros(5, dtype=int), np.ones(5, dtype=int)]
    all_queries = 0
    for seed in range(12):
        clf = ModelAgnosticPrivateClassifier(DecisionTreeClassifier(), n_teachers=2,
                                             public_fraction=0.5, epsilon=1.0,
                                             fallback_label=1, random_state=seed)
        with pytest.warns(FallbackModelWarning):
            error, acc = _fit_counting(clf, X, y)
        assert error is None, error
        assert acc.spent.epsilon == pytest.approx(1.0)
        assert clf.fallback_ == "constant" and clf.predict(X[:2]).tolist() == [1, 1]
        if clf.n_public_ == 10:
            all_queries += 1
            assert clf.n_answered_ == 0  # no teacher votes: nothing is stable
    assert 0 < all_queries < 12


def test_label_private_split_with_one_teacher_class_releases_it(teacher_data):
    # 3 rows of class 1 among 400: for some seeds all three are queries, the teachers see
    # class 0 only and answer it unanimously (a one-class release, kept as a constant model).
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 2))
    y = (np.arange(400) < 3).astype(int)
    one_class_fits = 0
    for seed in range(20):
        clf = ModelAgnosticPrivateClassifier(DecisionTreeClassifier(), n_teachers=5,
                                             public_fraction=0.5, max_unstable=1,
                                             epsilon=1e3, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FallbackModelWarning)
            error, _ = _fit_counting(clf, X, y)
        assert error is None, error
        if teacher_data[-1][1] == 1:
            one_class_fits += 1
            assert clf.fallback_ == "most_frequent" and clf.classes_.tolist() == [0]
            assert clf.n_answered_ > 0
    assert one_class_fits > 0
