"""The mixin every differentially private estimator of skdp inherits.

It keeps ``__init__`` free of logic (scikit-learn's rule) and gives ``fit`` one
place to turn the ``epsilon``/``delta``/``accountant`` parameters into a
validated budget, charge the accountant, and build the random generator,
all before any data is touched or any noise is drawn.
"""

import pickle
import warnings

import numpy as np
from dp_accounting import DpEvent

from skdp.accounting import BudgetAccountant, PrivacyBudget
from skdp.accounting._accountant import spending_is_refused
from skdp.accounting._events import plain_event
from skdp.exceptions import PrivacyLeakWarning, WeakPrivacyWarning
from skdp.utils._random import check_random_state, child_random_state
from skdp.utils._validation import check_epsilon_delta, check_n_jobs

__all__ = ["DPEstimatorMixin", "refuse_unsafe_pickle", "warn_privacy_leak"]


def warn_privacy_leak(what):
    """Warn that a bound the privacy proof needs was read from the private data.

    Parameters
    ----------
    what : str
        Which bound, and the parameter that would avoid the leak.
    """
    warnings.warn(
        f"{what} The differential privacy guarantee does not hold for this fit.",
        PrivacyLeakWarning,
        stacklevel=3,
    )


def refuse_unsafe_pickle(obj, contents):
    """Refuse to pickle or copy a fitted session object unless it opted in.

    For objects that must keep unprotected private state to keep answering
    (teachers, raw data) together with a budget-limited session state: a
    pickle would publish the state, and loading it twice would fork the
    session and spend its budget twice. Call it from ``__getstate__`` (also
    reached by ``joblib.dump`` and ``copy.deepcopy``) once fitted.

    Parameters
    ----------
    obj : object
        The session; ``obj.allow_pickle`` must be the bool ``True`` to pass.
    contents : str
        What a pickle would hold, for the message.
    """
    flag = getattr(obj, "allow_pickle", False)
    if isinstance(flag, (bool, np.bool_)) and bool(flag):
        return
    raise pickle.PicklingError(
        f"refusing to pickle or copy a fitted {type(obj).__name__}: the result would hold "
        f"{contents} with no privacy protection, and the session state, so that loading it "
        "twice would fork the session and spend up to twice the budget. Host the object in "
        "one process instead. To persist a session in storage as private as the training "
        "data (e.g. to restart the service), set allow_pickle=True on it "
        "(obj.allow_pickle = True) and resume it from one copy only."
    )


