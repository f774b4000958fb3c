"""DPLogisticRegressionAMP's floating-point-safe output stage (output_noise='discrete_gaussian')."""

import copy
import dataclasses
import math
import pickle
from fractions import Fraction

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV

import skdp.linear_model._amp as amp_module
from skdp import BudgetAccountant
from skdp.accounting import zcdp_for_dp
from skdp.datasets import make_synthetic_l
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.linear_model._amp import amp_calibration, amp_discrete_output_noise
from skdp.mechanisms import gaussian_sigma_analytic, sample_discrete_gaussian


@pytest.fixture(scope="module")
def small():
    return make_classification(n_samples=600, n_features=6, n_informative=4, n_classes=3,
                               class_sep=2.0, random_state=3)


# --- the output stage's calibration, by hand ---------------------------------------------------

def _calibration(m=5000, epsilon=1.0, delta=1e-8):
    # gamma = 1 / m^2 (the thesis' value, 1000 times the default): sigma2 sets the grid here
    return amp_calibration(epsilon, delta, n_samples=m, n_features=11, lipschitz=1.0,
                           smoothness=0.25, row_rank=1, gamma=1.0 / m**2)


def test_discrete_output_stage_by_hand():
    cal = _calibration()
    m, p = 5000, 11
    # Seed 004, Alg. 1 line 6, corrected: sensitivity 2 m gamma / Lambda with gamma = 1 / m^2.
    assert cal.sensitivity2 == pytest.approx(2.0 / (m * cal.reg_strength), rel=1e-15)
    assert cal.sigma2 == gaussian_sigma_analytic(cal.sensitivity2, 0.01, 1e-10)
    g, sigma2_steps = amp_discrete_output_noise(cal, p)
    # g = the largest power of two <= sigma2 2**-30 (the weight bound
    # (m / Lambda)(1 + sigma1 (sqrt(11) + 10) + gamma) is far below 2**52 g here).
    assert g == 2.0 ** (math.floor(math.log2(cal.sigma2)) - 30)
    bound = m / cal.reg_strength * (1.0 + cal.sigma1 * (math.sqrt(p) + 10) + 1.0 / m**2)
    assert bound < 2.0**52 * g
    # Grid L2^2 <= Q + 2 min(Q, isqrt(p Q)) + p, Q = ceil((Delta_2 / g)^2) - 1, and
    # sigma^2 = that / (2 rho) with rho the largest zCDP budget converting to
    # (eps2, delta2) = (0.01, 1e-10) by Canonne-Kamath-Steinke Cor. 13 (decimal reference of
    # test_zcdp_conversion.py; (sqrt(ln(1/delta2) + eps2) - sqrt(ln(1/delta2)))^2, about
    # 1.0857e-6, by seed 004, Lemma 2.1.13, used before).
    Q = math.ceil((Fraction(cal.sensitivity2) / Fraction(g)) ** 2) - 1
    l2_sq = Q + 2 * min(Q, math.isqrt(p * Q)) + p
    rho = 1.7766747487282172e-06
    assert rho == pytest.approx(zcdp_for_dp(0.01, 1e-10), rel=1e-9)
    assert float(sigma2_steps) == pytest.approx(l2_sq / (2 * rho), rel=2e-7)
    # Rounded up, never down (up to the 2**-40 margin on rho's round-off).
    exact = Fraction(l2_sq) / (2 * Fraction(rho))
    assert Fraction(sigma2_steps) >= exact * (1 - Fraction(1, 2**39))
    # In value units: Delta_2 / sqrt(2 rho), 10% above the analytic Gaussian's sigma2 at
    # (0.01, 1e-10) (the zCDP conversion's cost at a small eps2; 41% with Lemma 2.1.13).
    sigma = math.sqrt(sigma2_steps) * g
    assert sigma == pytest.approx(cal.sensitivity2 / math.sqrt(2 * rho), rel=1e-6)
    assert 1.05 < sigma / cal.sigma2 < 1.15


