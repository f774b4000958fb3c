"""Standardization with a differentially private mean and standard deviation."""

import math
from fractions import Fraction

import dp_accounting
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from skdp.accounting._events import zcdp_event
from skdp.base import DPEstimatorMixin
from skdp.mechanisms import (
    discrete_gaussian_sigma2,
    discrete_laplace_scale,
    gaussian_sigma_analytic,
    laplace_scale,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)
from skdp.mechanisms._discrete import _round_half_up
from skdp.preprocessing._bounds import _BoundedScalerMixin
from skdp.utils._docstrings import fill_doc
from skdp.utils._validation import check_bounded_sample_weight, check_option

__all__ = ["DPStandardScaler", "discrete_moment_noise", "moment_noise_scales", "moment_sums",
           "private_standardization"]


# c = sigma_1^2 / sigma_2^2 = (11 + 5 sqrt(5)) / 8: the largest weight of the sum of squares
# that leaves the L2 sensitivity of (S1, sqrt(c) S2) at 2 per feature (DPStandardScaler's Notes).
_SQUARE_WEIGHT = (11.0 + 5.0 * math.sqrt(5.0)) / 8.0
# A rational c' = 2.772 <= c for the exact (discrete) release: any c' <= c keeps the bound.
_SQUARE_WEIGHT_RATIONAL = Fraction(693, 250)
# The discrete release's public grids: a weight w becomes round(w * 2**10) / 2**10; a
# normalized value z becomes round(z * K) / K with K a power of two <= 2**16 (_value_grid).
_WEIGHT_GRID = 2**10
_MAX_VALUE_GRID = 2**16
# Integer sums and noise draws are kept below this (int64 arithmetic, sampler output).
_INT_LIMIT = 2**62


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
      (Thakkar (2019), Lemma 2.1.8) and ``b_2 = 2 b_1``.

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
        # Laplace mechanism (Thakkar (2019), Lemma 2.1.8) on (S1, S2 / 2), L1 sensitivity 2 d.
        scale = laplace_scale(2.0 * n_features, epsilon)
        return "laplace", scale, 2.0 * scale
    # Analytic Gaussian mechanism (Balle and Wang 2018, Thm. 8) on (S1, sqrt(c) S2),
    # L2 sensitivity 2 sqrt(d).
    sigma = gaussian_sigma_analytic(2.0 * math.sqrt(n_features), epsilon, delta)
    return "gaussian", sigma, sigma / math.sqrt(_SQUARE_WEIGHT)


def moment_privacy_event(n_features, mechanism, sum_scale):
    """The privacy event of the release of :func:`moment_noise_scales`.

    One Gaussian release of L2 sensitivity ``2 sqrt(d)`` with noise
    ``sum_scale`` on ``S1``, or one Laplace release of L1 sensitivity ``2 d``
    with scale ``sum_scale``.
    """
    if mechanism == "gaussian":
        return dp_accounting.GaussianDpEvent(sum_scale / (2.0 * math.sqrt(n_features)))
    return dp_accounting.LaplaceDpEvent(sum_scale / (2.0 * n_features))


def _normalized(values, lower, upper):
    """Clip ``values`` to ``[lower, upper]`` and map that interval affinely onto ``[-1, 1]``."""
    centre, half_width = (upper + lower) / 2.0, (upper - lower) / 2.0
    # Clipped again after normalizing: rounding of centre and half-width can push a value
    # at a bound out of [-1, 1] (-4/3 for bounds 3 floats apart); the sensitivity needs it.
    return np.clip((np.clip(values, lower, upper) - centre) / half_width, -1.0, 1.0)


def moment_sums(X, lower, upper, sample_weight=None):
    """Per-feature (weighted) sums of the normalized values ``z`` and of ``z**2`` (dense or sparse).

    ``z`` is :func:`_normalized` of each entry, in ``[-1, 1]``. For sparse
    ``X`` the unstored entries are zeros, each contributing ``z(0)``; the sums
    are computed from the stored entries and the (weighted) count of the
    others, in ``O(nnz)``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    lower, upper : ndarray of shape (n_features,)
        Public bounds.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Row weights ``w_i`` in ``[0, 1]``: the sums are ``sum_i w_i z_ij`` and
        ``sum_i w_i z_ij**2``. ``None``: every row weighs 1.

    Returns
    -------
    sums, square_sums : ndarray of shape (n_features,)
    """
    return _column_sums(X, _normalized, lower, upper, sample_weight)