class DPEstimatorMixin:
    """Privacy plumbing shared by skdp estimators.

    Subclasses have ``epsilon``, ``delta`` and (optionally) ``accountant`` and
    ``random_state`` parameters. In ``fit`` they validate the data first, then
    call :meth:`_start_private_fit`, then run the mechanism with the returned
    generator, and finally set ``privacy_spent_`` (and ``delta_``).
    :meth:`_start_private_fit` sets ``privacy_event_`` (what the fit releases,
    see :meth:`_privacy_event`) and charges the accountant with it.
    """

    def _resolve_budget(self, n_samples=None, default_delta=None, allow_zero_delta=True):
        """Validate ``epsilon``/``delta`` and return the budget this fit spends.

        Parameters
        ----------
        n_samples : int or None
            Public size of the data, used by ``default_delta``.
        default_delta : callable or float or None
            Used when ``self.delta is None``: a float, or a function of
            ``n_samples`` (e.g. ``lambda n: 1 / n**2``). ``None`` means the
            estimator requires an explicit delta.
        allow_zero_delta : bool
            Whether ``delta=0`` (pure DP) is meaningful for this estimator.

        Returns
        -------
        budget : PrivacyBudget
        """
        delta = getattr(self, "delta", 0.0)
        if delta is None:
            if default_delta is None:
                raise ValueError(f"{type(self).__name__} needs an explicit delta.")
            delta = default_delta(n_samples) if callable(default_delta) else default_delta
            if not 0.0 < delta < 1.0:
                raise ValueError(
                    f"{type(self).__name__}: delta=None means a default that depends on the "
                    f"number of samples, and it is {delta:g} for n_samples={n_samples}, outside "
                    f"(0, 1); pass delta explicitly (and fit on more rows).")
        epsilon, delta = check_epsilon_delta(self.epsilon, delta, allow_zero_delta=allow_zero_delta)
        return PrivacyBudget(epsilon, delta)

    def _charge_accountant(self, budget, event=None):
        """Spend ``budget`` from ``self.accountant`` (if any), refusing before any noise."""
        accountant = getattr(self, "accountant", None)
        if accountant is None:
            return
        if not isinstance(accountant, BudgetAccountant):
            raise TypeError(
                f"accountant must be a skdp.BudgetAccountant or None, got {accountant!r}."
            )
        accountant.spend(budget, by=type(self).__name__, event=event)

    def _privacy_event(self, budget, n_samples=None):
        """The privacy event this fit releases, known before the charge.

        Override it (or pass ``event=`` to :meth:`_start_private_fit`) to
        describe the release more finely than its budget: a
        ``dp_accounting.GaussianDpEvent(sigma / sensitivity)`` for one Gaussian
        release, a ``LaplaceDpEvent(scale / l1_sensitivity)``, a
        ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(z)), T)``
        for DP-SGD, a ``ComposedDpEvent`` of several (conventions:
        :mod:`skdp.accounting._events`). The event must be
        ``(budget.epsilon, budget.delta)``-DP by itself and depend on public
        quantities only. The default is the plain ``(epsilon, delta)`` event.

        Parameters
        ----------
        budget : PrivacyBudget
            The resolved budget of this fit.
        n_samples : int or None
            The public number of rows.

        Returns
        -------
        event : dp_accounting.DpEvent
        """
        return plain_event(budget)

    def _start_private_fit(self, n_samples=None, default_delta=None, allow_zero_delta=True,
                           event=None):
        """Resolve the budget, charge the accountant, and build the generator.

        Call this after the data has been validated (bad input must fail
        before anything is spent) and before any noise is drawn. Besides the
        budget, it validates ``random_state`` and ``n_jobs`` (``None`` or a
        nonzero int, when the estimator has that parameter) before the charge.
        It sets ``privacy_event_``, the event the accountant is charged with.

        Parameters
        ----------
        n_samples, default_delta, allow_zero_delta
            See :meth:`_resolve_budget`.
        event : dp_accounting.DpEvent, callable or None, default=None
            What this fit releases: an event, or a function of the resolved
            budget returning one. ``None`` calls :meth:`_privacy_event`.

        Returns
        -------
        budget : PrivacyBudget
            The budget this fit spends; store it in ``privacy_spent_`` at the end.
        rng : numpy.random.Generator
            The only source of noise for this fit.
        """
        budget = self._resolve_budget(n_samples, default_delta, allow_zero_delta)
        if event is None:
            event = self._privacy_event(budget, n_samples)
        elif callable(event) and not isinstance(event, DpEvent):
            event = event(budget)
        if not isinstance(event, DpEvent):
            raise TypeError(f"{type(self).__name__}: the privacy event must be a "
                            f"dp_accounting.DpEvent, got {event!r}.")
        if n_samples and budget.delta * n_samples >= 1:
            warnings.warn(
                f"{type(self).__name__}: delta={budget.delta:g} >= 1 / n_samples = "
                f"{1 / n_samples:g}. A guarantee with such a delta allows publishing one "
                f"random record outright; choose delta well below 1 / n_samples.",
                WeakPrivacyWarning, stacklevel=3)
        rng = check_random_state(getattr(self, "random_state", None))
        # joblib would refuse a bad n_jobs only once the budget is spent (or never, when
        # a binary problem runs no parallel loop).
        check_n_jobs(getattr(self, "n_jobs", None))
        self._charge_accountant(budget, event)
        self.privacy_event_ = event
        return budget, rng

    def __sklearn_clone__(self):
        # sklearn's clone deep-copies every parameter that is not an estimator: a
        # Generator or RandomState `random_state` would then hold the same state in
        # every clone (each fit of cross_validate, GridSearchCV, OneVsRestClassifier...),
        # which would all draw the same noise. It cancels between fits on overlapping
        # data, and the basic composition the accountant charges (Thakkar (2019), Lemma 2.1.5)
        # needs independent noise. Each clone gets an independent child instead (it
        # stays independent when the clone is pickled to a worker process). Not inside
        # `spending_refused` (a teacher of subsample-and-aggregate): teachers are cloned
        # only when their rows hold two classes, so a child per clone would make a
        # teacher's noise depend on the earlier teachers' rows (Thakkar (2019), Sec. 5.1 needs
        # one record to change one teacher); each gets the copy it always had.
        new = super().__sklearn_clone__()
        if spending_is_refused():
            return new
        for name, value in self.get_params(deep=False).items():
            if isinstance(value, (np.random.Generator, np.random.RandomState)):
                setattr(new, name, child_random_state(value))
        return new

    # Fitted attributes computed from the private data without noise (solver
    # diagnostics such as ``n_iter_``). They are not covered by the privacy
    # guarantee: they stay on the fitted object for the data holder, and are
    # left out of pickles and copies, the usual way a model is shared.
    _non_private_attributes = ()

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: never alter the live estimator
        for name in self._non_private_attributes:
            state.pop(name, None)
        return state