def test_grid_covers_the_weight_bound_when_sigma2_is_tiny():
    cal = dataclasses.replace(_calibration(), sigma2=1e-30)
    g, _ = amp_discrete_output_noise(cal, 11)
    bound = cal.n_samples / cal.reg_strength * (1.0 + cal.sigma1 * (math.sqrt(11) + 10)
                                                + cal.gamma)
    e = math.frexp(bound)[1]  # bound in [2**(e-1), 2**e)
    assert g == 2.0 ** (e - 52) and 2.0**52 * g > bound


# --- the release: exactly theta_approx + noise drawn after b1 from the same stream ------------

def _capture(monkeypatch):
    calls = []
    original = amp_module._amp_minimize

    def wrapper(factory, **kwargs):
        rng = copy.deepcopy(kwargs["rng"])  # the same state: spawns the same children
        out = original(factory, **kwargs)
        calls.append((rng, out, kwargs))
        return out

    monkeypatch.setattr(amp_module, "_amp_minimize", wrapper)
    return calls


@pytest.mark.parametrize("multi_class", ["multinomial", "ovr"])
@pytest.mark.parametrize("output_noise", ["gaussian", "discrete_gaussian"])
def test_release_is_the_certified_point_plus_the_calibrated_draw(monkeypatch, small,
                                                                 output_noise, multi_class):
    X, y = small
    calls = _capture(monkeypatch)
    est = DPLogisticRegressionAMP(epsilon=1.0, output_noise=output_noise,
                                  multi_class=multi_class, classes=[0, 1, 2],
                                  random_state=11).fit(X, y)
    cal = est.calibration_
    released = []
    for rng, (theta, result), kwargs in calls:
        noise_rng, _ = rng.spawn(2)
        n = kwargs["n_params"]
        noise_rng.normal(0.0, cal.sigma1, size=n)  # b1, Alg. 1 line 3
        if output_noise == "gaussian":
            # Alg. 1 line 6 exactly as before the discrete option existed: bit for bit.
            expected = result.x + noise_rng.normal(0.0, cal.sigma2, size=n)
        else:
            g, sigma2_steps = kwargs["output_grid"]
            assert (g, sigma2_steps) == amp_discrete_output_noise(cal, n)
            z = sample_discrete_gaussian(sigma2_steps, n, noise_rng)
            expected = g * (np.floor(result.x / g + 0.5) + z)
        assert np.array_equal(theta, expected)
        assert result.grad_norm <= cal.gamma  # the certificate is unchanged
        released.append(theta)
    assert len(calls) == (1 if multi_class == "multinomial" else 3)
    W = np.concatenate(released).reshape(3, -1)
    assert np.array_equal(np.c_[est.coef_, est.intercept_], W)


def test_default_is_gaussian_and_the_calibration_does_not_depend_on_the_option(small):
    X, y = small
    kw = dict(epsilon=0.5, classes=[0, 1, 2], random_state=2)
    default = DPLogisticRegressionAMP(**kw).fit(X, y)
    gaussian = DPLogisticRegressionAMP(output_noise="gaussian", **kw).fit(X, y)
    discrete = DPLogisticRegressionAMP(output_noise="discrete_gaussian", **kw).fit(X, y)
    assert np.array_equal(default.coef_, gaussian.coef_)
    assert default.noise_granularity_ is None
    assert default.output_noise_scale_ == default.calibration_.sigma2
    assert discrete.calibration_ == gaussian.calibration_
    assert discrete.privacy_spent_ == gaussian.privacy_spent_
    assert discrete.output_noise_scale_ > discrete.calibration_.sigma2


@pytest.mark.parametrize("params", [
    dict(), dict(multi_class="ovr"), dict(loss="huber", multi_class="ovr"),
])
def test_released_coefficients_are_exact_multiples_of_the_grid(small, params):
    X, y = small
    est = DPLogisticRegressionAMP(epsilon=1.0, output_noise="discrete_gaussian",
                                  classes=[0, 1, 2], random_state=0, **params).fit(X, y)
    g = est.noise_granularity_
    for values in (est.coef_, est.intercept_):
        steps = values / g
        assert np.array_equal(steps, np.round(steps)) and np.abs(steps).max() < 2.0**53
    binary = DPLogisticRegressionAMP(epsilon=1.0, output_noise="discrete_gaussian",
                                     classes=[0, 1], random_state=0).fit(X, y == 1)
    steps = binary.coef_ / binary.noise_granularity_
    assert np.array_equal(steps, np.round(steps))


