"""Composition theorems and conversions between DP and zero-concentrated DP.

Each function implements one lemma of O. Thakkar's thesis, Ch. 2
or of the papers it cites; the lemma is named in the docstring.
"""

import math
import sys

import numpy as np

from skdp.accounting._budget import PrivacyBudget
from skdp.utils._validation import check_option, check_real

__all__ = [
    "advanced_composition",
    "basic_composition",
    "dp_to_zcdp",
    "gaussian_zcdp",
    "zcdp_delta",
    "zcdp_for_dp",
    "zcdp_to_dp",
]


# Conversions accepted by zcdp_to_dp and zcdp_for_dp.
_CONVERSIONS = ("cks", "bun-steinke")
# Relative safety margin of zcdp_delta: ln(delta) is raised by 2**-40 (1 + S), S the sum of
# the magnitudes of its four floating-point terms (each within a few 2**-53 of exact).
_LOG_MARGIN = 2.0**-40
# Smallest positive subnormal; exp() below the normal range keeps only a few bits.
_TINY = math.ulp(0.0)


def _log1p_inverse(t):
    """``ln(1 + 1/t)`` for ``t > 0``, without forming an overflowing ``1/t``."""
    if t >= 1.0:
        return math.log1p(1.0 / t)
    return math.log1p(t) - math.log(t)  # both terms >= 0: no cancellation


def _cks_log_delta_at(rho, epsilon, t):
    """Upper bound on ``ln`` of the CKS Cor. 13 delta at ``alpha = 1 + t`` (``t`` a float > 0).

    ``ln delta_alpha = t ((1 + t) rho - epsilon) - t ln(1 + 1/t) - ln(1 + t)``
    (``t = alpha - 1``), summed from four terms and raised by ``2**-40 (1 + S)``,
    ``S`` the sum of their magnitudes. Returns 0 (delta = 1) at ``t = 0``.
    """
    if t == 0.0:
        return 0.0
    terms = (t * (rho - epsilon), t * (t * rho), -t * _log1p_inverse(t), -math.log1p(t))
    return math.fsum(terms) + _LOG_MARGIN * (1.0 + sum(abs(x) for x in terms))


def _cks_argmin(rho, epsilon, u=None):
    """``ln t`` of the ``alpha = 1 + t`` minimising the CKS Cor. 13 bound (Newton, bracketed).

    The exponent is strictly convex in ``alpha``; its derivative in ``u = ln t`` has the
    sign of ``h(u) = rho - epsilon + 2 rho e^u - ln(1 + e^-u)``, increasing in ``u``
    with ``h'(u) = 2 rho e^u + 1 / (1 + e^u)``. ``u`` is a warm start (or None).
    """
    if epsilon > rho:
        # h(ln((epsilon - rho) / (2 rho))) = -ln(1 + e^-u) < 0.
        lo = math.log(epsilon - rho) - math.log(2.0 * rho)
    else:
        # For u <= 0, h(u) <= 3 rho - epsilon + u (ln(1 + e^-u) >= -u): h(lo) <= -1.
        lo = epsilon - 3.0 * rho - 1.0
    # t >= 1 with 2 rho t >= epsilon + 1: h >= 1 - ln 2 > 0.
    hi = max(0.0, math.log1p(epsilon) - math.log(2.0 * rho))
    if u is None or not lo < u < hi:
        u = _cks_argmin_start(rho, epsilon, lo, hi)
    for _ in range(100):
        e_u = math.exp(u) if u < 709.0 else math.inf
        softplus = (-u + math.log1p(math.exp(u))) if u < 0.0 else math.log1p(math.exp(-u))
        h = rho - epsilon + 2.0 * rho * e_u - softplus
        if h < 0.0:
            lo = u
        elif h > 0.0:
            hi = u
        else:
            break
        step = h / (2.0 * rho * e_u + 1.0 / (1.0 + e_u))
        new = u - step
        if abs(step) <= 1e-12 * max(1.0, abs(u)):
            # Converged. Checked before the bracket: a step below the resolution of u
            # leaves new == u == lo or hi, and the bisection fallback then jumped to the
            # bracket's midpoint (from ln t = 230 to 114 at rho = 1e-200).
            if lo < new < hi:
                u = new
            break
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        # ln delta is flat at its minimum: 1e-12 in u is far more than enough.
        converged = abs(new - u) <= 1e-12 * max(1.0, abs(u))
        u = new
        if converged:
            break
    return u


