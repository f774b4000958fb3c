"""A total privacy budget that estimator fits spend against."""

import json
import math
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction

import dp_accounting

from skdp.accounting._budget import PrivacyBudget
from skdp.accounting._events import (
    COMPOSITIONS,
    compose_events,
    composed_budget,
    event_from_json,
    event_to_json,
    plain_event,
)
from skdp.accounting._ledger import BudgetLedger, SQLiteLedger
from skdp.exceptions import BudgetExceededError
from skdp.utils._validation import check_option, check_real

__all__ = ["BudgetAccountant", "Spend"]

# Slack of one unit of round-off (relative to the total) per spend: what rounding
# a decimal such as 0.1 to a float, or PrivacyBudget.split's division, can add.
# Sums are exact (rational), so nothing else is let through.
_ROUND_OFF = Fraction(2.0**-53)

# Per thread: how many enclosing `spending_refused` blocks are open.
_REFUSING = threading.local()


@contextmanager
def spending_refused():
    """Make every :meth:`BudgetAccountant.spend` in this thread raise while open.

    Subsample-and-aggregate fits its teachers inside such a block: whether and how
    often a teacher would charge an accountant depends on its rows (a teacher whose
    rows hold one class is a constant vote and charges nothing), so any accountant a
    teacher reaches, however it is hidden, would leak that count. The teacher's fit
    fails instead and it abstains. Entered in the thread that runs the fit (a joblib
    worker thread); in worker processes the accountant is a copy, which refuses anyway.
    """
    _REFUSING.depth = getattr(_REFUSING, "depth", 0) + 1
    try:
        yield
    finally:
        _REFUSING.depth -= 1


def spending_is_refused():
    """Whether this thread is inside a :func:`spending_refused` block."""
    return getattr(_REFUSING, "depth", 0) > 0


@dataclass(frozen=True)
class Spend:
    """One recorded spend: the budget, who spent it, and the privacy event it released.

    ``event`` is a dp-accounting ``DpEvent`` (see :attr:`BudgetAccountant.events`);
    ``None`` means the plain ``(epsilon, delta)`` of ``budget``.
    """

    budget: PrivacyBudget
    by: str
    event: object = None