def _column_sums(X, transform, lower, upper, weight):
    """``sum_i w_i t_ij`` and ``sum_i w_i t_ij**2`` with ``t = transform(x, lower, upper)``.

    Float arithmetic, or exact int64 arithmetic when ``transform`` returns
    integers and ``weight`` is an int64 array.
    """
    if not sp.issparse(X):
        T = transform(X, lower, upper)
        if weight is None:
            return T.sum(axis=0), np.einsum("ij,ij->j", T, T)
        return weight @ T, weight @ (T * T)
    X = X.tocsc(copy=True)
    X.sum_duplicates()
    n, d = X.shape
    stored = np.diff(X.indptr)
    columns = np.repeat(np.arange(d), stored)
    t = transform(X.data, lower[columns], upper[columns])
    t_zero = transform(0.0, lower, upper)
    w = np.ones(n, dtype=t.dtype) if weight is None else weight
    w_rows = w[X.indices]
    sums, square_sums, stored_weight = (np.zeros(d, dtype=t.dtype) for _ in range(3))
    # np.add.at, not np.bincount: it keeps integer sums exact.
    np.add.at(sums, columns, w_rows * t)
    np.add.at(square_sums, columns, w_rows * t * t)
    np.add.at(stored_weight, columns, w_rows)
    unstored_weight = w.sum() - stored_weight
    return sums + unstored_weight * t_zero, square_sums + unstored_weight * t_zero * t_zero


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
    d = len(sums)
    draw = rng.normal if mechanism == "gaussian" else rng.laplace
    noisy_sum = sums + draw(0.0, sum_scale, size=d)
    noisy_square_sum = square_sums + draw(0.0, square_sum_scale, size=d)
    return _moments(noisy_sum, noisy_square_sum, n_samples, square_sum_scale)


def _moments(noisy_sum, noisy_square_sum, n_samples, square_sum_scale):
    """Post-processing of the noisy sums: clipped mean, floored variance (see above)."""
    n = n_samples
    mean = np.clip(noisy_sum / n, -1.0, 1.0)
    second_moment = np.clip(noisy_square_sum / n, 0.0, 1.0)
    floor = min(square_sum_scale / n, 1.0)
    var = np.clip(second_moment - mean**2, floor, 1.0)
    return mean, var


def discrete_moment_noise(n_features, n_samples, epsilon, delta):
    """Public grid and exact noise parameters of the discrete release of ``S1`` and ``S2``.

    Each row's normalized value ``z`` (in ``[-1, 1]``) is rounded to
    ``k / K`` and its weight to ``omega / M`` (``M = 2**10``,
    ``K <= 2**16``, both powers of two chosen from public values only); the
    integer sums ``T1_j = sum_i omega_i k_ij`` and
    ``T2_j = sum_i omega_i k_ij**2`` (exact, in int64) get independent exact
    integer noise from :mod:`skdp.mechanisms` (Canonne, Kamath and Steinke
    2020). A row contributes ``(p, q) = (w z, w z**2)`` with ``w = omega / M``
    in ``[0, 1]`` and ``z = k / K`` in ``[-1, 1]``, a point of the convex hull
    of the parabola ``{(z, z**2)}`` on which the continuous sensitivity
    bounds of :func:`moment_noise_scales` hold, so they hold for the rounded,
    weighted rows too (see :class:`DPStandardScaler`, Notes):

    * discrete Gaussian (``delta > 0``): ``sigma_1^2 = 4 d (M K)^2 s^2`` on
      ``T1`` and ``sigma_2^2 = sigma_1^2 K^2 / c'`` on ``T2``, with
      ``s^2 = discrete_gaussian_sigma2(1, epsilon, delta)`` (at least
      ``1 / (2 rho)``) and ``c' = 2.772 <= c``: the zCDP cost is
      ``(M K)^2 / (2 sigma_1^2) sum_j (dp_j^2 + c' dq_j^2)
      <= 4 d (M K)^2 / (2 sigma_1^2) <= rho``.
    * discrete Laplace (``delta = 0``): scale ``t_1 = 2 d M K t`` on ``T1``
      and ``t_2 = 2 K t_1`` on ``T2``, with
      ``t = discrete_laplace_scale(1, epsilon)`` (at least ``1 / epsilon``):
      the privacy loss is ``(M K / t_1) sum_j (|dp_j| + |dq_j| / 2)
      <= 2 d M K / t_1 <= epsilon``.

    ``K`` is the largest power of two up to ``2**16`` that keeps the sums
    and 64 noise scales of ``T2`` below ``2**62``.

    Parameters
    ----------
    n_features, n_samples : int
        ``d`` and ``n``, public.
    epsilon : float
        > 0.
    delta : float
        In ``[0, 1)``; 0 selects the discrete Laplace mechanism.

    Returns
    -------
    mechanism : {"discrete_gaussian", "discrete_laplace"}
    value_grid, weight_grid : int
        ``K`` and ``M``.
    sum_noise, square_sum_noise : fractions.Fraction
        ``sigma^2`` (discrete Gaussian) or the scale ``t`` (discrete Laplace)
        of the integer noise on ``T1_j`` and on ``T2_j``.
    """
    d, m = n_features, _WEIGHT_GRID
    if delta == 0.0:
        mechanism = "discrete_laplace"
        # Geometric mechanism (discrete Laplace, CKS Alg. 2): t >= Delta_1 / epsilon.
        unit = discrete_laplace_scale(1.0, epsilon)
        # Scale of T2's noise in units of (K^2 M): t_2 / (K^2 M) = 4 d t.
        square_scale = 4 * d * unit
    else:
        mechanism = "discrete_gaussian"
        # CKS: rho = Delta_2^2 / (2 sigma^2) per coordinate; unit = sigma^2 for Delta_2 = 1.
        unit = discrete_gaussian_sigma2(1.0, epsilon, delta)
        square_scale = (4 * d * unit / _SQUARE_WEIGHT_RATIONAL) ** 0.5
    grid = _value_grid(n_samples * m, 64.0 * float(square_scale) * m)
    if grid is None:
        raise ValueError(
            f"DPStandardScaler(noise='discrete'): n_samples={n_samples} with epsilon={epsilon:g} "
            f"leaves no public grid on which the integer sums and noise fit in int64.")
    if mechanism == "discrete_laplace":
        t1 = 2 * d * m * grid * unit
        return mechanism, grid, m, t1, 2 * grid * t1
    sigma2 = 4 * d * (m * grid) ** 2 * unit
    return mechanism, grid, m, sigma2, sigma2 * grid**2 / _SQUARE_WEIGHT_RATIONAL


