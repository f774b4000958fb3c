"""Accounting for the Poisson-subsampled Gaussian mechanism (DP-SGD).

A thin, typed layer over Google's ``dp-accounting`` (Renyi DP by default,
privacy loss distributions on request). Noise multipliers come from a
numerical accountant, never from a loose closed form.
"""

import contextlib
import logging
import math
import threading

import dp_accounting

from skdp.utils._validation import check_epsilon_delta, check_option, check_positive_int, check_real

__all__ = ["calibrate_subsampled_gaussian", "subsampled_gaussian_epsilon"]


# Bracket growth steps (factor 1/0.7 each, 1e15 in all) before the PLD search gives up.
_MAX_BRACKET_STEPS = 100

_RELATIONS = {"add-remove": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
              "replace-one": dp_accounting.NeighboringRelation.REPLACE_ONE}


_QUIET = {"lock": threading.Lock(), "depth": 0, "level": logging.NOTSET}


@contextlib.contextmanager
def _quiet_rdp():
    """Silence dp-accounting's notes that an RDP order did not converge and was left out.

    Leaving an order out only loosens the bound; the notes (dozens per calibration at
    small noise) would reach the user of every DP-SGD fit. Calibrations running in
    several threads share one silencing: the first in saves the logger's level, the
    last out restores it.
    """
    logger = logging.getLogger("absl")
    with _QUIET["lock"]:
        if _QUIET["depth"] == 0:
            _QUIET["level"] = logger.level
            logger.setLevel(logging.ERROR)
        _QUIET["depth"] += 1
    try:
        yield
    finally:
        with _QUIET["lock"]:
            _QUIET["depth"] -= 1
            if _QUIET["depth"] == 0:
                logger.setLevel(_QUIET["level"])


# PLD value discretization: coarse (fast) for the search, fine for the finish where the
# coarse grid's pessimism matters (many steps at a small sampling rate).
_PLD_COARSE, _PLD_FINE = 1e-3, 1e-4
# Refine only when the coarse grid's estimated excess is at least this fraction of epsilon.
_REFINE_FRACTION = 0.01


def _make_accountant(accountant, neighbours="add-remove", interval=_PLD_COARSE):
    check_option(accountant, "accountant", ("rdp", "pld"))
    check_option(neighbours, "neighbours", tuple(_RELATIONS))
    if accountant == "rdp":
        if neighbours != "add-remove":
            raise ValueError("Renyi DP accounting of Poisson sampling covers add/remove "
                             "neighbours only; use accountant='pld' for replace-one.")
        return dp_accounting.rdp.RdpAccountant()
    # Pessimistic discretization (dp-accounting's default) bounds epsilon from
    # above at any interval; 1e-3 is about ten times faster than the default 1e-4
    # and changes epsilon by under 1e-3 at DP-SGD's usual settings (but see
    # _refine_pld for many steps at a small sampling rate).
    return dp_accounting.pld.PLDAccountant(neighboring_relation=_RELATIONS[neighbours],
                                           value_discretization_interval=interval)


def _epsilon(noise_multiplier, sample_rate, steps, delta, accountant, neighbours,
             interval=_PLD_COARSE):
    acc = _make_accountant(accountant, neighbours, interval)
    with _quiet_rdp():
        acc.compose(subsampled_gaussian_event(noise_multiplier, sample_rate, steps))
        return float(acc.get_epsilon(delta))


def _pld_epsilon(sigma, sample_rate, steps, delta, neighbours, interval):
    return _epsilon(sigma, sample_rate, steps, delta, "pld", neighbours, interval)


def subsampled_gaussian_event(noise_multiplier, sample_rate, steps):
    """The event :func:`calibrate_subsampled_gaussian` accounts: ``steps`` Poisson-sampled
    Gaussian steps of multiplier ``noise_multiplier`` (no sampling at rate 1)."""
    gaussian = dp_accounting.GaussianDpEvent(noise_multiplier)
    if sample_rate < 1.0:
        gaussian = dp_accounting.PoissonSampledDpEvent(sample_rate, gaussian)
    return dp_accounting.SelfComposedDpEvent(gaussian, steps)


def _check_common(sample_rate, steps):
    sample_rate = check_real(sample_rate, "sample_rate", low=0.0, high=1.0, low_inclusive=False)
    steps = check_positive_int(steps, "steps")
    return sample_rate, steps


