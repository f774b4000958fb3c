"""Floating-point rounding never under-states a privacy loss (review of the calibrations).

Each test feeds an input a user can pass and checks the returned noise or
spend against a computation that loses no digits there (a closed form
evaluated another way, or exact rational arithmetic).
"""

import math
from fractions import Fraction

import pytest

from skdp.accounting import gaussian_zcdp, zcdp_for_dp, zcdp_to_dp
from skdp.ensemble._stability import laplace_difference_sf, release_calibration


def _log_inv(delta):
    # ln(1/delta) without rounding 1/delta first: 1 - delta is exact for delta >= 1/2
    # (Sterbenz) and log1p keeps the digits of a small argument.
    return -math.log1p(-(1.0 - delta)) if delta >= 0.5 else -math.log(delta)


@pytest.mark.parametrize("delta", [1 - 1e-6, 1 - 3e-6, 1 - 1e-7, 0.9999, 1e-6])
@pytest.mark.parametrize("epsilon", [1e-6, 0.5, 10.0])
def test_zcdp_for_dp_never_exceeds_epsilon(epsilon, delta):
    # Before the fix, ln(1/delta) was computed from the rounded 1/delta: near delta = 1
    # that loses digits and rho spent 1 + 1e-11 times epsilon at delta = 1 - 1e-6.
    rho = zcdp_for_dp(epsilon, delta)
    assert rho + 2.0 * math.sqrt(rho * _log_inv(delta)) <= epsilon * (1 + 1e-14)


@pytest.mark.parametrize("delta", [1 - 1e-6, 1 - 1e-7, 1 - 3e-6, 1e-6])
def test_zcdp_to_dp_never_below_the_exact_epsilon(delta):
    exact = 1.0 + 2.0 * math.sqrt(_log_inv(delta))
    assert zcdp_to_dp(1.0, delta).epsilon >= exact * (1 - 1e-14)


@pytest.mark.parametrize("sensitivity, sigma", [(1e-160, 7e-160), (3e-170, 1e-170), (1e-12, 1e-12),
                                                (1e6, 3.0)])
def test_gaussian_zcdp_keeps_its_digits_for_tiny_scales(sensitivity, sigma):
    # Before the fix, Delta^2 and sigma^2 were formed first: below 1e-154 they are
    # subnormal (rho 1e-5 too small at Delta = 1e-160, sigma = 7e-160) or zero
    # (ZeroDivisionError).
    exact = Fraction(sensitivity) ** 2 / (2 * Fraction(sigma) ** 2)
    assert gaussian_zcdp(sensitivity, sigma) == pytest.approx(float(exact), rel=1e-15)


@pytest.mark.parametrize("epsilon, delta, cutoff, max_queries",
                         [(1.0, 1e-30, 3, 10), (0.3, 1e-6, 1, 1), (10.0, 1e-12, 100, 10**6),
                          (1e-6, 1e-2, 3, 10)])
def test_lyu_release_threshold_is_never_below_its_quantile(epsilon, delta, cutoff, max_queries):
    # The threshold w must satisfy P[Lap(query) - Lap(threshold) > w] <= delta / m~.
    # Before the fix it came from brentq's tolerance on either side of the root:
    # 1 + 1.6e-8 times delta / m~ at (1, 1e-30, 3, 10).
    _, thr, query, w = release_calibration(epsilon, delta, cutoff, max_queries, "lyu")
    # With these scales (ratio >= 2^(1/3)) the closed form is accurate to ~1e-14.
    assert laplace_difference_sf(w, query, thr) <= delta / max_queries * (1 + 1e-12)
