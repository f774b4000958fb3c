"""PrivateParameterSelector: overflow after a private step, parts with no columns, DataFrames
the selector cannot pass on, and verbose output of nested parts (review of stop 16)."""

import warnings

import numpy as np
import pytest
from _dummy import NoisyCentroidClassifier
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import OneHotEncoder, PolynomialFeatures

from skdp import BudgetAccountant
from skdp.exceptions import BudgetExceededError, PrivacyLeakWarning
from skdp.kernel_approximation import RandomFourierFeatures
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.model_selection import PrivateParameterSelector
from skdp.preprocessing import DPStandardScaler, PublicBoundsScaler

BOUNDS = (-4.0, 4.0)


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 2] = rng.integers(0, 3, n)
    return X, (X[:, 0] > 0).astype(int)


def _scaler(epsilon=0.3, **kw):
    return DPStandardScaler(epsilon, 1e-6, bounds=BOUNDS, **kw)


def _clf():
    return DPLogisticRegressionAMP(1.0, 1e-6)


def _fit(pipe, X, y, acc=None):
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3) if acc is None else acc
    return PrivateParameterSelector(pipe, {"clf__epsilon": [1.0]}, epsilon=0.5, classes=[0, 1],
                                    accountant=acc, random_state=0).fit(X, y)


# --- 1. overflow after a private step, and inside a nested pipeline ---------------------------

def _after_private(second):
    return Pipeline([("s", _scaler(clip=False)), ("pub", second), ("clf", _clf())])


@pytest.mark.parametrize("make, value", [
    # (a) after a private step: the scaler (clip=False) passes 1e200 on, squared: infinity.
    (lambda: _after_private(PolynomialFeatures(2)), 1e200),
    (lambda: _after_private(RandomFourierFeatures(gamma=100.0, n_components=8)), 1e307),
    (lambda: Pipeline([("s", _scaler(clip=False)), ("u", FeatureUnion([
        ("id", "passthrough"), ("pub", Pipeline([("n", "passthrough"),
                                                 ("p", PolynomialFeatures(2))]))])),
        ("clf", _clf())]), 1e200),
    # (b) public steps inside a nested pipeline that also holds a private part.
    (lambda: Pipeline([("prep", Pipeline([("pub", PolynomialFeatures(2)), ("s", _scaler())])),
                       ("clf", _clf())]), 1e200),
    (lambda: Pipeline([("prep", ColumnTransformer(
        [("n", Pipeline([("pub", PolynomialFeatures(2)), ("s", _scaler())]), [0, 1]),
         ("o", "passthrough", [2])], sparse_threshold=0)), ("clf", _clf())]), 1e200),
    # A private step whose own output overflows: narrow bounds, no clipping.
    (lambda: Pipeline([("s", DPStandardScaler(0.3, 1e-6, bounds=(-1e-3, 1e-3), clip=False)),
                       ("clf", _clf())]), 1e307),
])
def test_rows_that_overflow_after_or_inside_a_private_part_are_refused_before_the_charge(
        make, value):
    X, y = _data()
    X[7, 0] = value
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="NaN or infinity.*Nothing was spent"):
        _fit(make(), X, y, acc)
    assert acc.spends == []
    X[7, 0] = 3.0  # in the public range: accepted and charged
    _fit(make(), X, y, acc)
    assert len(acc.spends) == 1


def test_an_overflow_that_one_record_decides_after_a_clipping_scaler_is_refused_publicly():
    # All rows 0 but one at 4 (inside the bounds): the scaler's noisy variance sits at its
    # floor, 4 becomes ~17 and 17**300 overflows; with that record at 0 nothing overflows.
    # The error came after the charge and told which neighbour it was. The scaler's output
    # bound is public (bounds, floor of the variance), so the candidate is refused on both.
    y = np.arange(600) % 2
    pipe = Pipeline([("s", _scaler(5.0)), ("pub", PolynomialFeatures(300)), ("clf", _clf())])
    for record in (4.0, 0.0):
        X = np.zeros((600, 1))
        X[7, 0] = record
        acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
        with pytest.raises(ValueError, match="'pub'.*NaN or infinity.*Nothing was spent"):
            _fit(pipe, X, y, acc)
        assert acc.spends == []
    # A low degree keeps the public bound finite: accepted.
    pipe.set_params(pub=PolynomialFeatures(2))
    assert _fit(pipe, X, y).predict(X[:3]).shape == (3,)


