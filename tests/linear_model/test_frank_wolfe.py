"""PrivateFrankWolfeClassifier: data_norm as a row L2 bound, default rules, zCDP default."""

import math

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import Normalizer

from skdp.accounting import zcdp_for_dp
from skdp.linear_model import PrivateFrankWolfeClassifier
from skdp.linear_model._frank_wolfe import (
    frank_wolfe_default_radius,
    frank_wolfe_default_steps,
    frank_wolfe_noise,
)


def _nonnegative_unit_rows(n, n_features=20, seed=0, weights=(0.75,)):
    """Imbalanced problem with nonnegative features (a large common component), unit rows."""
    X, y = make_classification(n + 2000, n_features, n_informative=6, n_redundant=4,
                               weights=list(weights), flip_y=0.02, random_state=seed)
    X = 1.0 / (1.0 + np.exp(-X))  # a fixed map into (0, 1), as the real tables are
    X = Normalizer().fit_transform(X)
    return X[:n], y[:n], X[n:], y[n:]


def test_data_norm_bounds_the_row_l2_norm():
    # Rows of norm 5 and data_norm = 1: every row is scaled back to norm 1, so the fit is
    # the one on the unit rows (an entrywise clip to [-1, 1] would leave other rows).
    X, y, _, _ = _nonnegative_unit_rows(500)
    kw = dict(epsilon=1.0, max_iter=20, l1_radius=10.0, classes=[0, 1], random_state=0)
    unit = PrivateFrankWolfeClassifier(**kw).fit(X, y)
    long = PrivateFrankWolfeClassifier(**kw).fit(5.0 * X, y)
    np.testing.assert_allclose(long.coef_, unit.coef_, atol=1e-12)
    np.testing.assert_allclose(long.intercept_, unit.intercept_, atol=1e-12)


def test_scaling_rows_and_data_norm_together_changes_no_prediction():
    # Default radius C ~ 1 / R and intercept feature R / sqrt(d): the vertex scores and
    # their noise are invariant, so the same draws select the same vertices.
    X, y, X_test, _ = _nonnegative_unit_rows(800)
    kw = dict(epsilon=1.0, classes=[0, 1], random_state=3)
    one = PrivateFrankWolfeClassifier(**kw).fit(X, y)
    three = PrivateFrankWolfeClassifier(data_norm=3.0, **kw).fit(3.0 * X, y)
    assert three.l1_radius_ == pytest.approx(one.l1_radius_ / 3.0)
    assert three.n_iter_ == one.n_iter_
    np.testing.assert_allclose(three.decision_function(3.0 * X_test),
                               one.decision_function(X_test), rtol=1e-9, atol=1e-9)


def test_default_accounting_is_zcdp_and_thesis_adds_more_noise():
    X, y, _, _ = _nonnegative_unit_rows(2000)
    est = PrivateFrankWolfeClassifier(epsilon=1.0, max_iter=100, classes=[0, 1],
                                      random_state=0).fit(X, y)
    assert est.accounting == "zcdp"
    zcdp = frank_wolfe_noise(2000, 1.0, est.l1_radius_, 1.0, 1 / 2000**2, 100, "zcdp")[0]
    assert est.noise_scale_ == zcdp
    thesis = PrivateFrankWolfeClassifier(epsilon=1.0, max_iter=100, accounting="thesis",
                                         classes=[0, 1], random_state=0).fit(X, y)
    # Thakkar (2019), Alg. 5's Laplace scale: over twice the zCDP Gumbel scale at T = 100.
    assert thesis.noise_scale_ > 2.0 * est.noise_scale_
    assert thesis.privacy_spent_ == est.privacy_spent_


@pytest.mark.parametrize("n, p, epsilon", [(5000, 41, 1.0), (20000, 26, 1.0), (3000, 21, 0.5)])
def test_default_steps_are_the_most_whose_noise_is_small(n, p, epsilon):
    delta = 1.0 / n**2
    steps = frank_wolfe_default_steps(n, p, epsilon, delta)

    def level(t):  # Gumbel scale over the score range C R, times ln(2 p)
        return frank_wolfe_noise(n, 1.0, 1.0, epsilon, delta, t, "zcdp")[0] * math.log(2 * p)

    assert 1 < steps < 1000
    assert level(steps) <= 0.04 < level(steps + 1)
    # The zCDP closed form, 0.04^2 n^2 rho / (2 ln^2(2 p)), within a step or two.
    closed = 0.04**2 * n**2 * zcdp_for_dp(epsilon, delta) / (2 * math.log(2 * p) ** 2)
    assert steps == pytest.approx(closed, abs=2)


