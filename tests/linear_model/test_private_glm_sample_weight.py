"""``sample_weight`` in the private GLM classifiers (objective and output perturbation,
Frank-Wolfe, DP-SGD, permutation SGD): exact weighted computations, unit weights,
steering, validation before spending, and one weighted audit."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit

from skdp import BudgetAccountant
from skdp.linear_model import (
    DPSGDClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    PermutationSGDClassifier,
    PrivateFrankWolfeClassifier,
)
from skdp.linear_model import _private_glm
from skdp.testing import audit_epsilon

ESTIMATORS = [
    (ObjectivePerturbationClassifier, {}),
    (OutputPerturbationClassifier, {}),
    (PrivateFrankWolfeClassifier, {"l1_radius": 5.0, "max_iter": 40}),
    (DPSGDClassifier, {"epochs": 3}),
    (PermutationSGDClassifier, {"epochs": 3}),
]
IDS = [cls.__name__ for cls, _ in ESTIMATORS]


@pytest.fixture(scope="module")
def data():
    """Overlapping binary data with row norms below 1 (no row is clipped with the intercept
    left out) and random weights, a fifth of them 0."""
    rng = np.random.default_rng(0)
    n = 400
    y = np.arange(n) % 2
    X = np.column_stack([np.where(y == 1, 0.2, -0.2), np.zeros(n)]) + 0.2 * rng.normal(size=(n, 2))
    X /= np.maximum(1.0, 1.01 * np.linalg.norm(X, axis=1, keepdims=True))
    w = rng.uniform(size=n)
    w[rng.random(n) < 0.2] = 0.0
    return X, y, w


def _logistic_gradient(X, y_pm1, theta, weights):
    """Hand-written weighted mean logistic-loss gradient: (1/n) sum w_i l'(z_i) y_i x_i."""
    z = y_pm1 * (X @ theta)
    return X.T @ (weights * -expit(-z) * y_pm1) / len(y_pm1)


# --------------------------------------------------------------------------
# Each mechanism computes with the weighted gradient (noise removed by a subclass)
# --------------------------------------------------------------------------
class _NoiselessOutput(OutputPerturbationClassifier):
    def _noise_scale(self, settings, budget):
        return super()._noise_scale(settings, budget)[0], 1e-300


class _NoiselessObjective(ObjectivePerturbationClassifier):
    def _noise_terms(self, settings, budget, loss):
        eps_p, extra, _, _ = super()._noise_terms(settings, budget, loss)
        return eps_p, extra, 1e-300, 1e-300


@pytest.mark.parametrize("cls", [_NoiselessOutput, _NoiselessObjective])
def test_perturbation_releases_the_weighted_minimizer(data, cls):
    """The certified point zeroes the hand-computed weighted gradient, not the unweighted one."""
    X, y, w = data
    tol = 1e-10
    clf = cls(epsilon=1.0, alpha=0.01, tol=tol, fit_intercept=False, classes=[0, 1],
              random_state=0).fit(X, y, sample_weight=w)
    theta, y_pm1 = clf.coef_[0], 2.0 * y - 1.0
    reg = 0.01 + getattr(clf, "extra_regularization_", 0.0)
    weighted = _logistic_gradient(X, y_pm1, theta, w) + reg * theta
    unweighted = _logistic_gradient(X, y_pm1, theta, np.ones_like(w)) + reg * theta
    assert np.linalg.norm(weighted) <= tol * (1 + 1e-6)
    assert np.linalg.norm(unweighted) > 1e-3


class _NoiselessFW(PrivateFrankWolfeClassifier):
    def _noise(self, settings, budget):
        _, step_epsilon, mechanism = super()._noise(settings, budget)
        return 1e-12, step_epsilon, mechanism


