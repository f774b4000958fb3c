"""Private bounds as pipeline steps: a released row-norm quantile or per-feature ranges."""

import math
import numbers
import warnings

import dp_accounting
import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.accounting import EpsilonDeltaDpEvent
from skdp.base import DPEstimatorMixin
from skdp.mechanisms._exponential import check_noise_scale
from skdp.utils._clipping import clip_rows_l2, row_norms_l2
from skdp.utils._docstrings import fill_doc
from skdp.utils._validation import check_real

__all__ = ["DPFeatureClipper", "DPNormClipper", "above_threshold_scales", "private_quantile",
           "quantile_counts", "quantile_grid"]

# Candidates per decade of the public search range: consecutive candidates differ by a
# factor 10**(1/20) = 1.122, so the released value is within 12% of a grid-exact quantile.
_PER_DECADE = 20
# DPFeatureClipper warns below this n * epsilon / (2 d): on the derive tables (5k-7k rows,
# 25-64 features) at epsilon = 0.1 (values 4 to 10) the ranges were noise and the model
# after them fell to the majority class; tv16 (45k rows, value 60) matched public bounds.
_MIN_COUNT_SCALE = 100


def quantile_grid(low, high):
    """Public log grid of candidates, ``_PER_DECADE`` per decade, from ``low`` to ``high``."""
    n = max(int(math.ceil(_PER_DECADE * math.log10(high / low))), 1) + 1
    return np.geomspace(low, high, n)


def quantile_counts(values, grid):
    """``#{v <= g}`` for each candidate ``g``: each moves by at most 1 under replace-one."""
    return np.searchsorted(np.sort(values), grid, side="right")


def above_threshold_scales(epsilon):
    """Laplace scales ``(threshold, query)`` of AboveThreshold for counts of sensitivity 1.

    Dwork and Roth (2014), Alg. 1 and Thm. 3.23: ``Lap(2 / epsilon)`` on the
    threshold and ``Lap(4 / epsilon)`` on every query give ``epsilon``-DP for
    one positive answer.
    """
    scale = 2.0 / epsilon
    check_noise_scale(scale)
    return scale, 2.0 * scale


def private_quantile(values, q, grid, epsilon, rng):
    """The first candidate whose count passes ``q n``, by AboveThreshold (Durfee 2023).

    Scans the increasing public ``grid`` and releases the first ``g`` with
    ``#{v_i <= g} + Lap(4 / epsilon) >= q n + Lap(2 / epsilon)`` (the last
    candidate when none passes). Replacing one value moves every count by at
    most 1, so this is AboveThreshold with one positive answer, ``epsilon``-DP
    (Dwork and Roth 2014, Alg. 1, Thm. 3.23). Unlike the exponential
    mechanism over the grid (Smith 2011), it never wanders among the many
    candidates above the data, whose ranks all tie. ``grid`` must be chosen
    without the data. Drawing every query's noise at once is the same
    distribution as drawing it during the scan.

    Returns
    -------
    value : float
        The released candidate.
    """
    threshold_scale, query_scale = above_threshold_scales(epsilon)
    counts = quantile_counts(values, grid)
    threshold = q * values.size + rng.laplace(0.0, threshold_scale)
    passed = np.flatnonzero(counts + rng.laplace(0.0, query_scale, size=grid.size) >= threshold)
    return float(grid[passed[0]] if passed.size else grid[-1])


def _check_search_range(value, name, *, signed=False):
    ok = (isinstance(value, (tuple, list)) and len(value) == 2
          and all(isinstance(v, numbers.Real) and not isinstance(v, bool) and np.isfinite(v)
                  for v in value) and 0.0 < value[0] < value[1])
    if not ok:
        what = "magnitudes" if signed else "values"
        raise ValueError(f"{name} must be a pair (low, high) of finite {what} with "
                         f"0 < low < high, got {value!r}.")
    return float(value[0]), float(value[1])


def _check_quantile(value, name):
    return check_real(value, name, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)