def subsampled_gaussian_epsilon(noise_multiplier, sample_rate, steps, delta, *,
                                accountant="rdp", neighbours="add-remove"):
    """Epsilon spent by ``steps`` Poisson-subsampled Gaussian steps.

    Each step samples every record independently with probability
    ``sample_rate`` and adds ``N(0, (noise_multiplier * C)^2)`` to a sum of
    per-record contributions of norm at most ``C``.

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
    neighbours : {"add-remove", "replace-one"}, default="add-remove"
        Add/remove one record (equivalently, for a fixed public number of
        rows, replace one record's contribution by zero), or replace one
        record by another (about twice the epsilon; PLD accountant only).

    Returns
    -------
    epsilon : float
        The smallest epsilon the accountant certifies at ``delta``.
    """
    noise_multiplier = check_real(noise_multiplier, "noise_multiplier", low=0.0, low_inclusive=False)
    sample_rate, steps = _check_common(sample_rate, steps)
    check_epsilon_delta(1.0, delta, allow_zero_delta=False)
    return _epsilon(noise_multiplier, sample_rate, steps, delta, accountant, neighbours)


def _calibrate_rdp(epsilon, delta, sample_rate, steps, tol=None):
    # calibrate_dp_mechanism returns a multiplier that meets (epsilon, delta) (it checks
    # the root and steps to the safe side), within tol of the smallest one.
    with _quiet_rdp():
        return dp_accounting.calibrate_dp_mechanism(
            lambda: _make_accountant("rdp"),
            lambda s: subsampled_gaussian_event(s, sample_rate, steps),
            epsilon,
            delta,
            bracket_interval=dp_accounting.LowerEndpointAndGuess(1e-3, 1.0),
            tol=tol,
        )


def _pld_bracket(upper, epsilon, delta, sample_rate, steps, neighbours):
    """``(low, high)`` around the PLD calibration, from a multiplier ``upper`` that meets it by RDP.

    Shrinks ``upper`` by 0.7 until the PLD epsilon exceeds the target: a PLD at a tiny
    multiplier is slow to build (0.4 s at 0.5 against 0.03 s at 3 for DP-SGD's
    usual settings), so the lower end is found from above. The discretized PLD can be
    looser than RDP (many steps at a small rate: 0.40 against 0.28 at multiplier 3, rate
    1e-3, 50000 steps); then ``upper`` fails the target by PLD and is grown instead.
    """
    def pld_meets(sigma):
        return subsampled_gaussian_epsilon(sigma, sample_rate, steps, delta, accountant="pld",
                                           neighbours=neighbours) <= epsilon

    if not pld_meets(upper):
        low = upper
        for _ in range(_MAX_BRACKET_STEPS):
            high = low / 0.7
            if pld_meets(high):
                return low, high
            low = high
        raise ValueError(f"no noise multiplier up to {low:g} meets (epsilon={epsilon:g}, "
                         f"delta={delta:g}) by the PLD accountant.")
    high = upper
    while True:
        low = 0.7 * high
        if not pld_meets(low):
            return low, high
        high = low


def _refine_pld(sigma, coarse, epsilon, delta, sample_rate, steps, neighbours):
    """Lower ``sigma`` (which meets the target on the coarse PLD grid) on the fine grid.

    ``coarse`` is the epsilon of ``sigma`` on the coarse grid (the caller has
    just computed it; a PLD evaluation is the slow part).

    The pessimistic discretization over-states epsilon by roughly the grid
    interval times a factor that grows with the number of steps and shrinks
    with the per-step privacy loss; it is estimated from the coarse grid and
    one twice as coarse (the excess is about linear in the interval). Only if
    it is at least ``_REFINE_FRACTION`` of epsilon is the calibration finished
    on the fine grid (about 3 to 10 times slower per evaluation), bracketed
    between ``sigma`` and a multiplier that fails on the fine grid. Every
    returned value is checked on the grid it was found on: the pessimistic
    PLD bounds epsilon from above at any interval.
    """
    coarser = _pld_epsilon(sigma, sample_rate, steps, delta, neighbours, 2.0 * _PLD_COARSE)
    if coarser - coarse < _REFINE_FRACTION * epsilon:
        return sigma

    def fine_meets(s):
        return _pld_epsilon(s, sample_rate, steps, delta, neighbours, _PLD_FINE) <= epsilon

    if not fine_meets(sigma):  # finer is not always tighter: keep the coarse certificate
        return sigma
    # Noise scales about like 1/epsilon: step down by twice the estimated excess.
    factor = max(0.5, 1.0 - 2.0 * (coarser - coarse) / epsilon)
    high, low = sigma, sigma * factor
    for _ in range(_MAX_BRACKET_STEPS):
        if not fine_meets(low):
            break
        high, low = low, low * factor
    else:
        return high
    refined = dp_accounting.calibrate_dp_mechanism(
        lambda: _make_accountant("pld", neighbours, _PLD_FINE),
        lambda s: subsampled_gaussian_event(s, sample_rate, steps),
        epsilon,
        delta,
        bracket_interval=dp_accounting.ExplicitBracketInterval(low, high),
        tol=1e-4 * high,
    )
    while not fine_meets(refined):
        refined *= 1.0 + 1e-6
    return min(refined, sigma)