# --- utility ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def synthetic_l():
    return make_synthetic_l()


@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_accuracy_matches_the_gaussian_output_stage(synthetic_l, epsilon):
    X_tr, X_te, y_tr, y_te = synthetic_l
    scores = {}
    for output_noise in ("gaussian", "discrete_gaussian"):
        scores[output_noise] = [
            DPLogisticRegressionAMP(epsilon=epsilon, output_noise=output_noise, classes=[0, 1],
                                    random_state=s).fit(X_tr, y_tr).score(X_te, y_te)
            for s in range(3)]
    # The output noise (1% of the budget) is small next to the objective noise: same
    # seeds give the same objective noise and nearly the same accuracy.
    gaussian, discrete = np.mean(scores["gaussian"]), np.mean(scores["discrete_gaussian"])
    assert gaussian > (0.7 if epsilon < 1 else 0.8), scores
    assert abs(gaussian - discrete) < 0.01, scores


# --- API ----------------------------------------------------------------------------------------

def test_pickle_clone_and_grid_search(small):
    X, y = small
    est = DPLogisticRegressionAMP(output_noise="discrete_gaussian", classes=[0, 1, 2],
                                  random_state=3).fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    assert np.array_equal(again.coef_, est.coef_)
    assert again.noise_granularity_ == est.noise_granularity_
    assert np.array_equal(clone(est).fit(X, y).coef_, est.coef_)  # same seed, same draws
    grid = GridSearchCV(DPLogisticRegressionAMP(epsilon=2.0, classes=[0, 1, 2], random_state=0),
                        {"output_noise": ["gaussian", "discrete_gaussian"]}, cv=2).fit(X, y)
    assert grid.cv_results_["mean_test_score"].min() > 0.6
    best = grid.best_estimator_
    assert (best.noise_granularity_ is None) == (best.output_noise == "gaussian")


@pytest.mark.parametrize("value", ["discrete_laplace", "discrete", None, 1])
def test_unknown_output_noise_fails_before_spending(small, value):
    X, y = small
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises((ValueError, TypeError), match="output_noise"):
        DPLogisticRegressionAMP(output_noise=value, classes=[0, 1, 2],
                                accountant=accountant).fit(X, y)
    assert accountant.spent is None


def test_output_noise_beyond_the_grid_range_fails_before_spending(small):
    # At epsilon = 1e-15 the discrete Gaussian's sigma is about 1e19 grid steps (the sqrt(p)
    # rounding term over sqrt(2 rho)), beyond the 2**53 range of the released grid indices
    # and the int64 sampler: refused before the charge (was an OverflowError after it).
    X, y = small
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="too small"):
        DPLogisticRegressionAMP(epsilon=1e-15, delta=1e-300, gamma=1.0, eps3_fraction=0.5,
                                output_noise="discrete_gaussian", classes=[0, 1, 2],
                                random_state=0, accountant=accountant).fit(X, y)
    assert accountant.spent is None


def test_grid_out_of_range_fails_before_spending(small):
    # data_norm = 1e-150 makes Lambda tiny and the weight bound (m / Lambda)(...)
    # above 2**1000, so g is above 2**900. The grid goes through the calibration before the
    # charge: outside skdp.mechanisms' range [2**-900, 2**900] it is refused before anything
    # is spent.
    X, y = small
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match=r"granularity must be between 2\*\*-900"):
        DPLogisticRegressionAMP(data_norm=1e-150, output_noise="discrete_gaussian",
                                classes=[0, 1, 2], accountant=accountant).fit(X, y)
    assert accountant.spent is None


def test_verbose_prints_the_grid(small, capsys):
    X, y = small
    DPLogisticRegressionAMP(output_noise="discrete_gaussian", classes=[0, 1, 2], random_state=0,
                            verbose=1).fit(X, y)
    assert "on the grid" in capsys.readouterr().out