def test_bounded_public_steps_after_a_private_step_are_accepted_for_any_finite_input():
    X, y = _data()
    X[7, 0] = 1e300
    for pub in (PublicBoundsScaler(BOUNDS), RandomFourierFeatures(n_components=8)):
        pipe = Pipeline([("s", _scaler(clip=False)), ("pub", pub),
                         ("p", PolynomialFeatures(3)), ("clf", _clf())])
        assert _fit(pipe, X[:, :2], y).predict(X[:3, :2]).shape == (3,)


# --- 2. parts with no columns ------------------------------------------------------------------

@pytest.mark.parametrize("columns", [[], np.zeros(3, dtype=bool)])
def test_a_private_part_given_no_column_is_not_charged(columns):
    X, y = _data()
    ct = ColumnTransformer([("num", _scaler(), [0, 1]),
                            ("empty", DPStandardScaler(0.2, None, bounds=BOUNDS), columns),
                            ("o", "passthrough", [2])], sparse_threshold=0)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    sel = _fit(Pipeline([("prep", ct), ("clf", _clf())]), X, y, acc)
    # 0.3 + 1.0 for the fitted parts; the empty one (delta=None would be refused with an
    # accountant if it were charged) is not.
    assert sel.privacy_spent_.epsilon == pytest.approx(1.3)
    assert sel.privacy_spent_.delta == pytest.approx(2e-6)
    assert acc.spent.epsilon == pytest.approx(1.3)


def test_a_column_selector_that_selects_nothing_in_the_schema_is_not_charged():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    ct = ColumnTransformer([("num", _scaler(), ["a", "b"]),
                            ("text", _scaler(0.4), make_column_selector(dtype_include=object)),
                            ("o", "passthrough", ["c"])], sparse_threshold=0)
    sel = _fit(Pipeline([("prep", ct), ("clf", _clf())]), df, y)
    assert sel.privacy_spent_.epsilon == pytest.approx(1.3)


# --- 3. DataFrames the selector cannot pass on --------------------------------------------------

def test_an_interval_column_is_refused_with_a_clear_error_before_the_charge():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    intervals = pd.arrays.IntervalArray.from_breaks([0, 1, 2, 3])
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": intervals[X[:, 2].astype(int)]})
    ct = ColumnTransformer([("num", _scaler(), ["a", "b"]),
                            ("cat", OneHotEncoder(categories=[list(intervals)],
                                                  handle_unknown="ignore"), ["c"])],
                           sparse_threshold=0)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="'c'.*interval.*Nothing was spent"):
        _fit(Pipeline([("prep", ct), ("clf", _clf())]), df, y, acc)
    assert acc.spends == []


def test_duplicated_column_names_are_refused_with_a_clear_error_before_the_charge():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    df = pd.DataFrame(X, columns=["a", "a", "c"])
    ct = ColumnTransformer([("num", _scaler(), ["a"]), ("o", "passthrough", ["c"])],
                           sparse_threshold=0)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="duplicated column names.*'a'.*Nothing was spent"):
        _fit(Pipeline([("prep", ct), ("clf", _clf())]), df, y, acc)
    assert acc.spends == []


# --- 4. verbose output of nested parts ----------------------------------------------------------

@pytest.mark.parametrize("where", ["pipeline", "column_transformer", "feature_union", "leaf"])
def test_verbose_nested_parts_warn_before_the_charge(where):
    X, y = _data()
    if where == "leaf":
        pipe = Pipeline([("s", _scaler()), ("clf", DPLogisticRegressionAMP(1.0, 1e-6,
                                                                           verbose=1))])
    elif where == "pipeline":
        pipe = Pipeline([("s", _scaler()), ("clf", _clf())], verbose=True)
    elif where == "column_transformer":
        pipe = Pipeline([("prep", ColumnTransformer([("n", _scaler(), [0, 1])],
                                                    sparse_threshold=0, verbose=True)),
                         ("clf", _clf())])
    else:
        pipe = Pipeline([("prep", FeatureUnion([("n", _scaler())], verbose=True)),
                         ("clf", _clf())])
    acc = BudgetAccountant(epsilon=0.1, delta=1e-3)  # too small: refused after the warning
    with pytest.warns(PrivacyLeakWarning, match="verbose.*timings.*not covered"):
        with pytest.raises(BudgetExceededError):
            _fit(pipe, X, y, acc)
    # Without verbose, no warning.
    key = {"pipeline": "verbose", "leaf": "clf__verbose"}.get(where, "prep__verbose")
    pipe.set_params(**{key: 0 if where == "leaf" else False})
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        _fit(pipe, X, y)


