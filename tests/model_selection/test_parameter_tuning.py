import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from _dummy import NoisyCentroidClassifier
from skdp import BudgetAccountant, BudgetExceededError, PrivacyBudget, PrivacyLeakWarning
from skdp.linear_model import DPLogisticRegressionAMP, ObjectivePerturbationClassifier
from skdp.model_selection import PrivateParameterSelector

# Most selectors here read the label set from y (incidental); the warning itself is asserted
# in test_the_label_set_is_resolved_once_and_given_to_the_candidates (pytest.warns records it
# regardless of this filter).
pytestmark = pytest.mark.filterwarnings("ignore:classes=None:skdp.exceptions.PrivacyLeakWarning")


@pytest.fixture(scope="module")
def data():
    return make_classification(3000, 5, n_informative=3, class_sep=2.0, random_state=0)


def test_selects_the_clearly_better_candidate(data):
    X, y = data
    # epsilon = 1e-4 drowns the centroids in noise; epsilon = 50 barely perturbs them.
    picks = [
        PrivateParameterSelector(NoisyCentroidClassifier(), {"epsilon": [1e-4, 50.0]},
                                 epsilon=1.0, random_state=seed).fit(X, y).best_params_["epsilon"]
        for seed in range(10)
    ]
    assert picks.count(50.0) >= 9


def test_budget_is_the_max_and_charged_once(data):
    X, y = data
    acc = BudgetAccountant(epsilon=3.0)
    inner = NoisyCentroidClassifier(accountant=acc)
    sel = PrivateParameterSelector(inner, {"epsilon": [0.5, 2.0]}, epsilon=1.0, accountant=acc,
                                   random_state=0).fit(X, y)
    assert sel.privacy_spent_ == PrivacyBudget(2.0, 0.0)
    assert [s.budget for s in acc.spends] == [PrivacyBudget(2.0, 0.0)]
    with pytest.raises(BudgetExceededError):
        sel.fit(X, y)  # 2.0 + 2.0 > 3.0, refused before any fit
    assert len(acc.spends) == 1
    # The released model gets the accountant back (its fit inside the
    # selection charged nothing), so refitting it by hand is charged.
    assert sel.best_estimator_.accountant is acc
    acc_small = BudgetAccountant(epsilon=3.0)
    sel = PrivateParameterSelector(NoisyCentroidClassifier(), {"epsilon": [0.5, 2.0]},
                                   epsilon=1.0, accountant=acc_small, random_state=0).fit(X, y)
    sel.best_estimator_.fit(X, y)
    assert [s.budget.epsilon for s in acc_small.spends] == [
        2.0, sel.best_params_["epsilon"]]


def test_candidates_train_on_disjoint_parts(data):
    X, y = data
    sel = PrivateParameterSelector(NoisyCentroidClassifier(), {"epsilon": [1.0, 2.0, 3.0]},
                                   random_state=0).fit(X, y)
    assert len(sel.candidate_params_) == 3
    assert sel.predict(X[:5]).shape == (5,)
    assert not hasattr(sel, "predict_proba")  # the inner model has none


def test_bad_input(data):
    X, y = data
    with pytest.raises(TypeError, match="epsilon"):
        PrivateParameterSelector(LogisticRegression(), {"C": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="disjoint parts"):
        PrivateParameterSelector(NoisyCentroidClassifier(), {"epsilon": [1.0, 2.0]}).fit(X[:5], y[:5])
    with pytest.raises(ValueError, match="epsilon"):
        PrivateParameterSelector(NoisyCentroidClassifier(), {"epsilon": [1.0]}, epsilon=0).fit(X, y)


# --- accounting, validation before charging, classes, feature names -----------------

@pytest.fixture(scope="module")
def small():
    return make_classification(400, 4, random_state=0)


class _RecordingCentroid(NoisyCentroidClassifier):
    """Remembers every training set it is fitted on (class-level log)."""

    log = []

    def fit(self, X, y):
        type(self).log.append((np.asarray(X).copy(), np.asarray(y).copy()))
        return super().fit(X, y)


class _ForgetsLastClass(NoisyCentroidClassifier):
    """Drops the largest label before training (so its classes_ miss one class)."""

    def fit(self, X, y):
        keep = y != np.max(y)
        return super().fit(X[keep], y[keep])

    def decision_function(self, X):
        return -((X[:, None, :] - self.centroids_[None]) ** 2).sum(axis=2)

    def predict_proba(self, X):
        s = self.decision_function(X)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))


def _count_fits(monkeypatch, cls):
    calls = []
    original = cls.fit

    def fit(self, X, y):
        calls.append(len(y))
        return original(self, X, y)

    monkeypatch.setattr(cls, "fit", fit)
    return calls


