"""Warnings and errors raised by skdp."""

__all__ = [
    "BudgetExceededError",
    "CertificationError",
    "FallbackModelWarning",
    "PrivacyLeakWarning",
    "SparseVectorExhaustedError",
    "WeakPrivacyWarning",
]


class PrivacyLeakWarning(UserWarning):
    """A bound the privacy proof needs was read from the data.

    The estimator still runs, but its differential privacy guarantee no
    longer holds: the data-derived bound (a norm, a range, a label set) is
    itself a release that no noise protects. Pass the bound explicitly,
    from domain knowledge or public data, to keep the guarantee.
    """


class BudgetExceededError(RuntimeError):
    """A fit would spend more privacy budget than a :class:`BudgetAccountant` has left.

    It is raised before any data is touched or any noise is drawn, so a
    refused fit spends nothing.
    """


class CertificationError(RuntimeError):
    """A solver could not certify the optimality bound a privacy proof needs.

    Nothing is released: the estimator stays unfitted. Raise ``max_iter``,
    loosen the (data-independent) tolerance, or pick another solver.
    """


class FallbackModelWarning(UserWarning):
    """A private release was too uninformative for the requested model; a fallback was fitted.

    The estimator still fits, but the model it keeps is a documented,
    simpler fallback (for instance a constant classifier) computed only
    from what was already released privately or from public parameters:
    it costs no privacy budget beyond what the fit has accounted. A fitted
    attribute of the estimator records which fallback was used.
    """


class SparseVectorExhaustedError(RuntimeError):
    """The sparse vector technique has used up its allowance of below-threshold answers."""


class WeakPrivacyWarning(UserWarning):
    """The requested budget is valid but gives a weak guarantee.

    Emitted for ``delta >= 1 / n_samples``: an ``(epsilon, delta)`` guarantee
    with such a delta allows a mechanism to publish one random record in
    full. The fit runs as asked; choose ``delta`` well below ``1 / n_samples``
    (the default of the estimators that have one is ``1 / n_samples^2``).
    """
