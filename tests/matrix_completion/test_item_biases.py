"""DPMatrixCompleter's privately released item biases (center="user_item") and default rules."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from skdp.matrix_completion import DPMatrixCompleter
from skdp.matrix_completion import _completer, _solvers
from skdp.matrix_completion._biases import item_biases, item_statistics, recentre
from skdp.matrix_completion._calibration import noise_sigma, total_sensitivity
from skdp.matrix_completion._ratings import ratings_from_input
from skdp.testing import audit_epsilon


def _item_bias_data(n_users=3000, n_items=40, n_ratings=8, seed=0):
    """Ratings in [1, 5] = item effect + user effect + noise (no low-rank part)."""
    rng = np.random.default_rng(seed)
    item = rng.normal(0.0, 0.8, n_items)
    user = rng.normal(0.0, 0.5, n_users)
    rows = np.repeat(np.arange(n_users), n_ratings)
    cols = np.concatenate([rng.choice(n_items, n_ratings, replace=False)
                           for _ in range(n_users)])
    values = np.clip(3.0 + item[cols] + user[rows] + rng.normal(0, 0.3, rows.size), 1, 5)
    test = rng.random(rows.size) < 0.2
    shape = (n_users, n_items)
    train = sp.csr_matrix((values[~test], (rows[~test], cols[~test])), shape=shape)
    return train, (rows[test], cols[test], values[test])


def _rmse(model, train, test):
    rows, cols, values = test
    return float(np.sqrt(np.mean((model.transform(train)[rows, cols] - values) ** 2)))


def test_item_statistics_hand_computed():
    # User 0: ratings 3, 5 on items 0, 1 (mean 4, centred -1, +1, over s = 2: -0.5, 0.5);
    # user 1: 1 rating; user 2: 4 ratings (sqrt(4) = 2 > D = 1.5, so weight 0.75).
    X = np.array([[3.0, 5.0, np.nan, np.nan],
                  [np.nan, 2.0, np.nan, np.nan],
                  [1.0, 1.0, 3.0, 3.0]])
    ratings = ratings_from_input(X, center="user")
    stats = item_statistics(ratings, scale=2.0, clip=1.5)
    # user 2: centred (-1, -1, 1, 1) / 2, norm 1 <= 1.5; count weight 1.5 / 2 = 0.75.
    expected_x = np.array([-0.5 + 0.75 * -0.5, 0.5 + 0.75 * -0.5, 0.75 * 0.5, 0.75 * 0.5])
    expected_z = np.array([1 + 0.75, 1 + 1 + 0.75, 0.75, 0.75])
    assert np.allclose(stats, np.concatenate([expected_x, expected_z]))
    # b_j = s X_j / (max(Z_j, 0) + prior), with a negative released count floored at 0.
    released = np.array([1.0, -2.0, 3.0, -1.0])
    assert np.allclose(item_biases(released, scale=2.0, prior=4.0),
                       [2.0 * 1.0 / (3.0 + 4.0), 2.0 * -2.0 / (0.0 + 4.0)])
    # Re-centring: each user's mean of r_ij - b_j is her new offset.
    b = np.array([1.0, -1.0, 0.0, 0.5])
    again = recentre(ratings, b)
    assert np.allclose(again.means, [(2.0 + 6.0) / 2, 3.0, (0.0 + 2.0 + 3.0 + 2.5) / 4])
    assert np.allclose(again.values + again.per_entry(again.means) + b[again.indices],
                       X[~np.isnan(X)])


def test_item_statistics_sensitivity_is_sqrt6_clip():
    # Random neighbours never move (X, Z) by more than sqrt(6) D; the bound is nearly
    # attained by a user whose centred ratings are large, replaced by their negation.
    rng = np.random.default_rng(0)
    clip, worst = 2.0, 0.0
    for _ in range(200):
        base = np.where(rng.random((5, 6)) < 0.5, rng.uniform(-3, 3, (5, 6)), np.nan)
        other = base.copy()
        other[0] = np.where(rng.random(6) < 0.7, rng.uniform(-30, 30, 6), np.nan)
        a = item_statistics(ratings_from_input(base, center="user"), scale=1.0, clip=clip)
        b = item_statistics(ratings_from_input(other, center="user"), scale=1.0, clip=clip)
        worst = max(worst, np.linalg.norm(a - b))
    assert worst <= math.sqrt(6) * clip
    X = np.array([[100.0, -100.0], [0.0, 1.0]])
    Y = np.array([[-100.0, 100.0], [0.0, 1.0]])
    a, b = (item_statistics(ratings_from_input(M, center="user"), scale=1.0, clip=clip)
            for M in (X, Y))
    assert np.linalg.norm(a - b) == pytest.approx(2 * clip)


def test_item_release_takes_its_share_of_the_gdp_budget():
    X = np.where(np.eye(20, 6) + np.eye(20, 6, 1) > 0, 1.0, np.nan)
    common = dict(epsilon=1.0, delta=1e-5, method="svd", rank=2, row_norm_bound=1.5,
                  random_state=0)
    user = DPMatrixCompleter(center="user", **common).fit(X)
    s = total_sensitivity(1.5, method="svd")
    assert user.sensitivity_ == s and user.item_biases_ is None  # unchanged constants
    both = DPMatrixCompleter(center="user_item", item_share=0.36, **common).fit(X)
    assert both.sensitivity_ == pytest.approx(s / math.sqrt(1 - 0.36))
    assert both.sigma_ == pytest.approx(noise_sigma(1.0, 1e-5, s / math.sqrt(1 - 0.36)))
    assert both.item_biases_.shape == (6,)


@pytest.mark.parametrize("noise_factor, caught", [(1.0, False), (0.25, True)])
def test_audit_item_release(noise_factor, caught):
    # Worst case for X: one user's centred ratings (+-100, norm > D) replaced by their
    # negation, ||dX|| = 2 D. The release is audited with the sigma the estimator
    # calibrates for item_share=0.9 and the share's sensitivity.
    datasets = [np.array([[100.0, -100.0], [0.0, 1.0]]),
                np.array([[-100.0, 100.0], [0.0, 1.0]])]
    model = DPMatrixCompleter(epsilon=1.0, delta=1e-5, method="svd", row_norm_bound=1.0,
                              item_share=0.9, random_state=0).fit(datasets[0])
    clip = model._local_params["item_clip"]
    s_item = total_sensitivity(1.0, method="svd") * math.sqrt(0.9 / 0.1)
    assert model.sigma_ == pytest.approx(noise_sigma(1.0, 1e-5, math.hypot(
        total_sensitivity(1.0, method="svd"), s_item)))
    stats = [item_statistics(ratings_from_input(X, center="user"), scale=1.0, clip=clip)
             for X in datasets]

    def mechanism(which, rng):
        released, _ = _completer._release_item_statistics(
            stats[which], s_item, clip, noise_factor * model.sigma_, None, rng)
        return released[0] - released[1]

    res = audit_epsilon(mechanism, 0, 1, n_runs=20000, delta=1e-5, random_state=5)
    assert (res.epsilon_lower_bound > 1.0) is caught


def test_discrete_noise_releases_the_item_statistics_on_the_grid(monkeypatch):
    seen = []
    original = _solvers.grid_release
    monkeypatch.setattr(_completer, "grid_release",
                        lambda *a: seen.append(original(*a)) or seen[-1])
    train, _ = _item_bias_data(300, 10, 4)
    model = DPMatrixCompleter(epsilon=1.0, delta=1e-6, method="svd", rank=2,
                              noise="discrete_gaussian", random_state=0).fit(train)
    assert len(seen) == 1 and seen[0].shape == (20,)
    g = model.granularity_
    assert np.array_equal(seen[0], np.round(seen[0] / g) * g)


def test_item_biases_beat_user_centring_and_approach_the_non_private_bias_model():
    train, test = _item_bias_data()
    bounds = (1.0, 5.0)
    common = dict(delta=1e-6, method="svd", rating_bounds=bounds, random_state=0)
    user_only = _rmse(DPMatrixCompleter(epsilon=10.0, center="user", **common).fit(train),
                      train, test)
    private = _rmse(DPMatrixCompleter(epsilon=10.0, **common).fit(train), train, test)
    exact = _rmse(DPMatrixCompleter(epsilon=1e6, **common).fit(train), train, test)
    assert private < 0.6 * user_only
    assert exact < 0.4  # the noise level 0.3 plus clipping at the bounds
    assert private < 1.15 * exact


@pytest.mark.parametrize("method", ["frank_wolfe", "pursuit", "svd", "pgd"])
def test_defaults_fit_and_complete_every_method(method):
    train, test = _item_bias_data(500, 20, 6)
    model = DPMatrixCompleter(epsilon=1e6, method=method, rating_bounds=(1, 5),
                              max_iter=3, random_state=0).fit(train)
    half = 2.0
    expected_bound = 0.4 * half * math.sqrt(20) if method == "pgd" else 3.0 * half
    assert model._local_params["bound"] == pytest.approx(expected_bound)
    if method in ("frank_wolfe", "pgd"):
        assert model.nuclear_norm_ == pytest.approx(math.sqrt(500) * expected_bound)
    if method in ("pursuit", "svd"):
        assert len(model.components_) == (5 if method == "svd" else 3)  # default rank
    rows, cols, values = test
    item_mean = np.asarray(train.sum(axis=0)).ravel() / np.maximum(train.getnnz(axis=0), 1)
    assert _rmse(model, train, test) < 0.7 * np.sqrt(np.mean((item_mean[cols] - values) ** 2))