def _value_grid(*sizes):
    """Largest power of two ``K <= 2**16`` with ``K^2 size < 2**62`` for every size (or None)."""
    grid = _MAX_VALUE_GRID
    while grid >= 1 and any(grid * grid * size >= _INT_LIMIT for size in sizes):
        grid //= 2
    return grid if grid >= 1 else None


def _discrete_sums(X, lower, upper, sample_weight, value_grid, weight_grid):
    """Exact int64 sums ``T1_j = sum_i omega_i k_ij``, ``T2_j = sum_i omega_i k_ij**2``."""
    # floor(u + 1/2) of the exact u = z K (exact: K a power of two, |z K| <= 2**16); a
    # float "u + 0.5" would round 1/2 - 2**-54 + 1/2 up to 1. The same for w M.
    def rounded(values, lo, hi):
        return _round_half_up(_normalized(values, lo, hi) * value_grid).astype(np.int64)

    if sample_weight is None:
        omega = np.full(X.shape[0], weight_grid, dtype=np.int64)
    else:
        omega = _round_half_up(sample_weight * weight_grid).astype(np.int64)
    return _column_sums(X, rounded, lower, upper, omega)


def _discrete_standardization(sums, square_sums, n_samples, mechanism, value_grid,
                              weight_grid, sum_noise, square_sum_noise, rng):
    """Exact integer noise on the integer sums, then the post-processing of :func:`_moments`."""
    d = len(sums)
    draw = sample_discrete_gaussian if mechanism == "discrete_gaussian" else sample_discrete_laplace
    noisy = [[int(v) + int(z) for v, z in zip(values, draw(noise, size=d, rng=rng))]
             for values, noise in ((sums, sum_noise), (square_sums, square_sum_noise))]
    # Python integers divided exactly-rounded into floats: post-processing of the release.
    unit_1, unit_2 = weight_grid * value_grid, weight_grid * value_grid**2
    noisy_sum = np.array([v / unit_1 for v in noisy[0]])
    noisy_square_sum = np.array([v / unit_2 for v in noisy[1]])
    return _moments(noisy_sum, noisy_square_sum, n_samples,
                    _noise_std(mechanism, square_sum_noise) / unit_2)


