"""Privacy events: what a fit released, described finely enough to compose tightly.

Every fitted skdp estimator records its release as a ``privacy_event_``, an event
of Google's ``dp-accounting`` (a dependency of skdp): ``GaussianDpEvent``,
``LaplaceDpEvent``, ``PoissonSampledDpEvent``, ``SelfComposedDpEvent``,
``ComposedDpEvent``, ``ZCDpEvent`` ..., or, where no finer description holds, an
:class:`EpsilonDeltaDpEvent` (the plain ``(epsilon, delta)`` guarantee).

Conventions (skdp's neighbouring relation is replace-one, the number of rows public):

* ``GaussianDpEvent(z)`` and ``LaplaceDpEvent(b)`` not under sampling: the noise
  standard deviation (scale) divided by the release's L2 (L1) sensitivity under
  replace-one neighbours. The pair of output distributions is then the same as
  for dp-accounting's add/remove relation with sensitivity 1.
* ``PoissonSampledDpEvent(q, GaussianDpEvent(z))`` (DP-SGD): ``z`` is the noise
  divided by the bound on one record's contribution, accounted under replace-one
  neighbours (dp-accounting's ``REPLACE_ONE``), as
  :func:`~skdp.accounting.calibrate_subsampled_gaussian` with
  ``neighbours="replace-one"`` calibrates it.

The functions here compose lists of ``(budget, event)`` records, the budget being
the ``(epsilon, delta)`` the fit was charged: an event a method cannot describe is
composed through its budget, so every record is always covered.
"""

import functools
import json
import math

import attr
import dp_accounting
import numpy as np
from dp_accounting import dp_event as _dp_event
from dp_accounting.pld import common as _pld_common
from dp_accounting.pld import privacy_loss_distribution as _pld

from skdp.accounting._budget import PrivacyBudget
from skdp.accounting._composition import zcdp_to_dp

__all__ = [
    "EpsilonDeltaDpEvent",
    "compose_events",
    "event_from_json",
    "event_to_json",
    "plain_event",
]


@attr.s(frozen=True, slots=True, auto_attribs=True)
class EpsilonDeltaDpEvent(dp_accounting.DpEvent):
    """A mechanism known only to be ``(epsilon, delta)``-DP (replace-one neighbours).

    The default :attr:`privacy_event_` of an estimator whose release has no finer
    description. dp-accounting's own accountants do not compose it;
    :class:`~skdp.BudgetAccountant` does (optimal composition of the privacy
    profile through privacy-loss distributions with ``composition="pld"``,
    Kairouz, Oh and Viswanath (2015); by Renyi DP when ``delta = 0``,
    Bun and Steinke (2016), Prop. 1.4; else by basic composition).

    Parameters
    ----------
    epsilon : float
        The mechanism's epsilon, >= 0.
    delta : float, default=0.0
        Its delta, in ``[0, 1)``.
    """

    epsilon: float
    delta: float = 0.0


# dp-accounting's zCDP event (absent from its oldest releases: then never matched).
_ZCDP = getattr(_dp_event, "ZCDpEvent", ())


def zcdp_event(rho):
    """``ZCDpEvent(rho)``, or None when the installed dp-accounting lacks it."""
    return None if _ZCDP == () else _ZCDP(float(rho))


def plain_event(budget):
    """The :class:`EpsilonDeltaDpEvent` of a :class:`~skdp.PrivacyBudget`."""
    return EpsilonDeltaDpEvent(float(budget.epsilon), float(budget.delta))


# --- serialization ------------------------------------------------------------

def _event_classes():
    classes = {name: cls for name, cls in vars(_dp_event).items()
               if isinstance(cls, type) and issubclass(cls, _dp_event.DpEvent)}
    classes["EpsilonDeltaDpEvent"] = EpsilonDeltaDpEvent
    return classes


_CLASSES = _event_classes()


def _encode(value):
    if isinstance(value, _dp_event.DpEvent):
        cls = type(value)
        if _CLASSES.get(cls.__name__) is not cls:
            raise TypeError(f"cannot serialize the privacy event {value!r}: only the events "
                            "of dp_accounting.dp_event and EpsilonDeltaDpEvent are stored.")
        out = {"__event__": cls.__name__}
        for field in attr.fields(cls):
            out[field.name] = _encode(getattr(value, field.name))
        return out
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    raise TypeError(f"cannot serialize {value!r} in a privacy event.")