def test_frank_wolfe_steps_on_the_weighted_gradient(data):
    X, y, w = data
    # Feature 1 is informative only on rows 0..99, which the weights favour,
    # so the weighted and unweighted paths pick different vertices.
    X = X.copy()
    X[:100, 1] = 0.8 * (2.0 * y[:100] - 1.0) - X[:100, 0]
    w = np.where(np.arange(len(y)) < 100, 1.0, 0.1 * w)
    C, T = 2.0, 15
    clf = _NoiselessFW(epsilon=1.0, delta=0.0, l1_radius=C, max_iter=T, fit_intercept=False,
                       classes=[0, 1], random_state=0)
    y_pm1 = 2.0 * y - 1.0

    def reference(weights):  # seed 004 Alg. 5 without noise, on the hand-written gradient
        theta = np.zeros(2)
        for t in range(1, T + 1):
            g = _logistic_gradient(X, y_pm1, theta, weights)
            j = int(np.argmax(np.abs(g)))
            eta = 1.0 / (t + 1.0)
            theta *= 1.0 - eta
            theta[j] -= eta * C * np.sign(g[j])
        return theta

    np.testing.assert_allclose(clf.fit(X, y, sample_weight=w).coef_[0], reference(w),
                               rtol=1e-12, atol=1e-15)
    # The weights change the path: the check above could fail.
    np.testing.assert_allclose(clf.fit(X, y).coef_[0], reference(np.ones_like(w)), rtol=1e-12)
    assert not np.allclose(reference(w), reference(np.ones_like(w)))


class _NoiselessDPSGD(DPSGDClassifier):
    def _noise_multiplier(self, settings, budget):
        return 1e-300  # numerically noiseless; a zero scale is refused before the charge


@pytest.mark.parametrize("clipping", ["gradient", "data"])
def test_dpsgd_weights_multiply_the_clipped_gradients(data, clipping):
    """Full batch (q = 1), no noise: each step is the hand-written sum of w_i clip(g_i)."""
    X, y, w = data
    X = X * np.where(np.arange(len(y)) % 3 == 0, 20.0, 1.0)[:, None]  # a third clipped
    C, eta, alpha, steps = 0.5, 0.7, 0.01, 3
    clf = _NoiselessDPSGD(epsilon=1.0, delta=1e-5, data_norm=C, clipping=clipping,
                          batch_size=len(y), epochs=steps, learning_rate=eta, alpha=alpha,
                          learning_rate_schedule="constant", fit_intercept=False,
                          classes=[0, 1], random_state=0)
    y_pm1 = 2.0 * y - 1.0
    Xc = X * np.minimum(1.0, C / np.linalg.norm(X, axis=1))[:, None] if clipping == "data" else X
    theta = np.zeros(2)
    for _ in range(steps):
        per_example = (-expit(-y_pm1 * (Xc @ theta)) * y_pm1)[:, None] * Xc
        norms = np.linalg.norm(per_example, axis=1)
        clipped = per_example * np.minimum(1.0, C / np.maximum(norms, 1e-300))[:, None]
        assert np.all(np.linalg.norm(w[:, None] * clipped, axis=1) <= C * (1 + 1e-12))
        theta = theta - eta * ((w[:, None] * clipped).sum(axis=0) / len(y) + alpha * theta)
    np.testing.assert_allclose(clf.fit(X, y, sample_weight=w).coef_[0], theta, rtol=1e-12)


class _NoiselessPSGD(PermutationSGDClassifier):
    def _noise_std(self, settings, budget):
        return 1e-300  # numerically noiseless; a zero scale is refused before the charge


def test_permutation_sgd_steps_on_the_weighted_minibatch_gradient(data):
    """One minibatch of all rows (order irrelevant), no noise: hand-written weighted steps."""
    X, y, w = data
    eta, alpha, epochs = 2.0, 0.05, 4
    clf = _NoiselessPSGD(epsilon=1.0, delta=1e-5, learning_rate=eta, alpha=alpha,
                         batch_size=len(y), epochs=epochs, fit_intercept=False, classes=[0, 1],
                         random_state=0)
    y_pm1 = 2.0 * y - 1.0
    theta = np.zeros(2)
    for _ in range(epochs):
        theta = theta - eta * (_logistic_gradient(X, y_pm1, theta, w) + alpha * theta)
    np.testing.assert_allclose(clf.fit(X, y, sample_weight=w).coef_[0], theta, rtol=1e-10)
    assert not np.allclose(clf.fit(X, y).coef_[0], theta, rtol=1e-3)


