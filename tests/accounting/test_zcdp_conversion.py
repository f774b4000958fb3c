"""The tight zCDP -> (epsilon, delta) conversion (Canonne, Kamath and Steinke 2020, Cor. 13).

``delta(epsilon) = inf_{alpha > 1} exp((alpha - 1)(alpha rho - epsilon)) / (alpha - 1)
* (1 - 1/alpha)^alpha``. The reference values below were computed independently of skdp:
the infimum by golden-section search over ``ln(alpha - 1)`` in 40-digit ``decimal``
arithmetic (160 steps), and ``rho`` by bisection on it (100 steps); two of them are also
the values pinned by OpenDP's own tests of its CKS conversion (rho = 1/32, the Gaussian
mechanism of scale 4). The tests also recompute the infimum on a fine alpha grid in
float, in the paper's form (not the implementation's).
"""

import math
import time
from fractions import Fraction

import numpy as np
import pytest

from skdp.accounting import gaussian_zcdp, zcdp_delta, zcdp_for_dp, zcdp_to_dp
from skdp.mechanisms import (
    DiscreteGaussianMechanism,
    discrete_gaussian_sigma2,
    gaussian_delta_analytic,
)
from skdp.testing import audit_epsilon

BS = "bun-steinke"

# (rho, epsilon, delta) to 12+ digits (decimal, 40 digits; see the module docstring).
DELTA_REFERENCE = [
    (1 / 32, 0.6880024554878086, 0.00099999999999999757),  # OpenDP: 1e-3
    (1 / 32, 0.0, 0.15084578456228609),  # OpenDP: 0.1508457845622862
    (0.5, 1.0, 0.24684633078294449),
    (0.5, 5.0, 2.8961228093847950e-06),
]
# (epsilon, delta, rho): the largest rho with delta(rho, epsilon) <= delta.
RHO_REFERENCE = [
    (1.0, 1e-5, 0.030556595197639566),
    (0.5, 1e-6, 0.0066415243566605020),
    (0.01, 1e-10, 1.7766747487282172e-06),
    (0.1, 1e-5, 0.00043299372940180952),
    (10.0, 1e-5, 1.7826956163289516),
]


def _grid_delta(rho, epsilon):
    """The infimum over a fine geometric alpha grid, in the paper's form (float)."""
    # alpha - 1 from 1e-8 to 1e12, 400001 points: adjacent alphas within 1.2e-4 relative,
    # so the grid minimum is within ~1e-7 relative of the infimum at these inputs.
    a = 1.0 + np.logspace(-8, 12, 400_001)
    log_d = (a - 1) * (a * rho - epsilon) - np.log(a - 1) + a * np.log1p(-1 / a)
    return math.exp(float(log_d.min()))


@pytest.mark.parametrize("rho, epsilon, expected", DELTA_REFERENCE)
def test_zcdp_delta_matches_the_reference_values(rho, epsilon, expected):
    got = zcdp_delta(rho, epsilon)
    # Rounded up (never below the infimum), by the documented ~1e-12 (1 + S) margin only.
    assert expected <= got <= expected * (1 + 1e-9)
    assert got == pytest.approx(_grid_delta(rho, epsilon), rel=1e-6)


@pytest.mark.parametrize("epsilon, delta, expected", RHO_REFERENCE)
def test_zcdp_for_dp_matches_the_reference_values(epsilon, delta, expected):
    rho = zcdp_for_dp(epsilon, delta)
    assert expected * (1 - 1e-9) <= rho <= expected
    # The float grid, an independent route: rho passes it, 1.00001 rho does not.
    assert _grid_delta(rho, epsilon) <= delta * (1 + 1e-7)
    assert _grid_delta(rho * 1.00001, epsilon) > delta


def test_lemma_2_1_13_is_kept_as_an_option():
    # rho + 2 sqrt(rho ln(1/delta)) at rho = 0.5, delta = 1e-6: 5.756522 (seed 004, Lemma 2.1.13).
    assert zcdp_to_dp(0.5, 1e-6, conversion=BS).epsilon == pytest.approx(5.756522, abs=1e-6)
    assert zcdp_to_dp(0.5, 1e-6).epsilon == pytest.approx(5.2215344, abs=1e-6)
    L = math.log(1e5)
    assert zcdp_for_dp(1.0, 1e-5, conversion=BS) == pytest.approx(
        (math.sqrt(L + 1) - math.sqrt(L)) ** 2, rel=1e-14)
    with pytest.raises(ValueError, match="conversion"):
        zcdp_for_dp(1.0, 1e-5, conversion="cks2020")
    with pytest.raises(ValueError, match="conversion"):
        zcdp_to_dp(1.0, 1e-5, conversion=None)


RHOS = [1e-8, 1e-4, 0.01, 0.5, 3.0, 100.0]
DELTAS = [1e-12, 1e-6, 1e-3, 0.2]


