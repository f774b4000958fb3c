"""The Gaussian mechanism with three calibrations."""

import math

import dp_accounting
import numpy as np
from scipy import optimize, special

from skdp.mechanisms._base import _AdditiveNoiseMechanism
from skdp.utils._validation import check_epsilon_delta, check_option, check_real

__all__ = [
    "GaussianMechanism",
    "gaussian_delta_analytic",
    "gaussian_sigma",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
    "gaussian_sigma_thesis",
]

CALIBRATIONS = ("analytic", "classic", "thesis")


def _check(sensitivity, epsilon, delta):
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False)
    epsilon, delta = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
    return sensitivity, epsilon, delta


def gaussian_sigma_classic(sensitivity, epsilon, delta):
    """Classic Gaussian calibration, valid only for ``epsilon < 1``.

    Dwork and Roth (2014), Thm. A.1: ``sigma = sqrt(2 ln(1.25/delta)) Delta / epsilon``
    gives ``(epsilon, delta)``-DP when ``epsilon < 1``.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity, > 0.
    epsilon : float
        In ``(0, 1)``.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    sigma : float
        Noise standard deviation.
    """
    sensitivity, epsilon, delta = _check(sensitivity, epsilon, delta)
    if epsilon >= 1.0:
        raise ValueError(
            "the classic Gaussian calibration is only proved for epsilon < 1 "
            f"(got epsilon={epsilon}); use calibration='analytic'."
        )
    return math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / epsilon


def gaussian_sigma_thesis(sensitivity, epsilon, delta):
    """Thakkar's (2019) Gaussian calibration.

    Thakkar (2019), Lemma 2.1.9 (Nikolov, Talwar and Zhang 2013):
    ``sigma = Delta (1 + sqrt(2 ln(1/delta))) / epsilon``. The lemma does not
    hold for large epsilon (it fails from about epsilon = 20 at delta = 1e-4);
    the returned sigma is checked against the exact privacy profile
    (:func:`gaussian_delta_analytic`) and a ``ValueError`` is raised where it
    would not be ``(epsilon, delta)``-DP.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity, > 0.
    epsilon : float
        > 0.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    sigma : float
        Noise standard deviation.
    """
    sensitivity, epsilon, delta = _check(sensitivity, epsilon, delta)
    sigma = sensitivity * (1.0 + math.sqrt(-2.0 * math.log(delta))) / epsilon
    # Lemma 2.1.9 is stated for every epsilon, but it fails for large epsilon
    # (e.g. epsilon = 20, delta = 1e-4: the exact delta exceeds 1e-4). Check the
    # exact privacy profile and refuse rather than release too little noise.
    if _log_delta(sigma / sensitivity, epsilon) > math.log(delta):
        raise ValueError(
            f"Thakkar's (2019) Gaussian calibration (Thakkar (2019), Lemma 2.1.9) is not "
            f"(epsilon={epsilon:g}, delta={delta:g})-DP; use calibration='analytic'."
        )
    return sigma


_ROUND_OFF = np.finfo(float).eps


def log_shifted_gaussian_delta(scale, shift, epsilon):
    """``log delta(epsilon)`` of a privacy loss ``scale Z + shift``, ``Z ~ N(0, 1)``, never under-stated.

    ``delta = E[(1 - e^(epsilon - loss))_+]
    = Q(z) - e^(epsilon - shift + scale^2 / 2) Q(z + scale)`` with
    ``z = (epsilon - shift) / scale`` and ``Q`` the standard normal tail. The
    Gaussian mechanism with sensitivity ``Delta`` and noise ``sigma`` is
    ``scale = Delta / sigma``, ``shift = scale^2 / 2`` (Balle and Wang 2018,
    Thm. 8). Where the two terms nearly cancel (small ``epsilon`` against
    ``scale``, or deep tails) their difference keeps few correct digits, so
    the log of their ratio is lowered by a bound on its rounding error (64
    units of round-off per unit of the magnitudes involved; at most 1.5 were
    seen against 60-digit arithmetic for ``epsilon`` from ``1e-15`` to
    ``1e3``). This over-states ``delta`` by a relative ``1e-10`` or less at
    ``epsilon >= 1``, ``1e-8`` at ``0.01`` and ``1e-6`` at ``1e-4``, and never
    under-states it: without the margin, the analytic calibration at
    ``epsilon = 1e-14`` gave 31 times the target ``delta``.

    Parameters
    ----------
    scale : float
        > 0.
    shift : float
    epsilon : float
        >= 0.

    Returns
    -------
    log_delta : float
    """
    # scale * scale (not scale**2, which raises OverflowError) is inf beyond ~1.3e154.
    square = scale * scale
    z = (epsilon - shift) / scale
    log_a = float(special.log_ndtr(-z))
    if log_a == -math.inf:
        # delta <= Q(z) is below the smallest float (z > ~38, or z overflowed to +inf).
        return -math.inf
    log_b = epsilon - shift + 0.5 * square + special.log_ndtr(-z - scale)
    if not math.isfinite(log_b):
        # Overflow (inf - inf) at extreme inputs: fall back on delta <= Q(z), valid as e^(..) Q(..) >= 0.
        return log_a
    rounding = 64 * _ROUND_OFF * (1.0 + abs(log_a) + abs(log_b) + abs(epsilon) + abs(shift)
                                  + square)
    return float(log_a + math.log(-math.expm1(min(log_b - log_a, 0.0) - rounding)))


