"""Validation of privacy parameters and estimator parameters.

scikit-learn's ``_param_validation`` is private, so skdp keeps this small
validator of its own; every estimator validates in ``fit``, never in ``__init__``.
"""

import math
import numbers
from collections.abc import Mapping

import numpy as np

__all__ = [
    "check_bounded_sample_weight",
    "check_epsilon_delta",
    "check_feature_bounds",
    "check_n_jobs",
    "check_option",
    "check_mechanism_delta",
    "check_positive_int",
    "check_real",
    "check_sample_weight",
]


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def check_real(value, name, *, low=None, high=None, low_inclusive=True,
               high_inclusive=True, allow_inf=False):
    """Return ``value`` as a float after checking type, finiteness and range.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        Parameter name used in error messages.
    low, high : float or None, default=None
        Bounds of the allowed interval; ``None`` means unbounded.
    low_inclusive, high_inclusive : bool, default=True
        Whether the bounds themselves are allowed.
    allow_inf : bool, default=False
        Whether ``+inf`` is allowed.

    Returns
    -------
    value : float
        The validated value.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (booleans are refused).
    ValueError
        If ``value`` is NaN, infinite (unless allowed) or out of range.
    """
    if not _is_real(value):
        raise TypeError(f"{name} must be a real number, got {value!r} of type "
                        f"{type(value).__name__}.")
    try:
        value = float(value)
    except OverflowError:  # an int (or Fraction) beyond the float range
        if not (allow_inf and value > 0):
            raise ValueError(f"{name} must be finite, got a number beyond the float range "
                             f"(about {np.finfo(float).max:.3g}).") from None
        value = math.inf  # as float("inf"), which is allowed here
    if np.isnan(value):
        raise ValueError(f"{name} must not be NaN.")
    if np.isinf(value) and not (allow_inf and value > 0):
        raise ValueError(f"{name} must be finite, got {value}.")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be {op} {low}, got {value}.")
    if high is not None and (value > high or (value == high and not high_inclusive)):
        op = "<=" if high_inclusive else "<"
        raise ValueError(f"{name} must be {op} {high}, got {value}.")
    return value


def check_positive_int(value, name, *, low=1, high=None):
    """Return ``value`` as an int after checking it is an integer in ``[low, high]``.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        Parameter name used in error messages.
    low : int, default=1
        Smallest allowed value.
    high : int or None, default=None
        Largest allowed value; ``None`` means unbounded.

    Returns
    -------
    value : int
        The validated value.
    """
    if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got {value!r}.")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {bound}, got {value}.")
    return value


def check_n_jobs(n_jobs, name="n_jobs"):
    """Return ``n_jobs`` after checking it is ``None`` or a nonzero integer.

    joblib's convention: ``None`` (one job unless a
    :func:`joblib.parallel_backend` context says otherwise), a positive
    number of jobs, or a negative one (``-1`` all processors, ``-2`` all but
    one...). Estimators check it in ``fit``, before the budget is charged,
    instead of letting joblib refuse it after the charge (or never, when a
    binary problem runs no parallel loop).

    Parameters
    ----------
    n_jobs : object
        The value to check.
    name : str, default="n_jobs"
        Parameter name used in error messages.

    Returns
    -------
    n_jobs : int or None
        The validated value.

    Raises
    ------
    TypeError
        If ``n_jobs`` is neither ``None`` nor an integer (booleans are refused).
    ValueError
        If ``n_jobs`` is 0.
    """
    if n_jobs is None:
        return None
    message = f"{name} must be None or a nonzero integer (-1 uses all processors), got {n_jobs!r}"
    if not isinstance(n_jobs, numbers.Integral) or isinstance(n_jobs, (bool, np.bool_)):
        raise TypeError(f"{message} of type {type(n_jobs).__name__}.")
    if n_jobs == 0:
        raise ValueError(f"{message}.")
    return int(n_jobs)


def check_option(value, name, options):
    """Check that ``value`` is one of ``options`` and return it.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        Parameter name used in error messages.
    options : collection
        The allowed values.

    Returns
    -------
    value : object
        The validated value.
    """
    if isinstance(value, str) and value in options:
        return value
    if not isinstance(value, str) and any(value is o for o in options):
        return value
    raise ValueError(f"{name} must be one of {sorted(map(str, options))}, got {value!r}.")


