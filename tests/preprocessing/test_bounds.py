"""Bounds keyed by DataFrame column names (PublicBoundsScaler, DPStandardScaler)."""

import numpy as np
import pytest

from skdp.preprocessing import DPStandardScaler, PublicBoundsScaler

pd = pytest.importorskip("pandas")


@pytest.mark.parametrize("make", [
    lambda b: DPStandardScaler(epsilon=1.0, bounds=b, random_state=0),
    lambda b: PublicBoundsScaler(bounds=b),
])
def test_bounds_dict_by_column_name(make):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.uniform(20, 60, 300), "income": rng.uniform(0, 5, 300)})
    by_name = make({"income": (0.0, 5.0), "age": (18.0, 90.0)}).fit(df)
    by_position = make([(18.0, 90.0), (0.0, 5.0)]).fit(df)
    np.testing.assert_array_equal(by_name.lower_, [18.0, 0.0])
    np.testing.assert_array_equal(by_name.upper_, [90.0, 5.0])
    np.testing.assert_array_equal(by_name.lower_, by_position.lower_)
    with pytest.raises(ValueError, match="no bounds for column.*'income'"):
        make({"age": (18.0, 90.0)}).fit(df)
    with pytest.raises(ValueError, match="not columns of X.*'salary'"):
        make({"age": (18.0, 90.0), "income": (0.0, 5.0), "salary": (0, 1)}).fit(df)
    with pytest.raises(ValueError, match="column names"):
        make({"age": (18.0, 90.0), "income": (0.0, 5.0)}).fit(df.to_numpy())


def test_dict_bounds_follow_column_names():
    df = pd.DataFrame({"a": [0.0, 5.0, 10.0], "b": [100.0, 150.0, 200.0]})
    bounds = {"b": (100.0, 200.0), "a": (0.0, 10.0)}
    for frame in (df, df[["b", "a"]]):
        scaler = PublicBoundsScaler(bounds=bounds).fit(frame)
        np.testing.assert_array_equal(scaler.transform(frame), [[-1, -1], [0, 0], [1, 1]])
    dp = DPStandardScaler(epsilon=1.0, bounds=bounds, random_state=0).fit(df[["b", "a"]])
    np.testing.assert_array_equal(dp.lower_, [100.0, 0.0])
    np.testing.assert_array_equal(dp.upper_, [200.0, 10.0])


@pytest.mark.parametrize("make_bounds", [
    # one (low, high) pair per row, rows labelled by column name, in another order
    lambda: pd.DataFrame({"low": [100.0, 0.0], "high": [200.0, 10.0]}, index=["b", "a"]),
    # one pair per column, columns labelled by column name, in another order
    lambda: pd.DataFrame({"b": [0.0, 10.0], "a": [5.0, 20.0]}),
])
def test_labelled_pandas_bounds_are_not_read_by_position(make_bounds):
    # A pandas object labelled by X's column names was read by position, ignoring its
    # labels: under another column order the bounds were silently swapped (or mixed).
    df = pd.DataFrame({"a": [0.0, 5.0, 10.0], "b": [100.0, 150.0, 200.0]})
    for cls, kw in ((PublicBoundsScaler, {}), (DPStandardScaler, dict(epsilon=1.0))):
        with pytest.raises(ValueError, match="dict"):
            cls(bounds=make_bounds(), **kw).fit(df)


def test_unlabelled_pandas_bounds_still_positional():
    df = pd.DataFrame({"a": [0.0, 5.0, 10.0], "b": [100.0, 150.0, 200.0], "c": [1.0, 2.0, 3.0]})
    bounds = pd.DataFrame([[0.0, 10.0], [100.0, 200.0], [0.0, 5.0]])  # RangeIndex: positional
    scaler = PublicBoundsScaler(bounds=bounds).fit(df)
    np.testing.assert_array_equal(scaler.lower_, [0.0, 100.0, 0.0])
    # With two features a 2 x 2 frame could be either layout: refused, not guessed.
    with pytest.raises(ValueError, match="ambiguous"):
        PublicBoundsScaler(bounds=pd.DataFrame([[0.0, 10.0], [100.0, 200.0]])).fit(df[["a", "b"]])
