"""Scaling to public feature bounds: data-independent, so it costs no privacy."""

import numbers
from collections.abc import Mapping
from fractions import Fraction

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.utils._validation import check_feature_bounds

__all__ = ["PublicBoundsScaler"]


class _BoundedScalerMixin(OneToOneFeatureMixin, TransformerMixin):
    """A per-feature affine map of values clipped (if ``clip``) to public ``bounds``.

    Subclasses set ``lower_`` and ``upper_`` in ``fit`` and define ``_forward``
    and ``_backward`` (the affine map and its inverse). A subclass whose map
    sends 0 to 0 may accept sparse input by returning the formats from
    ``_sparse_formats``; its ``_forward`` and ``_backward`` then also receive
    the stored entries of a sparse matrix, one feature index per entry in
    ``columns``.
    """

    def _sparse_formats(self):
        """Sparse formats accepted (``None``: dense input only)."""
        return None

    def _check_sparse_map(self, forward):
        """Refuse sparse input where the map (clipping included) would move the unstored zeros."""
        if forward and self.clip:
            _check_zero_inside(self.lower_, self.upper_, type(self).__name__)

    def _validate_input(self, X, reset):
        return validate_data(self, X, dtype=np.float64, reset=reset,
                             accept_sparse=self._sparse_formats() or False)

    def _validate_for_fit(self, X):
        """Validate ``X``, ``clip`` and ``bounds``; return ``X, lower, upper``."""
        X = self._validate_input(X, reset=True)
        if not isinstance(self.clip, (bool, np.bool_)):
            raise TypeError(f"clip must be a bool, got {self.clip!r}.")
        owner = type(self).__name__
        bounds = self.bounds
        names = getattr(self, "feature_names_in_", None)
        if isinstance(bounds, Mapping):
            bounds = _bounds_by_column(bounds, names, owner)
        else:
            _check_unlabelled(bounds, names, owner)
        lower, upper = check_feature_bounds(bounds, X.shape[1], owner)
        if sp.issparse(X):
            _check_zero_inside(lower, upper, owner)
        return X, lower, upper

    def _map(self, X, forward):
        """Apply ``_forward`` (after clipping, if ``clip``) or ``_backward`` to dense or sparse ``X``."""
        if not sp.issparse(X):
            if forward and self.clip:
                X = np.clip(X, self.lower_, self.upper_)
            return self._forward(X) if forward else self._backward(X)
        self._check_sparse_map(forward)
        X = X.copy()
        X.sum_duplicates()
        columns = X.indices if X.format == "csr" else np.repeat(np.arange(X.shape[1]),
                                                                 np.diff(X.indptr))
        values = X.data
        if forward and self.clip:
            values = np.clip(values, self.lower_[columns], self.upper_[columns])
        X.data = (self._forward(values, columns) if forward
                  else self._backward(values, columns))
        return X

    def transform(self, X):
        """Clip (if ``clip``) to the bounds, then scale.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples (sparse only where the scaler accepts it).

        Returns
        -------
        X_out : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Sparse input gives a sparse output (CSR or CSC as given; COO becomes CSR).
        """
        check_is_fitted(self, "lower_")
        return self._map(self._validate_input(X, reset=False), forward=True)

    def inverse_transform(self, X):
        """Map scaled values back to the original units.

        Clipped values come back at the bound they were clipped to.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Scaled samples (sparse only where the scaler accepts it).

        Returns
        -------
        X_original : {ndarray, sparse matrix} of shape (n_samples, n_features)
        """
        check_is_fitted(self, "lower_")
        return self._map(self._validate_input(X, reset=False), forward=False)


def _bounds_by_column(bounds, feature_names, owner):
    """``{column name: (low, high)}`` as one pair per column of ``X``, in column order.

    Every column needs a pair and every key must be a column: a typo would
    otherwise leave a feature unbounded or bound the wrong one silently.
    """
    if feature_names is None:
        raise ValueError(
            f"{owner}: bounds given as a dict {{column name: (low, high)}} need X with string "
            f"column names (a pandas DataFrame); this X has none. Pass one (low, high) pair "
            f"per feature, in column order.")
    names = list(feature_names)
    missing = [name for name in names if name not in bounds]
    if missing:
        raise ValueError(f"{owner}: the bounds dict has no bounds for column(s) {missing}; "
                         f"every column of X needs a public (low, high) pair.")
    columns = set(names)
    unknown = [key for key in bounds if key not in columns]
    if unknown:
        raise ValueError(f"{owner}: the bounds dict has keys that are not columns of X: "
                         f"{unknown}; X's columns are {names}.")
    return [bounds[name] for name in names]


def _check_unlabelled(bounds, feature_names, owner):
    """Refuse a pandas ``bounds`` labelled by column names of ``X``: it is read by position.

    Array-like bounds are one pair per feature in column order; a Series or
    DataFrame whose index or columns name columns of ``X`` looks keyed by
    name, and reading it by position would silently swap the bounds of
    columns listed in another order.
    """
    if feature_names is None or not type(bounds).__module__.startswith("pandas"):
        return
    names = set(feature_names)
    labels = [getattr(bounds, axis, ()) for axis in ("index", "columns")]
    if any(label in names for axis in labels for label in axis):
        raise ValueError(
            f"{owner}: bounds is a pandas {type(bounds).__name__} labelled by column names "
            f"of X, but array-like bounds are read by position (one (low, high) pair per "
            f"column, in column order), not by label. Pass a dict {{column name: (low, "
            f"high)}} instead (bounds.to_dict('list') for a DataFrame with one column per "
            f"feature, bounds.T.to_dict('list') for one row per feature).")