def test_charges_the_estimators_accountant_when_the_selector_has_none(small, monkeypatch):
    X, y = small
    acc = BudgetAccountant(epsilon=3.0)
    sel = PrivateParameterSelector(ObjectivePerturbationClassifier(epsilon=2.0, accountant=acc),
                                   {"alpha": [0.01, 0.1]}, epsilon=1.0, random_state=0).fit(X, y)
    assert sel.privacy_spent_ == PrivacyBudget(2.0, 0.0)
    assert acc.spent == PrivacyBudget(2.0, 0.0)
    calls = _count_fits(monkeypatch, ObjectivePerturbationClassifier)
    with pytest.raises(BudgetExceededError):
        sel.fit(X, y)  # 2.0 + 2.0 > 3.0
    assert calls == []  # refused before any candidate is fitted, even on public input
    assert acc.spent == PrivacyBudget(2.0, 0.0)


def test_two_different_accountants_are_refused_before_spending(small):
    X, y = small
    inner_acc, outer_acc = BudgetAccountant(epsilon=10.0), BudgetAccountant(epsilon=10.0)
    sel = PrivateParameterSelector(NoisyCentroidClassifier(accountant=inner_acc),
                                   {"epsilon": [1.0, 2.0]}, accountant=outer_acc)
    with pytest.raises(ValueError, match="accountant"):
        sel.fit(X, y)
    assert inner_acc.spent is None and outer_acc.spent is None
    with pytest.raises(ValueError, match="accountant"):
        PrivateParameterSelector(NoisyCentroidClassifier(), {"accountant": [inner_acc]},
                                 accountant=outer_acc).fit(X, y)
    assert outer_acc.spent is None


def test_invalid_candidate_fails_before_anything_is_spent(small, monkeypatch):
    X, y = small
    acc = BudgetAccountant(epsilon=10.0)
    sel = PrivateParameterSelector(ObjectivePerturbationClassifier(), {"alpha": [0.01, -1.0]},
                                   epsilon=1.0, accountant=acc, random_state=0)
    with pytest.raises(ValueError, match="alpha"):
        sel.fit(X, y)
    assert acc.spent is None
    with pytest.raises(ValueError):
        PrivateParameterSelector(ObjectivePerturbationClassifier(), {"no_such_param": [1]},
                                 accountant=acc).fit(X, y)
    assert acc.spent is None


@pytest.mark.parametrize("seed", range(3))
def test_a_part_with_one_class_still_trains(small, seed):
    X, _ = small
    y = np.zeros(len(X), dtype=int)
    y[:3] = 1  # rare class: most parts see only class 0
    acc = BudgetAccountant(epsilon=10.0)
    sel = PrivateParameterSelector(ObjectivePerturbationClassifier(), {"alpha": [0.01, 0.1, 1.0]},
                                   epsilon=1.0, accountant=acc, random_state=seed).fit(X, y)
    assert acc.spent == PrivacyBudget(1.0, 0.0)
    np.testing.assert_array_equal(sel.best_estimator_.classes_, [0, 1])
    assert sel.predict_proba(X[:4]).shape == (4, 2)


def test_each_candidate_trains_on_its_part_plus_public_rows_only(small):
    X, y = small
    _RecordingCentroid.log = []
    PrivateParameterSelector(_RecordingCentroid(), {"epsilon": [1.0, 2.0, 3.0]},
                             random_state=0).fit(X, y)
    real = [(Xf, yf) for Xf, yf in _RecordingCentroid.log if np.any(Xf)]
    assert len(real) == 3
    seen = []
    for Xf, yf in real:
        # The last rows are data-independent: one all-zero row per class of classes_.
        np.testing.assert_array_equal(Xf[-2:], 0.0)
        np.testing.assert_array_equal(yf[-2:], [0, 1])
        rows = [int(np.flatnonzero((X == r).all(axis=1))[0]) for r in Xf[:-2]]
        assert len(rows) == len(X) // 4
        seen.extend(rows)
    assert len(set(seen)) == len(seen)  # the parts are disjoint


def test_probability_columns_follow_classes(small):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)) / 3
    y = np.zeros(300, dtype=int)
    y[:150], y[150:152] = 1, 2  # only 2 rows of class 2
    for seed in range(4):
        sel = PrivateParameterSelector(ObjectivePerturbationClassifier(), {"alpha": [0.01, 0.1]},
                                       random_state=seed).fit(X, y)
        np.testing.assert_array_equal(sel.classes_, [0, 1, 2])
        proba = sel.predict_proba(X[:5])
        assert proba.shape == (5, 3)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert sel.decision_function(X[:5]).shape == (5, 3)
        assert sel.predict_log_proba(X[:5]).shape == (5, 3)


def test_columns_of_classes_the_model_never_saw(data):
    X, y = data
    y = y + (np.arange(len(y)) % 10 == 0)  # labels 0, 1, 2
    sel = PrivateParameterSelector(_ForgetsLastClass(), {"epsilon": [5.0, 10.0]},
                                   random_state=0).fit(X, y)
    np.testing.assert_array_equal(sel.classes_, [0, 1, 2])
    np.testing.assert_array_equal(sel.best_estimator_.classes_, [0, 1])
    inner = sel.best_estimator_.predict_proba(X[:5])
    proba = sel.predict_proba(X[:5])
    np.testing.assert_allclose(proba[:, :2], inner)
    np.testing.assert_array_equal(proba[:, 2], 0.0)
    log_proba = sel.predict_log_proba(X[:5])
    np.testing.assert_allclose(log_proba[:, :2], np.log(inner))
    assert np.all(log_proba[:, 2] == -np.inf)
    scores = sel.decision_function(X[:5])
    assert np.all(np.isfinite(scores))
    assert np.all(scores[:, 2] < scores[:, :2].min(axis=1))
    np.testing.assert_array_equal(sel.classes_[scores.argmax(axis=1)], sel.predict(X[:5]))


