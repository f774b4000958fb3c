"""PrivateParameterSelector over Pipelines: budgets, refused steps, random states, accuracy."""

import copy

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (Binarizer, FunctionTransformer, Normalizer, PolynomialFeatures,
                                   StandardScaler)

from _dummy import NoisyCentroidClassifier
from skdp import BudgetAccountant, PrivacyBudget
from skdp.ensemble import ModelAgnosticPrivateClassifier
from skdp.kernel_approximation import RandomFourierFeatures
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.model_selection import PrivateParameterSelector
from skdp.preprocessing import DPStandardScaler, PublicBoundsScaler

BOUNDS = (-6.0, 6.0)


@pytest.fixture(scope="module")
def data():
    return make_classification(1500, 4, n_informative=3, n_redundant=0, class_sep=2.0,
                               random_state=0)


def _pipe(scaler_eps=0.3, scaler_delta=1e-7, model_eps=0.5, model_delta=1e-6, **model):
    return make_pipeline(DPStandardScaler(scaler_eps, scaler_delta, bounds=BOUNDS),
                         DPLogisticRegressionAMP(model_eps, model_delta, **model))


def _spy_fit(monkeypatch, cls, record):
    """Record ``record(self)`` on every fit of ``cls`` (class-level patch)."""
    seen, original = [], cls.fit

    def fit(self, X, y=None):
        seen.append(record(self))
        return original(self, X, y)

    monkeypatch.setattr(cls, "fit", fit)
    return seen


def test_total_charged_is_the_sum_of_the_private_steps(data):
    X, y = data
    acc = BudgetAccountant(epsilon=5.0, delta=1e-4)
    acc.spend(PrivacyBudget(0.25, 1e-6), by="earlier work")
    grid = {"dpstandardscaler__epsilon": [0.2, 0.4],
            "dplogisticregressionamp__epsilon": [0.5, 1.0]}
    sel = PrivateParameterSelector(_pipe(), grid, epsilon=1.0, classes=[0, 1],
                                   accountant=acc, random_state=0, n_jobs=1).fit(X, y)
    # Candidates cost 0.2 + 0.5, 0.2 + 1.0, 0.4 + 0.5 and 0.4 + 1.0 (each with delta
    # 1e-7 + 1e-6); parallel composition over the parts: max(1.0, 1.4) = 1.4.
    expected = PrivacyBudget(1.4, 1.1e-6)
    assert sel.privacy_spent_.epsilon == pytest.approx(expected.epsilon)
    assert sel.privacy_spent_.delta == pytest.approx(expected.delta)
    assert [s.budget for s in acc.spends[1:]] == [sel.privacy_spent_]  # charged once
    assert acc.spent.epsilon == pytest.approx(0.25 + 1.4)
    assert acc.spent.delta == pytest.approx(1e-6 + 1.1e-6)
    # The released pipeline's private steps spent their own share and get the
    # accountant back, so that a refit by hand is charged.
    scaler, model = sel.best_estimator_.named_steps.values()
    assert scaler.privacy_spent_ == PrivacyBudget(sel.best_params_["dpstandardscaler__epsilon"],
                                                  1e-7)
    assert scaler.accountant is acc and model.accountant is acc
    # The selector's label set and n_jobs reach the private classifier inside.
    np.testing.assert_array_equal(model.classes, [0, 1])
    assert model.n_jobs == 1
    n_spends = len(acc.spends)
    scaler.fit(X)
    assert len(acc.spends) == n_spends + 1


def test_the_steps_accountant_is_charged_when_the_selector_has_none(data):
    X, y = data
    acc = BudgetAccountant(epsilon=5.0, delta=1e-4)
    pipe = make_pipeline(DPStandardScaler(0.3, 1e-7, bounds=BOUNDS, accountant=acc),
                         NoisyCentroidClassifier(0.6, accountant=acc))
    sel = PrivateParameterSelector(pipe, {"noisycentroidclassifier__epsilon": [0.6, 2.0]},
                                   epsilon=0.5, classes=[0, 1], random_state=0).fit(X, y)
    assert [s.budget for s in acc.spends] == [PrivacyBudget(2.3, 1e-7)]
    assert all(step.accountant is acc for step in sel.best_estimator_.named_steps.values())
    # Different accountants on two steps (or on a step and the selector) are refused.
    other = BudgetAccountant(epsilon=5.0)
    pipe.set_params(noisycentroidclassifier__accountant=other)
    with pytest.raises(ValueError, match="different accountants"):
        sel.fit(X, y)
    with pytest.raises(ValueError, match="may not set an accountant"):
        PrivateParameterSelector(pipe, {"dpstandardscaler__accountant": [acc]}, classes=[0, 1],
                                 accountant=acc).fit(X, y)
    assert len(acc.spends) == 1 and other.spent is None