def _log_delta(sigma_over_sens, epsilon):
    # Balle and Wang (2018), Thm. 8 with Delta = 1 and s = sigma / Delta:
    # delta = Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s), in log space.
    scale = 1.0 / sigma_over_sens
    return log_shifted_gaussian_delta(scale, 0.5 * scale * scale, epsilon)


def gaussian_delta_analytic(sensitivity, sigma, epsilon):
    """Exact delta of the Gaussian mechanism at a given epsilon.

    Balle and Wang (2018), Thm. 8: the mechanism with noise ``N(0, sigma^2)``
    on a query of L2 sensitivity ``Delta`` is ``(epsilon, delta)``-DP exactly
    for ``delta = Phi(Delta/(2 sigma) - epsilon sigma/Delta)
    - e^epsilon Phi(-Delta/(2 sigma) - epsilon sigma/Delta)``. The two terms
    nearly cancel at small ``epsilon``; the value returned is rounded up, never
    down (:func:`log_shifted_gaussian_delta`), and is exact to a relative
    ``1e-10`` at ``epsilon >= 1`` and ``1e-8`` at ``epsilon = 0.01``.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity, > 0.
    sigma : float
        Noise standard deviation, > 0.
    epsilon : float
        >= 0.

    Returns
    -------
    delta : float
        The smallest delta achieved at ``epsilon`` (an upper bound on it
        within the rounding margin).
    """
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False)
    sigma = check_real(sigma, "sigma", low=0.0, low_inclusive=False)
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    return math.exp(_log_delta(sigma / sensitivity, epsilon))


def gaussian_sigma_analytic(sensitivity, epsilon, delta):
    """Smallest noise of the Gaussian mechanism for ``(epsilon, delta)``-DP (exact).

    The analytic Gaussian mechanism of Balle and Wang (2018), Thm. 8 and
    Alg. 1: solve ``delta(sigma) = delta`` for the exact privacy profile
    (see :func:`gaussian_delta_analytic`); valid for every ``epsilon > 0``.
    The root is bracketed in ``log(sigma)`` and refined by Brent's method,
    then nudged up so the returned sigma never under-shoots.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity, > 0.
    epsilon : float
        > 0.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    sigma : float
        Noise standard deviation.
    """
    sensitivity, epsilon, delta = _check(sensitivity, epsilon, delta)
    if epsilon >= _LARGE_EPSILON:
        return _checked_sigma(_sigma_ratio_large_epsilon(epsilon, delta) * sensitivity,
                              sensitivity, epsilon, delta)
    target = math.log(delta)

    def gap(log_s):
        return _log_delta(math.exp(log_s), epsilon) - target

    lo, hi = -1.0, 1.0
    while gap(lo) < 0:
        lo -= 2.0
    while gap(hi) > 0:
        hi += 2.0
    log_s = optimize.brentq(gap, lo, hi, xtol=1e-14, rtol=1e-14)
    s = math.exp(log_s)
    while _log_delta(s, epsilon) > target:
        s *= 1.0 + 1e-12
    return _checked_sigma(s * sensitivity, sensitivity, epsilon, delta)


# From here on the tail bound below is within a relative ~0.5 / epsilon (5e-13) of
# the exact root, below the 1e-12 nudge of the root finder; the root finder's
# two terms cancel (and overflow from epsilon ~ 1e154) at such epsilon.
_LARGE_EPSILON = 1e12


def _sigma_ratio_large_epsilon(epsilon, delta):
    """``sigma / Delta`` for ``(epsilon, delta)``-DP at large epsilon, from ``delta(s) <= Q(z(s))``.

    Balle and Wang (2018), Thm. 8 with ``s = sigma / Delta``:
    ``delta(s) = Q(z) - e^epsilon Q(z + 1/s)`` with ``z(s) = epsilon s - 1/(2s)``,
    so ``delta(s) <= Q(z(s))``, and ``z`` increases with ``s``. Take ``z_delta``
    with ``Q(z_delta) <= delta`` (checked) and the positive root of
    ``epsilon s^2 - z_delta s - 1/2 = 0``, written as
    ``s = (t + sqrt(t^2 + 1/2)) / sqrt(epsilon)``, ``t = z_delta / (2 sqrt(epsilon))``
    (no overflow up to the largest float). The second term of ``delta`` is
    about ``|z| s`` times the first, so this is within a relative ``~0.5 / epsilon``
    of the exact root. The root is raised by a relative ``1e-12``, which raises
    ``z`` by ``1e-12 (epsilon s + 1/(2s)) >= 1e-12 sqrt(2 epsilon)``, far more than
    the rounding of the closed form (a few units of ``1e-16`` times the same).
    """
    log_delta = math.log(delta)
    z = -float(special.ndtri(delta))
    # Raise z until Q(z) <= delta is certain. Steps of 2**-40 (relative, at least absolute):
    # one ulp at a time would take ~2**62 steps from z = 0 (delta = 1/2).
    step = max(abs(z), 1.0) * 2.0**-40
    while special.log_ndtr(-z) > log_delta - 64 * _ROUND_OFF * abs(log_delta):
        z += step
    root_eps = math.sqrt(epsilon)
    t = z / (2.0 * root_eps)
    return (t + math.sqrt(t * t + 0.5)) / root_eps * (1.0 + 1e-12)


