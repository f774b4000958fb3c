"""PermutationSGDClassifier with exact discrete Gaussian output noise (mechanism='discrete_gaussian')."""

import math
import pickle
from fractions import Fraction

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_classification
from sklearn.model_selection import GridSearchCV, train_test_split

from skdp import BudgetAccountant, PrivacyBudget
from skdp.accounting import zcdp_for_dp
from skdp.linear_model import PermutationSGDClassifier
from skdp.linear_model._base import add_intercept_column
from skdp.linear_model._losses import get_loss
from skdp.linear_model._permutation_sgd import (
    _permutation_sgd_path,
    permutation_sgd_weight_bound,
)
from skdp.mechanisms import gaussian_sigma_analytic
from skdp.testing import audit_epsilon
from skdp.utils import clip_rows_l2, spawn_random_states
from skdp.utils._multiclass import OneVsRestBudget
from linear_model.test_convex import _pair  # rows x = 0 plus one row x = 1 whose label flips

DG = dict(mechanism="discrete_gaussian")


# --- the grid and the noise parameter, by hand -------------------------------------------------

def test_discrete_gaussian_parameters_by_hand():
    X, y = make_blobs(100, n_features=4, centers=2, random_state=0)
    est = PermutationSGDClassifier(epsilon=2.0, delta=1e-5, data_norm=3.0, classes=[0, 1],
                                   learning_rate=4 / 9, batch_size=50, epochs=5,
                                   random_state=0, **DG).fit(X, y)
    # Logistic beta = R^2 / 4 = 9 / 4, eta = 1 / beta = 4 / 9 (explicit); n = 100, b = 50: 2 minibatches
    # of 50, k = 5 passes. Delta_2 = 2 k eta R / b = 2 * 5 * (4/9) * 3 / 50 = 4 / 15.
    assert est.sensitivity_ == pytest.approx(4 / 15, rel=1e-14)
    # The grid follows the analytic Gaussian sigma at (2, 1e-5), which lies in [0.5, 1):
    # g = 2**(-1 - 30). (The weight bound T eta R = 10 * 4/9 * 3 = 13.3 needs only 2**-48.)
    analytic = gaussian_sigma_analytic(4 / 15, 2.0, 1e-5)
    assert 0.5 <= analytic < 1.0
    g = est.noise_granularity_
    assert g == 2.0**-31
    # Grid L2^2 <= Q + 2 min(Q, isqrt(F Q)) + F, Q = ceil((Delta_2 / g)^2) - 1, F = 5
    # coefficients (intercept); sigma^2 = that / (2 rho), rho the zCDP budget of (2, 1e-5).
    Q = math.ceil((Fraction(est.sensitivity_) / Fraction(g)) ** 2) - 1
    l2_sq = Q + 2 * min(Q, math.isqrt(5 * Q)) + 5
    rho = 0.10825636382305726  # CKS Cor. 13 at (2, 1e-5), decimal (test_zcdp_conversion.py)
    assert rho == pytest.approx(zcdp_for_dp(2.0, 1e-5), rel=1e-9)
    assert est.noise_std_ == pytest.approx(math.sqrt(l2_sq / (2 * rho)) * g, rel=2e-7)
    assert est.noise_std_ == pytest.approx((4 / 15) / math.sqrt(2 * rho), rel=1e-6)
    assert est.privacy_spent_ == PrivacyBudget(2.0, 1e-5)


def test_grid_rounding_term_by_hand_in_exact_arithmetic():
    # F = 301 coefficients at epsilon = 0.05: the grid's term 2 min(Q, isqrt(F Q)) + F is
    # about 1e-6 of sigma^2 in steps, above the sampler parameter's 2**-22 rounding, so
    # dropping it fails the lower bound here.
    X = np.random.default_rng(0).uniform(-1.0, 1.0, size=(60, 300))
    y = np.arange(60) % 2
    eps, delta, F = 0.05, 1e-6, 301
    est = PermutationSGDClassifier(epsilon=eps, delta=delta, classes=[0, 1], batch_size=10,
                                   epochs=2, learning_rate=4.0, random_state=0, **DG).fit(X, y)
    # R = 1: eta = 4 = 1 / beta, Delta_2 = 2 k eta R / b = 2 * 2 * 4 / 10 = 1.6.
    assert est.sensitivity_ == pytest.approx(1.6, rel=1e-14)
    g = Fraction(est.noise_granularity_)
    assert g == Fraction(2) ** (math.floor(math.log2(gaussian_sigma_analytic(1.6, eps, delta)))
                                - 30)
    Q = math.ceil((Fraction(est.sensitivity_) / g) ** 2) - 1
    l2_sq = Q + 2 * min(Q, math.isqrt(F * Q)) + F
    target = Fraction(l2_sq) / (2 * Fraction(zcdp_for_dp(eps, delta)))
    steps2 = (Fraction(est.noise_std_) / g) ** 2
    assert target * (1 - Fraction(1, 10**9)) <= steps2 <= target * (1 + Fraction(1, 2**21))
    assert (l2_sq - Q) / Fraction(Q) > Fraction(1, 10**6)  # the term this test guards


