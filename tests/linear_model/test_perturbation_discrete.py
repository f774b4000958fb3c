"""OutputPerturbationClassifier with exact discrete noise (mechanism='discrete_laplace' /
'discrete_gaussian') and the shared grid release of skdp.linear_model._private_glm."""

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
from skdp.linear_model import OutputPerturbationClassifier
from skdp.linear_model._private_glm import release_on_grid
from skdp.mechanisms import gaussian_sigma_analytic
from skdp.testing import audit_epsilon
from linear_model.test_convex import _pair  # rows x = 0 plus one row x = 1 whose label flips

DISCRETE = [("discrete_laplace", 0.0), ("discrete_gaussian", 1e-5)]


def _within(ratio, n_eff, z=5.5):
    """Whether a ratio of estimated to claimed spread is 1 within ``z`` standard errors."""
    return abs(ratio - 1.0) <= z / math.sqrt(n_eff)


# --- the grid and the noise parameters, by hand ------------------------------------------------

def _small_fit(mechanism, delta):
    X, y = make_blobs(100, n_features=4, centers=2, random_state=0)
    return OutputPerturbationClassifier(epsilon=2.0, delta=delta, data_norm=3.0, alpha=0.05,
                                        mechanism=mechanism, classes=[0, 1],
                                        random_state=0).fit(X, y)


def test_discrete_laplace_parameters_by_hand():
    est = _small_fit("discrete_laplace", 0.0)
    # tol = 1e-5 R / n = 3e-7; Delta_2 = 2 R / (n Lambda) + 2 tol / Lambda
    # = 6 / 5 + 6e-7 / 0.05 = 1.200012 (seed 002, Alg. 1, corrected); F = 5 (intercept).
    assert est.sensitivity_ == pytest.approx(1.200012, rel=1e-12)
    # Continuous per-coordinate Laplace sqrt(5) * 1.200012 / 2 = 1.341654 in [1, 2): g = 2**-30
    # (the weight bound (R + tol) / Lambda = 60 needs only 2**-46).
    assert math.sqrt(5) * 1.200012 / 2 == pytest.approx(1.341654, abs=1e-6)
    assert est.noise_granularity_ == 2.0**-30
    # L1 on the grid: ceil(sqrt(5) Delta_2 2**30) + F - 1 steps; t = that / epsilon, rounded up
    # to 24 significant bits.
    l1_steps = math.ceil(Fraction(math.sqrt(5) * 1.200012) * 2**30) + 4
    assert 2_881_180_000 < l1_steps < 2_881_181_000
    t = Fraction(est.noise_scale_) / Fraction(est.noise_granularity_)
    assert Fraction(l1_steps, 2) <= t <= Fraction(l1_steps, 2) * (1 + Fraction(1, 2**23))
    assert est.noise_scale_ == pytest.approx(1.341654, rel=1e-6)
    assert est.privacy_spent_ == PrivacyBudget(2.0, 0.0) and est.delta_ == 0.0


def test_discrete_gaussian_parameters_by_hand():
    est = _small_fit("discrete_gaussian", 1e-5)
    # The grid follows the analytic Gaussian sigma at (2, 1e-5) for Delta_2 = 1.200012,
    # which lies in [2, 4): g = 2**(1 - 30).
    analytic = gaussian_sigma_analytic(1.200012, 2.0, 1e-5)
    assert 2.0 <= analytic < 4.0
    g = est.noise_granularity_
    assert g == 2.0**-29
    # Grid L2^2 <= Q + 2 min(Q, isqrt(5 Q)) + 5, Q = ceil((Delta_2 / g)^2) - 1;
    # sigma^2 = that / (2 rho), rho the largest zCDP budget converting to (2, 1e-5) by
    # Canonne-Kamath-Steinke Cor. 13.
    Q = math.ceil((Fraction(1.200012) / Fraction(g)) ** 2) - 1
    l2_sq = Q + 2 * min(Q, math.isqrt(5 * Q)) + 5
    rho = 0.10825636382305726  # CKS Cor. 13 at (2, 1e-5), decimal (test_zcdp_conversion.py)
    assert rho == pytest.approx(zcdp_for_dp(2.0, 1e-5), rel=1e-9)
    sigma = math.sqrt(l2_sq / (2 * rho)) * g
    assert est.noise_scale_ == pytest.approx(sigma, rel=2e-7)
    # ... which is Delta_2 / sqrt(2 rho) = 2.579 in value units (the grid costs nothing visible).
    assert est.noise_scale_ == pytest.approx(1.200012 / math.sqrt(2 * rho), rel=1e-6)
    assert est.privacy_spent_ == PrivacyBudget(2.0, 1e-5)