def calibrate_subsampled_gaussian(epsilon, delta, sample_rate, steps, *, accountant="rdp",
                                  neighbours="add-remove"):
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
    neighbours : {"add-remove", "replace-one"}, default="add-remove"
        The neighbouring relation (see :func:`subsampled_gaussian_epsilon`);
        ``"replace-one"`` needs ``accountant="pld"``.

    Returns
    -------
    noise_multiplier : float
        Noise standard deviation divided by the clipping norm. The returned
        value is checked: it spends at most ``epsilon`` by the chosen
        accountant (for ``"pld"``, on a value grid of 1e-3, or of 1e-4 where
        the coarser grid's pessimism would cost at least 1% of epsilon: many
        steps at a small sampling rate), except that with ``"pld"`` an RDP certificate (through
        group privacy for ``"replace-one"``) is used instead where it allows
        less noise: the discretized PLD can be looser than RDP after many steps
        at a small sampling rate.
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
    sample_rate, steps = _check_common(sample_rate, steps)
    _make_accountant(accountant, neighbours)  # validates the combination
    if accountant == "rdp":
        sigma = _calibrate_rdp(epsilon, delta, sample_rate, steps)
    else:
        # RDP is fast and never tighter than PLD, so a multiplier that meets the target by
        # RDP, to a coarse tolerance, bounds the PLD search from above.
        if neighbours == "replace-one":
            # Replacing a record is removing it and adding another: by group privacy
            # (Dwork and Roth 2014, Thm. 2.2) add/remove (eps/2, delta/(1 + e^(eps/2)))
            # gives replace-one (eps, delta).
            upper = _calibrate_rdp(0.5 * epsilon, delta / (1.0 + math.exp(0.5 * epsilon)),
                                   sample_rate, steps, tol=1e-2)
        else:
            upper = _calibrate_rdp(epsilon, delta, sample_rate, steps, tol=1e-2)
        low, high = _pld_bracket(upper, epsilon, delta, sample_rate, steps, neighbours)
        sigma = dp_accounting.calibrate_dp_mechanism(
            lambda: _make_accountant("pld", neighbours),
            lambda s: subsampled_gaussian_event(s, sample_rate, steps),
            epsilon,
            delta,
            bracket_interval=dp_accounting.ExplicitBracketInterval(low, high),
        )
    # calibrate_dp_mechanism searches to a tolerance; make sure we err on the safe side.
    spent = subsampled_gaussian_epsilon(sigma, sample_rate, steps, delta, accountant=accountant,
                                        neighbours=neighbours)
    while spent > epsilon:
        sigma *= 1.0 + 1e-6
        spent = subsampled_gaussian_epsilon(sigma, sample_rate, steps, delta,
                                            accountant=accountant, neighbours=neighbours)
    if accountant == "pld":  # `spent` is sigma's epsilon on the coarse PLD grid
        sigma = _refine_pld(sigma, spent, epsilon, delta, sample_rate, steps, neighbours)
    if accountant == "pld" and upper < sigma:
        # The discretized PLD can be looser than RDP (many steps at a small rate); `upper`
        # meets the target by RDP (with group privacy for replace-one), an equally valid
        # certificate, and needs less noise.
        sigma = upper
    return float(sigma)