def test_dataframe_input_keeps_feature_names(small):
    X, y = small
    df = pd.DataFrame(X, columns=list("abcd"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sel = PrivateParameterSelector(ObjectivePerturbationClassifier(), {"alpha": [0.01, 0.1]},
                                       classes=np.unique(y), random_state=0).fit(df, y)
        pred = sel.predict(df[:5])
        sel.predict_proba(df[:5])
        sel.decision_function(df[:5])
    np.testing.assert_array_equal(sel.feature_names_in_, list("abcd"))
    np.testing.assert_array_equal(pred, sel.best_estimator_.predict(X[:5]))
    with pytest.warns(UserWarning, match="feature names"):
        sel.predict(X[:5])  # fitted with names, called without: scikit-learn's usual warning


def test_the_label_set_is_resolved_once_and_given_to_the_candidates(small):
    X, y = small
    labels = list(np.unique(y)) + [99]  # a public label no row has
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        sel = PrivateParameterSelector(ObjectivePerturbationClassifier(), {"alpha": [0.01, 0.1]},
                                       classes=labels, random_state=0).fit(X, y)
    np.testing.assert_array_equal(sel.classes_, sorted(labels))
    np.testing.assert_array_equal(sel.best_estimator_.classes, sel.classes_)
    assert sel.predict_proba(X[:3]).shape == (3, len(labels))
    with pytest.warns(PrivacyLeakWarning, match="classes=None in PrivateParameterSelector") as rec:
        PrivateParameterSelector(ObjectivePerturbationClassifier(), {"alpha": [0.01, 0.1]},
                                 random_state=0).fit(X, y)
    assert len([w for w in rec if issubclass(w.category, PrivacyLeakWarning)]) == 1


def test_delta_none_with_an_accountant_says_what_to_set(data):
    X, y = data
    acc = BudgetAccountant(epsilon=5.0, delta=1e-3)
    grid = {"epsilon": [0.5, 1.0]}
    sel = PrivateParameterSelector(DPLogisticRegressionAMP(), grid, classes=[0, 1],
                                   accountant=acc, random_state=0)
    with pytest.raises(ValueError, match=r"estimator=DPLogisticRegressionAMP\(delta=1e-06\)"
                                         r".*'delta': \[1e-06\].*Nothing was spent"):
        sel.fit(X, y)
    # A grid that sets delta=None on one candidate names that candidate.
    sel.set_params(param_grid=[{"epsilon": [0.5]}, {"epsilon": [1.0], "delta": [None]}],
                   estimator=DPLogisticRegressionAMP(delta=1e-6))
    with pytest.raises(ValueError, match=r"\{'delta': None, 'epsilon': 1.0\}"):
        sel.fit(X, y)
    assert acc.spends == []
    # Either advice works.
    sel.set_params(param_grid=grid).fit(X, y)
    sel.set_params(estimator=DPLogisticRegressionAMP(), param_grid=dict(grid, delta=[1e-6]))
    sel.fit(X, y)
    assert [s.budget for s in acc.spends] == [PrivacyBudget(1.0, 1e-6)] * 2


@pytest.mark.parametrize("epsilon", [1e-310, 1e308])
def test_selection_noise_out_of_float_range_is_refused_before_the_charge(small, epsilon):
    # The exponential mechanism refuses a Gumbel scale 2 / epsilon that is subnormal or
    # infinite; the selector used to spend, fit every candidate, then raise (review s19).
    X, y = small
    acc = BudgetAccountant(epsilon=1e308, delta=1e-3)
    sel = PrivateParameterSelector(NoisyCentroidClassifier(), {"epsilon": [1.0, 2.0]},
                                   epsilon=epsilon, classes=[0, 1], accountant=acc,
                                   random_state=0)
    with pytest.raises(ValueError, match="noise scale"):
        sel.fit(X, y)
    assert acc.spent is None


# PrivateParameterSelector: predicting on the holdout after the charge
# prints nothing that depends on the holdout rows (numerical warnings of a
# candidate's predict were shown or not depending on the data).
def _selector_warnings(X, y):
    selector = PrivateParameterSelector(NoisyCentroidClassifier(), {"epsilon": [0.5, 1.0]},
                                        epsilon=1.0, classes=[0, 1], random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        selector.fit(X, y)
    return [(w.category, str(w.message)) for w in caught]


def test_selector_holdout_evaluation_prints_nothing_data_dependent():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] > 0).astype(int)
    X_large = X.copy()
    X_large[::7] *= 1e200  # the centroid distances overflow in the candidates' predict
    assert _selector_warnings(X_large, y) == _selector_warnings(X, y) == []
