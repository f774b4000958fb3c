"""PrivateParameterSelector over tabular pipelines: ColumnTransformer, FeatureUnion, nested
Pipelines and encoders with public categories."""

import copy
import warnings

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (Normalizer, OneHotEncoder, OrdinalEncoder, PolynomialFeatures,
                                   StandardScaler)

from skdp import BudgetAccountant, PrivacyBudget
from skdp.kernel_approximation import RandomFourierFeatures
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.model_selection import PrivateParameterSelector
from skdp.model_selection._parameter_tuning import _seed
from skdp.model_selection._steps import candidate_steps, seeded_steps
from skdp.preprocessing import DPStandardScaler, PublicBoundsScaler

BOUNDS = (-4.0, 4.0)
CATS = [0.0, 1.0, 2.0]


def _tabular(n, seed=0):
    """Two numeric columns and one categorical column (codes 0, 1, 2); the label needs both."""
    rng = np.random.default_rng(seed)
    num = rng.normal(size=(n, 2))
    cat = rng.integers(0, 3, n)
    y = (num[:, 0] + 2.0 * (cat == 2) - 2.0 * (cat == 0) + 0.3 * rng.normal(size=n) > 0)
    return num, cat, y.astype(int)


@pytest.fixture(scope="module")
def arrays():
    num, cat, y = _tabular(1800)
    return np.column_stack([num, cat]).astype(float), y


def _encoder(**kw):
    return OneHotEncoder(**{"categories": [CATS], "handle_unknown": "ignore", **kw})


def _pipe(num=None, cat=None, *, ct=None, model_eps=1.0, model_delta=1e-6, num_cols=(0, 1),
          cat_cols=(2,)):
    ct = ct or {}
    prep = ColumnTransformer(
        [("num", DPStandardScaler(0.3, 1e-6, bounds=BOUNDS) if num is None else num,
          list(num_cols)),
         ("cat", _encoder() if cat is None else cat, list(cat_cols))],
        **{"sparse_threshold": 0, **ct})
    return Pipeline([("prep", prep), ("clf", DPLogisticRegressionAMP(model_eps, model_delta))])


def test_tabular_pipeline_selects_spends_the_sum_of_its_private_parts_and_predicts(arrays):
    X, y = arrays
    acc = BudgetAccountant(epsilon=10.0, delta=1e-4)
    grid = {"prep__num__epsilon": [0.2, 0.4], "clf__epsilon": [1.0, 1.5]}
    sel = PrivateParameterSelector(_pipe(), grid, epsilon=0.5, classes=[0, 1], accountant=acc,
                                   random_state=0).fit(X, y)
    # Largest candidate: 0.4 (scaler in the ColumnTransformer) + 1.5 (classifier); deltas
    # 1e-6 + 1e-6. Parallel composition over the parts: the max, charged once.
    assert [(s.by, s.budget) for s in acc.spends] == [("PrivateParameterSelector",
                                                       PrivacyBudget(1.9, 2e-6))]
    assert sel.privacy_spent_ == PrivacyBudget(1.9, 2e-6)
    assert set(sel.best_params_) == {"prep__num__epsilon", "clf__epsilon"}
    # Each candidate saw a fifth of the rows (360); a non-private model on all rows with the
    # same pipeline shape reaches 0.97, one blind to the categorical column 0.67 (so the
    # encoded column is used: the selected models reach 0.89-0.94 over seeds 0-3).
    X_test, y_test = arrays[0][:600], arrays[1][:600]
    baseline = Pipeline([("prep", ColumnTransformer(
        [("num", StandardScaler(), [0, 1]), ("cat", _encoder(), [2])], sparse_threshold=0)),
        ("clf", LogisticRegression())]).fit(X, y).score(X_test, y_test)
    assert sel.score(X_test, y_test) > baseline - 0.12
    assert sel.score(X_test, y_test) > 0.8
    # The released model's fitted parts report their spends (the ColumnTransformer fitted a
    # clone of the scaler) and carry the accountant, fitted and unfitted (a refit clones it).
    ct = sel.best_estimator_.named_steps["prep"]
    scaler = ct.named_transformers_["num"]
    assert scaler is not ct.transformers[0][1]
    assert scaler.privacy_spent_ == PrivacyBudget(sel.best_params_["prep__num__epsilon"], 1e-6)
    assert scaler.accountant is acc and ct.transformers[0][1].accountant is acc
    assert sel.best_estimator_.named_steps["clf"].accountant is acc