@pytest.mark.parametrize("delta", DELTAS)
def test_tight_conversion_is_never_worse_than_lemma_2_1_13(delta):
    for rho in RHOS:
        new, old = zcdp_to_dp(rho, delta).epsilon, zcdp_to_dp(rho, delta, conversion=BS).epsilon
        assert new <= old
        # The epsilon is valid: its delta, rounded up, is within the target.
        assert zcdp_delta(rho, new) <= delta
        # ... and tight: 1e-6 less epsilon would not be.
        if new > 1e-6:
            assert zcdp_delta(rho, new * (1 - 1e-6)) > delta
    for epsilon in [1e-3, 0.1, 1.0, 10.0]:
        assert zcdp_for_dp(epsilon, delta) > zcdp_for_dp(epsilon, delta, conversion=BS)


@pytest.mark.parametrize("delta", [1e-300, 1e-30, 1e-10, 1e-5, 0.01, 0.5, 0.999, 1 - 1e-9])
@pytest.mark.parametrize("epsilon", [1e-9, 1e-3, 0.1, 1.0, 10.0, 1e3, 1e4])
def test_round_trip_is_valid_and_tight(epsilon, delta):
    rho = zcdp_for_dp(epsilon, delta)
    assert rho >= zcdp_for_dp(epsilon, delta, conversion=BS)
    got = zcdp_delta(rho, epsilon)
    assert got <= delta
    assert got >= delta * (1 - 1e-6)
    # Valid the other way too: the epsilon spent by rho is at most the target.
    assert zcdp_to_dp(rho, delta).epsilon <= epsilon * (1 + 1e-12)


@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0])
@pytest.mark.parametrize("sigma", [0.3, 1.0, 2.0, 5.0, 30.0])
def test_never_below_the_exact_delta_of_the_gaussian_mechanism(sigma, epsilon):
    # A continuous Gaussian is rho = D^2 / (2 sigma^2)-zCDP, and its exact delta (Balle and
    # Wang 2018) is the smallest any valid conversion may claim.
    rho = 1.0 / (2.0 * sigma**2)
    exact = gaussian_delta_analytic(1.0, sigma, epsilon)
    bound = zcdp_delta(rho, epsilon)
    assert bound >= exact
    # Tight-ish: within a factor ~ 1 + sqrt(pi rho) + ... of the exact value, never 100 times.
    if exact > 1e-300:
        assert bound <= 100 * exact


def test_edge_cases_are_finite_and_valid():
    # Huge rho: delta is 1 (the conversion says nothing), never above.
    assert zcdp_delta(1e6, 0.0) == 1.0
    assert zcdp_delta(1e6, 1e4) == 1.0
    assert 0.0 < zcdp_delta(1e4, 1e4) < 1.0
    # Tiny rho: far below any float at epsilon = 1e4, positive all the same (rounded up).
    assert zcdp_delta(1e-30, 1e4) == math.ulp(0.0)
    assert 0.0 < zcdp_delta(1e-30, 1e-14) == pytest.approx(_grid_delta(1e-30, 1e-14), rel=1e-6)
    assert zcdp_delta(1e-30, 0.0) == pytest.approx(_grid_delta(1e-30, 0.0), rel=1e-6)
    # Subnormal results are rounded up by two subnormal steps, not to nearest.
    rho = 0.5
    tiny = zcdp_delta(rho, 39.2)
    assert 0.0 < tiny < 1e-300
    # Huge epsilon and delta near 1: finite rho, valid and above Lemma 2.1.13's.
    for epsilon, delta in [(1e4, 1e-5), (1e4, 1 - 1e-12), (1e-12, 1 - 1e-12), (1e-200, 0.5)]:
        rho = zcdp_for_dp(epsilon, delta)
        assert math.isfinite(rho) and rho >= zcdp_for_dp(epsilon, delta, conversion=BS)
        assert zcdp_delta(rho, epsilon) <= delta
    # Delta near 1 and a small rho: any epsilon > 0 works (delta at epsilon = 0 is below).
    assert zcdp_delta(1e-4, 0.0) < 0.5
    assert 0.0 < zcdp_to_dp(1e-4, 0.5).epsilon < 1e-300
    assert zcdp_to_dp(1e6, 1e-5).epsilon == pytest.approx(
        1e6 + 2 * math.sqrt(1e6 * math.log(1e5)), rel=1e-3)


@pytest.mark.parametrize("call, match", [
    (lambda: zcdp_delta(0.0, 1.0), "rho"),
    (lambda: zcdp_delta(-1.0, 1.0), "rho"),
    (lambda: zcdp_delta(1.0, -0.1), "epsilon"),
    (lambda: zcdp_delta(float("nan"), 1.0), "rho"),
    (lambda: zcdp_delta(1.0, float("inf")), "epsilon"),
    (lambda: zcdp_for_dp(0.0, 1e-5), "epsilon"),
    (lambda: zcdp_for_dp(1.0, 0.0), "delta"),
    (lambda: zcdp_for_dp(1.0, 1.0), "delta"),
    (lambda: zcdp_to_dp(1.0, 1.0), "delta"),
])
def test_bad_input_gives_clear_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_monotone_in_epsilon_and_delta():
    for delta in [1e-10, 1e-5, 0.3]:
        rhos = [zcdp_for_dp(float(e), delta) for e in np.geomspace(1e-6, 1e3, 400)]
        assert np.all(np.diff(rhos) > 0)
    for epsilon in [0.01, 1.0, 50.0]:
        rhos = [zcdp_for_dp(epsilon, float(d)) for d in np.geomspace(1e-200, 0.999, 400)]
        assert np.all(np.diff(rhos) > 0)
    deltas = [zcdp_delta(0.1, float(e)) for e in np.linspace(0.0, 5.0, 200)]
    assert np.all(np.diff(deltas) < 0)


