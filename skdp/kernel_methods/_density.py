"""Density estimators released by functional perturbation (Dandekar et al. (2019), Sec. 3.3)."""

import math
import numbers

import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.base import DPEstimatorMixin
from skdp.kernel_methods._functional import (
    CALIBRATIONS,
    check_bounds,
    check_release_scale,
    default_delta,
    functional_noise_sigma,
    gp_release,
    public_support,
    support_factor,
)
from skdp.kernel_methods._kernels import gaussian_kernel
from skdp.mechanisms import discrete_gaussian_sigma2, sample_discrete_gaussian
from skdp.utils._docstrings import fill_doc
from skdp.utils._validation import (
    check_bounded_sample_weight,
    check_option,
    check_positive_int,
    check_real,
)

# Quasi-Monte Carlo points used to normalize a released density over its box.
_N_NORMALIZE = 4096

__all__ = ["PrivateHistogram", "PrivateKernelDensity", "histogram_sensitivity",
           "kde_sensitivity"]


def kde_sensitivity(bandwidth, n_samples, n_features):
    """RKHS sensitivity of the Gaussian kernel density estimator (replace-one).

    Dandekar et al. (2019), Sec. 3.3 (after Hall, Rinaldo and Wasserman 2013):
    ``f_D = (1/n) sum_i (2 pi h^2)^{-d/2} k(., x_i)`` with
    ``k(x, y) = exp(-||x - y||^2 / (2 h^2))``; replacing ``x_i`` by ``x_i'``
    changes ``f_D`` by ``(2 pi h^2)^{-d/2} (k(., x_i) - k(., x_i')) / n``, whose
    squared RKHS norm is ``(2 pi h^2)^{-d} (2 - 2 k(x_i, x_i')) / n^2 <= 2 (2 pi h^2)^{-d} / n^2``.

    Parameters
    ----------
    bandwidth : float
        ``h``, > 0.
    n_samples : int
        ``n``.
    n_features : int
        ``d``.

    Returns
    -------
    sensitivity : float
        ``sqrt(2) / (n (2 pi h^2)^{d/2})``.
    """
    return math.sqrt(2.0) / (n_samples * (2.0 * math.pi * bandwidth**2) ** (n_features / 2.0))


def histogram_sensitivity(n_samples):
    """L2 (RKHS) sensitivity of the vector of bin frequencies (replace-one).

    Dandekar et al. (2019), Sec. 3.3: the histogram is a vector in ``R^b`` whose RKHS is
    that of the dot-product kernel, i.e. the Euclidean norm. Replacing one
    point moves ``1/n`` of mass from one bin to another: the L2 change is
    ``sqrt(2) / n``. (Dandekar et al. (2019) uses the L1 change ``2 / n``, an upper bound
    that adds ``sqrt(2)`` times too much noise.)

    Parameters
    ----------
    n_samples : int
        ``n``.

    Returns
    -------
    sensitivity : float
        ``sqrt(2) / n``.
    """
    return math.sqrt(2.0) / n_samples


def _box_volume(sides):
    """``prod(sides)`` computed independently of the order of ``sides``.

    A running float product can overflow (or underflow) on the way for one
    order of the features and not for another (``1e200 * 1e200 * 1e-200 *
    1e-200``). The sides are sorted, and the product of their mantissas is
    renormalized at every step while the binary exponents are summed
    exactly, so the result only over- or underflows when the volume itself
    does, and is the same float for every permutation of the features.
    """
    mantissa, exponent = 1.0, 0
    for side in np.sort(np.asarray(sides, dtype=float).ravel()):
        m, e = math.frexp(float(side))
        mantissa, e2 = math.frexp(mantissa * m)
        exponent += e + e2
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(mantissa, int(np.clip(exponent, -4000, 4000))))


def _check_volume(sides, what, name):
    """The volume ``prod(sides)`` if it and its inverse are positive finite floats, else a
    clear error (its inverse is the uniform density that ``score_samples`` mixes in)."""
    volume = _box_volume(sides)
    if not np.finfo(float).tiny <= volume < math.inf:
        raise ValueError(
            f"{name}: the {what} volume {'overflows' if volume > 1 else 'underflows'}; the "
            "released density could not be normalized or scored. Rescale the data and the "
            "bounds by a constant fixed in advance. Nothing was spent.")
    return volume