@pytest.mark.parametrize("mechanism, delta", DISCRETE)
def test_grid_rounding_term_by_hand_in_exact_arithmetic(mechanism, delta):
    # F = 201 coefficients at epsilon = 0.1: the grid's rounding term (F - 1 steps of L1, or
    # 2 min(Q, isqrt(F Q)) + F of squared L2) is about 1e-6 of the noise parameter, above its
    # 24-bit upward rounding (1.2e-7), so dropping or halving it fails here. (At 5
    # coefficients and epsilon = 2, above, it is 1e-9 and hidden by that rounding; no audit
    # can see it at any size: it is a relative 2**-30-ish share of the noise.)
    X = np.random.default_rng(0).uniform(-1.0, 1.0, size=(60, 200))
    y = np.arange(60) % 2
    eps, F = 0.1, 201
    est = OutputPerturbationClassifier(epsilon=eps, delta=delta, mechanism=mechanism, alpha=1.0,
                                       classes=[0, 1], random_state=0).fit(X, y)
    # Delta_2 = 2 R / (n Lambda) + 2 tol / Lambda, tol = 1e-5 R / n (R = 1, Lambda = 1, n = 60).
    assert est.sensitivity_ == pytest.approx(2 / 60 + 2e-5 / 60, rel=1e-13)
    g = Fraction(est.noise_granularity_)
    steps = Fraction(est.noise_scale_) / g  # t, or sigma (a float: compared through sigma^2)
    if mechanism == "discrete_laplace":
        reference = math.sqrt(F) * est.sensitivity_ / eps  # the continuous Laplace scale
        assert g == Fraction(2) ** (math.floor(math.log2(reference)) - 30)
        # L1 on the grid: ceil(sqrt(F) Delta_2 / g) + F - 1 (the float sqrt(F) Delta_2 may
        # be raised by 2**-40, one more step at most); t = L1 / epsilon, rounded up 2**-23.
        l1 = math.ceil(Fraction(math.sqrt(F) * est.sensitivity_) / g) + F - 1
        assert l1 / Fraction(eps) <= steps <= (l1 + 1) / Fraction(eps) * (1 + Fraction(1, 2**23))
    else:
        analytic = gaussian_sigma_analytic(est.sensitivity_, eps, delta)
        assert g == Fraction(2) ** (math.floor(math.log2(analytic)) - 30)
        Q = math.ceil((Fraction(est.sensitivity_) / g) ** 2) - 1
        l2_sq = Q + 2 * min(Q, math.isqrt(F * Q)) + F
        target = Fraction(l2_sq) / (2 * Fraction(zcdp_for_dp(eps, delta)))
        assert target * (1 - Fraction(1, 10**9)) <= steps**2 <= target * (1 + Fraction(1, 2**22))


@pytest.mark.parametrize("params", [
    dict(alpha=1e300),  # g about 2**-1033 (subnormal)
    dict(tol=1e300),  # g about 2**975: g 2**53 overflows
    dict(mechanism="discrete_gaussian", delta=1e-5, alpha=1e-300),  # g about 2**960
])
def test_grid_out_of_range_fails_before_spending(params):
    # The grid goes through the calibration, before the charge: one outside skdp.mechanisms'
    # range [2**-900, 2**900] is refused before anything is spent, never after the solve.
    X, y = make_blobs(40, centers=2, n_features=2, random_state=0)
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match=r"granularity must be between 2\*\*-900"):
        OutputPerturbationClassifier(classes=[0, 1], accountant=accountant,
                                     **{"mechanism": "discrete_laplace", **params}).fit(X, y)
    assert accountant.spent is None


@pytest.mark.parametrize("mechanism, delta", DISCRETE)
def test_released_weights_are_exact_multiples_of_the_grid(mechanism, delta):
    X, y = make_blobs(300, centers=3, n_features=3, random_state=0)
    est = OutputPerturbationClassifier(epsilon=1.0, delta=delta, mechanism=mechanism,
                                       classes=[0, 1, 2], random_state=0).fit(X, y)
    g = est.noise_granularity_
    for values in (est.coef_, est.intercept_):
        steps = values / g
        assert np.array_equal(steps, np.round(steps)) and np.abs(steps).max() < 2.0**53
    # Each of the 3 problems at (epsilon / 3, delta / 3): g follows its continuous scale.
    assert est.coef_.shape == (3, 3)
    assert est.privacy_spent_ == PrivacyBudget(1.0, delta)


