"""Differentially private random forest of greedy trees with private splits on public bins."""

import math

import numpy as np
from joblib import Parallel, delayed

from skdp.ensemble._private_trees import GINI_SENSITIVITY, exp_mech_eps0, grow_private_tree
from skdp.ensemble._random_trees import RandomTreeClassifierBase, bin_data, tree_default_delta
from skdp.utils._validation import check_real

__all__ = ["DPRandomForestClassifier"]


def _budget_rows(n, rho):
    """``n sqrt(rho)``: rows per unit of noise, the scale the defaults are set on."""
    return n * math.sqrt(rho) if math.isfinite(rho) else math.inf


def default_forest_trees(n, rho):
    """Public rule: ``clip(round(n sqrt(rho) / 100), 5, 25)`` trees (user guide)."""
    m = _budget_rows(n, rho)
    return 25 if not math.isfinite(m) else int(np.clip(round(m / 100.0), 5, 25))


def default_forest_depth(n, rho):
    """Public rule: ``clip(floor(log2(n sqrt(rho) / 8)), 3, 12)`` (user guide)."""
    m = _budget_rows(n, rho)
    if not math.isfinite(m):
        return 12
    return int(np.clip(math.floor(math.log2(max(m / 8.0, 1.0))), 3, 12))


class DPRandomForestClassifier(RandomTreeClassifierBase):
    """Differentially private random forest with private splits and noisy leaf class counts.

    Every tree is grown greedily on all rows, level by level, to depth
    ``max_depth``: each node draws ``max_features`` candidate features at
    random, every edge of the ``n_bins`` equal-width bins of the public
    ``bounds`` inside the node's range is a candidate threshold, and the
    (feature, threshold) pair is chosen by the exponential mechanism on the
    Gini score ``sum_children sum_k n_ck^2 / n_c`` (Friedman and Schuster
    2010, Sec. 4.1; the impurity decrease of scikit-learn's trees). The
    leaves release their class counts with Gaussian noise. A sample is
    classified by the mean over trees of the log of the smoothed leaf class
    frequencies, ``log((c + 1) / (sum(c) + K))``, negative counts floored at 0.

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
    n_estimators : int or "auto", default="auto"
        Number of trees. ``"auto"``: ``clip(round(m / 100), 5, 25)`` with
        ``m = n sqrt(rho)`` (``rho`` the zCDP budget of ``(epsilon, delta)``);
        see the user guide.
    max_depth : int or "auto", default="auto"
        Depth of every tree, 1 to 16. ``"auto"``: ``clip(floor(log2(m / 8)),
        3, 12)``.
    max_features : "sqrt", int or None, default="sqrt"
        Candidate features per node (``"sqrt"``: ``floor(sqrt(d))``, ``None``:
        all), drawn at random without looking at the data.
    n_bins : int, default=256
        Number of equal-width bins per feature (2 to 65536): the candidate
        thresholds.
    split_share : float, default=0.5
        Share of every tree's budget spent on choosing the splits (the rest
        goes to the leaf counts), in ``[0, 1)``.
    n_jobs : int or None, default=None
        joblib workers (threads) growing the trees.
    random_state : int, numpy.random.Generator or None, default=None
        Source of the candidate features and the noise. ``None`` for releases.
    accountant : BudgetAccountant or None, default=None
        Charged ``(epsilon, delta)`` once the input is validated.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    trees_ : list of RandomTree
        The released tree structures.
    leaf_counts_ : list of ndarray of shape (2**max_depth, n_classes)
        The released noisy class counts of every leaf.
    lower_, upper_ : ndarray of shape (n_features,)
        The public bounds.
    n_bins_, n_estimators_, max_depth_, max_features_ : int
        The values used.
    split_share_ : float
    split_epsilon_ : float
        ``eps0`` of the exponential mechanism at every node.
    noise_scale_ : float
        Standard deviation of the Gaussian noise on every count.
    privacy_spent_ : PrivacyBudget
    delta_ : float

    Privacy
    -------
    ``(epsilon, delta)``-differential privacy for replace-one neighbouring
    data sets (same public ``n``; one row, features and label, replaced).
    Each tree gets ``rho / T`` of the zCDP budget ``rho`` of ``(epsilon,
    delta)``. Of it, ``split_share`` pays for the splits: the nodes of one
    level hold disjoint rows, and each runs the exponential mechanism
    ``exp(eps0 u / 4)`` (the Gini score ``u`` moves by less than 2 when a row
    is replaced), so a level is ``eps0^2 / 8``-zCDP (Durfee and Rogers 2019,
    Sec. 4; Cesar and Rogers 2021). The rest pays for the leaf
    counts, a table of L2 sensitivity ``sqrt(2)`` released with Gaussian
    noise (Bun and Steinke 2016, Prop. 1.6). Everything composes by adding
    ``rho`` (Lemma 2.3), and ``rho`` converts to ``(epsilon, delta)``
    (Canonne, Kamath and Steinke 2020, Cor. 13). Candidate features and
    bins depend on public quantities only. The bounds and ``classes`` must
    not be read from the private data.

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    DPHistGradientBoostingClassifier : Boosted private trees.
    sklearn.ensemble.RandomForestClassifier : The non-private model.

    References
    ----------
    A. Friedman and A. Schuster, "Data mining with differential privacy",
    ACM SIGKDD 2010.

    S. Fletcher and M. Z. Islam, "Differentially private random decision
    forests using smooth sensitivity", Expert Systems with Applications 78, 2017.

    D. Durfee and R. Rogers, "Practical differentially private top-k selection
    with pay-what-you-get composition", NeurIPS 2019.

    M. Cesar and R. Rogers, "Bounding, concentrating, and truncating: unifying
    privacy loss composition for data analytics", ALT 2021.

    M. Bun and T. Steinke, "Concentrated differential privacy: simplifications,
    extensions, and lower bounds", TCC 2016.

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

    def __init__(self, epsilon=1.0, delta=None, *, bounds=None, classes=None,
                 n_estimators="auto", max_depth="auto", max_features="sqrt", n_bins=256,
                 split_share=0.5, n_jobs=None, random_state=None, accountant=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.classes = classes
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_features = max_features
        self.n_bins = n_bins
        self.split_share = split_share
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.accountant = accountant

    def _noise_scale(self, rho, n_trees):
        """``(eps0, sigma)``: split mechanism and leaf noise (tests under-noise a copy)."""
        share = self.split_share_
        rho_tree = rho / n_trees
        # Leaves: replace-one moves one row out of a (leaf, class) cell and one into another,
        # Delta_2 = sqrt(2); (1 - share) rho_tree = Delta^2 / (2 sigma^2) (Bun and Steinke
        # 2016, Prop. 1.6).
        sigma = math.sqrt(1.0 / ((1.0 - share) * rho_tree)) if share < 1 else math.inf
        # Splits: each of the depth levels costs eps0^2 / 8 (split_level_rho).
        eps0 = exp_mech_eps0(share * rho_tree / self.max_depth_) if share > 0 else 0.0
        return eps0, sigma

    def fit(self, X, y):
        """Spend the budget on the private splits and noisy leaf counts of the trees.

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
        (X, y_index, classes, lower, upper, n_bins, n_trees, depth,
         max_features) = self._validate_common(X, y)
        n = X.shape[0]
        share = check_real(self.split_share, "split_share", low=0.0, high=1.0,
                           high_inclusive=False)
        rho = self._planned_rho(n)
        n_classes = classes.size
        n_trees = default_forest_trees(n, rho) if n_trees is None else n_trees
        depth = default_forest_depth(n, rho) if depth is None else depth
        self.split_share_, self.max_depth_ = share, depth
        eps0, sigma = self._noise_scale(rho, n_trees)
        budget, rng = self._start_private_fit(n, default_delta=tree_default_delta,
                                              allow_zero_delta=False)
        B = bin_data(X, lower, upper, n_bins)
        onehot = np.eye(n_classes)[y_index]
        # Exponential mechanism exp(eps0 u / (2 Delta)), Delta = GINI_SENSITIVITY.
        scale = eps0 / (2.0 * GINI_SENSITIVITY)
        seeds = rng.integers(2**63, size=n_trees)  # one stream per tree: same for any n_jobs

        def grow(seed):
            tree_rng = np.random.default_rng(seed)
            tree, leaf = grow_private_tree(B, onehot, depth, n_bins, max_features, scale,
                                           tree_rng, score="gini")
            counts = np.bincount(leaf * n_classes + y_index,
                                 minlength=tree.n_leaves * n_classes)
            counts = counts.reshape(-1, n_classes).astype(float)
            # Gaussian noise on every (leaf, class) count (Bun and Steinke 2016, Prop. 1.6).
            return tree, counts + sigma * tree_rng.standard_normal(counts.shape)

        if self.n_jobs in (None, 1):
            grown = [grow(seed) for seed in seeds]
        else:
            grown = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(grow)(seed) for seed in seeds)

        self.classes_ = classes
        self.lower_, self.upper_, self.n_bins_ = lower, upper, n_bins
        self.n_estimators_, self.max_features_ = n_trees, max_features
        self.trees_ = [t for t, _ in grown]
        self.leaf_counts_ = [c for _, c in grown]
        self.noise_scale_ = sigma
        self.split_epsilon_ = eps0
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
