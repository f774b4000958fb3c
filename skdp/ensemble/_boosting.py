"""Differentially private gradient-boosted trees with private splits on public histogram bins."""

import math

import numpy as np
from scipy.special import expit, softmax

from skdp.ensemble._private_trees import (
    exp_mech_eps0,
    gradient_sensitivity,
    grow_private_tree,
    norm_sensitivity,
)
from skdp.ensemble._random_trees import RandomTreeClassifierBase, bin_data, tree_default_delta
from skdp.utils._validation import check_real

__all__ = ["DPHistGradientBoostingClassifier"]

# Share of the zCDP budget spent on the noisy class counts behind the initial score.
_PRIOR_SHARE = 0.05
# Share of each tree's budget spent on the hessian sums (the rest goes to the gradients).
_HESSIAN_SHARE = 0.1
# Newton denominator: noisy hessian sum (floored at 0) + _SHRINK * its noise scale.
_SHRINK = 3.0


def _budget_rows(n, n_classes, rho):
    """``n sqrt(rho) / sqrt(K')``: rows per unit of noise, the scale the defaults are set on."""
    if not math.isfinite(rho):
        return math.inf
    return n * math.sqrt(rho) / (1.0 if n_classes == 2 else math.sqrt(n_classes))


def default_depth(n, n_classes, rho):
    """Public rule: ``clip(floor(log2(m / 100)), 3, 6)``, ``m`` the budget rows (user guide)."""
    m = _budget_rows(n, n_classes, rho)
    if not math.isfinite(m):
        return 6
    return int(np.clip(math.floor(math.log2(max(m / 100.0, 1.0))), 3, 6))


def default_n_estimators(n, n_classes, rho):
    """Public rule: ``clip(round(m / 200), T0, 100)``, ``m`` the budget rows (user guide).

    ``T0`` is 10 on binary problems and 20 on multi-class ones.
    """
    m = _budget_rows(n, n_classes, rho)
    if not math.isfinite(m):
        return 100
    return int(np.clip(round(m / 200.0), 10 if n_classes == 2 else 20, 100))


def default_learning_rate(n_trees):
    """Public rule: ``clip(5 / T, 0.1, 0.5)`` for ``T`` rounds (user guide)."""
    return float(np.clip(5.0 / n_trees, 0.1, 0.5))


def leaf_noise_scales(rho_tree, grad_norm, hess_norm, n_outputs, hessian_share=_HESSIAN_SHARE):
    """Gaussian noise scales of one tree's gradient and hessian leaf sums, spending ``rho_tree``.

    Under replace-one neighbours a row leaves one leaf and a row enters one
    (possibly the same) leaf. With gradient rows of L2 norm at most
    ``c_g`` and hessian rows nonnegative of norm at most ``c_h``, the
    change of the released (G, H) sums is, in the squared Mahalanobis norm
    of the noise (``a = c_g^2 / sigma_g^2``, ``b = c_h^2 / sigma_h^2``):
    same leaf, ``4 a + b`` (one output) or ``4 a + 2 b`` (several outputs,
    nonnegative vectors); two leaves, ``2 a + 2 b``. The Gaussian
    mechanism with such a squared sensitivity ``s`` is ``s / 2``-zCDP
    (Bun and Steinke 2016, Prop. 1.6), so ``rho_tree`` is split with
    ``b / (2 a) = hessian_share / (1 - hessian_share)`` and the scales solve
    ``max(4 a + b_same, 2 a + 2 b) / 2 = rho_tree``.

    Returns
    -------
    sigma_g, sigma_h : float
    """
    a0, b0 = (1.0 - hessian_share) / 2.0, hessian_share
    same_h = 1.0 if n_outputs == 1 else 2.0
    rho0 = max(4.0 * a0 + same_h * b0, 2.0 * a0 + 2.0 * b0) / 2.0
    scale = rho_tree / rho0
    return grad_norm / math.sqrt(a0 * scale), hess_norm / math.sqrt(b0 * scale)