@pytest.mark.parametrize("step, match", [
    (StandardScaler(), r"step 'standardscaler' \(StandardScaler\) is not private"),
    (PCA(2), r"step 'pca' \(PCA\) is not private"),
    (FunctionTransformer(lambda Z: Z - Z.mean(axis=0)), r"'functiontransformer'.*may mix rows"),
    (FunctionTransformer(np.log1p, kw_args={"where": True}), "kw_args"),
    (FunctionTransformer(np.log1p, inverse_func=np.expm1), "check_inverse=False"),
    # A ufunc made by np.frompyfunc runs any Python function (with state, it mixes rows).
    (FunctionTransformer(np.frompyfunc(lambda v: v, 1, 1)), r"'functiontransformer'.*mix rows"),
    # NaN or infinity for some finite inputs: the private step would refuse the transformed
    # rows after the selector has charged its total (an error that depends on the data).
    (FunctionTransformer(np.sqrt), r"sqrt.*NaN or infinity"),
    (FunctionTransformer(np.log1p), r"log1p.*NaN or infinity"),
    (FunctionTransformer(np.exp), r"exp.*NaN or infinity"),
    (NoisyCentroidClassifier(), r"is an skdp private estimator, but before the last step"),
])
def test_a_step_that_is_not_provably_public_is_refused_before_any_spend(data, monkeypatch,
                                                                       step, match):
    X, y = data
    acc = BudgetAccountant(epsilon=5.0, delta=1e-4)
    fits = _spy_fit(monkeypatch, DPLogisticRegressionAMP, lambda est: None)
    pipe = make_pipeline(PublicBoundsScaler(BOUNDS), step,
                         DPLogisticRegressionAMP(1.0, 1e-6))
    sel = PrivateParameterSelector(pipe, {"dplogisticregressionamp__loss": ["logistic", "huber"]},
                                   classes=[0, 1], accountant=acc, random_state=0)
    with pytest.raises((TypeError, ValueError), match=match) as err:
        sel.fit(X, y)
    assert "Nothing was spent" in str(err.value)
    assert acc.spends == [] and fits == []  # not even fitted on public input


def test_a_refused_step_given_by_the_grid_and_a_refused_last_step(data):
    X, y = data
    acc = BudgetAccountant(epsilon=5.0, delta=1e-4)
    grid = {"dpstandardscaler": [DPStandardScaler(0.3, 1e-7, bounds=BOUNDS), StandardScaler()]}
    with pytest.raises(TypeError, match="StandardScaler"):
        PrivateParameterSelector(_pipe(), grid, classes=[0, 1], accountant=acc).fit(X, y)
    for pipe in (make_pipeline(PublicBoundsScaler(BOUNDS), LogisticRegression()),
                 make_pipeline(PublicBoundsScaler(BOUNDS), DPStandardScaler(bounds=BOUNDS))):
        with pytest.raises(TypeError, match="last step .* must be an skdp private classifier"):
            PrivateParameterSelector(pipe, {"memory": [None]}, classes=[0, 1],
                                     accountant=acc).fit(X, y)

    class MyPipeline(Pipeline):
        pass

    with pytest.raises(TypeError, match="subclass of Pipeline"):
        PrivateParameterSelector(MyPipeline(_pipe().steps), {"memory": [None]}, classes=[0, 1],
                                 accountant=acc).fit(X, y)
    assert acc.spends == []


@pytest.mark.parametrize("public", [
    "passthrough",
    PublicBoundsScaler(BOUNDS),
    FunctionTransformer(np.tanh),
    FunctionTransformer(),
    Normalizer(),
    Binarizer(threshold=0.5),
    PolynomialFeatures(2),
    RandomFourierFeatures(gamma=0.1, n_components=20),
])
def test_provably_public_steps_cost_nothing(data, public):
    X, y = data
    acc = BudgetAccountant(epsilon=5.0)
    pipe = make_pipeline(public, NoisyCentroidClassifier(1.0))
    sel = PrivateParameterSelector(pipe, {"noisycentroidclassifier__epsilon": [1.0, 2.0]},
                                   epsilon=0.5, classes=[0, 1], accountant=acc,
                                   random_state=0).fit(X, y)
    assert acc.spent == PrivacyBudget(2.0, 0.0) == sel.privacy_spent_
    assert sel.predict(X[:4]).shape == (4,)