def _checked_sigma(sigma, sensitivity, epsilon, delta):
    """Refuse a sigma that underflowed to zero or to a subnormal (which keeps few digits)."""
    if not sigma >= np.finfo(float).tiny:
        raise ValueError(
            f"the Gaussian noise for sensitivity={sensitivity:g}, epsilon={epsilon:g}, "
            f"delta={delta:g} is {sigma:g}, below the smallest normal float: the mechanism "
            "cannot represent it; use a larger sensitivity scale (e.g. rescale the query) "
            "or a smaller epsilon.")
    return sigma


def gaussian_sigma(sensitivity, epsilon, delta, calibration="analytic"):
    """Gaussian noise standard deviation under a named calibration.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity, > 0.
    epsilon : float
        > 0.
    delta : float
        In ``(0, 1)``.
    calibration : {"analytic", "classic", "thesis"}, default="analytic"
        See :func:`gaussian_sigma_analytic`, :func:`gaussian_sigma_classic`,
        :func:`gaussian_sigma_thesis`.

    Returns
    -------
    sigma : float
        Noise standard deviation.
    """
    check_option(calibration, "calibration", CALIBRATIONS)
    return {
        "analytic": gaussian_sigma_analytic,
        "classic": gaussian_sigma_classic,
        "thesis": gaussian_sigma_thesis,
    }[calibration](sensitivity, epsilon, delta)


class GaussianMechanism(_AdditiveNoiseMechanism):
    """Add Gaussian noise calibrated to an L2 sensitivity (``(epsilon, delta)``-DP).

    Parameters
    ----------
    epsilon : float
        > 0 (``calibration='classic'`` needs ``epsilon < 1``).
    delta : float
        In ``(0, 1)``.
    sensitivity : float, default=1.0
        L2 sensitivity of the query, > 0.
    calibration : {"analytic", "classic", "thesis"}, default="analytic"
        ``"analytic"`` is exact (Balle and Wang 2018) and the smallest noise;
        ``"classic"`` is Dwork and Roth's bound (epsilon < 1 only);
        ``"thesis"`` is Thakkar (2019), Lemma 2.1.9.
    random_state : int, numpy.random.Generator or None, default=None
        Noise source; ``None`` (OS entropy) for real releases.

    Notes
    -----
    **Privacy.** ``(epsilon, delta)``-DP for any neighbouring relation under
    which the query's L2 sensitivity is at most ``sensitivity``.

    References
    ----------
    B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential
    privacy: analytical calibration and optimal denoising", ICML 2018.

    O. Thakkar, "Advances in Privacy-Preserving Machine Learning", PhD thesis,
    Boston University, 2019.

    Examples
    --------
    >>> from skdp.mechanisms import GaussianMechanism
    >>> mech = GaussianMechanism(epsilon=0.5, delta=1e-5, calibration="classic")
    >>> round(mech.sigma, 4)
    9.6896
    """

    def __init__(self, *, epsilon, delta, sensitivity=1.0, calibration="analytic",
                 random_state=None):
        super().__init__(epsilon=epsilon, sensitivity=sensitivity, random_state=random_state)
        self.delta = delta
        self.calibration = calibration

    @property
    def sigma(self):
        """Noise standard deviation under the chosen calibration."""
        return gaussian_sigma(self._checked_sensitivity(), self.epsilon, self.delta,
                              self.calibration)

    @property
    def privacy_event(self):
        """What one call releases, as a ``dp_accounting.GaussianDpEvent``.

        Its noise multiplier is ``sigma / sensitivity``. Pass it as the
        ``event`` of :meth:`skdp.BudgetAccountant.spend` (with the budget
        ``(epsilon, delta)``) so that a tight accountant composes the calls;
        ``k`` calls are ``dp_accounting.SelfComposedDpEvent(event, k)``.
        """
        return dp_accounting.GaussianDpEvent(self.sigma / self._checked_sensitivity())

    def _noise(self, shape):
        return self._rng.normal(0.0, self.sigma, size=shape)