class _DensityMixin:
    """Turn a released function (possibly negative, not normalized) into a density.

    ``score_samples`` scores the post-processed density
    ``q = (1 - w) max(f, 0) / Z + w / vol`` on the public box ``box_`` (and 0
    outside it), where ``Z`` integrates ``max(f, 0)`` over the box and ``w``
    is ``uniform_weight``. Post-processing a private release costs no privacy.
    """

    def _set_normalizer(self, box, mass):
        self.box_ = box
        self.normalizer_ = float(mass)

    def _volume(self):
        return _box_volume(self.box_[:, 1] - self.box_[:, 0])  # as checked by fit

    def score_samples(self, X):
        """Log of the post-processed released density.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query points.

        Returns
        -------
        log_density : ndarray of shape (n_queries,)
            ``log q(x)`` with ``q`` the released density clipped at zero,
            renormalized over ``box_`` and mixed with the uniform density of
            weight ``uniform_weight``; ``-inf`` outside ``box_``.
        """
        raw = self.density(X)
        X = np.asarray(X, dtype=float)
        weight = check_real(self.uniform_weight, "uniform_weight", low=0.0, high=1.0)
        if self.normalizer_ > 0:
            q = (1.0 - weight) * np.maximum(raw, 0.0) / self.normalizer_ + weight / self._volume()
        else:
            q = np.full(raw.shape, 1.0 / self._volume())
        inside = np.all((X >= self.box_[:, 0]) & (X <= self.box_[:, 1]), axis=1)
        with np.errstate(divide="ignore"):
            return np.where(inside, np.log(q), -np.inf)

    def score(self, X, y=None):
        """Total log-likelihood of ``X`` under the post-processed released density.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query points.
        y : None
            Ignored.

        Returns
        -------
        log_likelihood : float
            ``-inf`` as soon as one point lies outside the public box
            ``box_`` (density 0 there), with a warning: a search over
            ``bandwidth`` would then see only ties.
        """
        log_density = self.score_samples(X)
        X = np.asarray(X, dtype=float)
        outside = int(np.count_nonzero(
            ~np.all((X >= self.box_[:, 0]) & (X <= self.box_[:, 1]), axis=1)))
        if outside:
            warnings.warn(
                f"{outside} of {len(X)} points lie outside the public box "
                f"bounds (box_), where the density is 0: the log-likelihood is -inf. Widen "
                f"bounds (chosen without looking at the data) or clip the queries to it.",
                UserWarning, stacklevel=2)
        return float(np.sum(log_density))


