"""Adversarial cases for PrivateParameterSelector over tabular pipelines: events that depend on
the private rows after the charge, and what the released model carries."""

import warnings

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, PolynomialFeatures

from skdp import BudgetAccountant
from skdp.kernel_approximation import RandomFourierFeatures
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.model_selection import PrivateParameterSelector
from skdp.preprocessing import DPStandardScaler

BOUNDS = (-4.0, 4.0)
CATS = [0.0, 1.0, 2.0]


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    num = rng.normal(size=(n, 2))
    cat = rng.integers(0, 3, n)
    return num, cat, (num[:, 0] > 0).astype(int)


def _pipe(cat_encoder, num_cols=(0, 1), cat_cols=(2,), num=None):
    prep = ColumnTransformer(
        [("num", DPStandardScaler(0.3, 1e-6, bounds=BOUNDS) if num is None else num,
          list(num_cols)),
         ("cat", cat_encoder, list(cat_cols))], sparse_threshold=0)
    return Pipeline([("prep", prep), ("clf", DPLogisticRegressionAMP(1.0, 1e-6))])


def _selector(pipe, acc, random_state=0):
    return PrivateParameterSelector(pipe, {"clf__epsilon": [1.0]}, epsilon=0.5, classes=[0, 1],
                                    accountant=acc, random_state=random_state)


def test_ordinal_encoder_with_nan_unknown_value_is_refused_before_the_charge():
    # The all-zero public rows hold known categories, so the dry run passes; a private row with
    # an unknown category becomes NaN, which the classifier refuses only after the charge (an
    # error that reveals that some row holds a category outside the public list).
    num, cat, y = _data()
    X = np.column_stack([num, cat]).astype(float)
    X[5, 2] = 7.0
    enc = OrdinalEncoder(categories=[CATS], handle_unknown="use_encoded_value",
                         unknown_value=np.nan)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="unknown_value=nan.*Nothing was spent"):
        _selector(_pipe(enc), acc).fit(X, y)
    assert acc.spends == []


def test_an_unhashable_value_in_a_categorical_column_is_refused_before_the_charge():
    pd = pytest.importorskip("pandas")
    num, cat, y = _data()
    colour = np.array(["r", "g", "b"], dtype=object)[cat]
    colour[3] = ["r"]  # the encoders look values up in a hash table: TypeError after the charge
    df = pd.DataFrame({"a": num[:, 0], "b": num[:, 1], "c": colour})
    enc = OneHotEncoder(categories=[["r", "g", "b"]], handle_unknown="ignore")
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="'c'.*hashable.*Nothing was spent"):
        _selector(_pipe(enc, ["a", "b"], ["c"]), acc).fit(df, y)
    assert acc.spends == []


def _generators(estimator):
    """Every random_state object in a fitted candidate, templates and fitted parts."""
    found = []

    def visit(obj):
        if hasattr(obj, "get_params"):
            for value in obj.get_params(deep=False).values():
                if isinstance(value, (np.random.Generator, np.random.RandomState)):
                    found.append(value)
                elif isinstance(value, (list, tuple)):
                    for item in value:
                        visit(item[1] if isinstance(item, tuple) and len(item) > 1 else item)
                else:
                    visit(value)
        for name, part, *_ in getattr(obj, "transformers_", []):
            visit(part)

    visit(estimator)
    return found


