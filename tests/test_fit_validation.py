"""Fit-time validation that must come before the budget is spent, and refits that fail cleanly.

* ``n_jobs`` is checked (``None`` or a nonzero int) before the accountant is
  charged, by every estimator that has it.
* ``ModelAgnosticPrivateClassifier`` without ``X_public`` never fails after the
  charge because of its random keyed-hash split (too few, one-class or no
  teacher rows), and the errors it can still raise after the charge carry
  no data-dependent count.
* A data-size default of ``delta`` that is not in ``(0, 1)`` (one row with
  ``delta = 1 / n^2``) names the default and the row count.
* A failed refit of the private SVMs and of the private GLM classifiers leaves
  the previous model whole (``classes_`` is not replaced before the new
  parameters are validated).
"""

import inspect
import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.tree import DecisionTreeClassifier

import common_instances.convex
import common_instances.svm
from common_instances import amp, ensemble, kernel_methods, model_selection
from skdp import BudgetAccountant
from skdp.ensemble import LabelPrivateBudget, ModelAgnosticPrivateClassifier, _answerer
from skdp.ensemble._teachers import fit_teachers
from skdp.exceptions import FallbackModelWarning
from skdp.linear_model import ObjectivePerturbationClassifier
from skdp.model_selection import PrivateParameterSelector
from skdp.utils import all_estimators
from skdp.utils._validation import check_n_jobs

# Estimators here are fitted without classes= (incidental: the tests are about validation order).
pytestmark = pytest.mark.filterwarnings("ignore:classes=None:skdp.exceptions.PrivacyLeakWarning")

# ---------------------------------------------------------------- check_n_jobs


@pytest.mark.parametrize("value", [None, 1, -1, 2, -2, np.int64(3)])
def test_check_n_jobs_accepts_none_and_nonzero_ints(value):
    out = check_n_jobs(value)
    assert out == value and (out is None or type(out) is int)


@pytest.mark.parametrize("value,error", [
    ("two", TypeError), ("2", TypeError), (1.5, TypeError), (2.0, TypeError),
    (True, TypeError), (np.bool_(True), TypeError), (0, ValueError), (np.int32(0), ValueError),
])
def test_check_n_jobs_refuses_with_the_parameter_name(value, error):
    with pytest.raises(error, match="^n_jobs must be None or a nonzero integer"):
        check_n_jobs(value)
    with pytest.raises(error, match="^workers must be"):
        check_n_jobs(value, "workers")


# ---------------------------------------------------------------- data-size default delta


def test_data_size_default_delta_out_of_range_says_so():
    from skdp.linear_model import DPLogisticRegressionAMP
    X, y = make_classification(n_samples=20, n_features=3, n_informative=2, n_redundant=0,
                               random_state=0)
    accountant = BudgetAccountant(epsilon=10.0, delta=0.5)
    est = DPLogisticRegressionAMP(epsilon=1.0, classes=[0, 1], accountant=accountant)
    with pytest.raises(ValueError, match=r"delta=None .* 1 for n_samples=1, outside \(0, 1\)"):
        est.fit(X[:1], y[:1])
    assert accountant.spent is None
    # An explicit delta is used as given.
    est.set_params(delta=1e-3).fit(X[:2], y[:2])
    assert est.privacy_spent_.delta == 1e-3


def test_delta_of_one_over_n_or_more_warns():
    """delta >= 1 / n allows publishing a random record outright: the user is told."""
    from skdp import WeakPrivacyWarning
    from skdp.linear_model import DPLogisticRegressionAMP
    X, y = make_classification(n_samples=200, n_features=3, n_informative=2, n_redundant=0,
                               random_state=0)
    est = DPLogisticRegressionAMP(epsilon=1.0, classes=[0, 1], random_state=0)
    for delta in (0.1, 1 / 200):
        with pytest.warns(WeakPrivacyWarning, match=r"delta=.* >= 1 / n_samples = 0.005"):
            est.set_params(delta=delta).fit(X, y)
        assert est.privacy_spent_.delta == delta  # a warning, not a change
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeakPrivacyWarning)
        est.set_params(delta=0.99 / 200).fit(X, y)
        est.set_params(delta=None).fit(X[:2], y[:2])  # the default 1 / n^2 is below 1 / n


