"""The tight zCDP -> (epsilon, delta) conversion (CKS 2020, Cor. 13).

Reference infima are computed here independently of skdp's Newton search: the minimiser of
``ln delta_t = t ((1 + t) rho - epsilon) - t ln(1 + 1/t) - ln(1 + t)`` (``t = alpha - 1``)
is the root of its derivative ``rho (1 + 2t) - epsilon - ln(1 + 1/t)``, found by plain
bisection in ``ln t`` (increasing, so bisection cannot fail), and the bound at that ``t`` is
evaluated in ``decimal`` arithmetic with 50 digits.
"""

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest

from skdp.accounting import zcdp_delta, zcdp_for_dp, zcdp_to_dp


def _log_delta_at(rho, epsilon, t):
    """CKS Cor. 13's ``ln delta`` at ``alpha = 1 + t`` (decimal, 50 digits; float t > 0)."""
    with localcontext() as ctx:
        ctx.prec = 50
        rho, epsilon, t = Decimal(rho), Decimal(epsilon), Decimal(t)
        return float(t * ((1 + t) * rho - epsilon) - t * _ln1p(1 / t) - _ln1p(t))


def _ln1p(x):
    """``ln(1 + x)`` in decimal; the series below 1e-6 (``1 + x`` would round to 1)."""
    if x >= Decimal("1e-6"):
        return (1 + x).ln()
    return sum((-1) ** (k + 1) * x**k / k for k in range(1, 12))


def _reference_log_delta(rho, epsilon):
    """ln of the CKS Cor. 13 infimum (bisection on the derivative's sign, see module doc)."""
    lo, hi = -800.0, 800.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        t = math.exp(mid)
        # sign of d/dt: rho (1 + 2t) - epsilon - ln(1 + 1/t)
        if rho * (1.0 + 2.0 * t) - epsilon - math.log1p(1.0 / t) < 0.0:
            lo = mid
        else:
            hi = mid
    return _log_delta_at(rho, epsilon, math.exp(0.5 * (lo + hi)))


# Small rho with epsilon far below it: the optimal alpha - 1 is about 1 / sqrt(2 rho), i.e.
# ln t of 20 to 170, while the search started at ln t = -1 and its Newton steps grow ln t by
# about 1 each (h(u) ~ -e^-u there): 100 iterations stopped short of the minimiser.
TINY_EPSILON_CASES = [
    (3.5635623542040732e-87, 1.1710544853511689e-143),
    (1e-60, 0.0),
    (1e-120, 1e-200),
    (1e-200, 0.0),
    (1e-300, 1e-310),
]


@pytest.mark.parametrize("rho, epsilon", TINY_EPSILON_CASES)
def test_zcdp_delta_reaches_the_infimum_at_tiny_rho(rho, epsilon):
    reference = _reference_log_delta(rho, epsilon)
    got = math.log(zcdp_delta(rho, epsilon))
    # Valid (never below the infimum) and tight (only the documented ~1e-12 (1 + S) margin).
    assert reference <= got <= reference + 1e-9 * (1.0 + abs(reference))


@pytest.mark.parametrize("epsilon, delta", [
    (1.1710544853511689e-143, 5.120471328946274e-44),
    (1e-100, 1e-60),
    (1e-100, 1e-100),
    (1e-150, 1e-120),
])
def test_small_epsilon_keeps_the_delta_squared_rho(epsilon, delta):
    # At epsilon -> 0 the CKS delta of rho is about sqrt(2 rho / e), so rho ~ e delta^2 / 2 is
    # allowed however small epsilon is (zcdp_for_dp's Notes). With small delta the search
    # fell back to Lemma 2.1.13's rho (~ epsilon^2 / (4 ln(1/delta))), 1e100+ times smaller.
    rho = zcdp_for_dp(epsilon, delta)
    assert rho >= 0.25 * delta * delta
    assert zcdp_delta(rho, epsilon) <= delta
    # Tight: a relative 1e-6 more rho is over the target (exact reference, not skdp's search).
    assert _reference_log_delta(rho * (1 + 1e-6), epsilon) > math.log(delta)
    # The reverse conversion agrees: rho spends at most epsilon at this delta.
    assert zcdp_to_dp(rho, delta).epsilon <= epsilon * (1 + 1e-9)


def test_zcdp_for_dp_is_monotone_across_the_small_epsilon_regime():
    for epsilon in [1e-120, 1e-60, 1e-20]:
        rhos = [zcdp_for_dp(epsilon, float(d)) for d in np.geomspace(1e-150, 0.5, 300)]
        assert np.all(np.diff(rhos) > 0)
        # Each is at least the delta^2 / 4 the Notes promise (it passes: 0.43 delta < delta).
        assert all(r >= 0.25 * float(d) ** 2
                   for r, d in zip(rhos, np.geomspace(1e-150, 0.5, 300)))


# --------------------------------------------------------------------------------------
# Empirical: the discrete Gaussian at the CKS calibration, and a copy with rho x 4.
# --------------------------------------------------------------------------------------

from skdp.mechanisms import DiscreteGaussianMechanism  # noqa: E402
from skdp.testing import audit_epsilon  # noqa: E402


class _HalfSigma(DiscreteGaussianMechanism):
    def _noise_parameter(self, dimension):
        return super()._noise_parameter(dimension) / 4  # sigma / 2, i.e. rho x 4


def _counts(cls, epsilon, delta):
    def run(d, rng, n):
        return cls(epsilon=epsilon, delta=delta, random_state=rng)(np.full(n, d))
    return run


def test_audit_small_epsilon_rho_times_four_is_caught():
    """Counts 0 vs 1 (sensitivity 1, the worst case) at epsilon = 0.5: the CKS sigma stays
    under the claim (lower bound about 0.26), sigma / 2 (rho x 4) is caught (about 0.63)."""
    epsilon, delta = 0.5, 1e-5
    res = audit_epsilon(_counts(DiscreteGaussianMechanism, epsilon, delta), 0, 1,
                        n_runs=200_000, delta=delta, vectorized=True, random_state=21)
    assert res.epsilon_lower_bound <= epsilon, res
    res = audit_epsilon(_counts(_HalfSigma, epsilon, delta), 0, 1, n_runs=400_000,
                        delta=delta, vectorized=True, random_state=22)
    assert res.epsilon_lower_bound > epsilon, res
