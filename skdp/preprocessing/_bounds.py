"""Scaling to public feature bounds: data-independent, so it costs no privacy."""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["PublicBoundsScaler", "check_bounds"]


def _as_bound(value, name, n_features):
    if isinstance(value, (bool, np.bool_)) or isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a real number or an array of reals, got {value!r}.")
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number or an array of reals, "
                        f"got {value!r}.") from None
    if array.ndim > 1 or (array.ndim == 1 and array.shape[0] != n_features):
        raise ValueError(f"{name} must be a scalar or have shape ({n_features},) "
                         f"(one bound per feature), got shape {array.shape}.")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite (no NaN or infinity), got {value!r}.")
    return np.broadcast_to(array, (n_features,)).copy()


def check_bounds(bounds, n_features, owner):
    """Validate public per-feature bounds ``(lower, upper)``.

    Parameters
    ----------
    bounds : tuple (lower, upper) or None
        ``lower`` and ``upper`` are each a real number (the same bound for
        every feature) or an array of shape ``(n_features,)``.
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
            f"{owner} needs public bounds=(lower, upper): the range each feature is known to "
            f"lie in, chosen without looking at the private data (e.g. from the measuring "
            f"instrument or the feature's definition). They cannot be read from the data "
            f"without spending privacy.")
    if (isinstance(bounds, (str, bytes, numbers.Number, np.ndarray))
            or not hasattr(bounds, "__len__") or len(bounds) != 2):
        raise ValueError(f"{owner}: bounds must be a pair (lower, upper), got {bounds!r}.")
    lower = _as_bound(bounds[0], "lower bound", n_features)
    upper = _as_bound(bounds[1], "upper bound", n_features)
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


class _BoundedScalerMixin(OneToOneFeatureMixin, TransformerMixin):
    """A per-feature affine map of values clipped (if ``clip``) to public ``bounds``.

    Subclasses set ``lower_``, ``upper_`` and ``scale_`` in ``fit`` and define
    ``_forward`` and ``_backward`` (the affine map and its inverse).
    """

    def _validate_for_fit(self, X):
        """Validate ``X``, ``clip`` and ``bounds``; return ``X, lower, upper``."""
        X = validate_data(self, X, dtype=np.float64)
        if not isinstance(self.clip, (bool, np.bool_)):
            raise TypeError(f"clip must be a bool, got {self.clip!r}.")
        lower, upper = check_bounds(self.bounds, X.shape[1], type(self).__name__)
        return X, lower, upper

    def transform(self, X):
        """Clip (if ``clip``) to the bounds, then scale.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self, "scale_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.clip:
            X = np.clip(X, self.lower_, self.upper_)
        return self._forward(X)

    def inverse_transform(self, X):
        """Map scaled values back to the original units.

        Clipped values come back at the bound they were clipped to.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Scaled samples.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self, "scale_")
        return self._backward(validate_data(self, X, dtype=np.float64, reset=False))


class PublicBoundsScaler(_BoundedScalerMixin, BaseEstimator):
    """Scale each feature from public bounds to a fixed range, clipping what lies outside.

    The data-independent counterpart of
    :class:`~sklearn.preprocessing.MinMaxScaler`: instead of each feature's
    minimum and maximum *in the training data* (which a released model would
    then carry), it uses bounds the user states, known without looking at
    the data. Feature ``j`` is mapped affinely from ``[lower_j, upper_j]`` to
    ``feature_range``, by default ``[-1, 1]``. Fitting reads only the
    number of columns.

    Parameters
    ----------
    bounds : tuple (lower, upper) or None, default=None
        Public bounds of the features: ``lower`` and ``upper`` are each a
        real number (the same for every feature) or an array of shape
        ``(n_features,)``, with ``lower < upper``. Required: ``None`` is
        refused in ``fit`` with an explanation. Note the layout: a pair of
        bound vectors, not a list of per-feature pairs.
    feature_range : tuple (min, max), default=(-1.0, 1.0)
        The range the bounds are mapped to. The default centres each
        feature's public range at 0, which suits linear models whose rows
        are clipped to an L2 norm (every entry then lies in ``[-1, 1]``, so
        a row of ``d`` features has norm at most ``sqrt(d)``); ``(0, 1)``
        matches ``MinMaxScaler``'s default.
    clip : bool, default=True
        Clip values to ``[lower, upper]`` before scaling, so that every
        output lies in ``feature_range``. With ``False`` values outside the
        bounds map outside ``feature_range``.

    Attributes
    ----------
    lower_ : ndarray of shape (n_features,)
        Lower bound of each feature (``bounds[0]`` broadcast).
    upper_ : ndarray of shape (n_features,)
        Upper bound of each feature (``bounds[1]`` broadcast).
    scale_ : ndarray of shape (n_features,)
        ``(max - min) / (upper_ - lower_)``: per-feature multiplier.
    min_ : ndarray of shape (n_features,)
        ``min - lower_ * scale_``: per-feature offset, so that
        ``X_out = X * scale_ + min_``.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names, when ``X`` has string column names.

    Privacy
    -------
    Nothing is learned from the data: ``fit`` reads only the number of
    columns (and their names), which are public in every neighbouring
    relation skdp uses, and ``transform`` maps each row on its own with
    constants fixed in advance. Fitting it and releasing it therefore costs
    no privacy (no epsilon, no ``privacy_spent_``), and a private model
    trained on its output keeps exactly its own guarantee, in a
    :class:`~sklearn.pipeline.Pipeline` too. This holds only if the bounds
    are public: chosen without looking at the private data (from the
    feature's definition, the instrument's range, a published reference
    range, or another data set). Bounds read from the private data (its
    minimum and maximum, or the summary table of a data set's documentation
    computed from the same rows) leak those extremes, which often belong
    to a single person. Clipping is a per-row operation and costs nothing.

    See Also
    --------
    DPStandardScaler : Standardize with a differentially private mean and
        standard deviation, within public bounds.
    sklearn.preprocessing.MinMaxScaler : The same map with bounds read from
        the data (not private).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import PublicBoundsScaler
    >>> X = np.array([[0.0, 150.0], [5.0, 210.0], [12.0, 90.0]])
    >>> scaler = PublicBoundsScaler(bounds=([0.0, 50.0], [10.0, 250.0]))
    >>> scaler.fit_transform(X)
    array([[-1. ,  0. ],
           [ 0. ,  0.6],
           [ 1. , -0.6]])
    """

    def __init__(self, bounds=None, *, feature_range=(-1.0, 1.0), clip=True):
        self.bounds = bounds
        self.feature_range = feature_range
        self.clip = clip

    def _check_feature_range(self):
        feature_range = self.feature_range
        if (not isinstance(feature_range, (tuple, list)) or len(feature_range) != 2
                or not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                           and np.isfinite(v) for v in feature_range)
                or not feature_range[0] < feature_range[1]):
            raise ValueError("feature_range must be a pair (min, max) of finite reals with "
                             f"min < max, got {feature_range!r}.")
        return float(feature_range[0]), float(feature_range[1])

    def fit(self, X, y=None):
        """Record the number of features and check the bounds against it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; only its number of columns (and their names) is
            used.
        y : None
            Ignored.

        Returns
        -------
        self : PublicBoundsScaler
        """
        _, lower, upper = self._validate_for_fit(X)
        low, high = self._check_feature_range()
        self.lower_, self.upper_ = lower, upper
        self.scale_ = (high - low) / (self.upper_ - self.lower_)
        self.min_ = low - self.lower_ * self.scale_
        return self

    def _forward(self, X):
        return X * self.scale_ + self.min_

    def _backward(self, X):
        return (X - self.min_) / self.scale_
