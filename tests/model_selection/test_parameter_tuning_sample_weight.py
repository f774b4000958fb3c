"""Row weights in PrivateParameterSelector: each candidate gets its part's weights, and the
holdout counts are weighted (a weight in [0, 1] keeps the counts' sensitivity at 1)."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.pipeline import make_pipeline

import skdp.model_selection._parameter_tuning as tuning
from _dummy import NoisyCentroidClassifier
from skdp import BudgetAccountant
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.model_selection import PrivateParameterSelector
from skdp.preprocessing import DPStandardScaler, PublicBoundsScaler

BOUNDS = (-6.0, 6.0)
GRID = {"dplogisticregressionamp__loss": ["logistic", "huber"]}


@pytest.fixture(scope="module")
def data():
    return make_classification(1500, 4, n_informative=3, n_redundant=0, class_sep=2.0,
                               random_state=0)


def _pipe():
    return make_pipeline(DPStandardScaler(0.3, 1e-7, bounds=BOUNDS),
                         DPLogisticRegressionAMP(0.5, 1e-6))


def _spy(monkeypatch, cls):
    """Record the sample_weight every fit of ``cls`` receives."""
    seen, original = [], cls.fit

    def fit(self, X, y, sample_weight=None):
        seen.append((len(y), None if sample_weight is None else np.array(sample_weight)))
        return original(self, X, y, sample_weight=sample_weight)

    monkeypatch.setattr(cls, "fit", fit)
    return seen


def _utilities(monkeypatch):
    """Record the utilities the selector gives the exponential mechanism."""
    seen, original = [], tuning.exponential_mechanism

    def mechanism(utilities, **kwargs):
        seen.append(np.array(utilities))
        return original(utilities, **kwargs)

    monkeypatch.setattr(tuning, "exponential_mechanism", mechanism)
    return seen


def test_candidates_get_their_parts_weights_and_the_counts_are_weighted(data, monkeypatch):
    X, y = data
    w = np.random.default_rng(0).uniform(0.0, 1.0, size=len(y))
    fits = _spy(monkeypatch, DPLogisticRegressionAMP)
    utilities = _utilities(monkeypatch)
    sel = PrivateParameterSelector(_pipe(), GRID, classes=[0, 1], random_state=0)
    sel.fit(X, y, sample_weight=w)
    # The dry runs on public input get a public constant; then each candidate's real fit gets
    # its part's weights, followed by weight 1 for the public all-zero rows.
    real = [(n, sw) for n, sw in fits if not np.all(sw == 0.5)]
    assert len(real) == 2
    rng = np.random.default_rng(0)
    parts = np.array_split(rng.permutation(len(y)), 3)
    for (n, sw), part in zip(real, parts):
        assert n == len(part) + 2
        assert np.array_equal(sw, np.concatenate([w[part], [1.0, 1.0]]))
    holdout = parts[-1]
    expected = [np.sum(w[holdout] * (m.predict(X[holdout]) == y[holdout]))
                for m in (sel.best_estimator_,)]
    assert utilities[0][sel.best_index_] == pytest.approx(expected[0], rel=1e-12)
    assert utilities[0][sel.best_index_] < np.sum(sel.best_estimator_.predict(X[holdout])
                                                   == y[holdout])


def test_unit_weights_give_the_unweighted_selection(data):
    X, y = data
    plain = PrivateParameterSelector(_pipe(), GRID, classes=[0, 1], random_state=3).fit(X, y)
    unit = PrivateParameterSelector(_pipe(), GRID, classes=[0, 1], random_state=3).fit(
        X, y, sample_weight=np.ones(len(y)))
    assert plain.best_index_ == unit.best_index_
    assert np.array_equal(plain.best_estimator_[-1].coef_, unit.best_estimator_[-1].coef_)


def test_weights_above_one_are_clipped_for_the_counts(data, monkeypatch):
    # A holdout weight of 1000 would give one record a count sensitivity of 1000.
    X, y = data
    utilities = _utilities(monkeypatch)
    w = np.full(len(y), 1000.0)
    sel = PrivateParameterSelector(DPLogisticRegressionAMP(1.0, 1e-6), {"loss": ["logistic"]},
                                   classes=[0, 1], random_state=1).fit(X, y, sample_weight=w)
    holdout = np.array_split(np.random.default_rng(1).permutation(len(y)), 2)[-1]
    assert utilities[0][0] <= len(holdout)
    assert utilities[0][0] == np.sum(sel.best_estimator_.predict(X[holdout]) == y[holdout])


def test_bad_weights_and_unweighted_candidates_are_refused_before_any_spend(data):
    X, y = data
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    for w, match in [(-np.ones(len(y)), "non-negative"), (np.ones(len(y) - 1), "shape")]:
        with pytest.raises(ValueError, match=match):
            PrivateParameterSelector(_pipe(), GRID, classes=[0, 1], accountant=acc).fit(
                X, y, sample_weight=w)
    # NoisyCentroidClassifier's fit takes no sample_weight.
    # Refused whatever the (protected) weights are, unit weights included: whether they are
    # all 1 must not decide whether fit raises.
    for est, grid in [(NoisyCentroidClassifier(), {"epsilon": [1.0]}),
                      (make_pipeline(PublicBoundsScaler(BOUNDS), NoisyCentroidClassifier()),
                       {"noisycentroidclassifier__epsilon": [1.0]})]:
        for w in (np.full(len(y), 0.5), np.ones(len(y)), 1.0):
            with pytest.raises(TypeError, match="NoisyCentroidClassifier.*sample_weight"):
                PrivateParameterSelector(est, grid, classes=[0, 1], accountant=acc).fit(
                    X, y, sample_weight=w)
    assert acc.spends == []


def test_one_records_weight_changes_how_one_candidate_is_fitted_only(data, monkeypatch):
    # Unit weights everywhere but one holdout or training row: the other candidates must be
    # fitted exactly as with no weights (a global "all ones" switch would change them all).
    X, y = data
    grid = {"loss": ["logistic", "huber"], "epsilon": [1.0, 2.0]}  # 4 candidates, 5 parts
    fits = _spy(monkeypatch, DPLogisticRegressionAMP)
    parts = np.array_split(np.random.default_rng(0).permutation(len(y)), 5)
    w = np.ones(len(y))
    w[parts[1][0]] = 0.25
    PrivateParameterSelector(DPLogisticRegressionAMP(1.0, 1e-6), grid, classes=[0, 1],
                             random_state=0).fit(X, y, sample_weight=w)
    real = [sw for n, sw in fits if sw is None or not np.all(sw == 0.5)]
    assert len(real) == 4
    assert [sw is None for sw in real] == [True, False, True, True]