@pytest.mark.parametrize("container", ["pipeline", "column_transformer"])
def test_the_released_model_carries_no_generator_that_reproduces_its_noise(container,
                                                                             monkeypatch):
    # The selector seeds every part with a generator spawned from its own. Released with the
    # model, such a generator reproduces the noise: a ColumnTransformer fits a clone, so the
    # generator left in its transformers holds exactly the state the noise was drawn from; a
    # generator used in place can be rewound (PCG64.advance). Noise known, the released mean_
    # gives the exact sums of the part's private rows.
    num, cat, y = _data()
    X = np.column_stack([num, cat]).astype(float)
    states = []
    original = DPStandardScaler.fit

    def recording_fit(self, X, y=None, sample_weight=None):
        rs = self.random_state
        if isinstance(rs, np.random.Generator):
            states.append(rs.bit_generator.state)
        return original(self, X, y, sample_weight=sample_weight)

    monkeypatch.setattr(DPStandardScaler, "fit", recording_fit)
    enc = OneHotEncoder(categories=[CATS], handle_unknown="ignore")
    if container == "pipeline":
        pipe = Pipeline([("s", DPStandardScaler(0.3, 1e-6, bounds=BOUNDS)),
                         ("u", FeatureUnion([("rff", RandomFourierFeatures(n_components=4))])),
                         ("clf", DPLogisticRegressionAMP(1.0, 1e-6))])
    else:
        pipe = _pipe(enc)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    sel = _selector(pipe, acc).fit(X, y)
    assert states  # the scalers were seeded with generators
    released = _generators(sel.best_estimator_)
    if container == "column_transformer":
        # The first demonstration of the leak: the state before the noise is released as is.
        assert not any(g.bit_generator.state in states for g in released)
    assert released == []
    # Still predicts, and a later refit draws fresh noise (and is charged).
    assert sel.predict(X[:5]).shape == (5,)


def test_infinity_in_a_categorical_column_is_refused_before_the_charge():
    # A pandas categorical column with numeric categories is not a numeric column, but the
    # encoders' own check (check_array with allow-nan) refuses its infinite values: after the
    # charge, unless the selector checks the column as the encoders will.
    pd = pytest.importorskip("pandas")
    num, cat, y = _data()
    codes = np.where(np.arange(len(cat)) == 3, np.inf, cat.astype(float))
    df = pd.DataFrame({"a": num[:, 0], "b": num[:, 1], "c": pd.Categorical(codes)})
    for enc in (OneHotEncoder(categories=[CATS], handle_unknown="ignore"),
                OrdinalEncoder(categories=[CATS], handle_unknown="use_encoded_value",
                               unknown_value=-1)):
        acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
        with pytest.raises(ValueError, match="'c'.*infinity.*Nothing was spent"):
            _selector(_pipe(enc, ["a", "b"], ["c"]), acc).fit(df, y)
        assert acc.spends == []


def test_a_dataframe_kept_for_the_fit_is_kept_for_predict_when_the_released_model_has_no_ct():
    # With a ColumnTransformer in some candidate the DataFrame is passed as is to every
    # candidate; the released one may have none, and it was still fitted with feature names.
    pd = pytest.importorskip("pandas")
    num, cat, y = _data()
    df = pd.DataFrame({"a": num[:, 0], "b": num[:, 1], "c": cat.astype(float)})
    ct = ColumnTransformer([("num", DPStandardScaler(0.3, 1e-6, bounds=BOUNDS), ["a", "b"]),
                            ("cat", OneHotEncoder(categories=[CATS], handle_unknown="ignore"),
                             ["c"])], sparse_threshold=0)
    pipe = Pipeline([("prep", ct), ("clf", DPLogisticRegressionAMP(1.0, 1e-6))])
    grid = {"prep": [ct, DPStandardScaler(0.3, 1e-6, bounds=BOUNDS)]}
    for seed in range(20):
        sel = PrivateParameterSelector(pipe, grid, epsilon=0.5, classes=[0, 1],
                                       random_state=seed).fit(df, y)
        if sel.best_index_ == 1:
            break
    assert sel.best_index_ == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sel.predict(df).shape == (len(df),)


