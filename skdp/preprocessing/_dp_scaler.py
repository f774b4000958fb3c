"""Standardization with a differentially private mean and standard deviation."""

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from skdp.base import DPEstimatorMixin
from skdp.mechanisms import gaussian_sigma_analytic, laplace_scale
from skdp.preprocessing._bounds import _BoundedScalerMixin
from skdp.utils._docstrings import fill_doc

__all__ = ["DPStandardScaler", "moment_noise_scales", "moment_sums", "private_standardization"]


# c = sigma_1^2 / sigma_2^2 = (11 + 5 sqrt(5)) / 8: the largest weight of the sum of squares
# that leaves the L2 sensitivity of (S1, sqrt(c) S2) at 2 per feature (DPStandardScaler's Notes).
_SQUARE_WEIGHT = (11.0 + 5.0 * math.sqrt(5.0)) / 8.0


def moment_noise_scales(n_features, epsilon, delta):
    """Noise scales of the joint release of the per-feature sums ``S1`` and ``S2``.

    With every value mapped into ``[-1, 1]`` (``z = (x - centre) / half-width``
    after clipping to the public bounds), ``S1_j = sum_i z_ij`` and
    ``S2_j = sum_i z_ij^2`` are released together with independent noise.
    Replacing one row moves each feature's ``(S1_j, S2_j)`` by
    ``(b - a, b^2 - a^2)`` for some ``a, b`` in ``[-1, 1]``:

    * Gaussian (``delta > 0``): the vector ``(S1, sqrt(c) S2)``,
      ``c = (11 + 5 sqrt(5)) / 8 = 2.7725...``, with noise ``sigma_1`` on
      every entry has L2 sensitivity ``2 sqrt(d)``, because
      ``(b - a)^2 + c (b^2 - a^2)^2 <= 4`` on ``[-1, 1]^2`` (Notes of
      :class:`DPStandardScaler`); ``sigma_1`` is the analytic Gaussian
      calibration of that sensitivity (Balle and Wang 2018, Thm. 8) and
      ``sigma_2 = sigma_1 / sqrt(c) = 0.6006 sigma_1``.
    * Laplace (``delta = 0``): the vector ``(S1, S2 / 2)`` with noise scale
      ``b_1`` has L1 sensitivity ``2 d``, because
      ``|b - a| + |b^2 - a^2| / 2 <= 2``; ``b_1 = 2 d / epsilon``
      (seed 004, Lemma 2.1.8) and ``b_2 = 2 b_1``.

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
    sum_scale : float
        Standard deviation (Gaussian) or scale (Laplace) of the noise on each ``S1_j``.
    square_sum_scale : float
        The same for each ``S2_j``.
    """
    if delta == 0.0:
        # Laplace mechanism (seed 004, Lemma 2.1.8) on (S1, S2 / 2), L1 sensitivity 2 d.
        scale = laplace_scale(2.0 * n_features, epsilon)
        return "laplace", scale, 2.0 * scale
    # Analytic Gaussian mechanism (Balle and Wang 2018, Thm. 8) on (S1, sqrt(c) S2),
    # L2 sensitivity 2 sqrt(d).
    sigma = gaussian_sigma_analytic(2.0 * math.sqrt(n_features), epsilon, delta)
    return "gaussian", sigma, sigma / math.sqrt(_SQUARE_WEIGHT)


def _normalized(values, lower, upper):
    """Clip ``values`` to ``[lower, upper]`` and map that interval affinely onto ``[-1, 1]``."""
    centre, half_width = (upper + lower) / 2.0, (upper - lower) / 2.0
    # Clipped again after normalizing: rounding of centre and half-width can push a value
    # at a bound out of [-1, 1] (-4/3 for bounds 3 floats apart); the sensitivity needs it.
    return np.clip((np.clip(values, lower, upper) - centre) / half_width, -1.0, 1.0)