def _cks_argmin_start(rho, epsilon, lo, hi):
    """Newton's cold start for :func:`_cks_argmin`: ``ln t`` just below the root of ``h``.

    ``ln(1 + 1/t) >= 1 / (1 + t)``, so ``h <= 0`` at the positive root of
    ``2 rho t^2 + (3 rho - epsilon) t + (rho - epsilon - 1) = 0`` (where
    ``rho (1 + 2t) - epsilon = 1 / (1 + t)``), when there is one. Near the root
    ``ln(1 + 1/t)`` and ``1 / (1 + t)`` agree to ``O(1/t^2)``, so this start is close
    when ``t`` is large (small ``rho``, ``epsilon`` not far above it: ``t`` about
    ``1 / sqrt(2 rho)``). From ``lo`` instead, Newton's steps grew ``ln t`` by
    about 1 each there (``h(u) ~ -e^-u``), and 100 of them stopped far short
    (``zcdp_delta(1e-200, 0)`` was ``e^-101`` instead of ``e^-230``). Only a start:
    any ``t`` is a valid bound, and a rounded start outside ``(lo, hi)`` falls back to ``lo``.
    """
    b, c = 3.0 * rho - epsilon, rho - epsilon - 1.0
    if not c < 0.0:
        return lo
    # Positive root of 2 rho t^2 + b t + c, in the form without cancellation.
    root = math.sqrt(b * b - 8.0 * rho * c)
    t = -2.0 * c / (b + root) if b > 0.0 else (root - b) / (4.0 * rho)
    if not 0.0 < t < math.inf:
        return lo
    u = math.log(t)
    return u if lo < u < hi else lo


def _cks_log_delta(rho, epsilon, u=None):
    """``(upper bound on ln delta, t, u)`` of CKS Cor. 13 at the (approximate) best ``alpha = 1 + t``."""
    # exp(-(epsilon - rho)^2 / (4 rho)) bounds the CKS delta (alpha = (epsilon + rho) / (2 rho),
    # where (1 - 1/alpha)^(alpha - 1) / alpha <= 1): below e^-800 it underflows anyway.
    if epsilon > rho and (epsilon - rho) / math.sqrt(rho) > 2.0 * math.sqrt(800.0):
        return -800.0, math.inf, None
    u = _cks_argmin(rho, epsilon, u)
    t = math.exp(u)
    return _cks_log_delta_at(rho, epsilon, t), t, u