# --- 5. found while reviewing --------------------------------------------------------------------

class _ExactCentroids(ClassifierMixin, BaseEstimator):
    """Not private, but with an 'epsilon' parameter (a margin, say) and a random_state."""

    def __init__(self, epsilon=1.0, random_state=None):
        self.epsilon = epsilon
        self.random_state = random_state

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.centroids_ = np.stack([X[y == c].mean(axis=0) for c in self.classes_])
        return self

    def predict(self, X):
        return self.classes_[np.argmin(((X[:, None] - self.centroids_) ** 2).sum(2), axis=1)]


def test_a_non_private_estimator_with_an_epsilon_parameter_is_refused_before_the_charge():
    # Accepted for its 'epsilon' parameter alone, it released exact centroids of its part.
    X, y = _data()
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(TypeError, match="skdp private classifier.*got _ExactCentroids"):
        PrivateParameterSelector(_ExactCentroids(), {"epsilon": [1.0]}, classes=[0, 1],
                                 accountant=acc, random_state=0).fit(X, y)
    assert acc.spends == []


class _Unreported(NoisyCentroidClassifier):
    def fit(self, X, y):
        super().fit(X, y)
        del self.privacy_spent_
        return self


def test_a_private_part_that_reports_no_spend_is_refused_before_the_charge():
    # Its spend is read after the fit (a data-size default delta): without privacy_spent_
    # the selector failed after the charge.
    X, y = _data()
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="privacy_spent_.*Nothing was spent"):
        PrivateParameterSelector(_Unreported(), {"epsilon": [1.0]}, classes=[0, 1],
                                 accountant=acc, random_state=0).fit(X, y)
    assert acc.spends == []


def test_after_a_clipping_scaler_the_refusal_does_not_depend_on_x():
    # The bound after a clipping scaler is computed from its bounds, not from the (smaller)
    # largest entry of X: a candidate refused for one dataset is refused for every dataset.
    y = np.arange(600) % 2
    wide = (-1e100, 1e100)
    for scaler, degree in ((_scaler(5.0), 300), (PublicBoundsScaler(wide, feature_range=wide), 4)):
        pipe = Pipeline([("s", scaler), ("pub", PolynomialFeatures(degree)), ("clf", _clf())])
        for scale in (0.0, 1e-3, 4.0):
            X = np.full((600, 1), scale)
            with pytest.raises(ValueError, match="'pub'.*NaN or infinity.*Nothing was spent"):
                _fit(pipe, X, y)


def test_the_scaler_output_bound_is_the_public_floor_and_holds_for_every_draw():
    # Hand-computed: mean_ in [-4, 4], scale_ >= 4 sqrt(floor), floor = min(sigma_2 / n, 1)
    # with sigma_2 the noise scale of the squared sums; so |output| <= (4 + 4) / scale_min.
    from skdp.model_selection._steps import _scaler_bound
    from skdp.preprocessing._dp_scaler import moment_noise_scales

    X = np.zeros((50, 1))
    X[0] = 4.0
    sigma_2 = moment_noise_scales(1, 5.0, 1e-6)[2]
    expected = 8.0 / (4.0 * np.sqrt(min(sigma_2 / 50, 1.0)))
    observed = 0.0
    for seed in range(200):
        scaler = _scaler(5.0, random_state=seed).fit(X)
        assert _scaler_bound(scaler, 1e300, 50) == pytest.approx(expected, rel=1e-12)
        observed = max(observed, np.max(np.abs(scaler.transform(X))))
    assert 0.4 * expected < observed <= expected  # reached up to the centring term