@fill_doc
class PrivateKernelDensity(_DensityMixin, DPEstimatorMixin, BaseEstimator):
    """Gaussian kernel density estimate released by functional perturbation.

    Dandekar et al. (2019), Sec. 3.3 (after Hall, Rinaldo and Wasserman 2013): the kernel
    density estimate ``f_D`` plus a Gaussian-process sample path scaled to
    its RKHS sensitivity. The released density answers any number of queries
    from one noise draw (see Notes).

    Parameters
    ----------
    bandwidth : float or {"scott", "silverman"}, default=1.0
        Bandwidth ``h`` of the Gaussian kernel. The rules of
        :class:`sklearn.neighbors.KernelDensity` depend only on ``n`` and the
        number of features, not on the data values, so they are allowed.
    %(epsilon)s
    delta : float or None, default=None
        Probability with which the epsilon bound may fail, in ``(0, 1)``;
        ``None`` uses ``min(1e-5, 1 / n_samples**2)`` (stored in ``delta_``).
    calibration : {"analytic", "hall"}, default="analytic"
        Noise calibration: the exact analytic Gaussian mechanism, or seed
        003's ``c(delta) = sqrt(2 log(2/delta))``, accepted only where it is
        really (epsilon, delta)-DP.
    bounds : array-like of shape (2,) or (n_features, 2), default=(-3.0, 3.0)
        Public box over which support points are laid when ``X_public`` is
        not given to ``fit`` (the same ``(low, high)`` for every feature, or
        one pair per feature). It must not be derived from the data.
    n_public : int, default=1000
        Number of support points laid over ``bounds``: a regular grid when
        at least 8 points per axis fit, else a scrambled Halton sample.
    uniform_weight : float, default=0.01
        Weight of the uniform density on the box mixed into the density that
        ``score_samples`` scores (see there), in ``[0, 1]``.
    %(random_state)s
    %(accountant)s

    Attributes
    ----------
    bandwidth_ : float
        The bandwidth used.
    support_ : ndarray of shape (n_support, n_features)
        Public support points of the release.
    dual_coef_ : ndarray of shape (n_support,)
        The released density is ``exp(-||x - support_||^2 / (2 h^2)) @ dual_coef_``.
    sensitivity_ : float
        RKHS sensitivity ``Delta = sqrt(2) / (n (2 pi h^2)^{d/2})``.
    noise_scale_ : float
        ``sigma = Delta c(delta) / epsilon``, the multiplier of the sample path.
    box_ : ndarray of shape (n_features, 2)
        The public box over which ``score_samples`` normalizes: ``bounds``, or
        the bounding box of ``X_public``.
    normalizer_ : float
        Integral of the positive part of the released density over ``box_``
        (quasi-Monte Carlo on 4096 points).
    delta_ : float
        The delta used.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta_)``.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Privacy
    -------
    Replace-one neighbours (datasets of the same public size ``n`` differing
    in one row); every feature of every row is protected, with no bound on
    the data (the Gaussian kernel is bounded). ``(epsilon, delta)``-DP by Hall,
    Rinaldo and Wasserman (2013) / Dandekar et al. (2019), Definition 2, with the
    sensitivity of Dandekar et al. (2019), Sec. 3.3 (:func:`kde_sensitivity`), which we
    re-derived and agree with. Dandekar et al. (2019) writes the kernel's exponent as ``<., x_i>``; it
    is ``||. - x_i||^2``. The Gaussian process uses the *unnormalized* kernel
    ``exp(-||x - y||^2 / (2 h^2))``, the one whose RKHS norm the sensitivity
    is measured in. Dandekar et al.'s (2019) ``c(delta) = sqrt(2 log(2/delta))`` is not
    (epsilon, delta)-DP for large epsilon; the default calibration is the exact
    analytic one.
    With ``sample_weight`` a record is ``(x, w)``, ``w`` in ``[0, 1]``: replacing
    it moves ``f_D`` by ``(w k(., x) - w' k(., x')) / n`` times the kernel's
    normalization, of squared RKHS norm ``w^2 + w'^2 - 2 w w' k(x, x')
    <= 2``, the same sensitivity; the public ``n`` divides the sum (the
    weight sum is not released; ``score_samples`` renormalizes).

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    sklearn.neighbors.KernelDensity : The non-private estimator.
    PrivateHistogram : The histogram counterpart.

    Notes
    -----
    The release is pinned to public support points ``U`` (``X_public`` or a
    grid over ``bounds``): the values ``f_D(U) + sigma g``,
    ``g ~ N(0, K_UU)``, are the Gaussian mechanism with Mahalanobis
    sensitivity at most ``Delta``, and the released function is their kernel
    interpolant, the projection of ``f_D + sigma G`` onto
    ``span{k(., u)}``. The fitted object holds no private data and every
    query is a deterministic function of one noise draw, so repeated queries
    agree. Outside the support the density decays to 0; between support
    points the interpolation error is negligible when their spacing is below
    about ``h / 2``. The released density can be negative and does not
    integrate exactly to one.

    References
    ----------
    Hall, Rinaldo and Wasserman, "Differential privacy for functions and
    functional data", JMLR 14, 2013. Dandekar, Basu and Bressan, "Evaluation
    of differentially private non-parametric machine learning as a service",
    2019 (Dandekar et al. (2019)).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.kernel_methods import PrivateKernelDensity
    >>> X = np.random.default_rng(0).normal(size=(2000, 1))
    >>> kde = PrivateKernelDensity(bandwidth=0.3, epsilon=1.0, random_state=0).fit(X)
    >>> bool(abs(np.exp(kde.score_samples([[0.0]]))[0] - 0.4) < 0.05)
    True
    """

    def __init__(self, bandwidth=1.0, *, epsilon=1.0, delta=None, calibration="analytic",
                 bounds=(-3.0, 3.0), n_public=1000, uniform_weight=0.01, random_state=None,
                 accountant=None):
        self.bandwidth = bandwidth
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.bounds = bounds
        self.n_public = n_public
        self.uniform_weight = uniform_weight
        self.random_state = random_state
        self.accountant = accountant

    def _bandwidth(self, n, d):
        if isinstance(self.bandwidth, str):
            check_option(self.bandwidth, "bandwidth", ("scott", "silverman"))
            if self.bandwidth == "scott":
                return n ** (-1.0 / (d + 4))
            return (n * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        return check_real(self.bandwidth, "bandwidth", low=0.0, low_inclusive=False)

    def fit(self, X, y=None, sample_weight=None, X_public=None):
        """Release a private kernel density estimate of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private data.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weight ``w_i`` in ``[0, 1]`` of each point's kernel (weights above
            1 are clipped to 1 silently; negative, NaN or wrong-length weights
            are refused before any budget is spent). A record is ``(x, w)``, protected as a whole.
            The estimate is ``(1/n) sum_i w_i K_h(., x_i)`` with the public
            ``n``: it integrates to ``sum_i w_i / n``, and ``score_samples``
            renormalizes it over ``box_`` (post-processing), so the scored
            density is the weighted density of
            :class:`sklearn.neighbors.KernelDensity`. A zero weight removes
            the point; unit weights give exactly the unweighted fit.
        X_public : array-like of shape (n_support, n_features) or None, default=None
            Public support points (not protected). ``None`` lays
            ``n_public`` points over ``bounds``.

        Returns
        -------
        self : PrivateKernelDensity
            The fitted estimator.
        """
        X = validate_data(self, X, dtype=np.float64)
        n, d = X.shape
        # Weights in [0, 1] (None when all are 1: unit weights run the unweighted code).
        sample_weight = check_bounded_sample_weight(sample_weight, n)
        h = self._bandwidth(n, d)
        check_option(self.calibration, "calibration", CALIBRATIONS)
        check_real(self.uniform_weight, "uniform_weight", low=0.0, high=1.0)
        if X_public is None:
            box = check_bounds(self.bounds, d, type(self).__name__)
            support = public_support(box, self.n_public, d)
        else:
            support = validate_data(self, X_public, dtype=np.float64, reset=False)
            box = np.column_stack([support.min(axis=0), support.max(axis=0)])
            if np.any(box[:, 0] >= box[:, 1]):
                raise ValueError("X_public must span a box of positive volume.")
        volume = _check_volume(box[:, 1] - box[:, 0], "box", type(self).__name__)
        # 1 / (2 h^2) and the kernel's normalizer (2 pi h^2)^(-d/2), in floats: a subnormal
        # h^2 made 1 / (2 h^2) inf (a NaN kernel matrix, a NaN release after the charge), a
        # subnormal normalizer an OverflowError in kde_sensitivity.
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            h2 = np.float64(h) ** 2
            norm = float((2.0 * np.pi * h2) ** (-d / 2.0))
            gamma = float(1.0 / (2.0 * h2))
        tiny = np.finfo(float).tiny
        if not (tiny <= h2 < math.inf and tiny <= norm < math.inf and gamma < math.inf):
            raise ValueError(
                f"{type(self).__name__}: bandwidth={h:g} in {d} dimensions puts 1 / (2 h^2) or "
                "the kernel's normalizer (2 pi h^2)^(-d/2) outside the float range. Rescale "
                "the data and the bounds by a constant fixed in advance. Nothing was spent.")
        K_uu = gaussian_kernel(support, support, gamma)
        factor = support_factor(K_uu)  # public; before the charge
        budget = self._resolve_budget(n, default_delta, allow_zero_delta=False)
        sensitivity = kde_sensitivity(h, n, d)
        sigma = functional_noise_sigma(sensitivity, budget.epsilon, budget.delta,
                                       self.calibration)
        # The values norm * (1/n) sum_i w_i k(u, x_i) lie in [0, norm].
        check_release_scale(norm, sigma, K_uu, type(self).__name__)
        budget, rng = self._start_private_fit(n, default_delta=default_delta,
                                              allow_zero_delta=False)
        self.sensitivity_ = sensitivity
        self.noise_scale_ = sigma
        kernel = gaussian_kernel(support, X, gamma)
        # (1/n) sum_i w_i k(u, x_i), n public: weights in [0, 1] keep kde_sensitivity.
        values = norm * (kernel.mean(axis=1) if sample_weight is None
                         else kernel @ sample_weight / n)
        self.dual_coef_, _ = gp_release(values, K_uu, self.noise_scale_, rng, factor=factor)
        self.support_ = support
        self.bandwidth_ = h
        self.delta_ = budget.delta
        self.privacy_spent_ = budget
        grid = public_support(box, _N_NORMALIZE, d)
        self._set_normalizer(box, volume * np.mean(np.maximum(self.density(grid), 0.0)))
        return self

    def density(self, X):
        """The released function at ``X`` (raw: it can be negative; see ``score_samples``).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query points.

        Returns
        -------
        density : ndarray of shape (n_queries,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        gamma = 1.0 / (2.0 * self.bandwidth_**2)
        return gaussian_kernel(X, self.support_, gamma) @ self.dual_coef_


@fill_doc
class PrivateHistogram(_DensityMixin, DPEstimatorMixin, BaseEstimator):
    """Histogram density estimate released by functional perturbation.

    Dandekar et al. (2019), Sec. 3.3: the vector of bin frequencies lies in the RKHS of
    the dot-product kernel on ``R^b``, whose Gaussian process is i.i.d.
    standard normal noise per bin; so the release adds
    ``N(0, sigma^2)`` to every bin frequency, ``sigma`` calibrated to the
    L2 sensitivity ``sqrt(2) / n``.

    Parameters
    ----------
    bins : int or sequence of int, default=10
        Number of equal-width bins per feature (one int for all features).
    bounds : array-like of shape (2,) or (n_features, 2), default=(-3.0, 3.0)
        Public range of the bins, per feature. Points outside are not counted
        (as :func:`numpy.histogram` does); it must not be derived from the data.
    %(epsilon)s
    delta : float or None, default=None
        Probability with which the epsilon bound may fail, in ``(0, 1)``;
        ``None`` uses ``min(1e-5, 1 / n_samples**2)`` (stored in ``delta_``).
    calibration : {"analytic", "hall"}, default="analytic"
        Noise calibration (see :class:`PrivateKernelDensity`); used with
        ``noise="gaussian"``.
    uniform_weight : float, default=0.01
        Weight of the uniform density mixed into the density that
        ``score_samples`` scores, in ``[0, 1]`` (see
        :meth:`PrivateKernelDensity.score_samples`).
    noise : {"gaussian", "discrete_gaussian"}, default="gaussian"
        ``"gaussian"`` adds floating-point Gaussian noise to the frequencies.
        ``"discrete_gaussian"`` releases the integer bin counts plus exact
        discrete Gaussian noise (:class:`~skdp.mechanisms.DiscreteGaussianMechanism`),
        which is safe against floating-point attacks on the low-order bits of
        the noisy values (Mironov 2012); it is calibrated through zCDP, with
        about 30% more noise, and the frequencies are derived from the noisy
        counts.
    %(random_state)s
    %(accountant)s

    Attributes
    ----------
    bin_edges_ : list of ndarray
        Bin edges per feature.
    hist_ : ndarray of shape (bins_1, ..., bins_d)
        Released density per bin (noisy frequency / bin volume; can be negative).
    sensitivity_ : float
        ``sqrt(2) / n``, the L2 sensitivity of the frequencies.
    noise_scale_ : float
        Standard deviation of the noise on each frequency.
    box_ : ndarray of shape (n_features, 2)
        The range of the bins.
    normalizer_ : float
        Sum of the positive noisy frequencies.
    delta_ : float
        The delta used.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta_)``.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Privacy
    -------
    Replace-one neighbours (same public ``n``); every feature of every row is
    protected. ``(epsilon, delta)``-DP as the Gaussian mechanism on the
    frequency vector with L2 sensitivity ``sqrt(2) / n`` (Dandekar et al. (2019),
    Definition 2 with the dot-product kernel). Correction: Dandekar et al. (2019) takes the
    L1 distance ``2`` (``2 / n`` for frequencies) as the sensitivity, but the
    RKHS norm of the dot-product kernel is the Euclidean one; ``sqrt(2) / n``
    is exact and needs ``sqrt(2)`` times less noise. With
    ``noise="discrete_gaussian"`` the same neighbours move the integer count
    vector by ``e_b - e_a`` (squared L2 norm at most 2), and the counts get
    independent discrete Gaussian noise with ``rho = 2 / (2 sigma^2)``-zCDP
    (Canonne, Kamath and Steinke 2020), converted to ``(epsilon, delta)`` by
    their Cor. 13; the frequencies are post-processing.
    With ``sample_weight`` a record is ``(x, w)``, ``w`` in ``[0, 1]`` (0 or 1
    with discrete noise): replacing it moves the weighted counts by
    ``w e_a - w' e_b``, of L2 norm at most ``sqrt(2)``, the same
    sensitivity; the counts are divided by the public ``n``.

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012); ``noise="discrete_gaussian"`` draws exact integer noise instead.

    See Also
    --------
    PrivateKernelDensity : The smooth counterpart.
    numpy.histogramdd : The non-private histogram.

    References
    ----------
    A. Dandekar, D. Basu and S. Bressan, "Evaluation of differentially private
    non-parametric machine learning as a service", technical report, National
    University of Singapore, 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.kernel_methods import PrivateHistogram
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(5000, 1))
    >>> hist = PrivateHistogram(bins=5, bounds=(0, 1), epsilon=1.0, random_state=0).fit(X)
    >>> bool(np.allclose(hist.hist_, 1.0, atol=0.05))
    True
    """

    def __init__(self, bins=10, *, bounds=(-3.0, 3.0), epsilon=1.0, delta=None,
                 calibration="analytic", uniform_weight=0.01, noise="gaussian",
                 random_state=None, accountant=None):
        self.bins = bins
        self.bounds = bounds
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.uniform_weight = uniform_weight
        self.noise = noise
        self.random_state = random_state
        self.accountant = accountant

    def _discrete_sigma2(self, budget):
        """``sigma^2`` of the discrete noise on the counts (a method so tests can under-noise)."""
        # Replace-one moves the count vector by e_b - e_a: integer L2 sensitivity sqrt(2).
        return discrete_gaussian_sigma2(math.sqrt(2.0), budget.epsilon, budget.delta)

    def _bins(self, d):
        bins = [self.bins] * d if isinstance(self.bins, numbers.Integral) else list(self.bins)
        if len(bins) != d:
            raise ValueError(f"bins must be an int or have one entry per feature ({d}); "
                             f"got {self.bins!r}.")
        return [check_positive_int(b, "bins") for b in bins]

    def fit(self, X, y=None, sample_weight=None):
        """Release a private histogram of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private data.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weight ``w_i`` in ``[0, 1]`` each point adds to its bin (weights
            above 1 are clipped to 1 silently; negative, NaN or wrong-length
            weights are refused before any budget is spent); with ``noise="discrete_gaussian"`` only 0 or 1, so
            that the counts stay integers (fractional weights are refused).
            A record is ``(x, w)``, protected as a whole. The frequencies are
            the weighted counts over the public ``n``; ``score_samples``
            renormalizes them (post-processing). A zero weight removes the
            point; unit weights give exactly the unweighted fit.

        Returns
        -------
        self : PrivateHistogram
            The fitted estimator.
        """
        X = validate_data(self, X, dtype=np.float64)
        n, d = X.shape
        bins = self._bins(d)
        box = check_bounds(self.bounds, d, type(self).__name__)
        check_option(self.calibration, "calibration", CALIBRATIONS)
        noise = check_option(self.noise, "noise", ("gaussian", "discrete_gaussian"))
        # Weights in [0, 1] (None when all are 1: unit weights run the unweighted code).
        sample_weight = check_bounded_sample_weight(sample_weight, n)
        if (noise == "discrete_gaussian" and sample_weight is not None
                and np.any((sample_weight != 0.0) & (sample_weight != 1.0))):
            raise ValueError("PrivateHistogram(noise='discrete_gaussian') takes sample_weight "
                             "of 0 or 1 only (the released counts are integers); use "
                             "noise='gaussian' for fractional weights.")
        check_real(self.uniform_weight, "uniform_weight", low=0.0, high=1.0)
        name = type(self).__name__
        _check_volume(box[:, 1] - box[:, 0], "box", name)
        volume = _check_volume([(hi - lo) / b for (lo, hi), b in zip(box, bins)], "bin", name)
        edges = [np.linspace(lo, hi, b + 1) for (lo, hi), b in zip(box, bins)]
        # Weighted counts: one record moves w e_a - w' e_b, L2 norm <= sqrt(2) for w, w' in [0, 1].
        # Counted before the charge (no release yet): bins too many to allocate fail here.
        counts, _ = np.histogramdd(X, bins=edges, weights=sample_weight)
        budget = self._resolve_budget(n, default_delta, allow_zero_delta=False)
        sensitivity = histogram_sensitivity(n)
        if noise == "gaussian":
            sigma = functional_noise_sigma(sensitivity, budget.epsilon, budget.delta,
                                           self.calibration)
        else:
            sigma2 = self._discrete_sigma2(budget)
            sigma = math.sqrt(sigma2) / n  # the noise's standard deviation on a frequency
        # Released densities (frequency + noise) / bin volume, |frequency| <= 1 and the noise
        # below 40 sigma: refuse before the charge a bin volume that would make them inf.
        if not (1.0 + 40.0 * sigma) / volume < np.finfo(float).max:
            raise ValueError(
                f"{name}: the released bin densities would overflow the float range (bin "
                f"volume {volume:g}, noise scale {sigma:g}). Rescale the data and the bounds "
                "by a constant fixed in advance. Nothing was spent.")
        budget, rng = self._start_private_fit(n, default_delta=default_delta,
                                              allow_zero_delta=False)
        self.sensitivity_ = sensitivity
        self.noise_scale_ = sigma
        if noise == "gaussian":
            # Dandekar et al. (2019), Sec. 3.3: f_D + (Delta c(delta) / epsilon) G, G i.i.d. N(0, 1) per bin.
            freq = counts / n + self.noise_scale_ * rng.standard_normal(counts.shape)
        else:
            # Exact integer noise on the integer counts (CKS Alg. 3); frequencies are
            # post-processing of the integer release.
            noisy = counts.astype(np.int64) + sample_discrete_gaussian(
                sigma2, counts.size, rng).reshape(counts.shape)
            freq = noisy / n
        self.bin_edges_ = edges
        self.hist_ = freq / volume
        self._set_normalizer(box, np.sum(np.maximum(freq, 0.0)))
        self.delta_ = budget.delta
        self.privacy_spent_ = budget
        return self

    def density(self, X):
        """The released density at ``X`` (0 outside the bins; can be negative).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query points.

        Returns
        -------
        density : ndarray of shape (n_queries,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        inside = np.ones(X.shape[0], dtype=bool)
        index = []
        for j, e in enumerate(self.bin_edges_):
            inside &= (X[:, j] >= e[0]) & (X[:, j] <= e[-1])
            # The last bin is closed on the right, as in numpy.histogramdd.
            index.append(np.clip(np.searchsorted(e, X[:, j], side="right") - 1, 0, len(e) - 2))
        out = np.zeros(X.shape[0])
        out[inside] = self.hist_[tuple(i[inside] for i in index)]
        return out