class DPHistGradientBoostingClassifier(RandomTreeClassifierBase):
    """Differentially private gradient boosting of greedy trees on public histogram bins.

    Each boosting round computes the clipped gradients and hessians of the
    logistic (binary) or softmax (multi-class) loss and grows one tree of
    depth ``max_depth`` level by level: each node draws ``max_features``
    candidate features at random, every edge of the ``n_bins`` equal-width
    bins of the public ``bounds`` inside the node's range is a candidate
    threshold, and the exponential mechanism picks a (feature, threshold) pair
    by the norm score ``sum_children ||G_c||`` of the children's gradient sums
    (sensitivity ``2 c``; ``split_criterion="gain"``: the gradient gain
    ``sum_children ||G_c||^2 / (n_c + 1)`` of Li et al. 2020,
    "Privacy-preserving gradient boosting decision trees", Sec. 4 and Thm. 2,
    sensitivity ``4 c^2``). The leaves then release their gradient and hessian sums with
    Gaussian noise and take a damped Newton step (the leaf release of
    Maddock et al. 2022, Sec. 4, zCDP accounting). A multi-class round grows
    one tree structure and releases the ``K`` per-class leaf values jointly.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget epsilon.
    delta : float or None, default=None
        Privacy budget delta (> 0: the leaf releases are Gaussian). ``None``
        means ``1 / n_samples**2``.
    bounds : array-like of shape (2,) or (n_features, 2)
        Public range of the features: one ``(low, high)`` pair for every
        feature, or one per feature, known without looking at the data.
        Required. The bins are ``n_bins`` equal-width bins of each range;
        values outside are clipped into the end bins.
    classes : array-like of shape (n_classes,) or None, default=None
        The public label set. ``None`` reads it from ``y`` with a
        :class:`~skdp.PrivacyLeakWarning`.
    n_estimators : int or "auto", default="auto"
        Boosting rounds (trees, or groups of ``K`` per-class trees sharing
        one structure). ``"auto"``: ``clip(round(m / 200), T0, 100)`` with ``m = n
        sqrt(rho) / sqrt(K')`` (``rho`` the zCDP budget of ``(epsilon,
        delta)``, ``K'`` = 1 for binary problems, else the number of
        classes) and ``T0`` = 10 (binary) or 20 (multi-class); see the
        user guide.
    max_depth : int or "auto", default="auto"
        Depth of every tree (``2**max_depth`` leaves), 1 to 16. ``"auto"``:
        ``clip(floor(log2(m / 100)), 3, 6)``.
    learning_rate : float or "auto", default="auto"
        Shrinkage of every Newton step. ``"auto"``: ``clip(5 / T, 0.1, 0.5)``
        for ``T`` rounds.
    n_bins : int, default=256
        Number of equal-width bins per feature (2 to 65536): the candidate
        thresholds.
    max_features : "sqrt", int or None, default="sqrt"
        Candidate features per node (``"sqrt"``: ``floor(sqrt(d))``, ``None``:
        all), drawn at random without looking at the data.
    split_share : float or "auto", default="auto"
        Share of every round's budget spent on choosing the splits (the rest
        goes to the leaf sums), in ``[0, 1)``. ``0`` gives random splits.
        ``"auto"``: 0.3 for binary problems, 0.1 for multi-class ones (whose
        leaves release ``K`` values each).
    split_criterion : {"norm", "gain"}, default="norm"
        Split score of the exponential mechanism: ``"norm"``, the sum over
        the two children of the L2 norm of their gradient sums (sensitivity
        ``2 c``, better at small budgets); ``"gain"``, the Newton gain
        ``sum_children ||G_c||^2 / (n_c + 1)`` (sensitivity ``4 c^2``; Li et
        al. 2020, Thm. 2).
    max_gradient_norm : float or None, default=None
        L2 clipping norm of each row's gradient vector. ``None``: the
        loss's own bound (1 for binary problems, ``sqrt(2)`` for softmax),
        so nothing is clipped.
    random_state : int, numpy.random.Generator or None, default=None
        Source of the feature draws, the split choices and the noise. ``None``
        for releases.
    accountant : BudgetAccountant or None, default=None
        Charged ``(epsilon, delta)`` once the input is validated.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    trees_ : list of RandomTree
        The released tree structures.
    leaf_values_ : list of ndarray of shape (2**max_depth, K')
        Released leaf values (already multiplied by the learning rate).
    init_score_ : ndarray of shape (K',)
        Initial raw score, from noisy class counts.
    lower_, upper_ : ndarray of shape (n_features,)
        The public bounds.
    n_bins_, n_estimators_, max_depth_, max_features_ : int
        The values used.
    learning_rate_, split_share_ : float
        The values used.
    noise_scales_ : tuple of float
        ``(sigma_prior, sigma_gradient, sigma_hessian)`` of the Gaussian noise.
    split_epsilon_ : float
        ``eps0`` of the exponential mechanism at every node.
    privacy_spent_ : PrivacyBudget
    delta_ : float

    Privacy
    -------
    ``(epsilon, delta)``-differential privacy for replace-one neighbouring
    data sets (same public ``n``; one row, features and label, replaced).
    The released statistics are noisy class counts (L2 sensitivity
    ``sqrt(2)``) and, per round, the splits and the Gaussian-noised leaf sums
    of clipped gradients and hessians, each ``rho``-zCDP with ``rho =
    Delta^2 / (2 sigma^2)`` (Bun and Steinke 2016, Prop. 1.6). The nodes of
    one level hold disjoint rows and each runs the exponential mechanism
    ``exp(eps0 u / (2 Delta))`` with, for gradient rows of norm at most
    ``c``, ``Delta = 2 c`` for the norm score (a replaced row moves each
    child's gradient-sum norm by at most ``c``, triangle inequality) or
    ``Delta = 4 c^2`` for the gain (twice the ``3 c^2`` of Li et al. 2020,
    Thm. 2), so a level is ``eps0^2 / 8``-zCDP
    (Durfee and Rogers 2019, Sec. 4; Cesar and Rogers 2021).
    Adaptive rounds compose by adding their ``rho`` (Bun and Steinke 2016,
    Lemma 2.3), and the total, ``zcdp_for_dp(epsilon,
    delta)``, converts to ``(epsilon, delta)``-DP (Canonne, Kamath and
    Steinke 2020, Cor. 13). The public bounds and ``classes`` must not be
    read from the private data.

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    DPRandomForestClassifier : Averaged noisy class counts of private trees.
    sklearn.ensemble.HistGradientBoostingClassifier : The non-private model.

    References
    ----------
    S. Maddock, G. Cormode, T. Wang, C. Maple and S. Jha, "Federated boosted
    decision trees with differential privacy", ACM CCS 2022.

    Q. Li, Z. Wu, Z. Wen and B. He, "Privacy-preserving gradient boosting
    decision trees", AAAI 2020.

    A. Friedman and A. Schuster, "Data mining with differential privacy",
    ACM SIGKDD 2010.

    D. Durfee and R. Rogers, "Practical differentially private top-k selection
    with pay-what-you-get composition", NeurIPS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.ensemble import DPHistGradientBoostingClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(4000, 3))
    >>> y = (X[:, 0] + X[:, 1] > 1).astype(int)
    >>> clf = DPHistGradientBoostingClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1],
    ...                                        random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.8
    True
    """

    def __init__(self, epsilon=1.0, delta=None, *, bounds=None, classes=None,
                 n_estimators="auto", max_depth="auto", learning_rate="auto", n_bins=256,
                 max_features="sqrt", split_share="auto", split_criterion="norm",
                 max_gradient_norm=None, random_state=None, accountant=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.classes = classes
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.n_bins = n_bins
        self.max_features = max_features
        self.split_share = split_share
        self.split_criterion = split_criterion
        self.max_gradient_norm = max_gradient_norm
        self.random_state = random_state
        self.accountant = accountant

    def _noise_scales(self, rho, n_classes, n_trees, grad_norm):
        """``(sigma_prior, sigma_g, sigma_h, eps0)`` for the budget (tests under-noise a copy)."""
        k_out = 1 if n_classes == 2 else n_classes
        # Hessian rows: p (1 - p) <= 1/4 (binary); sum_k p_k^2 (1 - p_k)^2 <= 1/4 (softmax).
        hess_norm = 0.25 if k_out == 1 else 0.5
        # Class counts: replace-one changes two counts by 1, Delta_2 = sqrt(2); rho = 1 / sigma^2.
        sigma_prior = math.sqrt(1.0 / (_PRIOR_SHARE * rho))
        rho_tree = (1.0 - _PRIOR_SHARE) * rho / n_trees
        share = self.split_share_
        sigma_g, sigma_h = leaf_noise_scales((1.0 - share) * rho_tree, grad_norm, hess_norm,
                                             k_out)
        # Splits: each of the depth levels costs eps0^2 / 8 (split_level_rho).
        eps0 = exp_mech_eps0(share * rho_tree / self.max_depth_) if share > 0 else 0.0
        return sigma_prior, sigma_g, sigma_h, eps0

    def _add_leaf_noise(self, G, H, sigma_g, sigma_h, rng):
        """The Gaussian release of one tree's leaf sums (a method so tests can observe it)."""
        return (G + sigma_g * rng.standard_normal(G.shape),
                H + sigma_h * rng.standard_normal(H.shape))

    def fit(self, X, y):
        """Spend the budget on a boosted ensemble of private trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (finite values), clipped to ``bounds``.
        y : array-like of shape (n_samples,)
            Labels, all in ``classes`` when it is given.

        Returns
        -------
        self : DPHistGradientBoostingClassifier
        """
        (X, y_index, classes, lower, upper, n_bins, n_trees, depth,
         max_features) = self._validate_common(X, y)
        n = X.shape[0]
        learning_rate = None
        if not (isinstance(self.learning_rate, str) and self.learning_rate == "auto"):
            learning_rate = check_real(self.learning_rate, "learning_rate", low=0.0,
                                       low_inclusive=False)
        n_classes = classes.size
        if isinstance(self.split_share, str) and self.split_share == "auto":
            share = 0.3 if n_classes == 2 else 0.1
        else:
            share = check_real(self.split_share, "split_share", low=0.0, high=1.0,
                               high_inclusive=False)
        if self.split_criterion not in ("norm", "gain"):
            raise ValueError("split_criterion must be 'norm' or 'gain', got "
                             f"{self.split_criterion!r}.")
        # A gradient row p - e_y has L2 norm <= 1 (one logit) or sqrt(2) (softmax).
        natural = 1.0 if n_classes == 2 else math.sqrt(2.0)
        grad_norm = natural
        if self.max_gradient_norm is not None:
            grad_norm = min(natural, check_real(self.max_gradient_norm, "max_gradient_norm",
                                                low=0.0, low_inclusive=False))

        rho = self._planned_rho(n)
        n_trees = default_n_estimators(n, n_classes, rho) if n_trees is None else n_trees
        depth = default_depth(n, n_classes, rho) if depth is None else depth
        if learning_rate is None:
            learning_rate = default_learning_rate(n_trees)
        self.split_share_, self.max_depth_ = share, depth
        sigma_prior, sigma_g, sigma_h, eps0 = self._noise_scales(rho, n_classes, n_trees,
                                                                 grad_norm)
        # Exponential mechanism exp(eps0 u / (2 Delta)) with the score's replace-one
        # sensitivity: 2 c for the norm score (norm_sensitivity), 4 c^2 for the gain
        # (gradient_sensitivity; Li et al. 2020, Thm. 2).
        criterion = self.split_criterion
        sensitivity = (norm_sensitivity(grad_norm) if criterion == "norm"
                       else gradient_sensitivity(grad_norm))
        scale = eps0 / (2.0 * sensitivity)
        budget, rng = self._start_private_fit(n, default_delta=tree_default_delta,
                                              allow_zero_delta=False)

        k_out = 1 if n_classes == 2 else n_classes
        B = bin_data(X, lower, upper, n_bins)
        # Initial score from noisy class counts (floored at 1: post-processing).
        counts = np.bincount(y_index, minlength=n_classes).astype(float)
        counts = np.maximum(counts + sigma_prior * rng.standard_normal(n_classes), 1.0)
        log_prior = np.log(counts / counts.sum())
        init = np.array([log_prior[1] - log_prior[0]]) if k_out == 1 else log_prior
        target = (np.eye(n_classes)[y_index] if k_out > 1
                  else (y_index == 1).astype(float)[:, None])
        raw = np.tile(init, (n, 1))
        shrink = _SHRINK * sigma_h + 1.0  # + 1: XGBoost's default L2 penalty, for the no-noise limit
        trees, values = [], []
        for _ in range(n_trees):
            prob = expit(raw) if k_out == 1 else softmax(raw, axis=1)
            grad = prob - target
            hess = prob * (1.0 - prob)
            if grad_norm < natural:
                norms = np.linalg.norm(grad, axis=1, keepdims=True)
                grad *= np.minimum(1.0, grad_norm / np.maximum(norms, 1e-300))
            tree, leaf = grow_private_tree(B, grad, depth, n_bins, max_features, scale, rng,
                                           score=criterion, lam=1.0)
            size = tree.n_leaves * k_out
            index = (leaf[:, None] * k_out + np.arange(k_out)).ravel()
            G = np.bincount(index, grad.ravel(), minlength=size).reshape(-1, k_out)
            H = np.bincount(index, hess.ravel(), minlength=size).reshape(-1, k_out)
            # Maddock et al. (2022), Sec. 4: Gaussian noise on the leaf sums; scales from
            # leaf_noise_scales (Bun and Steinke 2016, Prop. 1.6).
            G, H = self._add_leaf_noise(G, H, sigma_g, sigma_h, rng)
            value = -learning_rate * G / (np.maximum(H, 0.0) + shrink)
            raw += value[leaf]
            trees.append(tree)
            values.append(value)

        self.classes_ = classes
        self.lower_, self.upper_, self.n_bins_ = lower, upper, n_bins
        self.n_estimators_, self.max_features_ = n_trees, max_features
        self.learning_rate_ = learning_rate
        self.init_score_ = init
        self.trees_, self.leaf_values_ = trees, values
        self.noise_scales_ = (sigma_prior, sigma_g, sigma_h)
        self.split_epsilon_ = eps0
        self.delta_ = budget.delta
        self.privacy_spent_ = budget
        return self

    def decision_function(self, X):
        """Raw boosted scores.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Log-odds of ``classes_[1]`` (binary) or one score per class.
        """
        B = self._binned(X)
        raw = np.tile(self.init_score_, (B.shape[0], 1))
        for tree, value in zip(self.trees_, self.leaf_values_):
            raw += value[tree.apply(B)]
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        raw = self.decision_function(X)
        if raw.ndim == 1:
            p = expit(raw)
            return np.column_stack([1.0 - p, p])
        return softmax(raw, axis=1)