def _decode(value):
    if isinstance(value, dict):
        fields = dict(value)
        name = fields.pop("__event__")
        cls = _CLASSES.get(name)
        if cls is None:  # only known classes: a ledger file is not trusted to import code
            raise ValueError(f"unknown privacy event type {name!r}.")
        return cls(**{key: _decode(v) for key, v in fields.items()})
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def event_to_json(event):
    """Serialize a privacy event (dp-accounting's or :class:`EpsilonDeltaDpEvent`) to JSON.

    Floats are written with ``repr``, so :func:`event_from_json` gives back an
    equal event (used by the budget ledger, which other processes read).

    Parameters
    ----------
    event : dp_accounting.DpEvent
        An event of ``dp_accounting.dp_event`` or an :class:`EpsilonDeltaDpEvent`,
        nested to any depth.

    Returns
    -------
    text : str

    Raises
    ------
    TypeError
        For an event class of another module.
    """
    return json.dumps(_encode(event), sort_keys=True, allow_nan=False)


def event_from_json(text):
    """The event serialized by :func:`event_to_json`.

    Only the classes of ``dp_accounting.dp_event`` and :class:`EpsilonDeltaDpEvent`
    are built: a ledger file cannot make its reader import code.

    Parameters
    ----------
    text : str

    Returns
    -------
    event : dp_accounting.DpEvent
    """
    return _decode(json.loads(text))


# --- Renyi DP -------------------------------------------------------------------

# Orders alpha = 1 + t, t from 1e-3 to 1e5: the conversion below is valid at every order,
# a finer grid only tightens it.
_ORDERS = 1.0 + np.logspace(-3.0, 5.0, 481)


def _laplace_rdp(noise_multiplier, orders):
    """Renyi DP of the Laplace mechanism of scale ``b`` times the L1 sensitivity.

    Mironov (2017), Prop. 6 (exact): with ``eps = 1 / b``,
    ``D_alpha = ln(alpha / (2 alpha - 1) e^((alpha - 1) eps)
    + (alpha - 1) / (2 alpha - 1) e^(-alpha eps)) / (alpha - 1)``.
    """
    eps = 1.0 / noise_multiplier
    a = orders
    log_terms = np.logaddexp(np.log(a / (2 * a - 1)) + (a - 1) * eps,
                             np.log((a - 1) / (2 * a - 1)) - a * eps)
    return np.minimum(log_terms / (a - 1), eps)


def _rdp(event, orders):
    """Renyi DP curve of ``event`` at ``orders`` (replace-one), or None if not known."""
    if isinstance(event, _dp_event.NoOpDpEvent):
        return np.zeros_like(orders)
    if isinstance(event, _dp_event.GaussianDpEvent):
        z = float(event.noise_multiplier)
        # Mironov (2017), Prop. 7: the Gaussian mechanism is (alpha, alpha / (2 z^2))-RDP.
        return orders / (2.0 * z * z) if z > 0 else None
    if isinstance(event, _dp_event.LaplaceDpEvent):
        b = float(event.noise_multiplier)
        return _laplace_rdp(b, orders) if b > 0 else None
    if isinstance(event, _ZCDP):
        # Bun and Steinke (2016), Def. 1.1: (xi, rho)-zCDP is D_alpha <= xi + rho alpha.
        return float(event.xi) + float(event.rho) * orders
    if isinstance(event, EpsilonDeltaDpEvent):
        if event.delta > 0:
            return None
        eps = float(event.epsilon)
        # Pure eps-DP: D_alpha <= eps, and eps^2 / 2-zCDP (Bun and Steinke 2016, Prop. 1.4).
        return np.minimum(eps, 0.5 * eps * eps * orders)
    if isinstance(event, _dp_event.SelfComposedDpEvent):
        inner = _rdp(event.event, orders)
        return None if inner is None else event.count * inner
    if isinstance(event, _dp_event.ComposedDpEvent):
        total = np.zeros_like(orders)
        for e in event.events:
            inner = _rdp(e, orders)
            if inner is None:
                return None
            total = total + inner
        return total
    return None  # sampled events (replace-one has no RDP bound here), the rest