def test_fast_and_deterministic():
    args = [(1.0, 1e-5), (0.1, 1e-10), (10.0, 1e-6)]
    assert [zcdp_for_dp(*a) for a in args] == [zcdp_for_dp(*a) for a in args]
    best = math.inf
    for _ in range(5):
        start = time.perf_counter()
        for a in args * 10:
            zcdp_for_dp(*a)
        best = min(best, (time.perf_counter() - start) / 30)
    assert best < 2e-3  # about 0.2 ms on one core; a fit calls it once per release


def test_discrete_gaussian_uses_the_tight_conversion():
    # sigma^2 = 1 / (2 rho) at rho = 0.0305566 (RHO_REFERENCE), rounded up to 24 bits.
    sigma2 = discrete_gaussian_sigma2(1.0, 1.0, 1e-5)
    exact = 1 / (2 * 0.030556595197639566)  # 16.3630796...
    assert exact <= sigma2 <= exact * (1 + 2**-22)
    old = 1 / (2 * zcdp_for_dp(1.0, 1e-5, conversion=BS))  # 24.0154 (Lemma 2.1.13)
    assert math.sqrt(float(sigma2) / old) == pytest.approx(0.8254, abs=1e-4)


class _QuarterSigma(DiscreteGaussianMechanism):
    def _noise_parameter(self, dimension):
        return super()._noise_parameter(dimension) / 16  # sigma / 4


def _counts(cls, epsilon, delta):
    def run(d, rng, n):
        return cls(epsilon=epsilon, delta=delta, random_state=rng)(np.full(n, d))
    return run


def test_audit_at_the_tight_calibration():
    """Counts 0 vs 1 at epsilon = 0.5 (rho 1.6x Lemma 2.1.13's): under the claim; sigma / 4 caught."""
    epsilon, delta = 0.5, 1e-5
    res = audit_epsilon(_counts(DiscreteGaussianMechanism, epsilon, delta), 0, 1, n_runs=60_000,
                        delta=delta, vectorized=True, random_state=11)
    assert res.epsilon_lower_bound <= epsilon, res
    res = audit_epsilon(_counts(_QuarterSigma, epsilon, delta), 0, 1, n_runs=60_000,
                        delta=delta, vectorized=True, random_state=12)
    assert res.epsilon_lower_bound > epsilon, res


def _log_inv(delta):
    # ln(1/delta) without rounding 1/delta first: 1 - delta is exact for delta >= 1/2
    # (Sterbenz) and log1p keeps the digits of a small argument.
    return -math.log1p(-(1.0 - delta)) if delta >= 0.5 else -math.log(delta)


@pytest.mark.parametrize("delta", [1 - 1e-6, 1 - 3e-6, 1 - 1e-7, 0.9999, 1e-6])
@pytest.mark.parametrize("epsilon", [1e-6, 0.5, 10.0])
def test_zcdp_for_dp_never_exceeds_epsilon(epsilon, delta):
    # Before the fix, ln(1/delta) was computed from the rounded 1/delta: near delta = 1
    # that loses digits and rho spent 1 + 1e-11 times epsilon at delta = 1 - 1e-6.
    # Seed 004, Lemma 2.1.13 (the CKS default is checked in test_zcdp_conversion.py).
    rho = zcdp_for_dp(epsilon, delta, conversion="bun-steinke")
    assert rho + 2.0 * math.sqrt(rho * _log_inv(delta)) <= epsilon * (1 + 1e-14)


@pytest.mark.parametrize("delta", [1 - 1e-6, 1 - 1e-7, 1 - 3e-6, 1e-6])
def test_zcdp_to_dp_never_below_the_exact_epsilon(delta):
    exact = 1.0 + 2.0 * math.sqrt(_log_inv(delta))
    assert zcdp_to_dp(1.0, delta, conversion="bun-steinke").epsilon >= exact * (1 - 1e-14)


@pytest.mark.parametrize("sensitivity, sigma", [(1e-160, 7e-160), (3e-170, 1e-170), (1e-12, 1e-12),
                                                (1e6, 3.0)])
def test_gaussian_zcdp_keeps_its_digits_for_tiny_scales(sensitivity, sigma):
    # Before the fix, Delta^2 and sigma^2 were formed first: below 1e-154 they are
    # subnormal (rho 1e-5 too small at Delta = 1e-160, sigma = 7e-160) or zero
    # (ZeroDivisionError).
    exact = Fraction(sensitivity) ** 2 / (2 * Fraction(sigma) ** 2)
    assert gaussian_zcdp(sensitivity, sigma) == pytest.approx(float(exact), rel=1e-15)
