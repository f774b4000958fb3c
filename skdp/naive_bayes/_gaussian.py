"""Gaussian naive Bayes from one joint private release of per-class counts and moments."""

import math

import dp_accounting
import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.base import DPEstimatorMixin, warn_privacy_leak
from skdp.mechanisms import gaussian_sigma_analytic, laplace_scale
from skdp.utils._docstrings import fill_doc
from skdp.utils._multiclass import resolve_classes
from skdp.utils._validation import check_feature_bounds, check_real

__all__ = ["DPGaussianNB", "class_moment_noise_scales", "resolve_bounds"]

# Weights of the class counts and of the sums of squares in the joint release (Notes of
# class_moment_noise_scales). Gaussian: sqrt(w0) N_k with w0 = d / 2 and sqrt(c) S2 with
# c = 1 / 2, so that a row changing class moves the vector by at most
# sqrt(2 w0 + 2 d (1 + c)) = 2 sqrt(d), no more than a row staying in its class
# ((b - a)^2 + c (b^2 - a^2)^2 <= 4 per feature on [-1, 1]^2 for c <= 2.77, see
# DPStandardScaler's Notes): the labels cost no extra noise. Laplace: w0 N_k with w0 = d / 4
# and c' S2 with c' = 1 / 4: L1 sensitivity 2 w0 + 2 d (1 + c') = 3 d for a row changing
# class, 2 d for a row staying (|b - a| + |b^2 - a^2| / 4 <= 2 per feature).
_COUNT_WEIGHT_PER_FEATURE = 0.5
_SQUARE_WEIGHT_GAUSSIAN = 0.5
_COUNT_WEIGHT_PER_FEATURE_LAPLACE = 0.25
_SQUARE_WEIGHT_LAPLACE = 0.25


def class_moment_noise_scales(n_features, epsilon, delta):
    """Noise scales of the joint release of class counts, sums and sums of squares.

    Each feature is clipped to its public bounds and mapped onto ``[-1, 1]``
    (``z``); a row of class ``k`` adds ``1`` to ``N_k``, ``z_j`` to
    ``S1_kj`` and ``z_j^2`` to ``S2_kj``. Replacing one row ``(x, a)`` by
    ``(x', b)``:

    * Gaussian (``delta > 0``): the vector ``(sqrt(w0) N, S1, sqrt(c) S2)``
      with ``w0 = d / 2`` and ``c = 1 / 2`` moves by at most
      ``sqrt(2 w0 + 2 d (1 + c)) = 2 sqrt(d)`` in L2 norm when ``a != b``
      (two rows' contributions, each at most ``w0 + d (1 + c)`` squared),
      and by at most ``2 sqrt(d)`` when ``a = b`` (``(b - a)^2 + c (b^2 -
      a^2)^2 <= 4`` per feature on ``[-1, 1]^2``). One analytic Gaussian
      release (Balle and Wang 2018, Thm. 8) of L2 sensitivity ``2 sqrt(d)``
      with noise ``sigma`` per entry gives ``sigma / sqrt(w0)`` on the
      counts, ``sigma`` on the sums and ``sigma / sqrt(c)`` on the sums of
      squares.
    * Laplace (``delta = 0``): the vector ``(w0 N, S1, c' S2)`` with
      ``w0 = d / 4``, ``c' = 1 / 4`` moves by at most
      ``2 w0 + 2 d (1 + c') = 3 d`` in L1 norm when ``a != b`` and ``2 d``
      when ``a = b`` (``|b - a| + |b^2 - a^2| / 4 <= 2`` per feature).
      Laplace noise of scale ``b = 3 d / epsilon`` (Dwork et al. 2006) per
      entry gives ``b / w0``, ``b`` and ``b / c'``.

    Parameters
    ----------
    n_features : int
        ``d``.
    epsilon : float
        > 0.
    delta : float
        In ``[0, 1)``; 0 selects the Laplace mechanism.

    Returns
    -------
    mechanism : {"gaussian", "laplace"}
    count_scale, sum_scale, square_sum_scale : float
        Standard deviation (Gaussian) or scale (Laplace) of the noise on each
        ``N_k``, ``S1_kj`` and ``S2_kj``.
    """
    d = n_features
    if delta == 0.0:
        w0, c = _COUNT_WEIGHT_PER_FEATURE_LAPLACE * d, _SQUARE_WEIGHT_LAPLACE
        # Laplace mechanism (Dwork et al. 2006) of L1 sensitivity max(2 d, 2 w0 + 2 d (1 + c')).
        scale = laplace_scale(max(2.0 * d, 2.0 * w0 + 2.0 * d * (1.0 + c)), epsilon)
        return "laplace", scale / w0, scale, scale / c
    w0, c = _COUNT_WEIGHT_PER_FEATURE * d, _SQUARE_WEIGHT_GAUSSIAN
    # Analytic Gaussian mechanism (Balle and Wang 2018, Thm. 8) of L2 sensitivity
    # sqrt(max(4 d, 2 w0 + 2 d (1 + c))).
    sensitivity = math.sqrt(max(4.0 * d, 2.0 * w0 + 2.0 * d * (1.0 + c)))
    sigma = gaussian_sigma_analytic(sensitivity, epsilon, delta)
    return "gaussian", sigma / math.sqrt(w0), sigma, sigma / math.sqrt(c)


