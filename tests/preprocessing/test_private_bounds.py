"""DPNormClipper and DPFeatureClipper: the quantile mechanism, its audit, pipelines, refusals."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant
from skdp.benchmarks._real import real_splits
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.preprocessing import DPFeatureClipper, DPNormClipper
from skdp.preprocessing._private_bounds import (
    above_threshold_scales,
    private_quantile,
    quantile_counts,
    quantile_grid,
)
from skdp.testing import audit_epsilon


def test_counts_and_noise_scales_are_hand_computed():
    counts = quantile_counts(np.array([4.0, 1.0, 3.0, 2.0]), np.array([0.5, 1.5, 2.5, 5.0]))
    assert counts.tolist() == [0, 1, 2, 4]
    # AboveThreshold (Dwork and Roth 2014, Alg. 1): Lap(2 / eps) threshold, Lap(4 / eps) queries.
    assert above_threshold_scales(0.5) == (4.0, 8.0)


def test_grid_has_twenty_candidates_per_decade_and_hits_the_ends():
    grid = quantile_grid(1e-3, 1e6)
    assert grid.size == 181
    assert grid[0] == pytest.approx(1e-3) and grid[-1] == pytest.approx(1e6)
    assert np.allclose(grid[1:] / grid[:-1], 10 ** 0.05)
    assert np.min(np.abs(grid - 1.0)) < 1e-9


def test_huge_epsilon_releases_the_first_candidate_past_the_quantile():
    values = np.arange(1, 1001, dtype=float)
    grid = quantile_grid(1.0, 1e4)
    first = grid[np.flatnonzero(quantile_counts(values, grid) >= 750)[0]]
    assert private_quantile(values, 0.75, grid, 1e6, np.random.default_rng(0)) == first
    assert 750 <= first < 750 * 1.13
    # Beyond the search range: the top end.
    assert private_quantile(values * 1e6, 0.75, grid, 1e6, np.random.default_rng(0)) == grid[-1]


def test_upper_quantile_is_not_lost_above_the_data():
    # Every candidate above the data has the same rank; the scan stops at the first.
    values = np.random.default_rng(0).uniform(0, 10, 20000)
    grid = quantile_grid(1e-3, 1e6)
    released = [private_quantile(values, 0.99, grid, 0.5, np.random.default_rng(s))
                for s in range(20)]
    assert max(released) < 11.3


class _QuarterNoise(DPNormClipper):
    def _quantile(self, values, q, grid, epsilon, rng):
        return super()._quantile(values, q, grid, 4 * epsilon, rng)  # Gumbel scale / 4


def _audit(cls):
    # One row's norm moves from 1 to 10: the counts of the candidates in [1, 10) drop from
    # the threshold q n = 2 to 1. The mechanism is the estimator's own quantile method, on
    # the rows' norms as in fit.
    d0, d1 = np.array([1.0, 1.0, 10.0, 10.0]), np.array([1.0, 10.0, 10.0, 10.0])
    grid = quantile_grid(0.5, 20.0)
    est = cls(epsilon=1.0)

    def mechanism(norms, rng):
        return est._quantile(norms, 0.5, grid, 1.0, rng)

    return audit_epsilon(mechanism, d0, d1, n_runs=10000, random_state=0)


def test_quantile_audit_passes_and_catches_a_quarter_noise_copy():
    assert _audit(DPNormClipper).epsilon_lower_bound <= 1.0
    assert _audit(_QuarterNoise).epsilon_lower_bound > 1.0


def test_norm_clipper_rescales_rows_to_unit_norm_keeping_directions():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 4)) * 50.0
    clipper = DPNormClipper(epsilon=1.0, random_state=0).fit(X)
    norms = np.linalg.norm(X, axis=1)
    assert abs(clipper.data_norm_ / np.quantile(norms, 0.9) - 1) < 0.15
    Z = clipper.transform(X)
    assert np.linalg.norm(Z, axis=1).max() <= 1.0 + 1e-12
    assert np.allclose(Z / np.linalg.norm(Z, axis=1)[:, None], X / norms[:, None])
    small = norms <= clipper.data_norm_
    assert np.allclose(clipper.inverse_transform(Z)[small], X[small])
    raw = DPNormClipper(epsilon=1.0, rescale=False, random_state=0).fit(X)
    assert np.linalg.norm(raw.transform(X), axis=1).max() <= raw.output_norm_ * (1 + 1e-12)
    assert raw.privacy_spent_.epsilon == 1.0 and raw.privacy_spent_.delta == 0.0


def test_norm_clipper_keeps_sparse_input_sparse():
    X = sp.random(200, 30, density=0.2, random_state=0, format="csr") * 10
    clipper = DPNormClipper(epsilon=1.0, random_state=0).fit(X)
    Z = clipper.transform(X)
    assert sp.issparse(Z)
    assert np.allclose(Z.toarray(), clipper.transform(X.toarray()))


def test_pipeline_charges_clipper_and_model_to_one_accountant():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(2000, 5)) * 30.0
    y = (X[:, 0] > 0).astype(int)
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    pipe = make_pipeline(DPNormClipper(epsilon=0.1, random_state=0, accountant=acc),
                         DPLogisticRegressionAMP(epsilon=0.9, delta=1e-7, classes=[0, 1],
                                                 random_state=0, accountant=acc))
    pipe.fit(X, y)
    assert acc.spent.epsilon == pytest.approx(1.0)
    assert [s.by for s in acc.spends] == ["DPNormClipper", "DPLogisticRegressionAMP"]
    assert pipe.score(X, y) > 0.9


def test_private_norm_bound_matches_the_public_bound_on_a_real_table():
    split = next(real_splits("credit_data", seeds=(0,)))
    kw = dict(classes=split.classes, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        public = DPLogisticRegressionAMP(epsilon=1.0, data_norm=split.meta.data_norm, **kw)
        public = public.fit(split.X_train, split.y_train).score(split.X_test, split.y_test)
        private = make_pipeline(DPNormClipper(epsilon=0.1, random_state=0),
                                DPLogisticRegressionAMP(epsilon=0.9, **kw))
        private = private.fit(split.X_train, split.y_train).score(split.X_test, split.y_test)
    assert private >= public - 0.02
    assert private > split.trivial_score()


def test_feature_clipper_releases_quantile_ranges_and_maps_them():
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.uniform(0, 10, 20000), rng.uniform(-50, 50, 20000),
                         np.full(20000, 3.0)])
    clipper = DPFeatureClipper(epsilon=3.0, random_state=0).fit(X)
    expected = np.quantile(X, [0.01, 0.99], axis=0).T
    width = (expected[:2, 1] - expected[:2, 0])[:, None]
    assert np.all(np.abs(clipper.bounds_[:2] - expected[:2]) <= 0.15 * width)
    # Both ends round outwards: the ranges contain the quantiles (up to the noisy count).
    assert np.all(clipper.bounds_[:2, 0] <= expected[:2, 0] + 0.01 * width[:, 0])
    assert np.all(clipper.bounds_[:2, 1] >= expected[:2, 1] - 0.01 * width[:, 0])
    Z = clipper.transform(X)
    assert Z.min() >= 0.0 and Z.max() <= 1.0
    assert np.ptp(Z[:, 2]) == 0.0 and clipper.bounds_[2, 0] <= 3.0 <= clipper.bounds_[2, 1]
    inside = np.all((X[:, :2] >= clipper.bounds_[:2, 0]) & (X[:, :2] <= clipper.bounds_[:2, 1]),
                    axis=1)
    assert np.allclose(clipper.inverse_transform(Z)[inside, :2], X[inside, :2])
    assert clipper.privacy_spent_.epsilon == 3.0


@pytest.mark.parametrize("cls, params, match", [
    (DPNormClipper, {"quantile": 1.0}, "quantile"),
    (DPNormClipper, {"norm_range": (0.0, 1.0)}, "norm_range"),
    (DPNormClipper, {"norm_range": (2.0, 1.0)}, "norm_range"),
    (DPNormClipper, {"rescale": "yes"}, "rescale"),
    (DPNormClipper, {"epsilon": 1e-320}, "epsilon|noise scale"),
    (DPFeatureClipper, {"quantiles": (0.9, 0.1)}, "quantiles"),
    (DPFeatureClipper, {"quantiles": 0.9}, "quantiles"),
    (DPFeatureClipper, {"search_range": (-1.0, 1.0)}, "search_range"),
    (DPFeatureClipper, {"feature_range": (1.0, 0.0)}, "feature_range"),
])
def test_bad_input_is_refused_before_the_charge(cls, params, match):
    acc = BudgetAccountant(epsilon=1e301)
    X = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises((ValueError, TypeError), match=match):
        cls(accountant=acc, **params).fit(X)
    assert acc.spent is None


def test_feature_clipper_warns_when_the_counts_are_mostly_noise():
    X = np.random.default_rng(0).uniform(size=(1000, 10))
    with pytest.warns(UserWarning, match="mostly noise"):
        DPFeatureClipper(epsilon=0.1, random_state=0).fit(X)  # 1000 * 0.1 / 20 = 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPFeatureClipper(epsilon=10.0, random_state=0).fit(X)  # 500