@fill_doc
class DPNormClipper(OneToOneFeatureMixin, TransformerMixin, DPEstimatorMixin, BaseEstimator):
    """Clip rows to a private quantile of their L2 norms, and rescale them to norm 1.

    The step that makes ``data_norm`` unnecessary: it releases ``data_norm_``,
    a high quantile of the training rows' L2 norms, the first candidate of a
    public log grid whose noisy count passes it (AboveThreshold, as in Durfee
    2023), then maps every row ``x``
    to ``clip(x, data_norm_) / data_norm_``. The rows it outputs have norm at
    most 1, so the skdp estimator after it in a pipeline is right with its
    default ``data_norm=1.0``.

    Parameters
    ----------
    epsilon : float, default=0.1
        Privacy loss bound of the quantile, finite and > 0 (pure DP). A small
        share of the pipeline's total is enough on thousands of rows.
    quantile : float, default=0.9
        Which quantile of the row norms, in ``(0, 1)``. Rows above it (about
        ``1 - quantile`` of them) are scaled down to it, keeping their
        direction. The count that passes is within a few ``4 / epsilon`` of
        ``quantile * n_samples``: the release is meaningful when
        ``epsilon * quantile * n_samples`` is in the tens or more.
    norm_range : tuple (low, high), default=(1e-3, 1e6)
        Public search range of the norm, ``0 < low < high``, fixed without
        looking at the data: 20 candidates per decade (a factor 1.12 apart).
        A norm quantile outside it is released as the nearest end.
    rescale : bool, default=True
        Divide the clipped rows by ``data_norm_`` (output norm at most 1).
        ``False`` only clips (output norm at most ``data_norm_``).
    %(random_state)s
    %(accountant)s

    Attributes
    ----------
    data_norm_ : float
        The released norm quantile.
    output_norm_ : float
        Bound on the L2 norm of the output rows (1, or ``data_norm_``).
    privacy_spent_ : PrivacyBudget
        ``(epsilon, 0)``.
    privacy_event_ : dp_accounting.DpEvent
        The plain ``(epsilon, 0)`` event of the quantile release.
        The event a tight :class:`~skdp.BudgetAccountant` composes.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names, when ``X`` has string column names.

    Privacy
    -------
    ``epsilon``-differentially private (pure, ``delta = 0``) for replace-one
    neighbours (data sets of the same public size differing in one row): the
    only release is ``data_norm_``, chosen by AboveThreshold (Dwork and Roth
    2014, Alg. 1, Thm. 3.23) over the counts ``#{norm <= g}`` of the increasing
    public grid, each of sensitivity 1 (Durfee 2023). ``transform`` maps each
    row on its own and costs nothing more. In a pipeline, this step and the
    model after it each spend their own budget on the same rows: the pipeline
    is ``(epsilon + epsilon_model, delta_model)``-DP (basic composition), and
    one ``accountant`` given to both records the sum.

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    DPFeatureClipper : Private per-feature ranges (for ``bounds``).

    References
    ----------
    D. Durfee, "Unbounded differentially private quantile and maximum
    estimation", NeurIPS 2023.

    C. Dwork and A. Roth, "The algorithmic foundations of differential
    privacy", 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import DPNormClipper
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 3)) * 40.0
    >>> clipper = DPNormClipper(epsilon=0.1, random_state=0).fit(X)
    >>> bool(60 < clipper.data_norm_ < 120)
    True
    >>> bool(np.linalg.norm(clipper.transform(X), axis=1).max() <= 1.0 + 1e-12)
    True
    """

    def __init__(self, epsilon=0.1, *, quantile=0.9, norm_range=(1e-3, 1e6), rescale=True,
                 random_state=None, accountant=None):
        self.epsilon = epsilon
        self.quantile = quantile
        self.norm_range = norm_range
        self.rescale = rescale
        self.random_state = random_state
        self.accountant = accountant

    def _quantile(self, values, q, grid, epsilon, rng):
        """The private quantile (a method so tests can under-noise a copy)."""
        return private_quantile(values, q, grid, epsilon, rng)

    def fit(self, X, y=None):
        """Spend the budget on the private norm quantile.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data (finite values).
        y : None
            Ignored.

        Returns
        -------
        self : DPNormClipper
        """
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64, reset=True)
        q = _check_quantile(self.quantile, "quantile")
        grid = quantile_grid(*_check_search_range(self.norm_range, "norm_range"))
        if not isinstance(self.rescale, (bool, np.bool_)):
            raise TypeError(f"rescale must be a bool, got {self.rescale!r}.")
        epsilon = check_real(self.epsilon, "epsilon", low=0.0, low_inclusive=False)
        above_threshold_scales(epsilon)  # public check, before the charge
        budget, rng = self._start_private_fit(X.shape[0], allow_zero_delta=True)
        norms = row_norms_l2(X)
        self.data_norm_ = self._quantile(norms, q, grid, budget.epsilon, rng)
        self.output_norm_ = 1.0 if self.rescale else self.data_norm_
        self.privacy_spent_ = budget
        return self

    def transform(self, X):
        """Clip each row to ``data_norm_`` (and divide by it when ``rescale``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        X_out : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Rows of norm at most ``output_norm_``.
        """
        check_is_fitted(self, "data_norm_")
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64, reset=False)
        X = clip_rows_l2(X, self.data_norm_)
        return X / self.data_norm_ if self.rescale else X

    def inverse_transform(self, X):
        """Undo the rescaling (clipped rows stay clipped).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        X_original : {ndarray, sparse matrix} of shape (n_samples, n_features)
        """
        check_is_fitted(self, "data_norm_")
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64, reset=False)
        return X * self.data_norm_ if self.rescale else X.copy()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