def test_weight_bound_by_hand_and_attained():
    # Huber (h = 0.1) keeps |l'| = 1 while the margin is below 0.9: every row x = 1, y = +1
    # pushes w up by eta R per update, so the convex bound T eta R is attained exactly.
    loss = get_loss("huber", 0.1)
    X, y = np.ones((20, 1)), np.ones(20)
    settings = dict(n_batches=4, epochs=3, alpha=0.0, beta=5.0, strongly_convex=False,
                    learning_rate=0.005)
    w = _permutation_sgd_path(X, y, loss, settings, np.random.default_rng(0))
    bound = permutation_sgd_weight_bound(12, 1.0, learning_rate=0.005)
    assert bound == pytest.approx(12 * 0.005)
    assert w[0] == pytest.approx(bound, rel=1e-12)
    # Strongly convex, alpha = 2: w_t rises towards R / alpha = 0.5 (margin 0.5 < 0.9) and
    # never passes it.
    settings.update(strongly_convex=True, alpha=2.0, beta=7.0, epochs=200)
    w = _permutation_sgd_path(X, y, loss, settings, np.random.default_rng(0))
    bound = permutation_sgd_weight_bound(800, 1.0, alpha=2.0, strongly_convex=True)
    assert bound == 0.5
    assert 0.99 * bound < w[0] <= bound


@pytest.mark.parametrize("strongly_convex", [False, True])
def test_released_weights_are_exact_multiples_of_the_grid(strongly_convex):
    X, y = make_blobs(300, centers=3, n_features=3, random_state=0)
    est = PermutationSGDClassifier(epsilon=1.0, delta=1e-6, classes=[0, 1, 2], alpha=0.1,
                                   strongly_convex=strongly_convex, random_state=0,
                                   **DG).fit(X, y)
    g = est.noise_granularity_
    for values in (est.coef_, est.intercept_):
        steps = values / g
        assert np.array_equal(steps, np.round(steps)) and np.abs(steps).max() < 2.0**53
    assert est.coef_.shape == (3, 3)
    assert est.privacy_spent_ == PrivacyBudget(1.0, 1e-6)


def test_released_noise_has_the_calibrated_spread():
    # All-zero rows and no intercept: every gradient is 0, the SGD output is 0, the release g Z.
    X, y = np.zeros((50, 2000)), np.arange(50) % 2
    est = PermutationSGDClassifier(epsilon=1.0, delta=1e-6, fit_intercept=False,
                                   classes=[0, 1], random_state=7, **DG).fit(X, y)
    z = est.coef_[0] / est.noise_granularity_
    assert np.array_equal(z, np.round(z))
    ratio = np.std(z) * est.noise_granularity_ / est.noise_std_  # rel. error 1 / sqrt(2 N)
    assert abs(ratio - 1.0) <= 5.5 / math.sqrt(2 * z.size)


# --- audit --------------------------------------------------------------------------------------

class _QuarterNoise(PermutationSGDClassifier):
    def _discrete_noise(self, settings, budget):
        granularity, sigma2, sigma = super()._discrete_noise(settings, budget)
        return granularity, sigma2 / 16, sigma / 4


def _audit(cls, n_runs, seed):
    # One pass, b = 1, eta = 0.1, Huber: the outputs are exactly +-eta, the sensitivity 2 eta.
    d0, d1 = _pair()

    def run(data, rng):
        est = cls(epsilon=2.0, delta=1e-5, loss="huber", learning_rate=0.1, batch_size=1,
                  epochs=1, fit_intercept=False, classes=[0, 1], random_state=rng, **DG)
        return est.fit(*data).coef_[0, 0]

    return audit_epsilon(run, d0, d1, n_runs=n_runs, delta=1e-5,
                         random_state=seed).epsilon_lower_bound