def moment_sums(X, lower, upper):
    """Per-feature sums of the normalized values ``z`` and of ``z**2`` (dense or sparse).

    ``z`` is :func:`_normalized` of each entry, in ``[-1, 1]``. For sparse
    ``X`` the unstored entries are zeros, each contributing ``z(0)``; the sums
    are computed from the stored entries and the count of the others, in
    ``O(nnz)``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    lower, upper : ndarray of shape (n_features,)
        Public bounds.

    Returns
    -------
    sums, square_sums : ndarray of shape (n_features,)
    """
    if not sp.issparse(X):
        Z = _normalized(X, lower, upper)
        return Z.sum(axis=0), np.einsum("ij,ij->j", Z, Z)
    X = X.tocsc(copy=True)
    X.sum_duplicates()
    n, d = X.shape
    stored = np.diff(X.indptr)
    columns = np.repeat(np.arange(d), stored)
    z = _normalized(X.data, lower[columns], upper[columns])
    z_zero = _normalized(0.0, lower, upper)
    sums = np.bincount(columns, weights=z, minlength=d) + (n - stored) * z_zero
    square_sums = np.bincount(columns, weights=z * z, minlength=d) + (n - stored) * z_zero**2
    return sums, square_sums


def private_standardization(sums, square_sums, n_samples, mechanism, sum_scale,
                            square_sum_scale, rng):
    """Private mean and variance from the column sums of ``z`` and ``z**2`` (``z`` in ``[-1, 1]``).

    Adds the noise of :func:`moment_noise_scales` to the sums (from
    :func:`moment_sums`), divides by the (public) number of rows, and derives
    the variance as post-processing: the noisy mean is clipped to
    ``[-1, 1]``, the noisy second moment to ``[0, 1]``, and the variance
    ``m2 - m1^2`` to ``[floor, 1]`` with
    ``floor = min(square_sum_scale / n, 1)``, the noise scale of the second
    moment itself.

    Parameters
    ----------
    sums, square_sums : ndarray of shape (n_features,)
        Exact sums of the clipped, normalized data and of its squares.
    n_samples : int
        ``n``, public.
    mechanism : {"gaussian", "laplace"}
    sum_scale, square_sum_scale : float
        Noise scales on the sums (from :func:`moment_noise_scales`).
    rng : numpy.random.Generator
        Noise source.

    Returns
    -------
    mean : ndarray of shape (n_features,)
        In ``[-1, 1]``.
    var : ndarray of shape (n_features,)
        In ``[floor, 1]``, so always > 0.
    """
    n, d = n_samples, len(sums)
    draw = rng.normal if mechanism == "gaussian" else rng.laplace
    noisy_sum = sums + draw(0.0, sum_scale, size=d)
    noisy_square_sum = square_sums + draw(0.0, square_sum_scale, size=d)
    mean = np.clip(noisy_sum / n, -1.0, 1.0)
    second_moment = np.clip(noisy_square_sum / n, 0.0, 1.0)
    floor = min(square_sum_scale / n, 1.0)
    var = np.clip(second_moment - mean**2, floor, 1.0)
    return mean, var