def _zero_data_fit(mechanism, delta, n_features=2000):
    # All-zero rows: every gradient is 0, so the exact minimizer is 0 and the release is g Z.
    X = np.zeros((50, n_features))
    y = np.arange(50) % 2
    est = OutputPerturbationClassifier(epsilon=1.0, delta=delta, mechanism=mechanism, alpha=1.0,
                                       fit_intercept=False, classes=[0, 1], random_state=7)
    return est.fit(X, y)


@pytest.mark.parametrize("mechanism, delta", DISCRETE)
def test_released_noise_has_the_calibrated_spread(mechanism, delta):
    est = _zero_data_fit(mechanism, delta)
    z = est.coef_[0] / est.noise_granularity_
    if mechanism == "discrete_laplace":
        # E|Z| of the discrete Laplace of scale t (about 2**30 steps) is t within 1e-9;
        # the sample mean of |Z| has relative standard error 1 / sqrt(N).
        ratio = np.mean(np.abs(z)) * est.noise_granularity_ / est.noise_scale_
    else:
        ratio = np.std(z) * est.noise_granularity_ / est.noise_scale_  # rel. error 1/sqrt(2N)
    assert _within(ratio, z.size if mechanism == "discrete_laplace" else 2 * z.size)


@pytest.mark.parametrize("mechanism", ["discrete_laplace", "discrete_gaussian"])
def test_release_on_grid_draws_its_parameter(mechanism):
    # t = 1000 steps (E|Z| = t) or sigma^2 = 10**6 (std 1000), on the grid 2**-10.
    parameter = Fraction(1000) if mechanism == "discrete_laplace" else Fraction(10**6)
    w = np.full(4000, 0.3)  # round(0.3 * 1024) = 307
    out = release_on_grid(w, mechanism, parameter, 2.0**-10, np.random.default_rng(0))
    steps = out * 1024
    assert np.array_equal(steps, np.round(steps))
    z = steps - 307
    if mechanism == "discrete_laplace":
        assert _within(np.mean(np.abs(z)) / 1000, z.size)
    else:
        assert _within(np.std(z) / 1000, 2 * z.size)


# --- audits -------------------------------------------------------------------------------------

class _QuarterNoise(OutputPerturbationClassifier):
    def _discrete_noise(self, settings, budget):
        sensitivity, granularity, parameter, scale = super()._discrete_noise(settings, budget)
        shrink = 4 if settings["mechanism"] == "discrete_laplace" else 16  # t / 4, sigma / 4
        return sensitivity, granularity, parameter / shrink, scale / 4


def _audit(cls, mechanism, delta, epsilon, n_runs, seed):
    # Huber with h = 0.1 keeps every margin in the linear zone: the exact minimizers are
    # +-1 / (n Lambda), attaining the sensitivity 2 / (n Lambda) (one coefficient, so the
    # L1 bound sqrt(d) Delta_2 is Delta_2 and the rounding adds nothing beyond ceil).
    d0, d1 = _pair()

    def run(data, rng):
        est = cls(epsilon=epsilon, delta=delta, mechanism=mechanism, loss="huber", alpha=1.0,
                  fit_intercept=False, classes=[0, 1], random_state=rng)
        return est.fit(*data).coef_[0, 0]

    return audit_epsilon(run, d0, d1, n_runs=n_runs, delta=delta,
                         random_state=seed).epsilon_lower_bound


@pytest.mark.parametrize("mechanism, delta, epsilon, n_catch", [
    ("discrete_laplace", 0.0, 1.0, 600), ("discrete_gaussian", 1e-5, 2.0, 1500)])
def test_audit_passes_and_catches_quarter_noise(mechanism, delta, epsilon, n_catch):
    # As for the SVMs (tests/svm/test_classes_discrete.py), the zCDP-calibrated discrete Gaussian is
    # audited at epsilon = 2, where its quarter-noise copy is caught with a clear margin.
    assert _audit(OutputPerturbationClassifier, mechanism, delta, epsilon, 600, 0) <= epsilon
    assert _audit(_QuarterNoise, mechanism, delta, epsilon, n_catch, 1) > epsilon


# --- utility ------------------------------------------------------------------------------------

