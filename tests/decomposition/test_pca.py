"""DPPCA: sensitivity, audit, accuracy on a real table, pipelines and refusals."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant
from skdp.datasets import load_real_dataset
from skdp.decomposition import DPPCA
from skdp.decomposition._pca import pca_sensitivity
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.testing import audit_epsilon


def test_sensitivity_matches_hand_computed_constants():
    # sqrt(2) R^2 per matrix release (replace-one), + 2 R^4 for the private mean, + R^4 trace.
    assert pca_sensitivity(3.0) == pytest.approx(math.sqrt(2) * 9)
    assert pca_sensitivity(3.0, private_mean=True) == pytest.approx(2 * 9)
    assert pca_sensitivity(1.0, n_releases=10, private_mean=True, trace=True) == pytest.approx(
        math.sqrt(23))


def test_second_moment_sensitivity_is_reached_by_orthogonal_rows():
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(2000):
        x, y = rng.normal(size=(2, 4))
        x, y = x / np.linalg.norm(x), y / np.linalg.norm(y)
        worst = max(worst, np.linalg.norm(np.outer(x, x) - np.outer(y, y)))
    e = np.eye(4)
    assert np.linalg.norm(np.outer(e[0], e[0]) - np.outer(e[1], e[1])) == pytest.approx(
        pca_sensitivity(1.0))
    assert worst <= pca_sensitivity(1.0) + 1e-12


class _QuarterNoise(DPPCA):
    def _sigma(self, sensitivity, budget):
        return super()._sigma(sensitivity, budget) / 4


def _audit(cls, n_runs=800):
    def mechanism(data, rng):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = cls(epsilon=2.0, delta=1e-3, center=0.0, random_state=rng).fit(data)
        return est.explained_variance_[0]

    return audit_epsilon(mechanism, np.zeros((2, 1)), np.array([[0.0], [1.0]]), n_runs=n_runs,
                         delta=1e-3, random_state=0)


def test_audit_passes_and_catches_a_quarter_noise_copy():
    assert _audit(DPPCA).epsilon_lower_bound <= 2.0
    assert _audit(_QuarterNoise).epsilon_lower_bound > 2.0


def _captured(components, X, mean):
    Z = (X - mean) @ components.T
    return (Z**2).sum() / ((X - mean) ** 2).sum()


@pytest.mark.parametrize("solver", ["covariance", "oja"])
def test_captured_variance_near_non_private_on_a_real_table(solver):
    data = load_real_dataset("diamonds_cut")  # 54k rows, features in [0, 1]
    X_train, X_test = train_test_split(data.data, test_size=0.25, random_state=0)
    mean = X_test.mean(axis=0)
    reference = _captured(PCA(3).fit(X_train).components_, X_test, mean)
    private = DPPCA(3, epsilon=1.0, data_norm=data.data_norm, svd_solver=solver,
                    random_state=0).fit(X_train)
    assert _captured(private.components_, X_test, mean) >= 0.9 * reference
    assert private.explained_variance_ratio_.sum() <= 1.0 + 1e-12


def test_huge_epsilon_gives_the_non_private_pca():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 4)) * [3, 2, 1, 0.5] / 20
    ref = PCA(2).fit(X)
    est = DPPCA(2, epsilon=1e6, random_state=0).fit(X)
    assert np.allclose(np.abs(est.components_ @ ref.components_.T), np.eye(2), atol=1e-3)
    assert np.allclose(est.mean_, X.mean(axis=0), atol=1e-4)
    assert np.allclose(est.explained_variance_, ref.explained_variance_ * 499 / 500, rtol=1e-3)
    assert np.allclose(est.inverse_transform(est.transform(X)),
                       ref.inverse_transform(ref.transform(X)), atol=1e-3)


def test_oja_accepts_sparse_input_and_matches_dense():
    X = sp.random(300, 30, density=0.1, random_state=3, format="csr")
    dense = DPPCA(2, epsilon=1e6, svd_solver="oja", n_iter=30, random_state=0).fit(X.toarray())
    sparse = DPPCA(2, epsilon=1e6, svd_solver="oja", n_iter=30, random_state=0).fit(X)
    assert np.allclose(dense.components_, sparse.components_, atol=1e-8)


def test_transformed_rows_are_bounded_by_output_norm():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 5)) * 5
    est = DPPCA(3, epsilon=0.5, random_state=0).fit(X)
    norms = np.linalg.norm(est.transform(X), axis=1)
    assert norms.max() <= est.output_norm_ + 1e-12
    assert est.output_norm_ <= 2.0 * est.data_norm


def test_pipeline_with_amp_charges_both_steps_to_one_accountant():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(2000, 6))
    y = (X[:, 0] + 0.3 * rng.normal(size=2000) > 0).astype(int)
    X /= np.linalg.norm(X, axis=1).max()
    acc = BudgetAccountant(epsilon=2.0, delta=1e-4)
    pipe = make_pipeline(
        DPPCA(3, epsilon=0.5, delta=1e-7, random_state=0, accountant=acc),
        # PCA output rows have norm <= data_norm + ||mean_|| <= 2 data_norm.
        DPLogisticRegressionAMP(epsilon=1.0, delta=1e-7, data_norm=2.0, classes=[0, 1],
                                random_state=0, accountant=acc))
    pipe.fit(X, y)
    assert acc.spent.epsilon == pytest.approx(1.5)
    assert acc.spent.delta == pytest.approx(2e-7)
    assert [s.by for s in acc.spends] == ["DPPCA", "DPLogisticRegressionAMP"]
    assert pipe.score(X, y) > 0.8


@pytest.mark.parametrize("params, match", [
    ({"n_components": 7}, "n_components"),
    ({"center": [0.0, 1.0]}, "center"),
    ({"center": "mean"}, "center"),
    ({"svd_solver": "arpack"}, "svd_solver"),
    ({"svd_solver": "oja"}, "n_components"),
    ({"data_norm": -1.0}, "data_norm"),
    ({"epsilon": 1.0, "delta": 0.0}, "delta"),
])
def test_bad_input_is_refused_before_the_charge(params, match):
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    X = np.random.default_rng(0).normal(size=(50, 6))
    with pytest.raises((ValueError, TypeError), match=match):
        DPPCA(accountant=acc, **params).fit(X)
    assert acc.spent is None