def _sends_zero_to_zero(low, high, lower, upper):
    """Whether the affine map of ``[lower, upper]`` onto ``[low, high]`` sends 0 to 0, per feature.

    ``low * upper == lower * high``, in exact rational arithmetic: in floats the
    products can overflow to infinity or underflow to zero and compare equal.
    """
    low, high = Fraction(low), Fraction(high)
    # Once per distinct pair of bounds (often one, broadcast over a million sparse columns).
    as_complex = np.empty(np.shape(lower), dtype=complex)  # (lower, upper) pairs, sortable
    as_complex.real, as_complex.imag = lower, upper
    pairs, inverse = np.unique(as_complex, return_inverse=True)
    keeps = np.array([low * Fraction(p.imag) == Fraction(p.real) * high for p in pairs.tolist()],
                     dtype=bool)
    return keeps[inverse.ravel()]


def _check_keeps_zero(offset):
    moved = np.flatnonzero(offset != 0.0)
    if moved.size:
        j = moved[0]
        raise ValueError(
            f"PublicBoundsScaler: sparse input needs a map that sends 0 to 0 (its unstored "
            f"entries are zeros); feature {j} is mapped to {offset[j]:g}. Use bounds (-M, M) "
            f"with feature_range=(-1, 1), or bounds (0, M) with feature_range=(0, 1), or pass "
            f"a dense array.")


def _check_zero_inside(lower, upper, owner):
    """Sparse input stores only nonzero entries: clipping must leave the zeros at 0."""
    outside = np.flatnonzero(~((lower <= 0.0) & (0.0 <= upper)))
    if outside.size:
        j = outside[0]
        raise ValueError(
            f"{owner}: sparse input needs bounds that contain 0 (its unstored entries are "
            f"zeros, and clipping them would fill the matrix); feature {j} has bounds "
            f"({lower[j]:g}, {upper[j]:g}). Pass a dense array or widen the bounds.")


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
    bounds : array-like of shape (2,) or (n_features, 2), dict or None, default=None
        Public bounds of the features: one pair ``(low, high)`` for every
        feature, or one pair per feature (the layout of ``bounds`` everywhere
        in skdp), with ``low < high``. When ``X`` is a DataFrame, a dict
        ``{column name: (low, high)}`` with every column (and only columns)
        as keys is accepted too (a pandas object labelled by column names is
        refused: it would be read by position). Required: ``None`` is refused in
        ``fit`` with an explanation.
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

    Sparse input (CSR, CSC, COO) is accepted where the map sends 0 to 0, so
    that zeros stay unstored: bounds ``(-M, M)`` with ``feature_range=(-1,
    1)`` (a public :class:`~sklearn.preprocessing.MaxAbsScaler`), or bounds
    ``(0, M)`` with ``feature_range=(0, 1)`` (nonnegative counts).

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
    >>> scaler = PublicBoundsScaler(bounds=[(0.0, 10.0), (50.0, 250.0)])
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
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; only its number of columns (and their names) is
            used.
        y : None
            Ignored.

        Returns
        -------
        self : PublicBoundsScaler
        """
        X, lower, upper = self._validate_for_fit(X)
        low, high = self._check_feature_range()
        scale = (high - low) / (upper - lower)
        # Where the map sends 0 to 0 (e.g. bounds (-M, M) to (-1, 1), or (0, M) to (0, 1)),
        # the offset is exactly 0, so zeros stay zeros.
        offset = np.where(_sends_zero_to_zero(low, high, lower, upper), 0.0, low - lower * scale)
        if sp.issparse(X):
            _check_keeps_zero(offset)
        self.lower_, self.upper_ = lower, upper
        self.scale_, self.min_ = scale, offset
        return self

    def _sparse_formats(self):
        return ("csr", "csc")

    def _check_sparse_map(self, forward):
        _check_keeps_zero(self.min_)
        super()._check_sparse_map(forward)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Sparse input is accepted for settings that send 0 to 0 (fit checks it per feature).
        try:
            low, high = self._check_feature_range()
            lower, upper = np.asarray(self.bounds, dtype=np.float64).reshape(-1, 2).T
            keeps_zero = _sends_zero_to_zero(low, high, lower, upper)
        except (TypeError, ValueError, OverflowError):  # invalid bounds (fit says why), or inf
            tags.input_tags.sparse = False
        else:
            tags.input_tags.sparse = bool(np.all(keeps_zero & (lower <= 0.0) & (0.0 <= upper)))
        return tags

    def _forward(self, X, columns=None):
        if columns is not None:  # stored entries of a sparse matrix; min_ is 0
            return X * self.scale_[columns]
        return X * self.scale_ + self.min_

    def _backward(self, X, columns=None):
        if columns is not None:
            return X / self.scale_[columns]
        return (X - self.min_) / self.scale_