@pytest.mark.parametrize("step, value", [
    (PolynomialFeatures(2), 1e200),  # squared: infinity
    (RandomFourierFeatures(gamma=1.0, n_components=20), 1e308),  # w.x infinite: cos is NaN
    (ColumnTransformer([("p", PolynomialFeatures(3), [0]), ("o", "passthrough", [1, 2])],
                       sparse_threshold=0), 1e120),
    # Beside a private part, in the first step that holds one: its public parts read X too.
    (ColumnTransformer([("s", DPStandardScaler(0.3, 1e-6, bounds=BOUNDS), [0, 1]),
                        ("p", PolynomialFeatures(3), [0])], sparse_threshold=0), 1e120),
    (FeatureUnion([("s", DPStandardScaler(0.3, 1e-6, bounds=BOUNDS)),
                   ("p", PolynomialFeatures(2))]), 1e200),
])
def test_finite_rows_that_the_public_steps_overflow_are_refused_before_the_charge(step, value):
    # The public steps before the first private part are fitted from the schema alone, but
    # map some finite rows to NaN or infinity, which the classifier refuses only after the
    # charge. Refused as bad input (like NaN in X) before anything is spent.
    num, cat, y = _data()
    X = np.column_stack([num, cat]).astype(float)
    X[7, 0] = value
    pipe = Pipeline([("pub", step), ("clf", DPLogisticRegressionAMP(1.0, 1e-6))])
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="'pub'.*NaN or infinity.*Nothing was spent"):
        _selector(pipe, acc).fit(X, y)
    assert acc.spends == []
    X[7, 0] = 3.0
    _selector(pipe, acc).fit(X, y)
    assert len(acc.spends) == 1


def test_an_unfitted_private_part_does_not_hide_the_data_size_deltas_of_the_others():
    # A private part given no column is not fitted (no privacy_spent_) and not charged; the
    # spends of the fitted parts (delta=None: a default that depends on the part's size)
    # must still be reported, not dropped for the charged total with delta=None counted 0.
    num, cat, y = _data()
    X = np.column_stack([num, cat]).astype(float)
    ct = ColumnTransformer(
        [("num", DPStandardScaler(0.3, bounds=BOUNDS), [0, 1]),
         ("empty", DPStandardScaler(0.1, 1e-7, bounds=BOUNDS), []),
         ("cat", OneHotEncoder(categories=[CATS], handle_unknown="ignore"), [2])],
        sparse_threshold=0)
    pipe = Pipeline([("prep", ct), ("clf", DPLogisticRegressionAMP(1.0))])
    sel = PrivateParameterSelector(pipe, {"clf__epsilon": [1.0]}, epsilon=0.5, classes=[0, 1],
                                   random_state=0).fit(X, y)
    scaler = sel.best_estimator_.named_steps["prep"].named_transformers_["num"]
    clf = sel.best_estimator_.named_steps["clf"]
    assert scaler.delta_ > 1e-6 and clf.delta_ > 1e-6
    assert sel.privacy_spent_.epsilon == pytest.approx(1.3)
    assert sel.privacy_spent_.delta == pytest.approx(scaler.delta_ + clf.delta_)


def test_the_overflow_check_transforms_x_with_the_candidates_own_frequencies(monkeypatch):
    # Whether w.x overflows depends on the frequencies w: the check must use those the
    # candidate draws (its public steps, seeded as the candidate is), not the dry run's.
    num, cat, y = _data()
    X = np.column_stack([num, cat]).astype(float)
    seen = []
    original = RandomFourierFeatures.transform

    def recording_transform(self, Z):
        seen.append((len(Z), self.frequencies_.copy()))
        return original(self, Z)

    monkeypatch.setattr(RandomFourierFeatures, "transform", recording_transform)
    pipe = Pipeline([("rff", RandomFourierFeatures(gamma=1.0, n_components=8)),
                     ("clf", DPLogisticRegressionAMP(1.0, 1e-6))])
    sel = _selector(pipe, BudgetAccountant(epsilon=10.0, delta=1e-3)).fit(X, y)
    released = sel.best_estimator_.named_steps["rff"].frequencies_
    checked = [w for n_rows, w in seen if n_rows == len(X)]
    assert len(checked) == 1 and np.array_equal(checked[0], released)