def check_epsilon_delta(epsilon, delta, *, allow_zero_delta=True):
    """Validate a privacy budget ``(epsilon, delta)``.

    Parameters
    ----------
    epsilon : float
        Must be finite and > 0.
    delta : float
        Must satisfy ``0 <= delta < 1`` (``0 < delta < 1`` when
        ``allow_zero_delta=False``).
    allow_zero_delta : bool, default=True
        Whether pure differential privacy (``delta = 0``) is allowed.

    Returns
    -------
    epsilon, delta : float
        The validated values.
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    delta = check_real(delta, "delta", low=0.0, high=1.0, high_inclusive=False,
                       low_inclusive=allow_zero_delta)
    return epsilon, delta


def check_mechanism_delta(mechanism, delta, pure_mechanisms):
    """Check that ``delta`` suits ``mechanism``, for estimators whose ``delta`` defaults to 0.

    A pure ``epsilon``-DP mechanism (one of ``pure_mechanisms``) spends no
    delta, so any other value is refused; every other mechanism is
    ``(epsilon, delta)``-DP and needs ``delta > 0``, which the default
    ``delta=0`` is not: the message says which mechanism needs it and that
    the default is 0. Other invalid values (negative, NaN, >= 1) are left to
    :func:`check_epsilon_delta`.

    Parameters
    ----------
    mechanism : str
        The (already validated) mechanism.
    delta : object
        The ``delta`` parameter as given.
    pure_mechanisms : sequence of str
        The estimator's pure ``epsilon``-DP mechanisms.
    """
    pure = ", ".join(repr(m) for m in pure_mechanisms)
    if mechanism in pure_mechanisms:
        if delta not in (0, 0.0):
            raise ValueError(f"mechanism={mechanism!r} is pure epsilon-DP and spends no delta; "
                             f"set delta=0 (got delta={delta!r}) or use a mechanism that takes "
                             f"delta > 0 (not {pure}).")
    elif _is_real(delta) and delta == 0:
        raise ValueError(f"mechanism={mechanism!r} is (epsilon, delta)-DP and needs delta > 0, "
                         f"got delta={delta!r}: the default delta is 0, which only the pure "
                         f"epsilon-DP mechanisms ({pure}) accept. Pass delta explicitly, well "
                         f"below 1 / n_samples (e.g. delta=1e-6), or use one of those. "
                         "Nothing was spent.")


def check_sample_weight(sample_weight, n_samples):
    """Validate per-row weights (finite, non-negative, one per row), without bounding them.

    For mechanisms whose guarantee does not depend on what a record's weight
    does to its own part of the computation (subsample-and-aggregate: a
    record, weight included, changes one teacher however it is weighted).
    Mechanisms that bound one row's influence use
    :func:`check_bounded_sample_weight`.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,), float or None
        Weights; ``None`` means every row weighs 1; a number weighs every row
        alike.
    n_samples : int
        Number of rows of the data they weight.

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,) or None
        The weights as floats, or ``None`` when every weight is 1 (so that
        unit weights give exactly the unweighted computation).

    Raises
    ------
    ValueError
        If the weights have the wrong shape, are not finite or are negative.
        All-zero weights are accepted: the weights are protected, and an
        error for them alone would tell that data set from its neighbours.
    """
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Real) and not isinstance(sample_weight, bool):
        sample_weight = np.full(n_samples, float(sample_weight))
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(f"sample_weight must have shape ({n_samples},), got {w.shape}.")
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight must be finite (no NaN or infinity).")
    if np.any(w < 0):
        raise ValueError("sample_weight must be non-negative.")
    return None if np.all(w == 1.0) else w


def check_bounded_sample_weight(sample_weight, n_samples, *, above="clip"):
    """Validate per-row weights and clip them to ``[0, 1]`` (or refuse weights above 1).

    A weight ``w`` in ``[0, 1]`` scales one row's loss, so that row's
    gradient, Hessian and Hessian trace stay within the bounds a private
    mechanism is calibrated to; a weight above 1 would multiply one row's
    influence. Clipping is a per-row operation, like clipping a row's norm,
    so it costs no privacy. It is silent: a warning given only when some
    weight is above 1 would reveal that such a record exists. To keep the
    weights' ratios, divide them by a constant fixed in advance (not by their
    maximum, which depends on the data).

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or None
        Weights; ``None`` means every row weighs 1.
    n_samples : int
        Number of rows of the data they weight.
    above : {"clip", "raise"}, default="clip"
        What to do with weights above 1: clip them (silently), or
        refuse them with a ``ValueError`` (for estimators whose weights have
        a meaning of their own, such as a weighted mean, that clipping would
        silently change).

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,) or None
        The weights as floats in ``[0, 1]``, or ``None`` when every weight is 1
        (so that unit weights give exactly the unweighted computation).

    Raises
    ------
    ValueError
        As :func:`check_sample_weight`, and for weights above 1 when
        ``above="raise"``.
    """
    w = check_sample_weight(sample_weight, n_samples)
    if w is None:
        return None
    if above == "raise" and np.any(w > 1):
        raise ValueError(
            "sample_weight must be in [0, 1]: the privacy guarantee bounds one row's "
            "influence by a weight of 1. Divide the weights by a constant fixed in advance "
            "(not by their maximum, which depends on the data).")
    # Silently, as a row is clipped to its norm bound: a warning raised only when some
    # weight is above 1 would tell whoever sees it that such a record exists.
    w = np.minimum(w, 1.0)
    return None if np.all(w == 1.0) else w


def check_feature_bounds(bounds, n_features, owner="bounds"):
    """Validate public per-feature bounds, in skdp's one convention for ``bounds``.

    One pair ``(low, high)`` for every feature, or one pair per feature:
    :mod:`skdp.preprocessing` and :mod:`skdp.kernel_methods` both read
    ``bounds`` this way.

    Parameters
    ----------
    bounds : array-like of shape (2,) or (n_features, 2), or None
        ``(low, high)`` for every feature, or ``[(low_1, high_1), ...,
        (low_d, high_d)]``.
    n_features : int
        Number of features of the data.
    owner : str
        Name of the estimator, for error messages.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,)
        Finite bounds with ``lower < upper`` for every feature.

    Raises
    ------
    ValueError
        If ``bounds`` is missing, malformed, not finite, or some
        ``lower >= upper``.
    """
    if bounds is None:
        raise ValueError(
            f"{owner} needs public bounds=(low, high), or one (low, high) pair per feature: "
            f"the range each feature is known to lie in, chosen without looking at the "
            f"private data (e.g. from the measuring instrument or the feature's definition). "
            f"They cannot be read from the data without spending privacy.")
    if isinstance(bounds, Mapping):
        raise ValueError(f"{owner}: bounds must be a pair (low, high) or one pair per feature, "
                         f"in column order; a dict keyed by column name is accepted only by "
                         f"the skdp.preprocessing scalers (fitted on a DataFrame). Got {bounds!r}.")
    # An object array keeps each entry's type (a float conversion would turn True or "1" into 1).
    if isinstance(bounds, (str, bytes)) or any(isinstance(v, (bool, np.bool_, str, bytes))
                                               for v in np.asarray(bounds, dtype=object).flat):
        raise TypeError(f"{owner}: bounds must hold real numbers, got {bounds!r}.")
    try:
        array = np.asarray(bounds, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: bounds must be a pair (low, high) or one pair per "
                         f"feature, got {bounds!r}.") from None
    if array.shape == (2,):
        array = np.broadcast_to(array, (n_features, 2))
    elif array.shape == (2, 2):
        # Ambiguous when both readings are valid bounds and they differ.
        both_valid = np.all(array[:, 0] < array[:, 1]) and np.all(array[0] < array[1])
        if (both_valid and not np.array_equal(array, array.T)
                and not (isinstance(bounds, list) and all(isinstance(p, tuple) for p in bounds))):
            # Two features: [(low_1, high_1), (low_2, high_2)] and another library's
            # (lows, highs) have the same shape and would be read differently.
            raise ValueError(
                f"{owner}: with two features, bounds={bounds!r} is ambiguous: skdp reads one "
                f"(low, high) pair per feature, while (lows, highs) is another common layout. "
                f"Pass a list of tuples, [(low_1, high_1), (low_2, high_2)], e.g. "
                f"list(zip(lows, highs)).")
        if n_features != 2:
            raise ValueError(f"{owner}: bounds must be a pair (low, high) or one (low, high) "
                             f"pair per feature, of shape (2,) or ({n_features}, 2); got shape "
                             f"(2, 2).")
    elif array.shape == (2, n_features):
        raise ValueError(
            f"{owner}: bounds must be a pair (low, high) or one (low, high) pair per feature, "
            f"of shape (2,) or ({n_features}, 2); got shape (2, {n_features}), the (lows, highs) "
            f"layout of another library: pass list(zip(lows, highs)).")
    elif array.shape != (n_features, 2):
        raise ValueError(f"{owner}: bounds must be a pair (low, high) or one (low, high) pair "
                         f"per feature, of shape (2,) or ({n_features}, 2); got shape "
                         f"{array.shape}.")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{owner}: bounds must be finite (no NaN or infinity), got {bounds!r}.")
    lower, upper = array[:, 0].copy(), array[:, 1].copy()
    bad = np.flatnonzero(lower >= upper)
    if bad.size:
        j = bad[0]
        raise ValueError(f"{owner}: bounds need lower < upper for every feature; feature {j} "
                         f"has lower={lower[j]:g} >= upper={upper[j]:g}.")
    with np.errstate(over="ignore"):
        bad = np.flatnonzero(~np.isfinite(upper - lower))
    if bad.size:
        j = bad[0]
        raise ValueError(f"{owner}: the width upper - lower of the bounds must be a finite "
                         f"float; feature {j} has lower={lower[j]:g}, upper={upper[j]:g}.")
    return lower, upper