def test_default_steps_and_radius_at_the_extremes():
    assert frank_wolfe_default_steps(3000, 21, 1e6, 1 / 3000**2) == 1000
    assert frank_wolfe_default_steps(3000, 21, 0.01, 1 / 3000**2) == 1
    assert frank_wolfe_default_steps(3000, 21, 0.01, 0.0) == 1
    # 4.5 sqrt(T) up to T = 20, then T, capped at 200.
    assert frank_wolfe_default_radius(1) == pytest.approx(4.5)
    assert frank_wolfe_default_radius(16) == pytest.approx(18.0)
    assert frank_wolfe_default_radius(21) == pytest.approx(21.0)
    assert frank_wolfe_default_radius(100) == pytest.approx(100.0)
    assert frank_wolfe_default_radius(200) == pytest.approx(200.0)
    assert frank_wolfe_default_radius(1000) == pytest.approx(200.0)
    assert frank_wolfe_default_radius(100, data_norm=2.0) == pytest.approx(50.0)


def test_fitted_defaults_follow_the_rules_for_the_joint_class_problems():
    X, y, _, _ = _nonnegative_unit_rows(1500)
    y3 = np.where(X[:, 0] > np.median(X[:, 0]), 2, y)
    est = PrivateFrankWolfeClassifier(epsilon=3.0, classes=[0, 1, 2], random_state=0).fit(X, y3)
    # One-vs-rest: the 3 problems' 3 T selections share (epsilon, delta) (rho / 3 each);
    # p = 20 features + intercept.
    steps = frank_wolfe_default_steps(1500, 21, 3.0, 1 / 1500**2, n_problems=3)
    assert est.n_iter_ == steps
    assert est.l1_radius_ == frank_wolfe_default_radius(steps, n_classes=3)
    assert est.noise_scale_ == frank_wolfe_noise(1500, 1.0, est.l1_radius_, 3.0,
                                                 1 / 1500**2, steps, n_problems=3)[0]


def test_defaults_at_huge_epsilon_match_logistic_regression():
    # The contract on unit-norm rows: within 1.5 points of LogisticRegression().
    X, y, X_test, y_test = _nonnegative_unit_rows(3000)
    twin = LogisticRegression().fit(X, y).score(X_test, y_test)
    private = PrivateFrankWolfeClassifier(epsilon=1e6, classes=[0, 1], random_state=0)
    assert private.fit(X, y).score(X_test, y_test) >= twin - 0.015
    assert twin > max(np.mean(y_test), 1 - np.mean(y_test)) + 0.05  # the task is not trivial


def test_defaults_at_epsilon_one_beat_the_majority():
    X, y, X_test, y_test = _nonnegative_unit_rows(6000, seed=1)
    majority = max(np.mean(y_test), 1 - np.mean(y_test))
    scores = [PrivateFrankWolfeClassifier(epsilon=1.0, classes=[0, 1], random_state=seed)
              .fit(X, y).score(X_test, y_test) for seed in range(3)]
    assert np.mean(scores) > majority + 0.02


def test_entry_bound_clips_entries_and_calibrates_the_noise():
    # Many features of bounded size: entries in [-1, 1] (clipped), rows of norm up to
    # sqrt(d). The noise follows min(entry_bound, data_norm), not the row norm.
    rng = np.random.default_rng(0)
    X = rng.normal(0.0, 2.0, size=(400, 50))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    kw = dict(epsilon=3.0, max_iter=10, l1_radius=5.0, data_norm=np.sqrt(50), classes=[0, 1],
              random_state=0)
    est = PrivateFrankWolfeClassifier(entry_bound=1.0, **kw).fit(X, y)
    assert est.noise_scale_ == frank_wolfe_noise(400, 1.0, 5.0, 3.0, 1 / 400**2, 10)[0]
    clipped = PrivateFrankWolfeClassifier(entry_bound=1.0, **kw).fit(np.clip(X, -1, 1), y)
    np.testing.assert_allclose(clipped.coef_, est.coef_, atol=1e-12)
    # Without it the same rows need data_norm = sqrt(50) as the entry bound: 7 times the noise.
    row_only = PrivateFrankWolfeClassifier(**kw).fit(np.clip(X, -1, 1), y)
    assert row_only.noise_scale_ == pytest.approx(np.sqrt(50) * est.noise_scale_)
    # A larger entry_bound than data_norm changes nothing.
    loose = PrivateFrankWolfeClassifier(entry_bound=100.0, **kw).fit(X, y)
    assert loose.noise_scale_ == PrivateFrankWolfeClassifier(**kw).fit(X, y).noise_scale_


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, "1"])
def test_bad_entry_bound_fails_before_spending(bad):
    X, y, _, _ = _nonnegative_unit_rows(200)
    with pytest.raises((ValueError, TypeError), match="entry_bound"):
        PrivateFrankWolfeClassifier(entry_bound=bad, classes=[0, 1]).fit(X, y)


def _data(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), np.arange(n) % k


def test_frank_wolfe_scale_per_class():
    X, y = _data(80, 3, 3)
    est = PrivateFrankWolfeClassifier(epsilon=1.0, delta=1e-5, classes=[0, 1, 2],
                                      random_state=0).fit(X, y)
    scale = frank_wolfe_noise(80, 1.0, est.l1_radius_, 1.0 / 3, 1e-5 / 3, est.n_iter_,
                              est.accounting)[0]
    assert est.noise_scale_ == scale