def _rho(event):
    """zCDP ``rho`` of ``event`` (``D_alpha <= rho alpha``), or None."""
    if isinstance(event, _dp_event.NoOpDpEvent):
        return 0.0
    if isinstance(event, _dp_event.GaussianDpEvent):
        z = float(event.noise_multiplier)
        # Bun and Steinke (2016), Prop. 1.6: Delta^2 / (2 sigma^2).
        return 0.5 / (z * z) if z > 0 else None
    if isinstance(event, _dp_event.LaplaceDpEvent):
        b = float(event.noise_multiplier)
        return 0.5 / (b * b) if b > 0 else None  # pure (1/b)-DP, Prop. 1.4
    if isinstance(event, _ZCDP):
        return float(event.rho) if event.xi == 0 else None
    if isinstance(event, EpsilonDeltaDpEvent):
        return 0.5 * float(event.epsilon) ** 2 if event.delta == 0 else None
    if isinstance(event, _dp_event.SelfComposedDpEvent):
        inner = _rho(event.event)
        return None if inner is None else event.count * inner
    if isinstance(event, _dp_event.ComposedDpEvent):
        parts = [_rho(e) for e in event.events]
        return None if any(p is None for p in parts) else math.fsum(parts)
    return None


def rdp_epsilon(curve, delta, orders=_ORDERS):
    """Smallest epsilon at ``delta`` of a Renyi DP curve, over the grid of orders.

    Canonne, Kamath and Steinke (2020), Prop. 12 (as in
    :func:`~skdp.accounting.zcdp_to_dp`): ``(alpha, R)``-RDP implies
    ``(R + ln(1 - 1/alpha) + (ln(1/delta) - ln(alpha)) / (alpha - 1), delta)``-DP
    for every ``alpha > 1``.
    """
    a = orders
    eps = curve + np.log1p(-1.0 / a) + (-math.log(delta) - np.log(a)) / (a - 1.0)
    eps = eps[np.isfinite(eps)]
    if eps.size == 0:
        return math.inf
    # Relative margin for the round-off of the float evaluation.
    return max(float(eps.min()), 0.0) * (1.0 + 1e-9)


def _compose_rdp(records, delta):
    """Epsilon at ``delta`` of the records: RDP for the events it describes, basic for the rest."""
    curve = np.zeros_like(_ORDERS)
    rho, rho_ok, n_rdp = 0.0, True, 0
    eps_rest, delta_rest = 0.0, 0.0
    for budget, event in records:
        part = None if event is None else _rdp(event, _ORDERS)
        if part is None:
            eps_rest += budget.epsilon
            delta_rest += budget.delta
            continue
        n_rdp += 1
        curve = curve + part
        r = _rho(event)
        rho_ok = rho_ok and r is not None
        rho += r if r is not None else 0.0
    if n_rdp == 0:
        return eps_rest if delta_rest <= delta else math.inf
    # Basic composition of the RDP block's (eps_R, delta_R) with the rest (Thakkar (2019),
    # Lemma 2.1.5): the RDP block gets the delta the rest leaves.
    delta_rdp = delta - delta_rest
    if not delta_rdp > 0:
        return math.inf
    eps = rdp_epsilon(curve, delta_rdp)
    if rho_ok and rho > 0:
        # A pure zCDP block: the exact CKS conversion, optimised over every order.
        eps = min(eps, zcdp_to_dp(rho, delta_rdp).epsilon)
    return eps + eps_rest


# --- privacy loss distributions ---------------------------------------------------

_PLD_INTERVAL = 1e-4
# Above this per-event epsilon, or this sum of the epsilons, privacy loss distributions are
# not built (their support grows with epsilon, about sum epsilon / interval points): such
# records compose by Renyi DP instead.
_PLD_MAX_EPSILON = 10.0
_PLD_MAX_TOTAL_EPSILON = 100.0


@functools.lru_cache(maxsize=512)
def _cached_pld(event):
    return _event_pld(event)


def _pld_of(event):
    try:
        return _cached_pld(event)
    except TypeError:  # an unhashable event (a ComposedDpEvent holds a list)
        return _event_pld(event)


