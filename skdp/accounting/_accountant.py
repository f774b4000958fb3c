"""A total privacy budget that estimator fits spend against."""

import math
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction

from skdp.accounting._budget import PrivacyBudget
from skdp.accounting._ledger import BudgetLedger, SQLiteLedger
from skdp.exceptions import BudgetExceededError
from skdp.utils._validation import check_real

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
    """One recorded spend: the budget and a description of who spent it."""

    budget: PrivacyBudget
    by: str


class BudgetAccountant:
    """A total ``(epsilon, delta)`` budget shared by many fits (basic composition).

    Pass one accountant as the ``accountant`` parameter of any skdp
    estimator. Each ``fit`` asks it for its budget first and is refused with
    :class:`~skdp.BudgetExceededError` before any data is touched when the
    total would be overrun. :func:`sklearn.base.clone` returns the *same*
    accountant (not a copy), so ``GridSearchCV`` and ``cross_val_score``
    spend once per fit from one total.

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

    Attributes
    ----------
    spends : list of Spend
        Every spend so far, in order, with the estimator that made it.

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

    Examples
    --------
    >>> from skdp import BudgetAccountant, PrivacyBudget
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    >>> acc.spend(PrivacyBudget(0.4, 1e-6), by="first fit")
    >>> acc.remaining
    PrivacyBudget(epsilon=0.6, delta=9e-06)
    """

    def __init__(self, epsilon, delta=0.0, ledger=None):
        self.epsilon = check_real(epsilon, "epsilon", low=0.0, low_inclusive=False, allow_inf=True)
        self.delta = check_real(delta, "delta", low=0.0, high=1.0, high_inclusive=False)
        self._infinite = math.isinf(self.epsilon)
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
        return [Spend(PrivacyBudget(eps, delta), by) for eps, delta, by in self.ledger.records()]

    @property
    def spent(self):
        """Total spent so far (basic composition), or ``None`` before any spend."""
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

    def _fits(self, budget):
        eps, delta = self._exact_totals()
        return self._fits_totals(eps, delta, len(self._spends), budget)

    def _fits_totals(self, eps, delta, n_spends, budget):
        """Whether ``budget`` fits on top of spends summing exactly to ``(eps, delta)``."""
        slack = 1 + (n_spends + 1) * _ROUND_OFF
        eps_ok = self._infinite or eps + Fraction(budget.epsilon) <= Fraction(self.epsilon) * slack
        return eps_ok and delta + Fraction(budget.delta) <= Fraction(self.delta) * slack

    def check(self, budget):
        """Raise :class:`~skdp.BudgetExceededError` if ``budget`` does not fit.

        Parameters
        ----------
        budget : PrivacyBudget
            The budget a fit is about to spend.
        """
        with self._lock:
            self._check_locked(budget)

    def _check_locked(self, budget):
        if not isinstance(budget, PrivacyBudget):
            raise TypeError(f"budget must be a PrivacyBudget, got {budget!r}.")
        if self.ledger is not None:
            spends = self.spends
            fits = self._fits_totals(sum((Fraction(s.budget.epsilon) for s in spends), Fraction(0)),
                                     sum((Fraction(s.budget.delta) for s in spends), Fraction(0)),
                                     len(spends), budget)
        else:
            fits = self._fits(budget)
        if not fits:
            self._refuse(budget)

    def _refuse(self, budget):
        total = self._total()
        total_eps = total.epsilon if total else 0.0
        total_delta = total.delta if total else 0.0
        raise BudgetExceededError(
            f"spending (epsilon={budget.epsilon:g}, delta={budget.delta:g}) would exceed "
            f"the accountant's total (epsilon={self.epsilon:g}, delta={self.delta:g}); "
            f"already spent (epsilon={total_eps:g}, delta={total_delta:g}) in "
            f"{len(self.spends)} spend(s). Nothing was spent."
            + (" This accountant allows no delta; estimators that need delta > 0 "
               "need BudgetAccountant(epsilon, delta=...)."
               if budget.delta > 0 and self.delta == 0 else "")
        )

    def spend(self, budget, by=""):
        """Record a spend after checking that it fits (atomically).

        Parameters
        ----------
        budget : PrivacyBudget
            The budget to spend.
        by : object, default=""
            Who spends it (an estimator or a label); stored as its ``repr``.
        """
        if spending_is_refused():
            raise RuntimeError(
                "a BudgetAccountant cannot be charged while a teacher of a "
                "subsample-and-aggregate ensemble fits: how often teachers charge it depends "
                "on their private rows. Give the teachers no accountant; the ensemble's own "
                "`accountant` records the whole fit.")
        if not isinstance(budget, PrivacyBudget):
            raise TypeError(f"budget must be a PrivacyBudget, got {budget!r}.")
        label = by if isinstance(by, str) else repr(by)
        if self.ledger is not None:
            # One transaction checks and records, so racing processes cannot both win.
            if not self.ledger.spend(budget.epsilon, budget.delta, label,
                                     lambda eps, delta, n: self._fits_totals(eps, delta, n, budget)):
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
            self._check_locked(budget)
            self._spends.append(Spend(budget, label))

    def __repr__(self):
        ledger = "" if self.ledger is None else f", ledger={self.ledger!r}"
        return f"BudgetAccountant(epsilon={self.epsilon!r}, delta={self.delta!r}{ledger})"