def class_moment_privacy_event(n_features, mechanism, sum_scale):
    """The privacy event of the release of :func:`class_moment_noise_scales`.

    One Gaussian release of L2 sensitivity ``2 sqrt(d)`` with noise
    ``sum_scale`` on the sums, or one Laplace release of L1 sensitivity
    ``3 d`` with scale ``sum_scale``.
    """
    d = n_features
    if mechanism == "gaussian":
        w0, c = _COUNT_WEIGHT_PER_FEATURE * d, _SQUARE_WEIGHT_GAUSSIAN
        sensitivity = math.sqrt(max(4.0 * d, 2.0 * w0 + 2.0 * d * (1.0 + c)))
        return dp_accounting.GaussianDpEvent(sum_scale / sensitivity)
    w0, c = _COUNT_WEIGHT_PER_FEATURE_LAPLACE * d, _SQUARE_WEIGHT_LAPLACE
    return dp_accounting.LaplaceDpEvent(sum_scale / max(2.0 * d, 2.0 * w0 + 2.0 * d * (1.0 + c)))


def resolve_bounds(bounds, X, owner):
    """Public bounds as ``(lower, upper)`` arrays; ``None`` reads them from ``X`` and warns.

    Parameters
    ----------
    bounds : array-like of shape (2,) or (n_features, 2), or None
        One ``(low, high)`` pair for every feature, or one pair per feature.
    X : ndarray of shape (n_samples, n_features)
        The (validated, finite) training data.
    owner : str
        The estimator's name, for messages.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,)
    """
    if bounds is not None:
        return check_feature_bounds(bounds, X.shape[1], owner)
    warn_privacy_leak(
        f"{owner}: bounds=None, so each feature's range was read from the training data "
        "(its minimum and maximum, which often belong to one person). Pass bounds=<public "
        "(low, high) per feature> to avoid this.")
    lower, upper = X.min(axis=0), X.max(axis=0)
    flat = upper <= lower
    return np.where(flat, lower - 0.5, lower), np.where(flat, upper + 0.5, upper)


def _normalized(X, lower, upper):
    """Clip to ``[lower, upper]`` and map that interval affinely onto ``[-1, 1]``."""
    centre, half_width = (upper + lower) / 2.0, (upper - lower) / 2.0
    return np.clip((np.clip(X, lower, upper) - centre) / half_width, -1.0, 1.0)