# --------------------------------------------------------------------------
# Estimator behaviour
# --------------------------------------------------------------------------
@pytest.mark.parametrize("cls, kw", ESTIMATORS, ids=IDS)
def test_unit_weights_fit_exactly_as_no_weights(cls, kw):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = np.arange(300) % 3  # three one-vs-rest problems
    plain = cls(epsilon=1.0, classes=[0, 1, 2], random_state=0, **kw).fit(X, y)
    ones = cls(epsilon=1.0, classes=[0, 1, 2], random_state=0, **kw)
    ones.fit(X, y, sample_weight=np.ones(300))
    np.testing.assert_array_equal(plain.coef_, ones.coef_)
    np.testing.assert_array_equal(plain.intercept_, ones.intercept_)


@pytest.mark.parametrize("cls, kw", ESTIMATORS, ids=IDS)
def test_weighted_sparse_input_matches_dense(data, cls, kw):
    X, y, w = data
    dense = cls(epsilon=1.0, classes=[0, 1], random_state=0, **kw).fit(X, y, sample_weight=w)
    sparse = cls(epsilon=1.0, classes=[0, 1], random_state=0, **kw)
    sparse.fit(sp.csr_matrix(X), y, sample_weight=w)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(sparse.intercept_, dense.intercept_, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("cls, kw", ESTIMATORS, ids=IDS)
def test_weights_steer_the_model(cls, kw):
    """Down-weighting class 0 moves the boundary towards it: more rows are called 1."""
    rng = np.random.default_rng(2)
    y = np.arange(2000) % 2
    X = np.column_stack([np.where(y == 1, 0.15, -0.15), 0.3 * rng.normal(size=2000)])
    X[:, 0] += 0.3 * rng.normal(size=2000)
    clf = cls(epsilon=5.0, classes=[0, 1], random_state=0, **kw)
    plain = clf.fit(X, y).predict(X).mean()
    weighted = clf.fit(X, y, sample_weight=np.where(y == 1, 1.0, 0.1)).predict(X).mean()
    assert weighted > plain + 0.1, (plain, weighted)


@pytest.mark.parametrize("cls, kw", ESTIMATORS, ids=IDS)
def test_bad_weights_fail_before_the_budget_is_charged(cls, kw):
    X = np.random.default_rng(3).normal(size=(50, 2))
    y = np.arange(50) % 2
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    clf = cls(epsilon=1.0, classes=[0, 1], accountant=accountant, **kw)
    for bad in (-np.ones(50), np.ones(10), np.full(50, np.nan)):
        with pytest.raises(ValueError, match="sample_weight"):
            clf.fit(X, y, sample_weight=bad)
    assert accountant.spent is None
    clf.fit(X, y, sample_weight=np.zeros(50))  # protected weights: no refusal for all zeros
    assert accountant.spent.epsilon == pytest.approx(1.0)
    clf.fit(X, y, sample_weight=np.full(50, 3.0))  # clipped to 1, silently
    assert accountant.spent.epsilon == pytest.approx(2.0)


def test_zero_weight_rows_still_count_in_n():
    """The calibration uses every row (n is public, the weight sum is not)."""
    X = np.random.default_rng(4).normal(size=(400, 2))
    y = np.arange(400) % 2
    w = np.r_[np.zeros(300), np.ones(100)]
    # (alpha fixed: alpha="auto" itself scales with 1 / n.)
    out = OutputPerturbationClassifier(epsilon=1.0, alpha=0.01, classes=[0, 1], random_state=0)
    full = out.fit(X, y).sensitivity_
    assert out.fit(X, y, sample_weight=w).sensitivity_ == full
    assert out.fit(X[300:], y[300:]).sensitivity_ == pytest.approx(4 * full)  # dropping rows
    fw = PrivateFrankWolfeClassifier(epsilon=1.0, classes=[0, 1], random_state=0)
    assert fw.fit(X, y, sample_weight=w).delta_ == pytest.approx(1 / 400**2)


# --------------------------------------------------------------------------
# Weighted audit through one cheap estimator
# --------------------------------------------------------------------------
# The template clips the weights for every mechanism, so one audit covers the
# clipping. Output perturbation on the pair of tests/linear_model/test_convex.py (rows
# x = 0, the last row x = 1 with its label flipped; Huber loss in its linear
# zone, so the minimizers attain the sensitivity 2 / (n Lambda)) is about as
# cheap as one Frank-Wolfe step and much tighter (a continuous statistic):
# the other rows weigh 0.5 and the replaced row asks for 4. Clipped to 1 it
# is the worst case the noise is calibrated for; a copy that skipped the
# clipping would let that row move the minimizer four times as far.
_X = np.zeros((10, 1))
_X[-1, 0] = 1.0
_D0 = (_X, np.array([0, 1] * 4 + [0, 1]))
_D1 = (_X, np.array([0, 1] * 4 + [0, 0]))
_W = np.array([0.5] * 9 + [4.0])


def _weighted_audit():
    def mechanism(dataset, rng):
        clf = OutputPerturbationClassifier(epsilon=1.0, loss="huber", alpha=1.0,
                                           fit_intercept=False, classes=[0, 1],
                                           random_state=rng)
        return clf.fit(*dataset, sample_weight=_W).coef_[0, 0]
    return audit_epsilon(mechanism, _D0, _D1, n_runs=400, n_select=100, delta=0.0,
                         random_state=12345)


def test_weighted_audit_clipped_below_epsilon_unclipped_caught(monkeypatch):
    honest = _weighted_audit()
    assert honest.epsilon_lower_bound <= 1.0, honest
    # A copy of the template that skipped the clipping (weights taken as given).
    monkeypatch.setattr(_private_glm, "check_bounded_sample_weight",
                        lambda sample_weight, n_samples: np.asarray(sample_weight, dtype=float))
    cheat = _weighted_audit()
    assert cheat.epsilon_lower_bound > 1.0, cheat


@pytest.mark.parametrize("cls, kw", ESTIMATORS, ids=IDS)
def test_class_weight_equals_the_same_sample_weight(cls, kw):
    X = np.random.default_rng(5).normal(size=(300, 2))
    y = np.arange(300) % 3
    by_class = cls(epsilon=1.0, classes=[0, 1, 2], class_weight={2: 0.25}, random_state=0,
                   **kw).fit(X, y)
    by_row = cls(epsilon=1.0, classes=[0, 1, 2], random_state=0, **kw).fit(
        X, y, sample_weight=np.where(y == 2, 0.25, 1.0))
    np.testing.assert_array_equal(by_class.coef_, by_row.coef_)
    with pytest.raises(ValueError, match="balanced"):
        cls(epsilon=1.0, classes=[0, 1, 2], class_weight="balanced", **kw).fit(X, y)


@pytest.mark.parametrize("cls", [DPSGDClassifier, PermutationSGDClassifier],
                         ids=["DPSGDClassifier", "PermutationSGDClassifier"])
def test_a_calibration_that_fails_spends_nothing(cls, monkeypatch):
    """A noise calibration that fails on public settings fails before the charge.

    DP-SGD's failed at epsilon = 1e300 (dp-accounting finds no bracket; its error came
    unexplained); beyond the accountant's range it now uses a closed form. Permutation
    SGD charged the accountant first; its analytic Gaussian calibration now succeeds at
    any finite epsilon. Both failures are simulated.
    """
    def failing(*args, **kwargs):
        raise OverflowError("simulated calibration failure")
    hook = "_noise_std" if cls is PermutationSGDClassifier else "_noise_multiplier"
    monkeypatch.setattr(cls, hook, lambda self, settings, budget: failing())
    X = np.random.default_rng(0).normal(size=(50, 2)) / 3
    accountant = BudgetAccountant(epsilon=np.finfo(float).max, delta=0.5)
    with pytest.raises(ValueError, match="Nothing was spent"):
        cls(epsilon=1e300, classes=[0, 1], accountant=accountant, epochs=1).fit(
            X, np.arange(50) % 2)
    assert accountant.spent is None