@fill_doc
class DPStandardScaler(DPEstimatorMixin, _BoundedScalerMixin, BaseEstimator):
    """Standardize features with a differentially private mean and standard deviation.

    The private counterpart of :class:`~sklearn.preprocessing.StandardScaler`
    (whose fitted ``mean_`` and ``scale_`` are exact statistics of the
    training data, released with any model that contains it). Each feature
    is clipped to public bounds, mapped to ``[-1, 1]``, and its sum and sum
    of squares are released together with noise calibrated to what one row
    can change; the mean and standard deviation are derived from these
    noisy sums. ``transform`` computes ``(x - mean_) / scale_`` (without the
    centring or the scaling if ``with_mean`` or ``with_std`` is ``False``;
    sparse input needs ``with_mean=False``).

    Parameters
    ----------
    %(epsilon)s
    delta : float or None, default=None
        Probability with which the epsilon bound may fail, in ``[0, 1)``.
        ``0`` uses the Laplace mechanism (pure epsilon-DP); a positive value
        the analytic Gaussian mechanism, whose noise grows as ``sqrt(d)``
        instead of ``d`` with the number of features ``d``. ``None`` means
        ``1 / n_samples^2`` (Gaussian); the value used is stored in
        ``delta_``.
    bounds : array-like of shape (2,) or (n_features, 2), or None, default=None
        Public bounds of the features: one pair ``(low, high)`` for every
        feature, or one pair per feature (the layout of ``bounds`` everywhere
        in skdp), with ``low < high``, chosen without looking at the private
        data.
        Values outside are clipped to them before anything is computed.
        Required (``None`` is refused before any budget is spent). The
        noise, in the data's units, is proportional to ``high - low``:
        tight bounds give accurate statistics, bounds that cut off much of
        the data give biased ones.
    with_mean : bool, default=True
        Centre the data in ``transform``. ``False`` keeps zeros at zero, so
        that sparse input stays sparse (it is refused otherwise, as by
        :class:`~sklearn.preprocessing.StandardScaler`).
    with_std : bool, default=True
        Scale the data to unit variance in ``transform``. Neither option
        changes what ``fit`` releases or spends (both statistics are
        released together at the price of the mean alone, Notes); they only
        choose which of them ``transform`` uses and which attributes are set.
    clip : bool, default=True
        Also clip to the bounds in ``transform`` (the statistics describe the
        clipped data). With ``False`` values outside the bounds are
        standardized as they are. ``fit`` always clips.
    %(random_state)s
    %(accountant)s

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,) or None
        Private mean of each (clipped) feature; ``None`` when ``with_mean``
        and ``with_std`` are both ``False``.
    var_ : ndarray of shape (n_features,) or None
        Private variance of each (clipped) feature, never below the floor
        described in Notes (so always > 0); ``None`` when ``with_std=False``.
    scale_ : ndarray of shape (n_features,) or None
        ``sqrt(var_)``, the private standard deviation; ``None`` when
        ``with_std=False``.
    lower_ : ndarray of shape (n_features,)
        Lower bound of each feature (``bounds[0]`` broadcast).
    upper_ : ndarray of shape (n_features,)
        Upper bound of each feature (``bounds[1]`` broadcast).
    mechanism_ : {"gaussian", "laplace"}
        The noise used (Laplace when ``delta = 0``).
    noise_scales_ : tuple of float
        Noise standard deviation (Gaussian) or scale (Laplace) on the sum
        and on the sum of squares of each feature, in units of the bounds'
        half-width (see :func:`moment_noise_scales`).
    delta_ : float
        The delta used.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta_)``.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names, when ``X`` has string column names.

    Privacy
    -------
    ``(epsilon, delta)``-differentially private for replace-one neighbours
    (two data sets of the same public size ``n_samples`` that differ in one
    row): every feature of the replaced row is protected. Clipping to the
    public bounds is per row; the per-feature sums of the clipped, normalized
    values and of their squares are then one release, by the analytic
    Gaussian mechanism (Balle and Wang 2018, Thm. 8) of L2 sensitivity
    ``2 sqrt(d)``, or for ``delta = 0`` the Laplace mechanism (seed 004,
    Lemma 2.1.8) of L1 sensitivity ``2 d``; the mean, variance and their
    floor are post-processing of that release and of public values. The
    guarantee needs the bounds to be public: bounds read from the data
    leak its extremes. ``transform`` maps each row on its own with the
    released statistics and costs nothing more. Sparse input is the same
    data with its zeros unstored: the release and its guarantee are those
    of the dense array.

    In a :class:`~sklearn.pipeline.Pipeline` the scaler and the model after
    it each spend their own budget on the same rows, so the pipeline is
    ``(epsilon_scaler + epsilon_model, delta_scaler + delta_model)``-DP
    (basic composition); with one shared ``accountant`` given to both, it
    records and enforces that sum. A non-private step fitted on the private
    data (``StandardScaler``, ``MinMaxScaler``, ``PCA``...) voids the whole
    pipeline's guarantee.

    See Also
    --------
    PublicBoundsScaler : Scale from public bounds only; free, but less
        adaptive.
    sklearn.preprocessing.StandardScaler : The non-private scaler.

    Notes
    -----
    **Sensitivity.** One replaced row changes feature ``j`` from ``a`` to
    ``b`` (both in ``[-1, 1]``), so ``(S1_j, S2_j)`` moves by
    ``(s, s t)`` with ``s = b - a``, ``t = b + a`` and ``|s| + |t| <= 2``.
    For the Gaussian release of ``(S1, sqrt(c) S2)``, the squared change is
    ``s^2 (1 + c t^2) <= s^2 (1 + c (2 - |s|)^2)``, and this is at most 4
    for every ``|s| <= 2`` exactly when
    ``c <= (2 + s) / (s^2 (2 - s))`` on ``(0, 2)``; the right side is least
    at ``s = sqrt(5) - 1`` (the root of ``s^2 + 2 s - 4``), where it is
    ``(11 + 5 sqrt(5)) / 8 = 2.7725...``, the ``c`` used. The maximum 4 is
    reached at ``(a, b) = (-1, 1)`` and at ``(2 - sqrt(5), 1)``; over ``d``
    features the L2 sensitivity is ``2 sqrt(d)``. For the Laplace release
    of ``(S1, S2 / k)``, ``|s| (1 + |t| / k) <= |s| + |s| (2 - |s|) / k``,
    at most 2 for every ``|s| <= 2`` exactly when ``k >= 2``; with
    ``k = 2`` the L1 sensitivity is ``2 d``.

    **Splitting the budget.** The split between the two statistics is the
    ratio of their noise scales, and it is chosen where the second moment
    costs nothing: for every ratio up to the limits above
    (``sigma_2 >= sigma_1 / sqrt(c) = 0.6006 sigma_1``, ``b_2 >= 2 b_1``)
    the sensitivity is that of the mean alone, whose worst case is a row
    moving from one bound to the other (which leaves ``S2`` unchanged).
    The mean is then as accurate as if it had the whole budget, and the
    limit itself gives the second moment the least noise at that price.
    Less noise on ``S2`` would raise the sensitivity, and so the noise on
    the mean. Releasing both at once is also tighter than halving
    ``(epsilon, delta)`` between two separate releases (which would
    multiply ``sigma_1`` by about ``sqrt(2)`` or more).

    **Floor.** With ``m1``, ``m2`` the noisy averages (clipped to
    ``[-1, 1]`` and ``[0, 1]``, the ranges of the true values), the
    variance is ``m2 - m1^2`` clipped to ``[floor, 1]``, where
    ``floor = min(noise_scales_[1] / n_samples, 1)`` is the noise scale of
    ``m2`` itself, in units of the half-width squared: a variance below it
    cannot be told from zero, and dividing by its square root would mostly
    amplify noise. The floor depends only on ``epsilon``, ``delta``,
    ``n_features`` and ``n_samples`` (public), never on the values, so
    ``scale_`` is always positive and finite. When the noise swamps the
    data, ``scale_`` becomes the half-width of the bounds, as in
    :class:`PublicBoundsScaler`.

    References
    ----------
    B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for
    differential privacy: analytical calibration and optimal denoising",
    ICML 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import DPStandardScaler
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal([10.0, -3.0], [2.0, 0.5], size=(5000, 2))
    >>> scaler = DPStandardScaler(epsilon=1.0, bounds=[(0.0, 20.0), (-6.0, 0.0)],
    ...                           random_state=0).fit(X)
    >>> np.round(scaler.mean_, 1), np.round(scaler.scale_, 1)
    (array([10., -3.]), array([2. , 0.5]))
    >>> scaler.privacy_spent_
    PrivacyBudget(epsilon=1.0, delta=4e-08)
    """

    def __init__(self, epsilon=1.0, delta=None, *, bounds=None, with_mean=True, with_std=True,
                 clip=True, random_state=None, accountant=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.with_mean = with_mean
        self.with_std = with_std
        self.clip = clip
        self.random_state = random_state
        self.accountant = accountant

    def _noise_scales(self, n_features, budget):
        """Mechanism and noise scales (a method so tests can under-noise a copy)."""
        return moment_noise_scales(n_features, budget.epsilon, budget.delta)

    def fit(self, X, y=None):
        """Spend the budget on a private mean and standard deviation per feature.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data (finite values); clipped to ``bounds``. Sparse
            input needs ``with_mean=False`` and bounds that contain 0.
        y : None
            Ignored.

        Returns
        -------
        self : DPStandardScaler
        """
        for name in ("with_mean", "with_std"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}.")
        if sp.issparse(X) and self.with_mean:
            raise ValueError("DPStandardScaler: cannot center sparse data (it would become "
                             "dense); pass with_mean=False to only scale it.")
        X, lower, upper = self._validate_for_fit(X)
        n, d = X.shape
        with np.errstate(over="ignore", under="ignore"):
            squared_half_width = ((upper - lower) / 2.0) ** 2
        bad = np.flatnonzero(~(np.isfinite(squared_half_width)
                               & (squared_half_width >= np.finfo(np.float64).tiny)))
        if bad.size:
            j = bad[0]
            raise ValueError(
                f"DPStandardScaler: the variance is released in units of the bounds' squared "
                f"half-width, which must be a positive finite float; feature {j}'s bounds "
                f"(lower={lower[j]:g}, upper={upper[j]:g}) have a width too large or too small.")

        def default_delta(m):
            return 1.0 / m**2  # skdp's default, as DPLogisticRegressionAMP's

        # The calibration (public, but able to fail, e.g. at epsilon=1e300) before the charge.
        mechanism, sum_scale, square_sum_scale = self._noise_scales(
            d, self._resolve_budget(n, default_delta, allow_zero_delta=True))
        budget, rng = self._start_private_fit(n, default_delta=default_delta)
        sums, square_sums = moment_sums(X, lower, upper)
        mean, var = private_standardization(sums, square_sums, n, mechanism, sum_scale,
                                            square_sum_scale, rng)
        # Whatever with_mean and with_std say, both statistics are released together (the
        # variance costs nothing more, Notes); the attributes then follow StandardScaler's.
        centre, half_width = (upper + lower) / 2.0, (upper - lower) / 2.0
        self.lower_, self.upper_ = lower, upper
        self.mean_ = centre + half_width * mean if self.with_mean or self.with_std else None
        self.var_ = half_width**2 * var if self.with_std else None
        self.scale_ = np.sqrt(self.var_) if self.with_std else None
        self.mechanism_ = mechanism
        self.noise_scales_ = (sum_scale, square_sum_scale)
        self.delta_ = budget.delta
        self.privacy_spent_ = budget
        return self

    def _forward(self, X, columns=None):
        # columns: the feature of each stored entry of a sparse matrix (never centred).
        if self.with_mean:
            X = X - self.mean_
        if not self.with_std:
            return X if self.with_mean else X.copy()  # never the caller's array
        return X / (self.scale_ if columns is None else self.scale_[columns])

    def _backward(self, X, columns=None):
        if self.with_std:
            X = X * (self.scale_ if columns is None else self.scale_[columns])
        elif not self.with_mean:
            X = X.copy()  # never the caller's array
        return X + self.mean_ if self.with_mean else X

    def _sparse_formats(self):
        return None if self.with_mean else ("csr", "csc")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = not self.with_mean
        return tags
