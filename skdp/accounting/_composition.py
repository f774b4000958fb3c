"""Composition theorems and conversions between DP and zero-concentrated DP.

Each function implements one lemma of seed 004 (O. Thakkar's thesis, Ch. 2)
or of the papers it cites; the lemma is named in the docstring.
"""

import math

import numpy as np

from skdp.accounting._budget import PrivacyBudget
from skdp.utils._validation import check_real

__all__ = [
    "advanced_composition",
    "basic_composition",
    "dp_to_zcdp",
    "gaussian_zcdp",
    "zcdp_for_dp",
    "zcdp_to_dp",
]


def basic_composition(budgets):
    """Total budget of running several mechanisms on the same data.

    Seed 004, Lemma 2.1.5: epsilons add and deltas add.

    Parameters
    ----------
    budgets : iterable of PrivacyBudget
        The budgets of the composed mechanisms (at least one).

    Returns
    -------
    total : PrivacyBudget
        ``(sum epsilon_i, sum delta_i)``.
    """
    budgets = list(budgets)
    if not budgets:
        raise ValueError("basic_composition needs at least one budget.")
    total = budgets[0]
    for b in budgets[1:]:
        total = total + b
    return total


def advanced_composition(budgets, delta_prime):
    """Advanced (heterogeneous) composition bound.

    Seed 004, Lemma 2.1.6 (Dwork, Rothblum and Vadhan 2010; Kairouz, Oh and
    Viswanath 2017). For mechanisms ``(eps_i, delta_i)`` and any
    ``delta' > 0`` the composition is ``(eps', 1 - (1 - delta') prod(1 - delta_i))``-DP with

    ``eps' = min(sum eps_i, sum eps_i (e^eps_i - 1)/(e^eps_i + 1)
    + sqrt(min(2 sum eps_i^2 ln(e + sqrt(sum eps_i^2)/delta'), 2 sum eps_i^2 ln(1/delta'))))``.

    Parameters
    ----------
    budgets : iterable of PrivacyBudget
        The budgets of the composed mechanisms.
    delta_prime : float
        The extra failure probability ``delta'`` in ``(0, 1)``.

    Returns
    -------
    total : PrivacyBudget
        The composed budget.
    """
    budgets = list(budgets)
    if not budgets:
        raise ValueError("advanced_composition needs at least one budget.")
    delta_prime = check_real(delta_prime, "delta_prime", low=0.0, high=1.0,
                             low_inclusive=False, high_inclusive=False)
    eps = np.array([b.epsilon for b in budgets])
    deltas = np.array([b.delta for b in budgets])
    # sum eps_i^2 in units of the largest eps_i: squaring eps_i below 1e-154 underflows
    # (the bound came out 11% low at eps_i = 2.5e-162, and 0 at 1e-200).
    unit = float(eps.max())
    norm = unit * math.sqrt(float(np.sum((eps / unit) ** 2)))  # sqrt(sum eps_i^2)
    # (e^eps - 1) / (e^eps + 1) = tanh(eps / 2), which does not overflow at large eps.
    drift = float(np.sum(eps * np.tanh(eps / 2.0)))
    spread = norm * math.sqrt(2.0 * min(math.log(math.e + norm / delta_prime),
                                        -math.log(delta_prime)))
    eps_total = min(float(eps.sum()), drift + spread)
    # 1 - (1 - delta') prod(1 - delta_i), computed stably.
    delta_total = -math.expm1(math.log1p(-delta_prime) + float(np.sum(np.log1p(-deltas))))
    return PrivacyBudget(eps_total, delta_total)


def dp_to_zcdp(epsilon):
    """zCDP parameter of a pure epsilon-DP mechanism.

    Seed 004, Lemma 2.1.13 (first part; Bun and Steinke 2016): epsilon-DP
    implies ``rho = epsilon^2 / 2``-zCDP.

    Parameters
    ----------
    epsilon : float
        The pure DP parameter, > 0.

    Returns
    -------
    rho : float
        The zCDP parameter.
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    return 0.5 * epsilon**2


def zcdp_to_dp(rho, delta):
    """Convert rho-zCDP to (epsilon, delta)-DP.

    Seed 004, Lemma 2.1.13 (second part; Bun and Steinke 2016):
    ``epsilon = rho + 2 sqrt(rho ln(1/delta))``.

    Parameters
    ----------
    rho : float
        The zCDP parameter, > 0.
    delta : float
        Target delta in ``(0, 1)``.

    Returns
    -------
    budget : PrivacyBudget
        The implied ``(epsilon, delta)``.
    """
    rho = check_real(rho, "rho", low=0.0, low_inclusive=False)
    delta = check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=False,
                       high_inclusive=False)
    return PrivacyBudget(rho + 2.0 * math.sqrt(-rho * math.log(delta)), delta)


def zcdp_for_dp(epsilon, delta):
    """Largest rho whose zCDP-to-DP conversion stays within ``(epsilon, delta)``.

    Inverts :func:`zcdp_to_dp`: solving ``rho + 2 sqrt(rho L) = epsilon`` with
    ``L = ln(1/delta)`` gives ``rho = (sqrt(L + epsilon) - sqrt(L))^2``.

    Parameters
    ----------
    epsilon : float
        Target epsilon, > 0.
    delta : float
        Target delta in ``(0, 1)``.

    Returns
    -------
    rho : float
        The zCDP budget to spend.
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    delta = check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=False,
                       high_inclusive=False)
    # -ln(delta), not ln(1/delta): rounding 1/delta first loses the digits of
    # the logarithm near delta = 1 (rho was 1 + 1e-11 too large at 1 - 1e-6).
    log_term = -math.log(delta)
    # Written as (epsilon / (sqrt(L + eps) + sqrt(L)))^2 to avoid cancellation (and the
    # overflow of epsilon^2 above 1e154).
    return (epsilon / (math.sqrt(log_term + epsilon) + math.sqrt(log_term))) ** 2


def gaussian_zcdp(sensitivity, sigma):
    """zCDP of the Gaussian mechanism.

    Seed 004, Lemma 2.1.14: noise ``N(0, sigma^2)`` on a query of L2
    sensitivity ``Delta`` is ``rho = Delta^2 / (2 sigma^2)``-zCDP.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity, > 0.
    sigma : float
        Noise standard deviation, > 0.

    Returns
    -------
    rho : float
        The zCDP parameter.
    """
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False)
    sigma = check_real(sigma, "sigma", low=0.0, low_inclusive=False)
    # The ratio first: Delta^2 and sigma^2 are subnormal or zero below 1e-154, which
    # made rho 1e-5 too small at Delta = 1e-160, sigma = 7e-160.
    return 0.5 * (sensitivity / sigma) ** 2