# ---------------------------------------------------------------- n_jobs before the charge

_INSTANCES = {}
for _module in (amp, common_instances.convex, ensemble, kernel_methods, model_selection,
                common_instances.svm):
    for _est in _module.INSTANCES:
        _INSTANCES.setdefault(type(_est).__name__, _est)
# The selector hands its n_jobs to candidates that have one (its common instance's has none).
_INSTANCES["PrivateParameterSelector"] = PrivateParameterSelector(
    ObjectivePerturbationClassifier(random_state=0), {"epsilon": [5.0, 10.0]}, epsilon=5.0,
    random_state=0)

_WITH_N_JOBS = sorted(name for name, cls in all_estimators()
                      if "n_jobs" in inspect.signature(cls).parameters)


def _data(n_classes):
    X, y = make_classification(300, 4, n_informative=3, n_redundant=0, n_classes=n_classes,
                               random_state=0)
    return X / 10.0, y


def test_every_estimator_with_n_jobs_has_an_instance():
    assert len(_WITH_N_JOBS) >= 12  # the list below is not vacuous
    assert [name for name in _WITH_N_JOBS if name not in _INSTANCES] == []


@pytest.mark.filterwarnings("ignore::skdp.exceptions.FallbackModelWarning")
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", _WITH_N_JOBS)
def test_invalid_n_jobs_is_refused_before_the_budget_is_charged(name, n_classes):
    X, y = _data(n_classes)
    # The same instance with a valid n_jobs reaches the charge (so the checks below bite).
    acc = BudgetAccountant(epsilon=1e5, delta=0.5)
    clone(_INSTANCES[name]).set_params(n_jobs=1, accountant=acc).fit(X, y)
    assert acc.spent is not None
    for bad, error in [("two", TypeError), (1.5, TypeError), (True, TypeError),
                       (0, ValueError)]:
        acc = BudgetAccountant(epsilon=1e5, delta=0.5)
        est = clone(_INSTANCES[name]).set_params(n_jobs=bad, accountant=acc)
        if name == "PrivateParameterSelector":
            error = ValueError  # it wraps a candidate's error, checked before its charge
        with pytest.raises(error, match="n_jobs must be"):
            est.fit(X, y)
        assert acc.spent is None, (name, bad)


# ---------------------------------------------------------------- label-private split


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


# ---------------------------------------------------------------- failed refits


def _refit_keeps_the_model(est, bad_params):
    X, y = _data(2)
    est = clone(est).fit(X, y)
    classes, coef, pred = est.classes_.copy(), est.coef_.copy(), est.predict(X)
    est.set_params(**bad_params)
    with pytest.raises((ValueError, TypeError)):
        est.fit(X, np.array(["no", "yes"])[y])
    assert est.classes_.tolist() == classes.tolist() == [0, 1]
    assert np.array_equal(est.coef_, coef)
    assert np.array_equal(est.predict(X), pred)


_SVMS = [e for e in common_instances.svm.INSTANCES if hasattr(e, "C")]


@pytest.mark.parametrize("est", _SVMS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("bad_params", [dict(C=-1.0), dict(loss="squared"),
                                        dict(mechanism="laplace", delta=1e-5)])
def test_failed_svm_refit_leaves_the_previous_model(est, bad_params):
    _refit_keeps_the_model(est, bad_params)


def test_failed_svm_refit_on_a_feature_parameter_leaves_the_previous_model():
    rff = next(e for e in _SVMS if "n_components" in e.get_params())
    _refit_keeps_the_model(rff, dict(n_components=0))


@pytest.mark.parametrize("est", common_instances.convex.INSTANCES, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("bad_params", [dict(data_norm=-1.0), dict(loss="squared"),
                                        dict(fit_intercept="yes"), dict(epsilon=-1.0)])
def test_failed_glm_refit_leaves_the_previous_model(est, bad_params):
    _refit_keeps_the_model(est, bad_params)


def test_failed_frank_wolfe_refit_on_its_own_parameter_leaves_the_previous_model():
    fw = next(e for e in common_instances.convex.INSTANCES if "l1_radius" in e.get_params())
    _refit_keeps_the_model(fw, dict(l1_radius=-1.0))
