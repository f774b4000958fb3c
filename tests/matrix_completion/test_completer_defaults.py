"""DPMatrixCompleter's defaults: method, rank, ridge and the public nuclear-norm rules."""

import math

import numpy as np
import pytest
from sklearn.base import clone

from skdp.datasets import make_low_rank_ratings
from skdp.matrix_completion import DPMatrixCompleter


def test_default_is_svd_with_rank_five_and_ridge_point_three():
    data = make_low_rank_ratings(2000, 20, n_ratings=5, random_state=0)
    model = DPMatrixCompleter(random_state=0).fit(data.train)
    assert model._local_params["method"] == "svd" and model._local_params["ridge"] == 0.3
    assert model.components_.shape == (5, 20) and model.nuclear_norm_ is None
    np.testing.assert_allclose(model.components_ @ model.components_.T, np.eye(5), atol=1e-8)
    pursuit = DPMatrixCompleter(method="pursuit", random_state=0).fit(data.train)
    assert pursuit.components_.shape == (3, 20)
    assert DPMatrixCompleter(random_state=0).fit(data.train[:, :4]).components_.shape == (4, 4)


@pytest.mark.parametrize("eigensolver", ["exact", "oja"])
def test_svd_rank_does_not_change_the_privacy_constants(eigensolver):
    # One subspace release: its sensitivity is sqrt(2) Delta^2 (exact) or
    # oja_iter blocks of min(sqrt(2), sqrt(rank)) Delta^2 (Oja): rank 3 and the
    # default 5 are calibrated alike.
    data = make_low_rank_ratings(500, 12, n_ratings=5, random_state=0)
    kw = dict(epsilon=1.0, delta=1e-5, eigensolver=eigensolver, random_state=0)
    default = DPMatrixCompleter(**kw).fit(data.train)
    three = DPMatrixCompleter(rank=3, **kw).fit(data.train)
    assert default.sensitivity_ == three.sensitivity_ and default.sigma_ == three.sigma_


def test_matrix_completer_frank_wolfe_nuclear_norm_rule():
    data = make_low_rank_ratings(2000, 20, n_ratings=5, random_state=0)
    model = DPMatrixCompleter(method="frank_wolfe", random_state=0).fit(data.train)
    assert model.nuclear_norm is None
    # row_norm_bound=None: 3 times the half range of the ratings ([-1, 1] by default).
    assert model.nuclear_norm_ == pytest.approx(math.sqrt(2000) * 3.0)
    assert model.transform(data.train[:3]).shape == (3, 20)
    explicit = DPMatrixCompleter(method="frank_wolfe", nuclear_norm=7.0, row_norm_bound=2.0,
                                 random_state=0)
    assert explicit.fit(data.train).nuclear_norm_ == 7.0
    rule = clone(explicit).set_params(nuclear_norm=None).fit(data.train)
    assert rule.nuclear_norm_ == pytest.approx(math.sqrt(2000) * 2.0)
    assert DPMatrixCompleter(method="pursuit", random_state=0).fit(data.train).nuclear_norm_ \
        is None


def test_matrix_completer_pgd_has_a_default_nuclear_norm():
    data = make_low_rank_ratings(200, 20, n_ratings=5, random_state=0)
    model = DPMatrixCompleter(method="pgd", max_iter=2, random_state=0).fit(data.train)
    # sqrt(n_users) * row_norm_bound, row_norm_bound = 0.4 sqrt(n_items) (half range 1).
    assert model.nuclear_norm_ == pytest.approx(math.sqrt(200) * 0.4 * math.sqrt(20))


@pytest.mark.parametrize("n_users", [1, 30])
def test_matrix_completion_default_nuclear_norm(n_users):
    rng = np.random.default_rng(0)
    R = rng.normal(size=(n_users, 6))
    R[rng.random(R.shape) < 0.5] = np.nan
    kw = dict(epsilon=1.0, delta=1e-3, random_state=0, method="frank_wolfe")
    default = DPMatrixCompleter(**kw).fit(R)
    assert default.nuclear_norm_ == math.sqrt(n_users) * default.row_norm_bound_
    explicit = DPMatrixCompleter(nuclear_norm=default.nuclear_norm_, **kw).fit(R)
    np.testing.assert_array_equal(default.components_, explicit.components_)
    np.testing.assert_array_equal(default.transform(R), explicit.transform(R))
