"""PrivateParameterSelector: output bounds of the public steps are upper bounds.

Each case is a candidate whose real fit produced infinity (an error that depends on the
private rows, raised after the charge) while the output-bound check accepted it.
"""

import numpy as np
import pytest
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, PolynomialFeatures

from skdp import BudgetAccountant
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.model_selection import PrivateParameterSelector
from skdp.model_selection._steps import _function_bound
from skdp.preprocessing import DPStandardScaler


def _data(n=600, d=1, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3.0, 3.0, size=(n, d)).astype(dtype)
    return X, (X[:, 0] > 0).astype(int)


def _fit(pipe, X, y, acc):
    return PrivateParameterSelector(pipe, {"clf__epsilon": [1.0]}, epsilon=0.5, classes=[0, 1],
                                    accountant=acc, random_state=0).fit(X, y)


def _clf():
    return DPLogisticRegressionAMP(1.0, 1e-6)


@pytest.mark.parametrize("func, width", [(np.sin, 2.0), (np.cos, 4.0), (np.sin, 1e10),
                                         (np.tan, 2.0)])
def test_the_bound_of_a_periodic_ufunc_holds_between_the_probe_points(func, width):
    # sin is 1 at pi/2, between the probe points 1 and 2: the largest |sin| over the
    # probes in [-2, 2] and the ends is sin(2) = 0.909. tan reaches 1.6e16 at the double
    # nearest pi/2, inside [-2, 2].
    part = FunctionTransformer(func).fit(np.zeros((1, 1)))
    inside = np.concatenate([np.linspace(-width, width, 100_001), [np.pi / 2, -np.pi / 2]])
    inside = inside[np.abs(inside) <= width]
    assert _function_bound(part, width) >= np.max(np.abs(func(inside)))


def test_the_bound_of_sin_does_not_shrink_when_x_grows():
    # A refusal "some entry above a public threshold" needs bounds that grow with X's
    # largest entry; sin's was 0.997 for 1.5 and 0.909 for 2.
    part = FunctionTransformer(np.sin).fit(np.zeros((1, 1)))
    assert _function_bound(part, 1.5) <= _function_bound(part, 2.0)


def test_tan_then_a_power_after_a_private_step_is_refused_before_the_charge():
    # The scaler passes [-10, 10] on (no centring or scaling); tan of the double nearest
    # pi/2 is 1.6e16, and its 60th power is infinite: the classifier refused it after the
    # charge, while the check bounded tan on [-10, 10] by its values at the probe points.
    X, y = _data()
    X[7, 0] = np.pi / 2
    pipe = Pipeline([("s", DPStandardScaler(0.3, 1e-6, bounds=(-10.0, 10.0), with_mean=False,
                                            with_std=False)),
                     ("f", FunctionTransformer(np.tan)), ("p", PolynomialFeatures(60)),
                     ("clf", _clf())])
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="NaN or infinity.*Nothing was spent"):
        _fit(pipe, X, y, acc)
    assert acc.spends == []


def _float32_pipe():
    # PolynomialFeatures keeps float32: its square of 1e20 is infinite in float32.
    return Pipeline([("prep", Pipeline([("poly", PolynomialFeatures(2)),
                                        ("s", DPStandardScaler(0.3, 1e-6, bounds=(-4.0, 4.0)))])),
                     ("clf", _clf())])


def test_float32_rows_that_overflow_in_float32_are_refused_before_the_charge():
    X, y = _data(d=2, dtype=np.float32)
    X[7, 0] = 1e20
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="NaN or infinity.*Nothing was spent"):
        _fit(_float32_pipe(), X, y, acc)
    assert acc.spends == []
    X[7, 0] = 3.0  # in range: accepted and charged
    _fit(_float32_pipe(), X, y, acc)
    assert len(acc.spends) == 1


def test_an_encoder_with_a_narrow_float_dtype_is_bounded_in_that_dtype():
    # OrdinalEncoder(dtype=float16) casts the code 69000 to infinity: one record's category
    # made the classifier fail after the charge (the check bounded the codes by 69999 in
    # float64). The scaler passes [0, 70000] on unchanged.
    from sklearn.preprocessing import OrdinalEncoder

    X, y = _data()
    X = np.round(np.abs(X))
    X[7, 0] = 69000.0

    def pipe():
        return Pipeline([
            ("s", DPStandardScaler(0.3, 1e-6, bounds=(0.0, 70000.0), with_mean=False,
                                   with_std=False)),
            ("o", OrdinalEncoder(categories=[np.arange(70000.0)], dtype=np.float16,
                                 handle_unknown="use_encoded_value", unknown_value=-1)),
            ("clf", _clf())])

    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="NaN or infinity.*Nothing was spent"):
        _fit(pipe(), X, y, acc)
    assert acc.spends == []


def test_an_ordinal_encoder_that_encodes_a_missing_category_as_nan_is_refused():
    # With NaN among the categories, a private row's missing value (np.nan in an object
    # column) is encoded as encoded_missing_value=nan (the default); the public rows' None
    # is an unknown category (-1) in an object column, so the dry run passed, and nested
    # in a pipeline (not checked on X) the classifier refused the NaN after the charge.
    pd = pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OrdinalEncoder

    rng = np.random.default_rng(0)
    x = rng.normal(size=600)
    c = np.array(["a", "b"], dtype=object)[rng.integers(0, 2, 600)]
    c[7] = np.nan
    X, y = pd.DataFrame({"x": x, "c": pd.Series(c, dtype=object)}), (x > 0).astype(int)

    def pipe(**kw):
        enc = OrdinalEncoder(categories=[["a", "b", np.nan]], handle_unknown="use_encoded_value",
                             unknown_value=-1, **kw)
        return Pipeline([("prep", Pipeline([("ct", ColumnTransformer(
            [("s", DPStandardScaler(0.3, 1e-6, bounds=(-4.0, 4.0)), ["x"]), ("o", enc, ["c"])],
            sparse_threshold=0))])), ("clf", _clf())])

    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="encoded_missing_value.*Nothing was spent"):
        _fit(pipe(), X, y, acc)
    assert acc.spends == []
    _fit(pipe(encoded_missing_value=-2), X, y, acc)  # a finite code: accepted
    assert len(acc.spends) == 1


@pytest.mark.parametrize("outer_steps", [[], [("s", "passthrough")]])
def test_a_nested_selector_over_pipelines_is_refused_before_the_charge(outer_steps):
    # The inner selector checks its candidates' parts (PolynomialFeatures: 1e200 squared)
    # only when the outer one fits it, after the outer charge: its refusal, or the
    # classifier's on the infinite rows, depended on one record.
    from _dummy import NoisyCentroidClassifier

    X, y = _data(n=1200, d=2)
    X[7, 0] = 1e200
    inner = PrivateParameterSelector(
        Pipeline([("p", PolynomialFeatures(2)), ("clf", NoisyCentroidClassifier(1.0))]),
        {"clf__epsilon": [1.0]}, epsilon=1.0, classes=[0, 1])
    est = Pipeline([*outer_steps, ("sel", inner)]) if outer_steps else inner
    key = "sel__epsilon" if outer_steps else "epsilon"
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(TypeError, match="nested PrivateParameterSelector.*Nothing was spent"):
        PrivateParameterSelector(est, {key: [1.0]}, epsilon=0.5, classes=[0, 1],
                                 accountant=acc, random_state=0).fit(X, y)
    assert acc.spends == []
