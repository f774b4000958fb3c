"""Trees on public bin edges: the structure, binning and shared classifier code of the ensembles.

The private ensembles grow their trees with :mod:`skdp.ensemble._private_trees`
(exponential-mechanism splits). :func:`grow_random_tree` draws a structure from
the random generator and the public bounds only, never from the rows: the
"totally random" tree of Geurts et al. (2006) as used privately by Fletcher and
Islam (2017, Sec. 4) and Maddock et al. (2022, Sec. 4.1).
"""

import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.accounting._composition import zcdp_for_dp
from skdp.base import DPEstimatorMixin
from skdp.utils._multiclass import resolve_classes
from skdp.utils._validation import check_feature_bounds, check_positive_int

__all__ = ["RandomTree", "RandomTreeClassifierBase", "bin_data", "check_auto_int", "check_max_features",
           "grow_random_tree", "tree_default_delta"]


def bin_data(X, lower, upper, n_bins):
    """Bin index of every entry on ``n_bins`` equal-width public bins of ``[lower, upper]``.

    Values outside the bounds fall in the first or last bin (clipping, a per-row step).
    """
    dtype = np.uint8 if n_bins <= 256 else np.uint16
    scaled = (X - lower) * (n_bins / (upper - lower))
    np.clip(scaled, 0, n_bins - 1, out=scaled)
    return np.ascontiguousarray(scaled.astype(dtype))


class RandomTree:
    """A complete binary tree of depth ``depth`` with one random split per internal node.

    ``feature[i]`` and ``threshold[i]`` describe internal node ``i`` (heap order:
    children ``2i + 1``, ``2i + 2``); a row goes right when its bin index is
    above the threshold. Leaves are numbered ``0 .. 2**depth - 1`` left to right.
    """

    def __init__(self, feature, threshold, depth):
        self.feature, self.threshold, self.depth = feature, threshold, depth

    @property
    def n_leaves(self):
        return 1 << self.depth

    def apply(self, B):
        """Leaf index of every row of the binned data ``B``."""
        node = np.zeros(B.shape[0], dtype=np.intp)
        flat = B.ravel()
        offsets = np.arange(B.shape[0], dtype=np.intp) * B.shape[1]
        for _ in range(self.depth):
            right = flat[offsets + self.feature[node]] > self.threshold[node]
            node = 2 * node + 1 + right
        return node - (self.n_leaves - 1)


def grow_random_tree(rng, n_features, n_bins, depth):
    """Draw a random tree from the public quantities only (no data).

    Each internal node picks a feature uniformly at random among those whose
    bin range on the node's path still holds at least two bins, and a
    threshold uniformly among the bin edges inside that range (Fletcher and
    Islam 2017, Sec. 4, with public bounds and bins). When every feature is
    exhausted the node keeps a split that sends every row left.
    """
    n_internal = (1 << depth) - 1
    n_nodes = n_internal + (1 << depth)
    feature = np.zeros(max(n_internal, 1), dtype=np.intp)
    threshold = np.full(max(n_internal, 1), n_bins, dtype=np.intp)  # n_bins: all rows go left
    # Per node: the bin range [lo, hi] each feature can still take on its path.
    lo = np.zeros((n_nodes, n_features), dtype=np.intp)
    hi = np.full((n_nodes, n_features), n_bins - 1, dtype=np.intp)
    for node in range(n_internal):
        left, right = 2 * node + 1, 2 * node + 2
        lo[left], hi[left], lo[right], hi[right] = lo[node], hi[node], lo[node], hi[node]
        open_features = np.flatnonzero(hi[node] > lo[node])
        if open_features.size == 0:
            continue
        j = open_features[rng.integers(open_features.size)]
        t = rng.integers(lo[node, j], hi[node, j])  # right when bin > t, t in [lo, hi - 1]
        feature[node], threshold[node] = j, t
        hi[left, j], lo[right, j] = t, t + 1
    return RandomTree(feature, threshold, depth)


def tree_default_delta(n_samples):
    """``delta=None``: ``1 / n^2``, skdp's default (as :class:`DPLogisticRegressionAMP`'s)."""
    return 1.0 / n_samples**2


class RandomTreeClassifierBase(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Shared validation, budget planning and prediction of the private tree classifiers."""

    def _validate_common(self, X, y):
        """Validate data, bounds, classes and the shared tree parameters (before any charge).

        Returns ``(X, y_index, classes, lower, upper, n_bins, n_trees, depth,
        max_features)``; ``n_trees`` and ``depth`` are None for ``"auto"``.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        n_bins = check_positive_int(self.n_bins, "n_bins", low=2, high=65536)
        lower, upper = check_feature_bounds(self.bounds, X.shape[1], type(self).__name__)
        classes, y_index = resolve_classes(self.classes, y, type(self).__name__)
        n_trees = check_auto_int(self.n_estimators, "n_estimators", high=100_000)
        depth = check_auto_int(self.max_depth, "max_depth", high=16)
        max_features = check_max_features(self.max_features, X.shape[1])
        return X, y_index, classes, lower, upper, n_bins, n_trees, depth, max_features

    def _planned_rho(self, n_samples):
        """zCDP ``rho`` of the budget this fit will spend (validated, nothing charged).

        Never zero noise: a huge epsilon gives a tiny sigma, not an unprotected release.
        """
        planned = self._resolve_budget(n_samples, tree_default_delta, allow_zero_delta=False)
        return zcdp_for_dp(planned.epsilon, planned.delta)

    def _binned(self, X):
        check_is_fitted(self, "trees_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return bin_data(X, self.lower_, self.upper_, self.n_bins_)

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)  # checks that the model is fitted
        return self.classes_[np.argmax(proba, axis=1)]

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


def check_max_features(value, n_features):
    """``"sqrt"``, ``None`` (all) or an int in ``[1, n_features]``."""
    if value is None:
        return n_features
    if isinstance(value, str):
        if value == "sqrt":
            return max(1, int(math.sqrt(n_features)))
        raise ValueError(f"max_features must be 'sqrt', None or an int, got {value!r}.")
    return min(check_positive_int(value, "max_features"), n_features)


def check_auto_int(value, name, low=1, high=None):
    """``"auto"`` or an int in ``[low, high]``."""
    if isinstance(value, str) and value == "auto":
        return None
    if isinstance(value, str):
        raise ValueError(f"{name} must be 'auto' or an int, got {value!r}.")
    return check_positive_int(value, name, low=low, high=high)