def test_dataframe_with_named_and_string_categorical_columns():
    pd = pytest.importorskip("pandas")
    num, cat, y = _tabular(1500, seed=1)
    names = np.array(["red", "green", "blue"])
    df = pd.DataFrame({"a": num[:, 0], "b": num[:, 1], "colour": names[cat]})
    df.loc[::97, "colour"] = "purple"  # a category outside the public list: silently all-zero
    prep = ColumnTransformer(
        [("num", PublicBoundsScaler(BOUNDS), make_column_selector(dtype_include="number")),
         ("cat", OneHotEncoder(categories=[list(names)], handle_unknown="ignore"), ["colour"])],
        sparse_threshold=0)
    pipe = Pipeline([("prep", prep), ("clf", DPLogisticRegressionAMP(1.0, 1e-6))])
    acc = BudgetAccountant(epsilon=10.0, delta=1e-4)
    sel = PrivateParameterSelector(pipe, {"clf__epsilon": [0.5, 1.0]}, epsilon=0.5,
                                   classes=[0, 1], accountant=acc, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning that depends on the rows
        sel.fit(df, y)
        accuracy = sel.score(df, y)
    assert acc.spent == PrivacyBudget(1.0, 1e-6) == sel.privacy_spent_
    assert list(sel.feature_names_in_) == ["a", "b", "colour"]
    assert accuracy > 0.8
    ct = sel.best_estimator_.named_steps["prep"]
    assert list(ct.named_transformers_["cat"].categories_[0]) == list(names)
    with pytest.raises(ValueError, match="feature names"):
        sel.predict(df[["b", "a", "colour"]])
    bad = df.assign(a=np.where(np.arange(len(df)) == 3, np.nan, df["a"]))
    with pytest.raises(ValueError, match="NaN or infinity.*Nothing was spent"):
        sel.fit(bad, y)
    assert len(acc.spends) == 1


def test_private_parts_in_feature_unions_and_nested_pipelines_are_all_counted(arrays):
    X, y = arrays
    union = FeatureUnion([
        ("scaled", DPStandardScaler(0.2, 1e-7, bounds=BOUNDS)),
        ("inner", Pipeline([("s2", DPStandardScaler(0.3, 2e-7, bounds=BOUNDS)),
                            ("norm", Normalizer())])),
        ("gone", "drop")])
    pipe = Pipeline([("prep", ColumnTransformer(
        [("num", union, [0, 1]), ("cat", _encoder(), [2])],
        remainder=DPStandardScaler(0.1, 3e-7, bounds=BOUNDS), sparse_threshold=0)),
        ("clf", DPLogisticRegressionAMP(1.0, 1e-6))])
    names = [name for name, _ in candidate_steps(pipe)]
    assert names == ["prep__num__scaled", "prep__num__inner__s2", "prep__remainder", "clf"]
    assert all(key in pipe.get_params() for key in (f"{n}__epsilon" for n in names))
    acc = BudgetAccountant(epsilon=10.0, delta=1e-4)
    X_wide = np.column_stack([X, X[:, 0]])  # a fourth column for the remainder
    sel = PrivateParameterSelector(pipe, {"prep__num__inner__s2__epsilon": [0.3, 0.6]},
                                   epsilon=0.5, classes=[0, 1], accountant=acc,
                                   random_state=0).fit(X_wide, y)
    assert acc.spent.epsilon == pytest.approx(0.2 + 0.6 + 0.1 + 1.0)
    assert acc.spent.delta == pytest.approx(1e-7 + 2e-7 + 3e-7 + 1e-6)
    fitted = sel.best_estimator_.named_steps["prep"]
    inner = fitted.named_transformers_["num"].transformer_list[1][1].named_steps["s2"]
    assert inner.privacy_spent_.epsilon == sel.best_params_["prep__num__inner__s2__epsilon"]
    remainder = fitted.named_transformers_["remainder"]
    assert remainder.privacy_spent_ == PrivacyBudget(0.1, 3e-7)


def test_every_nested_part_gets_its_own_generator(arrays):
    union = FeatureUnion([("rff", RandomFourierFeatures(gamma=0.1, n_components=8,
                                                        random_state=0)),
                          ("s", DPStandardScaler(0.2, 1e-7, bounds=BOUNDS, random_state=0))])
    pipe = _pipe(num=union)
    pipe.set_params(clf__random_state=0)
    model = _seed(pipe, np.random.default_rng(1))
    parts = seeded_steps(model)
    assert [type(p).__name__ for p in parts] == ["RandomFourierFeatures", "DPStandardScaler",
                                                 "DPLogisticRegressionAMP"]
    gens = [p.random_state for p in parts]
    assert all(isinstance(g, np.random.Generator) for g in gens)
    first = [int(copy.deepcopy(g).integers(2**62)) for g in gens]
    assert len(set(first)) == 3


def test_an_ordinal_encoder_with_public_categories_is_free(arrays):
    X, y = arrays
    enc = OrdinalEncoder(categories=[CATS], handle_unknown="use_encoded_value", unknown_value=-1)
    pipe = _pipe(num=PublicBoundsScaler(BOUNDS), cat=enc)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-4)
    PrivateParameterSelector(pipe, {"clf__epsilon": [0.7]}, epsilon=0.5, classes=[0, 1],
                             accountant=acc, random_state=0).fit(X, y)
    assert acc.spent == PrivacyBudget(0.7, 1e-6)