def basic_composition(budgets):
    """Total budget of running several mechanisms on the same data.

    Thakkar (2019), Lemma 2.1.5: epsilons add and deltas add.

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

    Thakkar (2019), Lemma 2.1.6 (Dwork, Rothblum and Vadhan 2010; Kairouz, Oh and
    Viswanath 2015). For mechanisms ``(eps_i, delta_i)`` and any
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

    Thakkar (2019), Lemma 2.1.13 (first part; Bun and Steinke 2016): epsilon-DP
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


def zcdp_delta(rho, epsilon):
    """Tight ``delta`` of a rho-zCDP mechanism at a given ``epsilon``.

    Canonne, Kamath and Steinke (2020, "The Discrete Gaussian for Differential
    Privacy", Corollary 13; "CKS"): a rho-zCDP mechanism is
    ``(epsilon, delta)``-DP for every ``epsilon >= 0`` with

    ``delta = inf_{alpha > 1} exp((alpha - 1)(alpha rho - epsilon)) / (alpha - 1)
    * (1 - 1/alpha)^alpha``.

    This is strictly smaller than the ``delta`` of Thakkar (2019), Lemma 2.1.13
    (Bun and Steinke 2016). Every ``alpha > 1`` gives a valid bound, so an
    inexact minimiser only loses tightness, never privacy.

    Parameters
    ----------
    rho : float
        The zCDP parameter, > 0.
    epsilon : float
        ``>= 0``.

    Returns
    -------
    delta : float
        In ``(0, 1]``: the bound at the computed ``alpha``, evaluated in
        floating point and rounded up (Notes).

    See Also
    --------
    zcdp_to_dp : The smallest ``epsilon`` for a given ``delta``.
    zcdp_for_dp : The largest ``rho`` for a given ``(epsilon, delta)``.

    Notes
    -----
    Derivation (CKS Prop. 12 and Cor. 13). Let ``Z`` be the privacy loss of
    a pair of neighbouring output distributions ``P, Q``;
    ``delta = E_P[max(0, 1 - e^(epsilon - Z))]`` is the tight ``delta``.
    For ``alpha > 1`` and every real ``z``,
    ``max(0, 1 - e^(epsilon - z)) <= e^((alpha - 1)(z - epsilon)) (alpha - 1)^(alpha - 1) / alpha^alpha``
    (maximise ``(1 - e^-x) e^(-(alpha - 1) x)`` over ``x = z - epsilon``:
    the maximum is at ``e^-x = (alpha - 1) / alpha``). Taking ``E_P`` and
    ``E_P[e^((alpha - 1) Z)] = e^((alpha - 1) D_alpha(P || Q))
    <= e^((alpha - 1) alpha rho)`` (rho-zCDP) gives
    ``delta <= e^((alpha - 1)(alpha rho - epsilon)) (alpha - 1)^(alpha - 1) / alpha^alpha``,
    which is the formula above since
    ``(1 - 1/alpha)^alpha / (alpha - 1) = (alpha - 1)^(alpha - 1) / alpha^alpha``.
    Dropping the factor ``(alpha - 1)^(alpha - 1) / alpha^alpha < 1`` and
    taking ``alpha = (epsilon + rho) / (2 rho)`` gives
    ``exp(-(epsilon - rho)^2 / (4 rho))``, Lemma 2.1.13's ``delta``: the
    bound here is never larger. Only ``D_alpha <= alpha rho`` for every
    ``alpha > 1`` is used, so the bound holds for any mechanism with that
    Renyi curve, as Lemma 2.1.13 does. dp-accounting's RDP accountant uses
    the same bound (its ``compute_delta``, citing CKS Prop. 12).

    Computation. With ``t = alpha - 1``,
    ``ln delta_t = t ((1 + t) rho - epsilon) - t ln(1 + 1/t) - ln(1 + t)``,
    strictly convex in ``t`` (second derivative ``2 rho + 1 / (t (1 + t))``),
    with derivative ``rho (1 + 2t) - epsilon - ln(1 + 1/t)``. Its root is
    found by bracketed Newton iterations in ``ln t`` (``t`` spans ``1e-300``
    to ``1e30`` over the supported range), all in log space, so nothing
    overflows for ``rho`` up to ``1e6`` and ``epsilon`` up to ``1e4`` or
    beyond. Rounding up: the four terms of ``ln delta_t`` are each within a
    few ``2**-53`` of their exact value at the float ``t``, so their sum is
    raised by ``2**-40 (1 + S)``, ``S`` the sum of their magnitudes (a
    relative margin of about ``1e-12 (1 + S)`` on ``delta``; ``S`` is of
    the order of ``ln(1/delta)``). A bound below the normal float range is
    rounded up by two subnormal steps, one below ``e^-800`` is returned as
    the smallest positive float, and a bound above 1 as 1.

    References
    ----------
    Canonne, C. L., Kamath, G. and Steinke, T. (2020). The Discrete Gaussian
    for Differential Privacy. NeurIPS 2020 (arXiv:2004.00010), Prop. 12 and
    Cor. 13.

    Examples
    --------
    >>> from skdp.accounting import zcdp_delta
    >>> round(zcdp_delta(1 / 32, 0.6880024554878086), 9)
    0.001
    """
    rho = check_real(rho, "rho", low=0.0, low_inclusive=False)
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    return _delta_from_log(_cks_log_delta(rho, epsilon)[0])


def _delta_from_log(log_delta):
    """``exp(log_delta)`` rounded up, in ``(0, 1]``."""
    if log_delta >= 0.0:
        return 1.0
    if log_delta <= -800.0:
        return _TINY
    delta = math.exp(log_delta)
    # exp is within one unit in the last place; subnormal results keep fewer bits.
    return delta + 2.0 * _TINY if delta < sys.float_info.min else delta


def _check_conversion(conversion):
    return check_option(conversion, "conversion", _CONVERSIONS)


def _bun_steinke_epsilon(rho, delta):
    """Thakkar (2019), Lemma 2.1.13 (Bun and Steinke 2016): ``rho + 2 sqrt(rho ln(1/delta))``."""
    return rho + 2.0 * math.sqrt(-rho * math.log(delta))


def _bun_steinke_rho(epsilon, delta):
    """Lemma 2.1.13 inverted: ``rho = (sqrt(L + epsilon) - sqrt(L))^2``, ``L = ln(1/delta)``."""
    # -ln(delta), not ln(1/delta): rounding 1/delta first loses the digits of
    # the logarithm near delta = 1 (rho was 1 + 1e-11 too large at 1 - 1e-6).
    log_term = -math.log(delta)
    # Written as (epsilon / (sqrt(L + eps) + sqrt(L)))^2 to avoid cancellation (and the
    # overflow of epsilon^2 above 1e154).
    return (epsilon / (math.sqrt(log_term + epsilon) + math.sqrt(log_term))) ** 2


def zcdp_to_dp(rho, delta, conversion="cks"):
    """Convert rho-zCDP to (epsilon, delta)-DP.

    ``conversion="cks"`` (default): the smallest ``epsilon`` with
    :func:`zcdp_delta` ``(rho, epsilon) <= delta`` (Canonne, Kamath and
    Steinke 2020, Cor. 13), never larger than Lemma 2.1.13's.
    ``conversion="bun-steinke"``: Thakkar (2019), Lemma 2.1.13 (second part; Bun
    and Steinke 2016), ``epsilon = rho + 2 sqrt(rho ln(1/delta))``, skdp's
    conversion before CKS (reproduces earlier runs).

    Parameters
    ----------
    rho : float
        The zCDP parameter, > 0.
    delta : float
        Target delta in ``(0, 1)``.
    conversion : {"cks", "bun-steinke"}, default="cks"
        The conversion theorem.

    Returns
    -------
    budget : PrivacyBudget
        The implied ``(epsilon, delta)``.

    Notes
    -----
    CKS: by the Notes of :func:`zcdp_delta`, ``delta_alpha(epsilon) <= delta``
    exactly when ``epsilon >= alpha rho + ln(1 - 1/alpha) + (ln(1/delta) -
    ln alpha) / (alpha - 1)``; the right side is minimal where
    ``rho (alpha - 1)^2 + ln alpha = ln(1/delta)`` (its derivative is
    ``rho - (ln(1/delta) - ln alpha) / (alpha - 1)^2``), found by bracketed
    Newton iterations. The ``epsilon`` is then checked with
    :func:`zcdp_delta` (rounded up) and raised until it passes; if it does
    not pass, or Lemma 2.1.13 gives a smaller ``epsilon`` at an extreme input,
    Lemma 2.1.13's is returned (valid too).

    Examples
    --------
    >>> from skdp.accounting import zcdp_to_dp
    >>> round(zcdp_to_dp(0.5, 1e-6).epsilon, 4)
    5.2215
    >>> round(zcdp_to_dp(0.5, 1e-6, conversion="bun-steinke").epsilon, 4)
    5.7565
    """
    rho = check_real(rho, "rho", low=0.0, low_inclusive=False)
    delta = check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=False,
                       high_inclusive=False)
    conversion = _check_conversion(conversion)
    # Thakkar (2019), Lemma 2.1.13 (Bun and Steinke 2016).
    bun_steinke = _bun_steinke_epsilon(rho, delta)
    if conversion == "bun-steinke":
        return PrivacyBudget(bun_steinke, delta)
    return PrivacyBudget(min(_cks_epsilon(rho, delta), bun_steinke), delta)


def _cks_epsilon(rho, delta):
    """Smallest ``epsilon`` passing :func:`zcdp_delta` at ``delta`` (inf if none is found)."""
    log_inv = -math.log(delta)
    # Minimiser s = alpha - 1 of the epsilon bound: rho s^2 + ln(1 + s) = ln(1/delta), with
    # 0 < s <= sqrt(ln(1/delta) / rho) (ln(1 + s) >= 0).
    lo, hi = 0.0, math.sqrt(log_inv / rho)
    s = hi
    for _ in range(100):
        g = rho * s * s + math.log1p(s) - log_inv
        if g < 0.0:
            lo = s
        elif g > 0.0:
            hi = s
        else:
            break
        new = s - g / (2.0 * rho * s + 1.0 / (1.0 + s))
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        converged = abs(new - s) <= 1e-12 * s
        s = new
        if converged:
            break
    if s == 0.0:
        return math.inf
    # alpha rho + ln(1 - 1/alpha) + (ln(1/delta) - ln alpha) / (alpha - 1), alpha = 1 + s.
    epsilon = max((1.0 + s) * rho - _log1p_inverse(s) + (log_inv - math.log1p(s)) / s, 0.0)
    log_delta = math.log(delta)
    for _ in range(8):
        bound, t, _ = _cks_log_delta(rho, epsilon)
        if bound <= log_delta:
            # delta decreases in epsilon: if epsilon = 0 passes, every epsilon > 0 does.
            return max(epsilon, _TINY)
        if not 0.0 < t < math.inf:
            return math.inf
        # d ln(delta_t) / d epsilon = -t: the excess, and a little more.
        epsilon += (bound - log_delta) / t * (1.0 + 2.0**-20) + 2.0**-40 * epsilon + _TINY
    return math.inf


def zcdp_for_dp(epsilon, delta, conversion="cks"):
    """Largest rho whose zCDP-to-DP conversion stays within ``(epsilon, delta)``.

    ``conversion="cks"`` (default): the largest ``rho`` (up to a relative
    ``1e-11`` or so) with :func:`zcdp_delta` ``(rho, epsilon) <= delta``
    (Canonne, Kamath and Steinke 2020, Cor. 13), checked on the returned
    value; at least Lemma 2.1.13's ``rho``. ``conversion="bun-steinke"``:
    inverts Thakkar (2019), Lemma 2.1.13 (skdp's conversion before CKS, to
    reproduce earlier runs): solving ``rho + 2 sqrt(rho L) = epsilon`` with ``L = ln(1/delta)``
    gives ``rho = (sqrt(L + epsilon) - sqrt(L))^2``.

    Parameters
    ----------
    epsilon : float
        Target epsilon, > 0.
    delta : float
        Target delta in ``(0, 1)``.
    conversion : {"cks", "bun-steinke"}, default="cks"
        The conversion theorem.

    Returns
    -------
    rho : float
        The zCDP budget to spend.

    Notes
    -----
    CKS. ``F(rho) = ln zcdp_delta(rho, epsilon)`` is the minimum over
    ``alpha`` of functions affine in ``rho`` with slope ``alpha (alpha -
    1)``, hence concave and increasing in ``rho``; its derivative is
    ``alpha* (alpha* - 1)`` at the minimising ``alpha*`` (envelope theorem).
    Newton's method on ``F(rho) = ln delta`` started at Lemma 2.1.13's
    ``rho`` (where ``F <= ln delta``, Notes of :func:`zcdp_delta`), or at
    ``delta^2 / 4`` when that is larger and passes (a small ``epsilon``:
    at ``epsilon = 0`` the CKS ``delta`` is about ``sqrt(2 rho / e)`` for small
    ``rho``, so ``delta`` alone allows ``rho ~ e delta^2 / 2`` however small
    ``epsilon`` is, where Lemma 2.1.13's ``rho`` goes to 0), therefore
    climbs monotonically to the root without crossing it: each step solves
    the tangent, which lies above the concave ``F``. It aims a few rounding
    margins below ``ln delta``, keeps the largest iterate that passes the
    rounded-up check, and returns it only if :func:`zcdp_delta` confirms it
    (else Lemma 2.1.13's ``rho``, valid by that lemma). About 0.1 ms; the
    result is deterministic and, up to round-off (about ``1e-15``
    relative), increasing in ``epsilon`` and in ``delta``.

    Examples
    --------
    >>> from skdp.accounting import zcdp_for_dp, zcdp_delta
    >>> rho = zcdp_for_dp(1.0, 1e-5)
    >>> round(rho, 5)
    0.03056
    >>> round(zcdp_for_dp(1.0, 1e-5, conversion="bun-steinke"), 5)
    0.02082
    >>> zcdp_delta(rho, 1.0) <= 1e-5
    True
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    delta = check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=False,
                       high_inclusive=False)
    conversion = _check_conversion(conversion)
    # Thakkar (2019), Lemma 2.1.13 inverted: the floor of both conversions.
    bun_steinke = _bun_steinke_rho(epsilon, delta)
    if conversion == "bun-steinke":
        return bun_steinke
    # Newton's start: a valid rho. Lemma 2.1.13's, or, when the delta alone allows more
    # (epsilon -> 0: CKS's delta at epsilon = 0 is about sqrt(2 rho / e) for small rho),
    # delta^2 / 4 if it passes.
    start = max(bun_steinke, 0.25 * delta * delta)
    if start > bun_steinke and zcdp_delta(start, epsilon) > delta:
        start = bun_steinke
    if start == 0.0:
        return 0.0
    rho = _cks_rho(epsilon, delta, start)
    # The returned value itself is checked (rounded up), not only the search's iterates.
    return rho if rho > bun_steinke and zcdp_delta(rho, epsilon) <= delta else bun_steinke


def _cks_rho(epsilon, delta, rho):
    """Newton's method on ``ln zcdp_delta(rho, epsilon) = ln delta`` from ``rho`` (below the root).

    Returns the largest iterate that passed the rounded-up check (0 if none did).
    """
    log_delta = math.log(delta)
    best, u = 0.0, None
    for _ in range(60):
        bound, t, u = _cks_log_delta(rho, epsilon, u)
        if bound <= log_delta:
            best = max(best, rho)
        if not 0.0 < t < math.inf:
            break
        # Aim 16 rounding margins below ln(delta) (the margin grows with rho).
        gap = log_delta - bound - 16.0 * _LOG_MARGIN * (1.0 - log_delta)
        step = min(gap / (t * (1.0 + t)), 1024.0 * rho)
        if not rho + step > 0.0:
            # Never expected (the iterates approach the root from below); rho <= 0
            # would crash the next evaluation (math domain error), so stop here.
            break
        rho += step
        if abs(step) <= 2.0**-45 * rho:
            break
    return best


def gaussian_zcdp(sensitivity, sigma):
    """zCDP of the Gaussian mechanism.

    Thakkar (2019), Lemma 2.1.14: noise ``N(0, sigma^2)`` on a query of L2
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