def test_every_step_of_every_candidate_gets_its_own_generator(data, monkeypatch):
    X, y = data

    def first_draw(est):  # a copy, so the fit's own stream is untouched
        return est.random_state, int(copy.deepcopy(est.random_state).integers(2**62))

    draws = [_spy_fit(monkeypatch, cls, first_draw)
             for cls in (RandomFourierFeatures, DPStandardScaler, NoisyCentroidClassifier)]
    # The user's seeds (the same 0 everywhere) are replaced.
    pipe = make_pipeline(DPStandardScaler(0.3, 1e-7, bounds=BOUNDS, random_state=0),
                         RandomFourierFeatures(gamma=0.1, n_components=10, random_state=0),
                         NoisyCentroidClassifier(1.0, random_state=0))
    grid = {"noisycentroidclassifier__epsilon": [1.0, 2.0, 3.0]}
    PrivateParameterSelector(pipe, grid, classes=[0, 1], random_state=0).fit(X, y)
    # 3 candidates: checked on public input, fitted; and each RandomFourierFeatures once more,
    # a copy of the candidate's (its generator copied) for the bound of its output.
    assert [len(d) for d in draws] == [9, 6, 6]
    generators = [g for d in draws for g, _ in d]
    assert len({id(g) for g in generators}) == len(generators)  # all alive: ids are distinct
    first = [v for d in draws for _, v in d]
    assert len(set(first)) == len(first) - 3  # a copy draws the frequencies the candidate draws
    assert len(set(v for _, v in draws[0])) == 6


def test_the_selected_pipeline_predicts_close_to_a_non_private_baseline():
    X, y = make_classification(4000, 4, n_informative=3, n_redundant=0, class_sep=1.5,
                               random_state=1)
    X = X * [1.0, 30.0, 0.05, 5.0] + [0.0, 100.0, 0.0, -10.0]  # scales that need scaling
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=1000, random_state=0)
    bounds = [(-6.0, 6.0), (-80.0, 280.0), (-0.3, 0.3), (-40.0, 20.0)]
    pipe = make_pipeline(DPStandardScaler(20.0, 1e-6, bounds=bounds),
                         DPLogisticRegressionAMP(20.0, 1e-6))
    grid = {"dplogisticregressionamp__loss": ["logistic", "huber"]}
    sel = PrivateParameterSelector(pipe, grid, epsilon=20.0, classes=[0, 1],
                                   random_state=0).fit(X_train, y_train)
    baseline = make_pipeline(StandardScaler(), LogisticRegression()).fit(X_train, y_train)
    # Sanity of the setting: without scaling the private model is much worse.
    raw = PrivateParameterSelector(DPLogisticRegressionAMP(20.0, 1e-6), {"loss": ["logistic"]},
                                   epsilon=20.0, classes=[0, 1], random_state=0)
    assert raw.fit(X_train, y_train).score(X_test, y_test) < baseline.score(X_test, y_test) - 0.1
    assert sel.score(X_test, y_test) >= baseline.score(X_test, y_test) - 0.04
    # step__param names reach the released pipeline.
    key = "dplogisticregressionamp__loss"
    assert sel.best_params_[key] == sel.best_estimator_.get_params()[key]
    assert sel.decision_function(X_test[:3]).shape == (3,)


def test_delta_none_in_a_step_under_an_accountant_is_refused(data):
    X, y = data
    acc = BudgetAccountant(epsilon=5.0, delta=1e-3)
    grid = {"dplogisticregressionamp__epsilon": [0.5, 1.0]}
    sel = PrivateParameterSelector(_pipe(scaler_delta=None), grid, classes=[0, 1],
                                   accountant=acc, random_state=0)
    message = (r"delta=None in step 'dpstandardscaler'.*DPStandardScaler\(delta=1e-06\).*"
               r"'dpstandardscaler__delta': \[1e-06\].*Nothing was spent")
    with pytest.raises(ValueError, match=message):
        sel.fit(X, y)
    assert acc.spends == []
    # Setting it in the grid works; without an accountant the default is allowed and
    # the data-size delta 1 / n_part^2 enters privacy_spent_.
    sel.set_params(param_grid=dict(grid, dpstandardscaler__delta=[1e-7])).fit(X, y)
    assert acc.spent.delta == pytest.approx(1.1e-6)
    sel.set_params(accountant=None, param_grid=grid).fit(X, y)
    n_part = len(X) // 3 + 2  # its part plus one public row per class
    assert sel.privacy_spent_.delta == pytest.approx(1e-6 + 1.0 / n_part**2)


