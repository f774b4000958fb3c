"""Accounting for the Poisson-subsampled Gaussian mechanism (DP-SGD).

A thin, typed layer over Google's ``dp-accounting`` (Renyi DP by default,
privacy loss distributions on request). Noise multipliers come from a
numerical accountant, never from a loose closed form.
"""

import dp_accounting

from skdp.utils._validation import check_epsilon_delta, check_option, check_positive_int, check_real

__all__ = ["calibrate_subsampled_gaussian", "subsampled_gaussian_epsilon"]


def _make_accountant(accountant):
    check_option(accountant, "accountant", ("rdp", "pld"))
    if accountant == "rdp":
        return dp_accounting.rdp.RdpAccountant()
    return dp_accounting.pld.PLDAccountant()


def _event(noise_multiplier, sample_rate, steps):
    gaussian = dp_accounting.GaussianDpEvent(noise_multiplier)
    if sample_rate < 1.0:
        gaussian = dp_accounting.PoissonSampledDpEvent(sample_rate, gaussian)
    return dp_accounting.SelfComposedDpEvent(gaussian, steps)


def _check_common(sample_rate, steps):
    sample_rate = check_real(sample_rate, "sample_rate", low=0.0, high=1.0, low_inclusive=False)
    steps = check_positive_int(steps, "steps")
    return sample_rate, steps


def subsampled_gaussian_epsilon(noise_multiplier, sample_rate, steps, delta, *,
                                accountant="rdp"):
    """Epsilon spent by ``steps`` Poisson-subsampled Gaussian steps.

    Each step samples every record independently with probability
    ``sample_rate`` and adds ``N(0, (noise_multiplier * C)^2)`` to a sum of
    per-record contributions of norm at most ``C`` (add/remove neighbours).

    Parameters
    ----------
    noise_multiplier : float
        Noise standard deviation divided by the clipping norm, > 0.
    sample_rate : float
        Poisson sampling probability in ``(0, 1]``.
    steps : int
        Number of steps.
    delta : float
        Target delta in ``(0, 1)``.
    accountant : {"rdp", "pld"}, default="rdp"
        Renyi DP (Mironov 2017) or privacy-loss distributions (tighter, slower).

    Returns
    -------
    epsilon : float
        The smallest epsilon the accountant certifies at ``delta``.
    """
    noise_multiplier = check_real(noise_multiplier, "noise_multiplier", low=0.0, low_inclusive=False)
    sample_rate, steps = _check_common(sample_rate, steps)
    check_epsilon_delta(1.0, delta, allow_zero_delta=False)
    acc = _make_accountant(accountant)
    acc.compose(_event(noise_multiplier, sample_rate, steps))
    return float(acc.get_epsilon(delta))


def calibrate_subsampled_gaussian(epsilon, delta, sample_rate, steps, *, accountant="rdp"):
    """Smallest noise multiplier whose subsampled Gaussian steps fit in ``(epsilon, delta)``.

    Parameters
    ----------
    epsilon : float
        Target epsilon, > 0.
    delta : float
        Target delta in ``(0, 1)``.
    sample_rate : float
        Poisson sampling probability in ``(0, 1]``.
    steps : int
        Number of steps.
    accountant : {"rdp", "pld"}, default="rdp"
        The numerical accountant.

    Returns
    -------
    noise_multiplier : float
        Noise standard deviation divided by the clipping norm. The returned
        value is checked: it spends at most ``epsilon`` by the same accountant.
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
    sample_rate, steps = _check_common(sample_rate, steps)
    # RDP first: it is fast and never tighter than PLD, so its answer bounds the
    # PLD search from above (a PLD search started at tiny sigmas would build
    # enormous discretized distributions).
    sigma = dp_accounting.calibrate_dp_mechanism(
        lambda: _make_accountant("rdp"),
        lambda s: _event(s, sample_rate, steps),
        epsilon,
        delta,
        bracket_interval=dp_accounting.LowerEndpointAndGuess(1e-3, 1.0),
    )
    if accountant == "pld":
        sigma = dp_accounting.calibrate_dp_mechanism(
            lambda: _make_accountant("pld"),
            lambda s: _event(s, sample_rate, steps),
            epsilon,
            delta,
            bracket_interval=dp_accounting.ExplicitBracketInterval(0.25 * sigma, sigma),
        )
    # calibrate_dp_mechanism searches to a tolerance; make sure we err on the safe side.
    while subsampled_gaussian_epsilon(sigma, sample_rate, steps, delta, accountant=accountant) > epsilon:
        sigma *= 1.0 + 1e-6
    return float(sigma)