def test_audit_passes_and_catches_quarter_noise():
    assert _audit(PermutationSGDClassifier, 600, 0) <= 2.0
    assert _audit(_QuarterNoise, 1500, 1) > 2.0


# --- utility ------------------------------------------------------------------------------------

def test_accuracy_matches_the_gaussian_mechanism():
    X, y = make_classification(4000, 10, n_informative=6, class_sep=1.5, random_state=4)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, random_state=0)
    scores = {
        mechanism: np.mean([
            PermutationSGDClassifier(epsilon=1.0, delta=1e-6, mechanism=mechanism,
                                     classes=[0, 1], random_state=s)
            # 60 seeds: one fit's accuracy has a spread of about 0.075 here, so the mean
            # difference has about 0.014 (with 6 seeds, 0.044: the 0.05 margin was ~1 sigma).
            .fit(X_tr, y_tr).score(X_te, y_te) for s in range(60)])
        for mechanism in ("gaussian", "discrete_gaussian")}
    assert min(scores.values()) > 0.75, scores
    assert abs(scores["discrete_gaussian"] - scores["gaussian"]) < 0.05, scores


# --- API ----------------------------------------------------------------------------------------

def test_pickle_clone_and_grid_search():
    X, y = make_blobs(2000, centers=2, n_features=2, random_state=2)
    # eta = 1 / beta = 0.04 (explicit): well-separated blobs far from the origin want a
    # larger step than the default (see PermutationSGDClassifier, Notes).
    est = PermutationSGDClassifier(epsilon=2.0, delta=1e-6, classes=[0, 1], data_norm=10.0,
                                   learning_rate=0.04, batch_size=50, epochs=5,
                                   random_state=3, **DG).fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    assert np.array_equal(again.coef_, est.coef_)
    assert np.array_equal(clone(est).fit(X, y).coef_, est.coef_)  # same seed, same draws
    grid = GridSearchCV(clone(est), {"mechanism": ["gaussian", "discrete_gaussian"]},
                        cv=2).fit(X, y)
    assert grid.cv_results_["mean_test_score"].min() > 0.8
    best = grid.best_estimator_
    assert (best.noise_granularity_ is None) == (best.mechanism == "gaussian")


@pytest.mark.parametrize("params, match", [
    ({"mechanism": "discrete_laplace"}, "mechanism"),
    ({"mechanism": "laplace"}, "mechanism"),
    ({"mechanism": "discrete_gaussian", "calibration": "thesis"}, "zCDP"),
    # The zCDP budget of epsilon = 1e-200 underflows; sigma beyond 2**52 steps at 1e-17
    # (with the CKS conversion a tiny epsilon keeps a rho of about delta^2: delta tiny too).
    ({"mechanism": "discrete_gaussian", "epsilon": 1e-200, "delta": 1e-300}, "too small"),
    ({"mechanism": "discrete_gaussian", "epsilon": 1e-17, "delta": 1e-300}, "too small"),
])
def test_bad_mechanism_fails_before_spending(params, match):
    X, y = make_blobs(40, centers=2, n_features=2, random_state=0)
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match=match):
        PermutationSGDClassifier(classes=[0, 1], accountant=accountant,
                                 **{"delta": 1e-6, **params}).fit(X, y)
    assert accountant.spent is None


def test_default_is_the_float_gaussian_release():
    # The default draws exactly what it drew before the option existed: the SGD path on the
    # clipped, augmented rows from the binary problem's generator, then N(0, sigma^2).
    X, y = make_blobs(120, centers=2, n_features=3, random_state=0)
    est = PermutationSGDClassifier(epsilon=1.0, delta=1e-6, classes=[0, 1],
                                   random_state=5).fit(X, y)
    assert est.noise_granularity_ is None
    settings = est._check_params(120)
    est._prepare(settings, OneVsRestBudget(PrivacyBudget(1.0, 1e-6), 1))  # the default step
    assert settings["learning_rate"] == est.learning_rate_
    rng = spawn_random_states(np.random.default_rng(5), 1)[0]
    X_aug = clip_rows_l2(add_intercept_column(X, 1.0), 1.0)
    w = _permutation_sgd_path(X_aug, np.where(y == 1, 1.0, -1.0), get_loss("logistic", 0.1),
                              settings, rng)
    sigma = gaussian_sigma_analytic(est.sensitivity_, 1.0, 1e-6)
    assert est.noise_std_ == sigma
    w = w + rng.normal(0.0, sigma, size=w.shape)
    assert np.array_equal(est.coef_[0], w[:-1]) and est.intercept_[0] == w[-1]