def test_accuracy_matches_the_l2_laplace_mechanism():
    X, y = make_classification(5000, 10, n_informative=6, class_sep=1.5, random_state=4)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, random_state=0)
    scores = {}
    for mechanism, delta in [("l2_laplace", 0.0), *DISCRETE]:
        scores[mechanism] = np.mean([
            OutputPerturbationClassifier(epsilon=1.0, delta=delta, mechanism=mechanism,
                                         classes=[0, 1], random_state=s)
            .fit(X_tr, y_tr).score(X_te, y_te) for s in range(6)])
    # All learn (chance 0.5); the discrete ones are within the seed-to-seed spread.
    assert min(scores.values()) > 0.75, scores
    assert abs(scores["discrete_laplace"] - scores["l2_laplace"]) < 0.05, scores
    assert abs(scores["discrete_gaussian"] - scores["l2_laplace"]) < 0.05, scores


# --- API ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("mechanism, delta", DISCRETE)
def test_pickle_and_clone_keep_the_release(mechanism, delta):
    X, y = make_blobs(80, centers=2, n_features=2, random_state=1)
    est = OutputPerturbationClassifier(mechanism=mechanism, delta=delta, classes=[0, 1],
                                       random_state=3).fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    assert np.array_equal(again.coef_, est.coef_)
    assert again.noise_granularity_ == est.noise_granularity_
    twin = clone(est).fit(X, y)
    assert np.array_equal(twin.coef_, est.coef_)  # same seed, same exact draws
    assert clone(est).get_params()["mechanism"] == mechanism


def test_grid_search_over_mechanism():
    X, y = make_blobs(2000, centers=2, n_features=2, random_state=2)
    grid = GridSearchCV(OutputPerturbationClassifier(epsilon=2.0, classes=[0, 1],
                                                     data_norm=10.0, alpha=1.0,
                                                     random_state=0),
                        [{"mechanism": ["l2_laplace", "discrete_laplace"]},
                         {"mechanism": ["discrete_gaussian"], "delta": [1e-6]}], cv=2).fit(X, y)
    assert len(grid.cv_results_["mean_test_score"]) == 3
    assert grid.cv_results_["mean_test_score"].min() > 0.8
    best = grid.best_estimator_
    assert (best.noise_granularity_ is None) == (best.mechanism == "l2_laplace")


@pytest.mark.parametrize("params, match", [
    ({"mechanism": "discrete"}, "mechanism"),
    ({"mechanism": "laplace"}, "mechanism"),
    ({"mechanism": "discrete_laplace", "delta": 1e-5}, "pure epsilon-DP"),
    ({"mechanism": "l2_laplace", "delta": 1e-5}, "pure epsilon-DP"),
    ({"mechanism": "discrete_gaussian", "delta": 0.0}, "delta"),
    ({"mechanism": "discrete_gaussian", "delta": None}, "delta"),
    # The zCDP budget of epsilon = 1e-200 underflows (delta = 1e-300: with the CKS
    # conversion a larger delta alone buys a rho of about delta^2): refused before the charge.
    ({"mechanism": "discrete_gaussian", "delta": 1e-300, "epsilon": 1e-200}, "too small"),
    # Noise of more than 2**52 grid steps (t ~ F / epsilon, or sigma ~ sqrt(F) / sqrt(2 rho)):
    # refused before the charge; was an OverflowError of the int64 sampler after it.
    ({"mechanism": "discrete_laplace", "epsilon": 1e-20}, "too small"),
    # (With the CKS conversion a tiny epsilon keeps a rho of about delta^2: delta tiny too.)
    ({"mechanism": "discrete_gaussian", "delta": 1e-300, "epsilon": 1e-17}, "too small"),
])
def test_bad_mechanism_fails_before_spending(params, match):
    X, y = make_blobs(40, centers=2, n_features=2, random_state=0)
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match=match):
        OutputPerturbationClassifier(classes=[0, 1], accountant=accountant, **params).fit(X, y)
    assert accountant.spent is None


def test_default_is_the_l2_laplace_release_without_a_grid():
    X, y = make_blobs(40, centers=2, n_features=2, random_state=0)
    est = OutputPerturbationClassifier(classes=[0, 1], random_state=0).fit(X, y)
    assert est.noise_granularity_ is None
    assert est.noise_scale_ == est.sensitivity_ / 1.0  # seed 002, Alg. 1: scale = Delta / eps
    assert est.privacy_spent_ == PrivacyBudget(1.0, 0.0)


@pytest.mark.parametrize("mechanism", ["discrete_laplace", "discrete_gaussian"])
def test_noise_beyond_the_float_range_gives_the_clear_error(mechanism):
    # A parameter far beyond 2**52 steps (and beyond the largest float) must still give
    # the ValueError, not an OverflowError from formatting the message.
    from skdp.mechanisms._discrete import check_grid_noise_parameter
    with pytest.raises(ValueError, match="too small"):
        check_grid_noise_parameter(mechanism, Fraction(10**400), "epsilon=1e-300")