class BudgetAccountant:
    """A total ``(epsilon, delta)`` budget shared by many fits.

    Pass one accountant as the ``accountant`` parameter of any skdp
    estimator. Each ``fit`` asks it for its budget first and is refused with
    :class:`~skdp.BudgetExceededError` before any data is touched when the
    total would be overrun. :func:`sklearn.base.clone` returns the *same*
    accountant (not a copy), so ``GridSearchCV`` and ``cross_val_score``
    spend once per fit from one total.

    Each fit also hands the accountant its privacy event (the estimator's
    ``privacy_event_``: a Gaussian mechanism of a known noise multiplier, a
    Laplace mechanism, Poisson-sampled Gaussian steps, or a plain
    ``(epsilon, delta)``). With ``composition="rdp"`` or ``"pld"`` repeated fits
    on the same data (cross-validation, a grid search, a pipeline's steps) are
    charged their tightly composed total instead of the sum of their budgets.

    Parameters
    ----------
    epsilon : float
        Total epsilon, > 0 (``float('inf')`` to only record spends).
    delta : float, default=0.0
        Total delta in ``[0, 1)``.
    ledger : str, os.PathLike, BudgetLedger or None, default=None
        Where the spends are kept. ``None`` keeps them in this object (one
        process). A file path keeps them in an SQLite ledger
        (:class:`~skdp.accounting.SQLiteLedger`) that every copy of the
        accountant, in any process of the machine, spends from atomically:
        use it for ``GridSearchCV(n_jobs=2)``, joblib's process backends or a
        Dask cluster, and to keep a budget across restarts (opening the file
        again resumes its spends; its total cannot change).
    composition : {"basic", "rdp", "pld"}, default="basic"
        How the spends add up. ``"basic"``: epsilons add and deltas add
        (Thakkar (2019), Lemma 2.1.5). ``"rdp"``: the events with a Renyi DP
        curve (Gaussian, Laplace, zCDP, pure DP, and compositions of these)
        compose by Renyi DP (Mironov 2017) and convert to ``(epsilon, delta)``
        at the total ``delta`` (Canonne, Kamath and Steinke 2020, Prop. 12);
        other events (``(epsilon, delta)`` with ``delta > 0``, subsampled
        events) add basically on top. ``"pld"``: privacy loss distributions
        through dp-accounting (Doroshenko et al. 2022), which also cover
        Poisson-sampled Gaussians (DP-SGD) and compose plain ``(epsilon,
        delta)`` events optimally (Kairouz, Oh and Viswanath 2015); slower (a
        fraction of a second per spend). Under both tight options, a spend is
        accepted when the composed total of all spends, measured at the
        accountant's ``delta``, stays within its ``epsilon`` (or when the basic
        sum fits: the tight total is never above it). The spends and events
        are kept, so the choice can change when a ledger is reopened.

    Attributes
    ----------
    spends : list of Spend
        Every spend so far, in order, with the estimator that made it and its
        privacy event.
    events : list of dp_accounting.DpEvent
        The privacy event of every spend, in order.

    Notes
    -----
    Without a ledger, the accountant is one live object. A copy made by pickling (``n_jobs > 1``
    with a process-based joblib backend, ``joblib.dump``/``load``, caching)
    or held by a forked child process would keep a total of its own that the
    original never sees, so a copy reports what it holds but refuses to
    spend: use ``n_jobs=1`` or a threading backend for searches that spend
    from one accountant. To carry a budget over to a new session on purpose,
    save the accountant, load it and call :meth:`resume` on the loaded copy,
    once the original is gone.

    References
    ----------
    P. Kairouz, S. Oh and P. Viswanath, "The composition theorem for
    differential privacy", ICML 2015.

    I. Mironov, "Renyi differential privacy", arXiv:1702.07476, 2017.

    V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar and P. Manurangsi, "Connect the
    dots: tighter discrete approximations of privacy loss distributions",
    PETS 2022.

    Examples
    --------
    >>> from skdp import BudgetAccountant, PrivacyBudget
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    >>> acc.spend(PrivacyBudget(0.4, 1e-6), by="first fit")
    >>> acc.remaining
    PrivacyBudget(epsilon=0.6, delta=9e-06)

    Ten Gaussian releases of noise multiplier 4.22 (each ``(1, 1e-6)``-DP)
    compose to far less than ``epsilon = 10``:

    >>> import dp_accounting
    >>> tight = BudgetAccountant(epsilon=10.0, delta=1e-5, composition="rdp")
    >>> for _ in range(10):
    ...     tight.spend(PrivacyBudget(1.0, 1e-6), event=dp_accounting.GaussianDpEvent(4.2247))
    >>> round(tight.spent.epsilon, 2)
    3.4
    """

    def __init__(self, epsilon, delta=0.0, ledger=None, composition="basic"):
        self.epsilon = check_real(epsilon, "epsilon", low=0.0, low_inclusive=False, allow_inf=True)
        self.delta = check_real(delta, "delta", low=0.0, high=1.0, high_inclusive=False)
        self._infinite = math.isinf(self.epsilon)
        self.composition = check_option(composition, "composition", COMPOSITIONS)
        if ledger is not None and not isinstance(ledger, BudgetLedger):
            if not isinstance(ledger, (str, os.PathLike)):
                raise TypeError(f"ledger must be None, a file path or a BudgetLedger, got "
                                f"{ledger!r}.")
            ledger = SQLiteLedger(ledger)
        self.ledger = ledger
        if ledger is not None:
            ledger.open(self.epsilon, self.delta)
        self._spends = []
        self._exact = (0, Fraction(0), Fraction(0))  # (spends counted, sum eps, sum delta)
        self._lock = threading.Lock()
        self._is_copy = False
        self._pid = os.getpid()  # a forked child holds a copy that was never pickled

    # --- sharing semantics -------------------------------------------------
    def __sklearn_clone__(self):
        # clone() must not copy the accountant: every clone spends from one total.
        return self

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state):
        if "spends" in state:  # pickles of older versions
            state["_spends"] = state.pop("spends")
        self.__dict__.update(state)
        self.__dict__.setdefault("_exact", (0, Fraction(0), Fraction(0)))
        self.__dict__.setdefault("_pid", None)
        self.__dict__.setdefault("ledger", None)
        self.__dict__.setdefault("composition", "basic")
        self._lock = threading.Lock()
        # An unpickled in-memory accountant is a copy: the original may still spend.
        # With a ledger every copy spends from the one shared record.
        self._is_copy = self.ledger is None

    def resume(self):
        """Make this unpickled copy the live accountant, and return it.

        Call it only when no other copy can spend any more (for example on an
        accountant saved at the end of yesterday's session): two live copies
        would each let the whole remaining budget be spent.

        Returns
        -------
        self : BudgetAccountant
        """
        self._is_copy = False
        self._pid = os.getpid()
        return self

    # --- queries ------------------------------------------------------------
    @property
    def spends(self):
        """Every spend so far, oldest first (read from the ledger when there is one)."""
        if self.ledger is None:
            return self._spends
        return [Spend(PrivacyBudget(record[0], record[1]), record[2],
                      _load_event(record[3] if len(record) > 3 else None))
                for record in self.ledger.records()]

    @property
    def events(self):
        """The privacy event of every spend, oldest first (plain ones for spends without)."""
        return [s.event if s.event is not None else plain_event(s.budget) for s in self.spends]

    @property
    def spent(self):
        """Total spent so far, or ``None`` before any spend.

        Under ``composition="basic"``, ``(sum epsilon, sum delta)``. Under a
        tight composition, the composed epsilon at the accountant's ``delta``
        (or the basic sum, when it is smaller).
        """
        with self._lock:
            return self._total()

    @property
    def remaining(self):
        """What is left, as a :class:`PrivacyBudget` (``None`` when nothing is left)."""
        with self._lock:
            total = self._total()
            eps = self.epsilon - (total.epsilon if total else 0.0)
            delta = self.delta - (total.delta if total else 0.0)
        if eps <= 0:
            return None
        return PrivacyBudget(eps, max(delta, 0.0))

    def _total(self):
        spends = self.spends
        if not spends:
            return None
        if self.composition != "basic":
            return composed_budget([(s.budget, s.event) for s in spends], self.delta,
                                   self.composition)
        eps = sum(s.budget.epsilon for s in spends)
        delta = sum(s.budget.delta for s in spends)
        return PrivacyBudget(eps, delta)

    def _exact_totals(self):
        # Exact sums of the spends, extended by the spends recorded since the last call.
        counted, eps, delta = self._exact
        if counted > len(self._spends):  # the list was edited: start over
            counted, eps, delta = 0, Fraction(0), Fraction(0)
        for s in self._spends[counted:]:
            eps += Fraction(s.budget.epsilon)
            delta += Fraction(s.budget.delta)
        self._exact = (len(self._spends), eps, delta)
        return eps, delta

    def _fits(self, budget, event=None):
        eps, delta = self._exact_totals()
        return self._fits_records(eps, delta, len(self._spends),
                                  [(s.budget, s.event) for s in self._spends], budget, event)

    def _fits_records(self, eps, delta, n_spends, records, budget, event):
        """Whether ``(budget, event)`` fits on ``records`` (exact sums ``eps``, ``delta``)."""
        if self._fits_totals(eps, delta, n_spends, budget):
            return True  # basic composition is valid under every option
        if self.composition == "basic":
            return False
        total = compose_events(list(records) + [(budget, event)], self.delta, self.composition)
        slack = 1 + (n_spends + 1) * _ROUND_OFF
        return math.isfinite(total) and Fraction(total) <= Fraction(self.epsilon) * slack

    def _fits_totals(self, eps, delta, n_spends, budget):
        """Whether ``budget`` fits on top of spends summing exactly to ``(eps, delta)``."""
        slack = 1 + (n_spends + 1) * _ROUND_OFF
        eps_ok = self._infinite or eps + Fraction(budget.epsilon) <= Fraction(self.epsilon) * slack
        return eps_ok and delta + Fraction(budget.delta) <= Fraction(self.delta) * slack

    def check(self, budget, event=None):
        """Raise :class:`~skdp.BudgetExceededError` if ``budget`` does not fit.

        Parameters
        ----------
        budget : PrivacyBudget
            The budget a fit is about to spend.
        event : dp_accounting.DpEvent or None, default=None
            What the fit releases (see :meth:`spend`).
        """
        event = _check_event(event)
        with self._lock:
            self._check_locked(budget, event)

    def _check_locked(self, budget, event=None):
        if not isinstance(budget, PrivacyBudget):
            raise TypeError(f"budget must be a PrivacyBudget, got {budget!r}.")
        if self.ledger is not None:
            spends = self.spends
            fits = self._fits_records(
                sum((Fraction(s.budget.epsilon) for s in spends), Fraction(0)),
                sum((Fraction(s.budget.delta) for s in spends), Fraction(0)),
                len(spends), [(s.budget, s.event) for s in spends], budget, event)
        else:
            fits = self._fits(budget, event)
        if not fits:
            self._refuse(budget)

    def _refuse(self, budget):
        total = self._total()
        total_eps = total.epsilon if total else 0.0
        total_delta = total.delta if total else 0.0
        how = "" if self.composition == "basic" else f" ({self.composition} composition)"
        raise BudgetExceededError(
            f"spending (epsilon={budget.epsilon:g}, delta={budget.delta:g}) would exceed "
            f"the accountant's total (epsilon={self.epsilon:g}, delta={self.delta:g}){how}; "
            f"already spent (epsilon={total_eps:g}, delta={total_delta:g}) in "
            f"{len(self.spends)} spend(s). Nothing was spent."
            + (" This accountant allows no delta; estimators that need delta > 0 "
               "need BudgetAccountant(epsilon, delta=...)."
               if budget.delta > 0 and self.delta == 0 else "")
        )

    def spend(self, budget, by="", event=None):
        """Record a spend after checking that it fits (atomically).

        Parameters
        ----------
        budget : PrivacyBudget
            The budget to spend.
        by : object, default=""
            Who spends it (an estimator or a label); stored as its ``repr``.
        event : dp_accounting.DpEvent or None, default=None
            What is released, described exactly (it must be
            ``(budget.epsilon, budget.delta)``-DP by itself): a tight
            ``composition`` composes it with the other spends. ``None`` is the
            plain ``(epsilon, delta)`` event of ``budget``. In a ledger it is
            stored as JSON (dp-accounting's events and
            :class:`~skdp.accounting.EpsilonDeltaDpEvent`; other events are
            stored as their budget).
        """
        if spending_is_refused():
            raise RuntimeError(
                "a BudgetAccountant cannot be charged while a teacher of a "
                "subsample-and-aggregate ensemble fits: how often teachers charge it depends "
                "on their private rows. Give the teachers no accountant; the ensemble's own "
                "`accountant` records the whole fit.")
        if not isinstance(budget, PrivacyBudget):
            raise TypeError(f"budget must be a PrivacyBudget, got {budget!r}.")
        event = _check_event(event)
        label = by if isinstance(by, str) else repr(by)
        if self.ledger is not None:
            try:
                stored = None if event is None else event_to_json(event)
            except TypeError:
                stored = None  # an event type the ledger cannot store: its budget stands in

            def fits(eps, delta, n, records=()):
                loaded = [(PrivacyBudget(e, d), _load_event(ev)) for e, d, ev in records]
                return self._fits_records(eps, delta, n, loaded, budget,
                                          None if stored is None else event)

            # One transaction checks and records, so racing processes cannot both win.
            if not self.ledger.spend(budget.epsilon, budget.delta, label, fits, event=stored):
                self._refuse(budget)
            return
        if self._is_copy or os.getpid() != self._pid:
            raise RuntimeError(
                "this BudgetAccountant is a copy made by pickling (a process-based joblib "
                "backend, joblib.dump/load or a cache) or by forking a process, and spends "
                "from it would not reach the original. Use n_jobs=1 or "
                "joblib.parallel_backend('threading') when fits share an accountant. To "
                "continue a saved budget on purpose, call resume() on the loaded accountant "
                "once no other copy can spend. BudgetAccountant(..., ledger='budget.db') is "
                "shared by every process."
            )
        with self._lock:
            self._check_locked(budget, event)
            self._spends.append(Spend(budget, label, event))

    def __repr__(self):
        ledger = "" if self.ledger is None else f", ledger={self.ledger!r}"
        composition = ("" if self.composition == "basic"
                       else f", composition={self.composition!r}")
        return (f"BudgetAccountant(epsilon={self.epsilon!r}, delta={self.delta!r}{ledger}"
                f"{composition})")


def _check_event(event):
    if event is not None and not isinstance(event, dp_accounting.DpEvent):
        raise TypeError(f"event must be a dp_accounting.DpEvent or None, got {event!r}.")
    return event


def _load_event(text):
    """The event stored in a ledger (None when absent or unreadable: its budget stands in)."""
    if text is None:
        return None
    try:
        return event_from_json(text)
    except (ValueError, TypeError, KeyError, json.JSONDecodeError):
        return None