@fill_doc
class DPGaussianNB(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Gaussian naive Bayes with differentially private class counts, means and variances.

    The private counterpart of :class:`~sklearn.naive_bayes.GaussianNB`.
    Each feature is clipped to public bounds; the class counts, and per
    class the sum and the sum of squares of every feature, are released
    together in one noisy vector, calibrated to what one row can change
    (moving to another class included). The class priors, means and
    variances are computed from that release, so the whole model costs
    one ``(epsilon, delta)``.

    Parameters
    ----------
    %(epsilon)s
    delta : float or None, default=None
        Probability with which the epsilon bound may fail, in ``[0, 1)``.
        ``None`` means ``1 / n_samples^2``; a positive value uses the
        analytic Gaussian mechanism, ``0`` the Laplace mechanism (pure
        epsilon-DP, about ``sqrt(d)`` times more noise for ``d``
        features). The value used is stored in ``delta_``.
    bounds : array-like of shape (2,) or (n_features, 2) or None, default=None
        Public range of the features: one pair ``(low, high)`` for every
        feature, or one pair per feature, chosen without looking at the
        private data. Values outside are clipped. ``None`` reads the range
        from the training data, which leaks it (a
        :class:`~skdp.PrivacyLeakWarning`); pass the bounds for a real
        release. The noise on the means and variances, in the data's
        units, grows with ``high - low``.
    %(classes)s
    priors : array-like of shape (n_classes,) or None, default=None
        Public prior probabilities of the classes (in the order of the
        sorted ``classes``). ``None`` uses the private class counts.
    var_smoothing : float, default=1e-3
        Least variance, as a share of the largest variance a feature can
        have within its bounds (``((high - low) / 2)^2``), like
        ``GaussianNB``'s ``var_smoothing`` (there a share of the largest
        variance in the data, default ``1e-9``). The larger default keeps
        binary features that are constant within a class from dominating
        the likelihood (user guide). The private variances are also
        floored at their noise level (Notes).
    %(random_state)s
    %(accountant)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    class_count_ : ndarray of shape (n_classes,)
        Private count of each class (noisy, floored at 1).
    class_prior_ : ndarray of shape (n_classes,)
        Probability of each class (``priors``, or the private counts normalized).
    theta_ : ndarray of shape (n_classes, n_features)
        Private mean of each feature per class, within the bounds.
    var_ : ndarray of shape (n_classes, n_features)
        Private variance of each feature per class, at least its floor.
    epsilon_ : ndarray of shape (n_classes,)
        The variance floor of each class, in units of the squared half-width.
    lower_, upper_ : ndarray of shape (n_features,)
        The bounds used.
    mechanism_ : {"gaussian", "laplace"}
        The noise used.
    noise_scales_ : tuple of float
        Noise standard deviation (Gaussian) or scale (Laplace) on each
        count, each per-class sum and each per-class sum of squares (the
        last two of values mapped onto ``[-1, 1]``).
    delta_ : float
        The delta used.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta_)``.
    privacy_event_ : dp_accounting.DpEvent
        One Gaussian (Laplace when ``delta=0``) release of the class moments.
        The event a tight :class:`~skdp.BudgetAccountant` composes.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names, when ``X`` has string column names.

    Privacy
    -------
    ``(epsilon, delta)``-differentially private for replace-one neighbours
    (two training sets of the same public size ``n_samples`` that differ in
    one row, its features and its label): the class counts, the per-class
    sums of the clipped features mapped onto ``[-1, 1]`` and of their
    squares are one vector, released by the analytic Gaussian mechanism
    (Balle and Wang 2018, Thm. 8) of L2 sensitivity ``2 sqrt(d)``, or,
    for ``delta = 0``, by the Laplace mechanism (Dwork et al. 2006) of L1
    sensitivity ``3 d`` (derivation in
    :func:`class_moment_noise_scales`). Priors, means, variances and
    predictions are post-processing. The guarantee needs public ``bounds``
    and ``classes``; reading either from the data emits a
    :class:`~skdp.PrivacyLeakWarning`.

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    sklearn.naive_bayes.GaussianNB : The non-private model.

    Notes
    -----
    The noisy count ``N_k`` is floored at 1; the mean is ``S1_k / N_k``
    clipped to ``[-1, 1]``, the second moment ``S2_k / N_k`` clipped to
    ``[0, 1]``, and the variance ``m2 - m1^2`` clipped to
    ``[floor_k, 1]`` with ``floor_k = max(var_smoothing, s2 / N_k)``, ``s2``
    the noise scale on a sum of squares: below it the variance is noise.
    The derivation, and measurements on real tables, are in the user guide
    (Naive Bayes and k-means).

    References
    ----------
    C. Dwork, F. McSherry, K. Nissim and A. Smith, "Calibrating noise to
    sensitivity in private data analysis", TCC 2006.

    B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential
    privacy: analytical calibration and optimal denoising", ICML 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.naive_bayes import DPGaussianNB
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0.3, 0.1, (500, 2)), rng.normal(0.7, 0.1, (500, 2))]
    >>> y = np.repeat([0, 1], 500)
    >>> clf = DPGaussianNB(epsilon=1.0, bounds=(0.0, 1.0), classes=[0, 1],
    ...                    random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.95
    True
    """

    def __init__(self, epsilon=1.0, delta=None, *, bounds=None, classes=None, priors=None,
                 var_smoothing=1e-3, random_state=None, accountant=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.classes = classes
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.random_state = random_state
        self.accountant = accountant

    def _noise_scales(self, n_features, budget):
        """Mechanism and noise scales (a method so tests can under-noise a copy)."""
        return class_moment_noise_scales(n_features, budget.epsilon, budget.delta)

    def _check_priors(self, n_classes):
        if self.priors is None:
            return None
        priors = np.asarray(self.priors, dtype=float)
        if priors.shape != (n_classes,):
            raise ValueError(f"priors must have one entry per class ({n_classes}); got shape "
                             f"{priors.shape}.")
        if not (np.all(np.isfinite(priors)) and np.all(priors >= 0)
                and np.isclose(priors.sum(), 1.0)):
            raise ValueError(f"priors must be nonnegative and sum to 1; got {self.priors!r}.")
        return priors

    def fit(self, X, y):
        """Spend the budget on the private counts and moments, and build the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (finite values), clipped to ``bounds``.
        y : array-like of shape (n_samples,)
            Labels, all in ``classes``.

        Returns
        -------
        self : DPGaussianNB
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        name = type(self).__name__
        classes, y_index = resolve_classes(self.classes, y, name)
        n_classes = classes.size
        priors = self._check_priors(n_classes)
        smoothing = check_real(self.var_smoothing, "var_smoothing", low=0.0, high=1.0)
        lower, upper = resolve_bounds(self.bounds, X, name)
        n, d = X.shape

        def default_delta(m):
            return 1.0 / m**2

        # The calibration (public, but able to fail) before the charge.
        planned = self._resolve_budget(n, default_delta, allow_zero_delta=True)
        mechanism, s0, s1, s2 = self._noise_scales(d, planned)
        budget, rng = self._start_private_fit(
            n, default_delta=default_delta,
            event=class_moment_privacy_event(d, mechanism, s1))

        Z = _normalized(X, lower, upper)
        onehot = np.zeros((n, n_classes))
        onehot[np.arange(n), y_index] = 1.0
        counts = onehot.sum(axis=0)
        sums = onehot.T @ Z
        square_sums = onehot.T @ (Z * Z)
        draw = rng.normal if mechanism == "gaussian" else rng.laplace
        noisy_counts = counts + draw(0.0, s0, size=n_classes)
        noisy_sums = sums + draw(0.0, s1, size=sums.shape)
        noisy_square_sums = square_sums + draw(0.0, s2, size=square_sums.shape)

        # Post-processing of the release (and of public values) only.
        count = np.maximum(noisy_counts, 1.0)
        mean = np.clip(noisy_sums / count[:, None], -1.0, 1.0)
        second = np.clip(noisy_square_sums / count[:, None], 0.0, 1.0)
        floor = np.minimum(np.maximum(smoothing, s2 / count), 1.0)
        var = np.clip(second - mean**2, floor[:, None], 1.0)

        centre, half_width = (upper + lower) / 2.0, (upper - lower) / 2.0
        self.classes_ = classes
        self.class_count_ = count
        self.class_prior_ = count / count.sum() if priors is None else priors
        self.theta_ = centre + half_width * mean
        self.var_ = half_width**2 * var
        self.epsilon_ = floor
        self.lower_, self.upper_ = lower, upper
        self.mechanism_ = mechanism
        self.noise_scales_ = (s0, s1, s2)
        self.delta_ = budget.delta
        self.privacy_spent_ = budget
        return self

    def _joint_log_likelihood(self, X):
        check_is_fitted(self, "theta_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        with np.errstate(divide="ignore"):
            log_prior = np.log(self.class_prior_)
        jll = np.empty((X.shape[0], self.classes_.size))
        for k in range(self.classes_.size):
            normal = -0.5 * np.sum(np.log(2.0 * np.pi * self.var_[k]))
            normal -= 0.5 * np.sum((X - self.theta_[k]) ** 2 / self.var_[k], axis=1)
            jll[:, k] = log_prior[k] + normal
        return jll

    def predict(self, X):
        """Most probable class of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        jll = self._joint_log_likelihood(X)
        return self.classes_[np.argmax(jll, axis=1)]

    def predict_log_proba(self, X):
        """Log-probability of each class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        jll = self._joint_log_likelihood(X)
        return jll - logsumexp(jll, axis=1, keepdims=True)

    def predict_proba(self, X):
        """Probability of each class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return np.exp(self.predict_log_proba(X))