def _event_pld(event):
    """Pessimistic privacy loss distribution of ``event`` (replace-one), or None."""
    interval = _PLD_INTERVAL
    if isinstance(event, _dp_event.NoOpDpEvent):
        return _pld.identity(value_discretization_interval=interval)
    if isinstance(event, _dp_event.GaussianDpEvent) and event.noise_multiplier > 0:
        return _pld.from_gaussian_mechanism(float(event.noise_multiplier),
                                            value_discretization_interval=interval)
    if isinstance(event, _dp_event.LaplaceDpEvent) and event.noise_multiplier > 0:
        return _pld.from_laplace_mechanism(float(event.noise_multiplier),
                                           value_discretization_interval=interval)
    if (isinstance(event, _dp_event.PoissonSampledDpEvent)
            and isinstance(event.event, _dp_event.GaussianDpEvent)
            and event.event.noise_multiplier > 0 and 0 < event.sampling_probability <= 1):
        return _pld.from_gaussian_mechanism(
            float(event.event.noise_multiplier), value_discretization_interval=interval,
            sampling_prob=float(event.sampling_probability),
            neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    if isinstance(event, EpsilonDeltaDpEvent):
        # The worst pair of distributions of an (eps, delta)-DP mechanism (Kairouz, Oh and
        # Viswanath 2015): composing these gives the optimal composition bound.
        return _pld.from_privacy_parameters(
            _pld_common.DifferentialPrivacyParameters(float(event.epsilon), float(event.delta)),
            value_discretization_interval=interval)
    if isinstance(event, _dp_event.SelfComposedDpEvent):
        inner = _pld_of(event.event)
        return None if inner is None else inner.self_compose(int(event.count))
    if isinstance(event, _dp_event.ComposedDpEvent):
        total = _pld.identity(value_discretization_interval=interval)
        for e in event.events:
            inner = _pld_of(e)
            if inner is None:
                return None
            total = total.compose(inner)
        return total
    return None


def _compose_pld(records, delta):
    if (any(budget.epsilon > _PLD_MAX_EPSILON for budget, _ in records)
            or math.fsum(budget.epsilon for budget, _ in records) > _PLD_MAX_TOTAL_EPSILON):
        return _compose_rdp(records, delta)
    total = _pld.identity(value_discretization_interval=_PLD_INTERVAL)
    for budget, event in records:
        pld = None if event is None else _pld_of(event)
        if pld is None:
            pld = _pld_of(plain_event(budget))
        total = total.compose(pld)
    eps = float(total.get_epsilon_for_delta(delta))
    return max(eps, 0.0) if math.isfinite(eps) else math.inf


# --- composition ------------------------------------------------------------------

COMPOSITIONS = ("basic", "rdp", "pld")


def compose_events(records, delta, composition="rdp"):
    """Composed epsilon at ``delta`` of fits run on the same data.

    Parameters
    ----------
    records : list of (PrivacyBudget, DpEvent or None)
        Each fit's charged budget and its event (``None``: the budget alone).
    delta : float
        The delta at which epsilon is reported, in ``[0, 1)``.
    composition : {"basic", "rdp", "pld"}
        ``"basic"``: epsilons add when the deltas add up to at most ``delta``
        (Thakkar (2019), Lemma 2.1.5). ``"rdp"``: Renyi DP (Mironov 2017) of the
        events it describes (Gaussian, Laplace, zCDP, pure DP, their compositions)
        converted by Canonne, Kamath and Steinke (2020), Prop. 12, composed basically
        with the others. ``"pld"``: privacy loss distributions of dp-accounting
        (Koskela et al. 2020; Doroshenko et al. 2022), covering also Poisson-sampled
        Gaussians and plain ``(epsilon, delta)`` events (Renyi DP instead when a
        record spends over 10 or all over 100: the distributions would be too
        large). A tight result is never above the basic one: the smaller valid
        bound is returned.

    Returns
    -------
    epsilon : float
        ``inf`` when no bound at ``delta`` holds.
    """
    records = list(records)
    if not records:
        return 0.0
    basic_eps = math.fsum(b.epsilon for b, _ in records)
    basic_delta = math.fsum(b.delta for b, _ in records)
    basic = basic_eps if basic_delta <= delta else math.inf
    if composition == "basic" or delta <= 0:
        return basic
    tight = _compose_rdp(records, delta) if composition == "rdp" else _compose_pld(records, delta)
    return min(basic, tight)


def composed_budget(records, delta, composition):
    """The composed total as a :class:`~skdp.PrivacyBudget` (None when empty).

    Basic composition's own ``(sum epsilon, sum delta)`` when it is the smaller
    epsilon, else the tight epsilon at ``delta``.
    """
    records = list(records)
    if not records:
        return None
    basic = PrivacyBudget(math.fsum(b.epsilon for b, _ in records),
                          math.fsum(b.delta for b, _ in records))
    if composition == "basic" or delta <= 0:
        return basic
    tight = (_compose_rdp(records, delta) if composition == "rdp"
             else _compose_pld(records, delta))
    if basic.delta <= delta and basic.epsilon <= tight:
        return basic
    if not math.isfinite(tight):
        return basic
    return PrivacyBudget(max(tight, 5e-324), delta)
