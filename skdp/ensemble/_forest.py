"""Differentially private random forest of random trees on public bins."""

import math

import numpy as np
from joblib import Parallel, delayed

from skdp.accounting import zcdp_for_dp
from skdp.ensemble._random_trees import (
    RandomTreeClassifierBase,
    bin_data,
    check_auto_int,
    grow_random_tree,
)
from skdp.utils._validation import check_positive_int

__all__ = ["DPRandomForestClassifier"]


def default_forest_depth(n, n_features, n_trees, rho):
    """Public rule: ``clip(min(d, floor(log2(n sqrt(rho / T))) + 3), 3, 10)`` (user guide)."""
    if not math.isfinite(rho):
        return int(np.clip(n_features, 3, 10))
    budget_rows = max(n * math.sqrt(rho / n_trees), 1.0)
    return int(np.clip(min(n_features, math.floor(math.log2(budget_rows)) + 3), 3, 10))


def _leaf_counts(tree, B, y_index, n_classes):
    leaf = tree.apply(B)
    return np.bincount(leaf * n_classes + y_index,
                       minlength=tree.n_leaves * n_classes).reshape(-1, n_classes).astype(float)


class DPRandomForestClassifier(RandomTreeClassifierBase):
    """Differentially private random forest of random trees with noisy leaf class counts.

    Every tree splits on random features at random thresholds among ``n_bins``
    equal-width bins of the public ``bounds``, independently of the data
    (Fletcher and Islam 2017, Sec. 4; Geurts et al. 2006's totally random
    trees); the only release is the class count of every leaf, with
    Gaussian noise. Every tree sees all rows and the trees' budgets compose
    in zero-concentrated DP. A sample is classified by the sum over trees of
    the log of the smoothed leaf class frequencies, ``log((c + 1) / (sum(c)
    + K))`` with negative noisy counts floored at 0.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget epsilon.
    delta : float or None, default=None
        Privacy budget delta (> 0: the counts get Gaussian noise). ``None``
        means ``1 / n_samples**2``.
    bounds : array-like of shape (2,) or (n_features, 2)
        Public range of the features, one ``(low, high)`` pair for every
        feature or one per feature, known without looking at the data.
        Required.
    classes : array-like of shape (n_classes,) or None, default=None
        The public label set. ``None`` reads it from ``y`` with a
        :class:`~skdp.PrivacyLeakWarning`.
    n_estimators : int, default=50
        Number of trees.
    max_depth : int or "auto", default="auto"
        Depth of every tree, 1 to 16. ``"auto"``: ``clip(min(d, floor(log2(n
        sqrt(rho / T))) + 3), 3, 10)``, ``d`` the number of features, ``T``
        the number of trees and ``rho`` the zCDP budget of ``(epsilon,
        delta)``: deep enough to use the features, shallow enough that the
        leaves hold more rows than noise (user guide).
    n_bins : int, default=32
        Number of equal-width bins per feature (2 to 65536).
    n_jobs : int or None, default=None
        joblib workers (threads) counting the leaves of the trees.
    random_state : int, numpy.random.Generator or None, default=None
        Source of the random splits and the noise. ``None`` for releases.
    accountant : BudgetAccountant or None, default=None
        Charged ``(epsilon, delta)`` once the input is validated.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    trees_ : list of RandomTree
        The released random structures.
    leaf_counts_ : list of ndarray of shape (2**max_depth, n_classes)
        The released noisy class counts of every leaf.
    lower_, upper_ : ndarray of shape (n_features,)
        The public bounds.
    n_bins_, n_estimators_, max_depth_ : int
        The values used.
    noise_scale_ : float
        Standard deviation of the Gaussian noise on every count.
    privacy_spent_ : PrivacyBudget
    delta_ : float

    Privacy
    -------
    ``(epsilon, delta)``-differential privacy for replace-one neighbouring
    data sets (same public ``n``; one row, features and label, replaced).
    The tree structures depend on the public bounds only. In each tree the
    replaced row leaves one (leaf, class) cell and enters one, so the count
    table has L2 sensitivity ``sqrt(2)``, and its Gaussian release with
    ``sigma = sqrt(T / rho)`` is ``rho / T``-zCDP (Bun and Steinke 2016,
    Prop. 1.6). The ``T`` trees compose to ``rho`` (Lemma 2.3), which
    ``zcdp_for_dp(epsilon, delta)`` converts to ``(epsilon, delta)``
    (Canonne, Kamath and Steinke 2020, Cor. 13). With the Gaussian
    mechanism this beats disjoint subsamples per tree (parallel composition)
    by a factor ``sqrt(T)`` in noise relative to the counts. The bounds and
    ``classes`` must not be read from the private data.

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    DPHistGradientBoostingClassifier : Boosted random trees; more accurate.
    sklearn.ensemble.RandomForestClassifier : The non-private model.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.ensemble import DPRandomForestClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(4000, 3))
    >>> y = (X[:, 0] + X[:, 1] > 1).astype(int)
    >>> clf = DPRandomForestClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1],
    ...                                random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.8
    True
    """

    def __init__(self, epsilon=1.0, delta=None, *, bounds=None, classes=None, n_estimators=50,
                 max_depth="auto", n_bins=32, n_jobs=None, random_state=None, accountant=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.classes = classes
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.n_bins = n_bins
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.accountant = accountant

    def _noise_scale(self, rho, n_trees):
        """Gaussian noise on every count (a method so tests can under-noise a copy)."""
        # Delta_2 = sqrt(2) per tree; rho / T = Delta^2 / (2 sigma^2) (Bun and Steinke 2016,
        # Prop. 1.6), so sigma = sqrt(T / rho).
        return math.sqrt(n_trees / rho)

    def fit(self, X, y):
        """Spend the budget on the noisy leaf counts of random trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (finite values), clipped to ``bounds``.
        y : array-like of shape (n_samples,)
            Labels, all in ``classes`` when it is given.

        Returns
        -------
        self : DPRandomForestClassifier
        """
        X, y_index, classes, lower, upper, n_bins = self._validate_common(X, y)
        n, d = X.shape
        n_trees = check_positive_int(self.n_estimators, "n_estimators", high=100_000)
        depth = check_auto_int(self.max_depth, "max_depth", high=16)

        def default_delta(m):
            return 1.0 / m**2  # skdp's default, as DPLogisticRegressionAMP's

        planned = self._resolve_budget(n, default_delta, allow_zero_delta=False)
        # Never zero noise: a huge epsilon gives a tiny sigma, not an unprotected release.
        rho = zcdp_for_dp(planned.epsilon, planned.delta)
        depth = default_forest_depth(n, d, n_trees, rho) if depth is None else depth
        sigma = self._noise_scale(rho, n_trees)
        budget, rng = self._start_private_fit(n, default_delta=default_delta,
                                              allow_zero_delta=False)
        n_classes = classes.size
        B = bin_data(X, lower, upper, n_bins)
        trees = [grow_random_tree(rng, d, n_bins, depth) for _ in range(n_trees)]
        counts = Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(_leaf_counts)(tree, B, y_index, n_classes) for tree in trees)
        # Gaussian noise, drawn here in a fixed order (reproducible whatever n_jobs).
        counts = [c + sigma * rng.standard_normal(c.shape) for c in counts]

        self.classes_ = classes
        self.lower_, self.upper_, self.n_bins_ = lower, upper, n_bins
        self.n_estimators_, self.max_depth_ = n_trees, depth
        self.trees_, self.leaf_counts_ = trees, counts
        self.noise_scale_ = sigma
        self.delta_ = budget.delta
        self.privacy_spent_ = budget
        return self

    def predict_proba(self, X):
        """Class probabilities: softmax of the mean log smoothed leaf frequencies.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        B = self._binned(X)
        score = np.zeros((B.shape[0], self.classes_.size))
        for tree, counts in zip(self.trees_, self.leaf_counts_):
            c = np.maximum(counts, 0.0)
            log_freq = np.log((c + 1.0) / (c.sum(axis=1, keepdims=True) + c.shape[1]))
            score += log_freq[tree.apply(B)]
        score /= len(self.trees_)
        score -= score.max(axis=1, keepdims=True)
        proba = np.exp(score)
        return proba / proba.sum(axis=1, keepdims=True)