def _lambda_columns():
    pipe = _pipe(num=PublicBoundsScaler(BOUNDS))
    pipe.named_steps["prep"].transformers[0] = ("num", PublicBoundsScaler(BOUNDS),
                                                lambda X: [0, 1])
    return pipe


REFUSED = {
    "callable column selector": (_lambda_columns, ValueError, "callable, which receives"),
    "sparse_threshold > 0": (lambda: _pipe(ct={"sparse_threshold": 0.3}), ValueError,
                             "Pass sparse_threshold=0"),
    "StandardScaler in a ColumnTransformer": (lambda: _pipe(num=StandardScaler()), TypeError,
                                              r"'prep__num' \(StandardScaler\)"),
    "categories='auto'": (lambda: _pipe(cat=OneHotEncoder(handle_unknown="ignore")),
                          ValueError, "categories='auto'"),
    "handle_unknown='error'": (lambda: _pipe(cat=OneHotEncoder(categories=[CATS])),
                               ValueError, "handle_unknown='error'.*raise"),
    "handle_unknown='warn'": (lambda: _pipe(cat=_encoder(handle_unknown="warn")), ValueError,
                              "emit a warning"),
    "min_frequency": (lambda: _pipe(cat=_encoder(min_frequency=5)), ValueError,
                      "min_frequency or max_categories"),
    "drop": (lambda: _pipe(cat=_encoder(drop="first")), ValueError, "drop='first'"),
    "ordinal handle_unknown='error'": (
        lambda: _pipe(cat=OrdinalEncoder(categories=[CATS])), ValueError,
        "handle_unknown='use_encoded_value'"),
    "StandardScaler in a FeatureUnion": (
        lambda: _pipe(num=FeatureUnion([("p", PolynomialFeatures()), ("s", StandardScaler())])),
        TypeError, "'prep__num__s'"),
    "remainder StandardScaler": (lambda: _pipe(ct={"remainder": StandardScaler()}), TypeError,
                                 "'prep__remainder'"),
    "nested pipeline with memory": (
        lambda: _pipe(num=Pipeline([("n", Normalizer())], memory="/tmp/nowhere")),
        ValueError, "memory="),
    "top-level pipeline with memory": (
        lambda: _pipe().set_params(memory="/tmp/nowhere"), ValueError, "memory="),
    "ColumnTransformer subclass": (
        lambda: _pipe(num=type("CT", (ColumnTransformer,), {})([("n", "passthrough", [0])])),
        TypeError, "not private and not known"),
}


def _assert_refused(pipe, data, error, match):
    """Fitting a selector over ``pipe`` raises ``error`` and charges nothing."""
    acc = BudgetAccountant(epsilon=10.0, delta=1e-4)
    sel = PrivateParameterSelector(pipe, {"clf__epsilon": [1.0]}, epsilon=0.5,
                                   classes=[0, 1], accountant=acc, random_state=0)
    with pytest.raises(error, match=match) as err:
        sel.fit(*data)
    assert "Nothing was spent" in str(err.value)
    assert acc.spends == []


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_before_any_charge(arrays, case):
    make, error, match = REFUSED[case]
    _assert_refused(make(), arrays, error, match)


def test_a_nested_private_part_for_add_remove_neighbours_is_refused(arrays, monkeypatch):
    monkeypatch.setattr(DPStandardScaler, "_neighbouring_relation", "add/remove",
                        raising=False)
    _assert_refused(_pipe(), arrays, TypeError, r"'prep__num'.*add/remove neighbours")


def test_a_nested_part_that_overspends_is_caught_on_its_fitted_clone(arrays, monkeypatch):
    # The ColumnTransformer fits a clone; the dry-run spend check must read that clone.
    original = DPStandardScaler.fit

    def overspending_fit(self, X, y=None):
        original(self, X, y)
        self.privacy_spent_ = PrivacyBudget(2 * self.epsilon, self.delta)
        return self

    monkeypatch.setattr(DPStandardScaler, "fit", overspending_fit)
    _assert_refused(_pipe(), arrays, ValueError, r"'prep__num'.*spent epsilon=0.6")


def test_explicit_delta_message_names_the_nested_key(arrays):
    X, y = arrays
    pipe = _pipe(num=DPStandardScaler(0.3, bounds=BOUNDS))  # delta=None
    acc = BudgetAccountant(epsilon=10.0, delta=1e-4)
    sel = PrivateParameterSelector(pipe, {"clf__epsilon": [1.0]}, classes=[0, 1],
                                   accountant=acc, random_state=0)
    with pytest.raises(ValueError, match="'prep__num__delta'"):
        sel.fit(X, y)
    assert acc.spends == []
    sel.set_params(param_grid={"clf__epsilon": [1.0], "prep__num__delta": [1e-7]}).fit(X, y)
    assert acc.spent == PrivacyBudget(1.3, 1e-6 + 1e-7)