@fill_doc
class DPFeatureClipper(OneToOneFeatureMixin, TransformerMixin, DPEstimatorMixin, BaseEstimator):
    """Clip each feature to a private quantile range, and map it onto ``feature_range``.

    The step that makes ``bounds`` unnecessary: for every feature it releases
    a low and a high quantile (AboveThreshold over a public signed log grid,
    as in Durfee 2023) as ``bounds_``, then clips the feature to them and maps
    them affinely onto ``feature_range``. The skdp estimator after it in a
    pipeline then takes ``bounds=feature_range`` (public) and, for a
    row-norm bound, ``data_norm = sqrt(n_features) * max(|feature_range|)``.

    Parameters
    ----------
    epsilon : float, default=0.1
        Privacy loss bound of all ``2 n_features`` quantiles together, finite
        and > 0 (pure DP); each quantile gets ``epsilon / (2 n_features)``.
        The released ranges are useful when
        ``n_samples * epsilon / (2 n_features)`` is in the hundreds or more
        (a ``UserWarning`` says so below 100).
    quantiles : tuple (low, high), default=(0.01, 0.99)
        The quantiles released per feature, ``0 < low < high < 1``.
    search_range : tuple (low, high), default=(1e-3, 1e6)
        Public range of the magnitudes searched, ``0 < low < high``: the
        candidates are ``0`` and ``+-`` a log grid from ``low`` to ``high``
        with 20 points per decade.
    feature_range : tuple (min, max), default=(0.0, 1.0)
        Where each feature's released range is mapped. A feature whose two
        quantiles are equal becomes ``min``.
    %(random_state)s
    %(accountant)s

    Attributes
    ----------
    bounds_ : ndarray of shape (n_features, 2)
        The released ``(lower, upper)`` per feature (``lower <= upper``).
    privacy_spent_ : PrivacyBudget
        ``(epsilon, 0)``.
    privacy_event_ : dp_accounting.DpEvent
        ``2 d`` pure ``epsilon / (2 d)`` quantile releases.
        The event a tight :class:`~skdp.BudgetAccountant` composes.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names, when ``X`` has string column names.

    Privacy
    -------
    ``epsilon``-differentially private (pure) for replace-one neighbours (data
    sets of the same public size differing in one row, all of whose features
    are protected): ``2 n_features`` quantiles by AboveThreshold (Dwork and
    Roth 2014, Alg. 1, Thm. 3.23; counts of sensitivity 1), each
    ``epsilon / (2 n_features)``-DP, composed by basic composition. ``transform`` maps each
    row on its own and costs nothing more. In a pipeline the steps' budgets add
    up (one shared ``accountant`` records the sum).

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    DPNormClipper : A private row-norm bound (for ``data_norm``).
    PublicBoundsScaler : The same map from public bounds, free.

    References
    ----------
    D. Durfee, "Unbounded differentially private quantile and maximum
    estimation", NeurIPS 2023.

    C. Dwork and A. Roth, "The algorithmic foundations of differential
    privacy", 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import DPFeatureClipper
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform([0.0, -50.0], [10.0, 50.0], size=(20000, 2))
    >>> clipper = DPFeatureClipper(epsilon=1.0, random_state=0).fit(X)
    >>> clipper.bounds_.round(-1)
    array([[  0.,  10.],
           [-50.,  50.]])
    """

    def __init__(self, epsilon=0.1, *, quantiles=(0.01, 0.99), search_range=(1e-3, 1e6),
                 feature_range=(0.0, 1.0), random_state=None, accountant=None):
        self.epsilon = epsilon
        self.quantiles = quantiles
        self.search_range = search_range
        self.feature_range = feature_range
        self.random_state = random_state
        self.accountant = accountant

    def _quantile(self, values, q, grid, epsilon, rng):
        """The private quantile (a method so tests can under-noise a copy)."""
        return private_quantile(values, q, grid, epsilon, rng)

    def fit(self, X, y=None):
        """Spend the budget on the private per-feature ranges.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (finite values).
        y : None
            Ignored.

        Returns
        -------
        self : DPFeatureClipper
        """
        X = validate_data(self, X, dtype=np.float64, reset=True)
        n, d = X.shape
        quantiles = self.quantiles
        if not (isinstance(quantiles, (tuple, list)) and len(quantiles) == 2):
            raise ValueError(f"quantiles must be a pair (low, high), got {quantiles!r}.")
        q_low, q_high = (_check_quantile(q, "quantiles") for q in quantiles)
        if not q_low < q_high:
            raise ValueError(f"quantiles must satisfy low < high, got {quantiles!r}.")
        magnitudes = quantile_grid(*_check_search_range(self.search_range, "search_range",
                                                        signed=True))
        grid = np.concatenate([-magnitudes[::-1], [0.0], magnitudes])
        low, high = _check_feature_range(self.feature_range)
        epsilon = check_real(self.epsilon, "epsilon", low=0.0, low_inclusive=False)
        above_threshold_scales(epsilon / (2 * d))  # public check, before the charge
        if n * epsilon / (2 * d) < _MIN_COUNT_SCALE:  # public quantities only
            warnings.warn(
                f"DPFeatureClipper: n_samples * epsilon / (2 n_features) = "
                f"{n * epsilon / (2 * d):.3g} is below {_MIN_COUNT_SCALE}: the noise on each "
                "count (Laplace of scale 4 (2 n_features) / epsilon) is a large share of "
                "n_samples, so the released ranges will be mostly noise. Give it more "
                "epsilon, or use public bounds (PublicBoundsScaler).", UserWarning,
                stacklevel=2)
        # 2 d AboveThreshold releases, each (epsilon / (2 d))-DP (pure).
        budget, rng = self._start_private_fit(
            n, allow_zero_delta=True,
            event=lambda b: dp_accounting.SelfComposedDpEvent(
                EpsilonDeltaDpEvent(b.epsilon / (2 * d), 0.0), 2 * d))
        share = budget.epsilon / (2 * d)  # basic composition over 2 d quantiles
        bounds = np.empty((d, 2))
        for j in range(d):
            # The lower quantile scans downwards (the upper quantile of -x on the mirrored
            # grid), so both ends round outwards to the grid.
            a = -self._quantile(-X[:, j], 1.0 - q_low, -grid[::-1], share, rng)
            b = self._quantile(X[:, j], q_high, grid, share, rng)
            bounds[j] = (min(a, b), max(a, b))  # post-processing
        self.bounds_ = bounds
        self._out = (low, high)
        self.privacy_spent_ = budget
        return self

    def transform(self, X):
        """Clip each feature to ``bounds_`` and map it onto ``feature_range``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self, "bounds_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        lower, upper = self.bounds_[:, 0], self.bounds_[:, 1]
        low, high = self._out
        width = upper - lower
        safe = np.where(width > 0, width, 1.0)
        return low + (high - low) * (np.clip(X, lower, upper) - lower) / safe

    def inverse_transform(self, X):
        """Map values in ``feature_range`` back to the released ranges.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self, "bounds_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        lower, upper = self.bounds_[:, 0], self.bounds_[:, 1]
        low, high = self._out
        return lower + (upper - lower) * (X - low) / (high - low)


def _check_feature_range(feature_range):
    if (not isinstance(feature_range, (tuple, list)) or len(feature_range) != 2
            or not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                       and np.isfinite(v) for v in feature_range)
            or not feature_range[0] < feature_range[1]):
        raise ValueError("feature_range must be a pair (min, max) of finite reals with "
                         f"min < max, got {feature_range!r}.")
    return float(feature_range[0]), float(feature_range[1])