def _noise_std(mechanism, parameter):
    """The noise scale reported for a discrete parameter: ``sigma`` or ``t``."""
    return math.sqrt(parameter) if mechanism == "discrete_gaussian" else float(parameter)


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
    sparse input needs ``with_mean=False``). The sensitivity, the budget
    split and the variance floor are derived in the user guide
    (:ref:`standard_scaler_guide`).

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
    bounds : array-like of shape (2,) or (n_features, 2), dict or None, default=None
        Public bounds of the features: one pair ``(low, high)`` for every
        feature, or one pair per feature (the layout of ``bounds`` everywhere
        in skdp), with ``low < high``, chosen without looking at the private
        data. When ``X`` is a DataFrame, a dict ``{column name: (low,
        high)}`` with every column (and only columns) as keys is accepted
        too.
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
        released together at the price of the mean alone); they only
        choose which of them ``transform`` uses and which attributes are set.
    clip : bool, default=True
        Also clip to the bounds in ``transform`` (the statistics describe the
        clipped data). With ``False`` values outside the bounds are
        standardized as they are. ``fit`` always clips.
    noise : {"continuous", "discrete"}, default="continuous"
        ``"continuous"``: floating-point Gaussian (``delta > 0``) or Laplace
        (``delta = 0``) noise on the float sums. ``"discrete"``: the rows are
        rounded to a public grid, and the exact integer sums get exact
        discrete Gaussian or Laplace noise (:func:`discrete_moment_noise`),
        safe against floating-point attacks (Mironov 2012); about 20-30% more
        noise with ``delta > 0``, the same with ``delta = 0``.
    %(random_state)s
    %(accountant)s

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,) or None
        Private mean of each (clipped) feature; ``None`` when ``with_mean``
        and ``with_std`` are both ``False``.
    var_ : ndarray of shape (n_features,) or None
        Private variance of each (clipped) feature, never below a public
        floor (so always > 0; see Notes); ``None`` when ``with_std=False``.
    scale_ : ndarray of shape (n_features,) or None
        ``sqrt(var_)``, the private standard deviation; ``None`` when
        ``with_std=False``.
    lower_ : ndarray of shape (n_features,)
        Lower bound of each feature (``bounds[0]`` broadcast).
    upper_ : ndarray of shape (n_features,)
        Upper bound of each feature (``bounds[1]`` broadcast).
    mechanism_ : {"gaussian", "laplace", "discrete_gaussian", "discrete_laplace"}
        The noise used (Laplace when ``delta = 0``).
    noise_scales_ : tuple of float
        Noise standard deviation (Gaussian; ``sigma`` for the discrete
        Gaussian) or scale (Laplace) on the sum and on the sum of squares of
        each feature, in units of the bounds' half-width (see
        :func:`moment_noise_scales` and :func:`discrete_moment_noise`).
    delta_ : float
        The delta used.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta_)``.
    privacy_event_ : dp_accounting.DpEvent
        One Gaussian (Laplace when ``delta=0``) release of the moments.
        The event a tight :class:`~skdp.BudgetAccountant` composes.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names, when ``X`` has string column names.

    Privacy
    -------
    ``(epsilon, delta)``-differentially private for replace-one neighbours
    (two data sets of the same public size ``n_samples`` that differ in one
    row): every feature of the replaced row, and its ``sample_weight``, is
    protected. After per-row clipping to the public bounds, the per-feature
    sums of the normalized values and of their squares are one release, by
    the analytic Gaussian mechanism (Balle and Wang 2018, Thm. 8) of L2
    sensitivity ``2 sqrt(d)``, or for ``delta = 0`` the Laplace mechanism
    (Thakkar (2019), Lemma 2.1.8) of L1 sensitivity ``2 d``; everything else
    is post-processing. Public inputs: ``bounds`` (bounds read from the data
    leak its extremes) and ``n_samples``. In a Pipeline the scaler and the
    model each spend their own budget (basic composition: the sum); a
    non-private step fitted on the private data voids the pipeline's
    guarantee. Details: :ref:`standard_scaler_guide`.

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012); ``noise="discrete"`` draws exact integer noise instead.

    See Also
    --------
    PublicBoundsScaler : Scale from public bounds only; free, but less
        adaptive.
    sklearn.preprocessing.StandardScaler : The non-private scaler.

    Notes
    -----
    Both statistics are released at the price of the mean alone: the noise
    on the sum of squares is set as large as it can be without raising the
    sensitivity. The variance is clipped below at the noise scale of the
    noisy second moment, ``min(noise_scales_[1] / n_samples, 1)`` in units
    of the bounds' half-width squared, a public floor; when the noise swamps
    the data, ``scale_`` becomes the half-width of the bounds, as in
    :class:`PublicBoundsScaler`. Weights in ``[0, 1]`` leave the
    sensitivities unchanged, and the sums are divided by the public
    ``n_samples``. The derivations: :ref:`standard_scaler_guide`.

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
                 clip=True, noise="continuous", random_state=None, accountant=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.with_mean = with_mean
        self.with_std = with_std
        self.clip = clip
        self.noise = noise
        self.random_state = random_state
        self.accountant = accountant

    def _noise_scales(self, n_features, budget):
        """Mechanism and noise scales (a method so tests can under-noise a copy)."""
        return moment_noise_scales(n_features, budget.epsilon, budget.delta)

    def _discrete_noise(self, n_features, n_samples, budget):
        """Grid and exact noise parameters (a method so tests can under-noise a copy)."""
        return discrete_moment_noise(n_features, n_samples, budget.epsilon, budget.delta)

    def fit(self, X, y=None, sample_weight=None):
        """Spend the budget on a private mean and standard deviation per feature.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data (finite values); clipped to ``bounds``. Sparse
            input needs ``with_mean=False`` and bounds that contain 0.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weight ``w_i`` of each row, in ``[0, 1]``: weights above 1 are
            clipped to 1 silently (a refusal would reveal them; divide larger
            weights by a constant fixed in advance), negative, NaN or
            wrong-length weights are refused before any budget is spent. A record
            is ``(x, w)`` and its weight is protected like its features. The
            released sums are ``sum_i w_i z_i`` and ``sum_i w_i z_i^2``, and
            they are divided by the public ``n_samples``, not by the private
            sum of the weights: a row of weight ``w`` counts as ``w`` times
            itself plus ``1 - w`` times the centre of the bounds (a zero
            weight removes the row's contribution; weights below 1 pull the
            statistics towards the centre and the variance towards
            ``w (1 - w)``-mixtures, see Notes). Unit weights give exactly
            the unweighted fit. With ``noise="discrete"`` each weight is
            rounded to a multiple of ``2**-10`` first.

        Returns
        -------
        self : DPStandardScaler
        """
        for name in ("with_mean", "with_std"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}.")
        noise = check_option(self.noise, "noise", ("continuous", "discrete"))
        if sp.issparse(X) and self.with_mean:
            raise ValueError("DPStandardScaler: cannot center sparse data (it would become "
                             "dense); pass with_mean=False to only scale it.")
        X, lower, upper = self._validate_for_fit(X)
        n, d = X.shape
        # Weights in [0, 1] (None when all are 1: unit weights run the unweighted code).
        sample_weight = check_bounded_sample_weight(sample_weight, n)
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
        planned = self._resolve_budget(n, default_delta, allow_zero_delta=True)
        if noise == "continuous":
            mechanism, sum_scale, square_sum_scale = self._noise_scales(d, planned)
        else:
            mechanism, value_grid, weight_grid, sum_noise, square_sum_noise = (
                self._discrete_noise(d, n, planned))
            sum_scale = _noise_std(mechanism, sum_noise) / (weight_grid * value_grid)
            square_sum_scale = (_noise_std(mechanism, square_sum_noise)
                                / (weight_grid * value_grid**2))
        if noise == "continuous":
            event = moment_privacy_event(d, mechanism, sum_scale)
        elif mechanism == "discrete_gaussian":
            # zCDP of the multivariate discrete Gaussian (Canonne, Kamath and Steinke 2020,
            # Thm. 14): rho = (M K)^2 sum_j (dp_j^2 + c' dq_j^2) / (2 sigma_1^2)
            # <= 4 d (M K)^2 / (2 sigma_1^2) (Notes of _discrete_noise).
            event = zcdp_event(2.0 * d * float(weight_grid * value_grid) ** 2 / float(sum_noise))
        else:
            event = None  # the discrete Laplace: its plain (epsilon, 0) event
        budget, rng = self._start_private_fit(n, default_delta=default_delta, event=event)
        if noise == "continuous":
            sums, square_sums = moment_sums(X, lower, upper, sample_weight)
            mean, var = private_standardization(sums, square_sums, n, mechanism, sum_scale,
                                                square_sum_scale, rng)
        else:
            sums, square_sums = _discrete_sums(X, lower, upper, sample_weight, value_grid,
                                               weight_grid)
            mean, var = _discrete_standardization(sums, square_sums, n, mechanism, value_grid,
                                                  weight_grid, sum_noise, square_sum_noise, rng)
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