def test_invalid_step_parameters_fail_on_public_input_before_spending(data, monkeypatch):
    X, y = data
    acc = BudgetAccountant(epsilon=5.0, delta=1e-4)
    grid = {"dpstandardscaler__bounds": [BOUNDS, None]}
    with pytest.raises(ValueError, match="cannot be fitted.*bounds.*nothing was spent"):
        PrivateParameterSelector(_pipe(), grid, classes=[0, 1], accountant=acc,
                                 random_state=0).fit(X, y)
    assert acc.spends == []
    # A step given by the grid is cloned for each candidate: the grid's object stays unfitted.
    scaler = DPStandardScaler(0.3, 1e-7, bounds=BOUNDS)
    grid = {"dpstandardscaler": [scaler], "dplogisticregressionamp__loss": ["logistic", "huber"]}
    sel = PrivateParameterSelector(_pipe(), grid, classes=[0, 1], accountant=acc,
                                   random_state=0).fit(X, y)
    assert not hasattr(scaler, "mean_") and sel.best_estimator_[0] is not scaler


def test_a_candidate_private_only_for_add_remove_neighbours_is_refused(data):
    # The selector's analysis (seed 002, Alg. 3) needs replace-one DP candidates with features
    # and labels protected. ModelAgnosticPrivateClassifier is DP for add/remove neighbours
    # (twice the epsilon for replace-one) and, fitted on a part without X_public, protects the
    # labels only: the selector would over-claim for it, alone or as a pipeline's last step.
    X, y = data
    acc = BudgetAccountant(epsilon=50.0, delta=1e-2)
    mapc = ModelAgnosticPrivateClassifier(LogisticRegression(), epsilon=10.0, delta=1e-5,
                                          fallback_label=0)
    for est, name in ((mapc, "estimator"),
                      (make_pipeline(PublicBoundsScaler(BOUNDS), mapc), "modelagnostic")):
        sel = PrivateParameterSelector(est, {"epsilon" if name == "estimator" else
                                             "modelagnosticprivateclassifier__epsilon": [5.0]},
                                       classes=[0, 1], accountant=acc, random_state=0)
        with pytest.raises(TypeError, match="add/remove neighbours") as err:
            sel.fit(X, y)
        assert "Nothing was spent" in str(err.value)
    assert acc.spends == []


def test_a_candidate_that_spends_more_than_its_parameters_say_is_refused(data):
    # A PrivateParameterSelector is itself a private classifier with an 'epsilon', but it spends
    # max(epsilon, its candidates' epsilons): counted by its 'epsilon' alone, an outer selector
    # charged 0.6 while the inner one spent 4.0. Checked on public input, before any spend.
    X, y = data
    acc = BudgetAccountant(epsilon=100.0)
    inner = PrivateParameterSelector(NoisyCentroidClassifier(1.0), {"epsilon": [1.0, 4.0]},
                                     epsilon=0.5, classes=[0, 1])
    for est, key in ((inner, "epsilon"),
                     (make_pipeline(PublicBoundsScaler(BOUNDS), inner),
                      "privateparameterselector__epsilon")):
        sel = PrivateParameterSelector(est, {key: [0.5, 0.6]}, epsilon=0.5, classes=[0, 1],
                                       accountant=acc, random_state=0)
        with pytest.raises(ValueError, match=r"spent epsilon=4.0.*Nothing was spent"):
            sel.fit(X, y)
    assert acc.spends == []
    # An inner selector that spends exactly its epsilon is counted right and accepted.
    inner.set_params(epsilon=5.0)
    sel = PrivateParameterSelector(inner, {"epsilon": [5.0]}, epsilon=0.5, classes=[0, 1],
                                   accountant=acc, random_state=0).fit(X, y)
    assert acc.spent == PrivacyBudget(5.0, 0.0) == sel.best_estimator_.privacy_spent_
