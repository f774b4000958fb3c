"""Gaussian-process regression whose posterior mean is released by functional perturbation."""

import math

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.base import DPEstimatorMixin
from skdp.kernel_methods._functional import (
    CALIBRATIONS,
    check_release_scale,
    default_delta,
    functional_noise_sigma,
    gp_release,
    support_factor,
)
from skdp.kernel_methods._kernels import KernelParamsMixin, fill_kernel_doc
from skdp.utils._validation import check_option, check_positive_int, check_real

__all__ = ["PrivateGaussianProcessRegressor", "gp_mean_sensitivity"]


def _check_y_bounds(y_bounds):
    try:
        lo, hi = y_bounds
    except (TypeError, ValueError):
        raise ValueError(f"y_bounds must be a pair (low, high); got {y_bounds!r}.") from None
    lo, hi = check_real(lo, "y_bounds[0]"), check_real(hi, "y_bounds[1]")
    if lo >= hi:
        raise ValueError(f"y_bounds must have low < high; got {y_bounds!r}.")
    return lo, hi


def gp_mean_sensitivity(K, alpha, label_range, noise_factor=None):
    """RKHS sensitivity of the GP posterior mean to one label (inputs public).

    The posterior mean is ``f_D = sum_i a_i k(., x_i)`` with
    ``a = C^{-1} y``, ``C = K + alpha I``. Changing one label ``y_j`` by at
    most ``d`` changes ``a`` by ``d C^{-1} e_j``, so
    ``||f_D - f_D'||_H^2 = d^2 e_j^T C^{-1} K C^{-1} e_j``. The sensitivity is
    the maximum over ``j``, computed exactly from the public inputs. Smith,
    Zwiessele and Lawrence (2016), quoted by Dandekar et al. (2019), Sec. 3.3, bound it by
    ``d ||C^{-1}||_inf`` for kernels with ``|k| <= 1``; the exact value is
    never larger (``v^T K v <= ||v||_1^2 max |k|``) and needs no bound on
    the kernel.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix of the (public) training inputs.
    alpha : float
        Noise variance added to the diagonal, > 0.
    label_range : float
        ``d``, the largest change of one label (``high - low`` of ``y_bounds``).
    noise_factor : tuple or None, default=None
        Cholesky factor of the noise covariance ``L L^T = K + tau I``
        (:func:`~skdp.kernel_methods._functional.support_factor`). When given,
        the result is the larger of the RKHS bound and the exact sensitivity
        of the released values ``K C^{-1} y`` in the metric of that noise,
        ``d max_j ||L^{-1} K C^{-1} e_j||_2`` (the Gaussian mechanism on
        ``L^{-1} v``; Thakkar (2019), Lemma 2.1.9, after whitening). For a positive
        semi-definite ``K`` the second is at most the first (up to
        rounding); the RKHS argument fails for a kernel that is not, which
        the jitter of ``support_factor`` can accept: a negative eigenvalue
        ``-lambda`` just below ``tau`` leaves noise variance ``tau - lambda``
        in a direction the mean moves by about ``lambda / alpha``.

    Returns
    -------
    sensitivity : float
        ``d max_j sqrt((C^{-1} K C^{-1})_jj)``, or the larger value above.
    factor : tuple
        Cholesky factor of ``C`` (``scipy.linalg.cho_factor`` format).
    """
    n = K.shape[0]
    factor = linalg.cho_factor(K + alpha * np.eye(n), lower=True, check_finite=False)
    c_inv = linalg.cho_solve(factor, np.eye(n), check_finite=False)
    c_inv_k = c_inv @ K
    # (C^{-1} K C^{-1})_jj = sum_k (C^{-1} K)_jk (C^{-1})_kj, C^{-1} symmetric.
    quad = np.einsum("jk,jk->j", c_inv_k, c_inv)
    if noise_factor is not None:
        # Column j of K C^{-1} is row j of C^{-1} K; whitened by the noise factor.
        w = linalg.solve_triangular(np.tril(noise_factor[0]), c_inv_k.T, lower=True,
                                    check_finite=False)
        quad = np.maximum(quad, np.einsum("ij,ij->j", w, w))
    return label_range * float(np.sqrt(max(quad.max(), 0.0))), factor


@fill_kernel_doc
class PrivateGaussianProcessRegressor(KernelParamsMixin, DPEstimatorMixin, RegressorMixin,
                                      BaseEstimator):
    """Gaussian-process regression with a differentially private posterior mean.

    Dandekar et al. (2019), Sec. 3.3 (after Smith, Zwiessele and Lawrence 2016): the inputs
    are public and the labels private. The posterior mean, a function in the
    RKHS of the kernel, is released with a Gaussian-process sample path
    scaled to its RKHS sensitivity to one label. The kernel and the noise
    level are fixed in advance (tuning them on the data would leak).

    Parameters
    ----------
    %(kernel)s
    alpha : float or None, default=None
        Noise variance ``sigma_n^2`` added to the kernel matrix's diagonal,
        > 0. The sensitivity is at most ``d / (2 sqrt(alpha))``: larger
        values need less privacy noise. ``None`` (stored in ``alpha_``):
        ``max(1, 6 s)`` with ``s = c(delta) / epsilon`` the noise multiplier
        per unit of sensitivity (:func:`functional_noise_sigma` at
        sensitivity 1), from ``epsilon`` and ``delta`` only: 1 (the
        non-private ``KernelRidge()`` default) at a large epsilon, about 30
        at ``epsilon=1``.
    y_bounds : tuple of float, default=(-1.0, 1.0)
        Public range of the labels; labels are clipped to it (a per-record
        operation), the prior mean is its midpoint and ``predict`` clips the
        released mean to it (post-processing). Its width ``d`` is the
        largest change of one label. The default suits only labels scaled to
        ``[-1, 1]`` in advance; it cannot be derived from the data. Pass the
        public range of your target, fixed from domain knowledge (e.g. the
        log of the legal minimum and of a top-coded wage): on log wages in
        ``[4.6, 13.1]`` the default gave ``R^2 = -64``, the true range 0.34
        at ``epsilon=1e6``. Labels outside are clipped silently (their count
        is data and is not reported).
    %(epsilon)s
    delta : float or None, default=None
        Probability with which the epsilon bound may fail, in ``(0, 1)``;
        ``None`` uses ``min(1e-5, 1 / n_samples**2)`` (stored in ``delta_``).
    calibration : {"analytic", "hall"}, default="analytic"
        Noise calibration (see :class:`PrivateKernelDensity`).
    %(random_state)s
    %(accountant)s
    %(verbose)s
        With ``verbose >= 1`` the fit prints its stages and the noise
        calibration.

    Attributes
    ----------
    X_train_ : ndarray of shape (n_samples, n_features)
        The training inputs (public in this model) and support of the release.
    dual_coef_ : ndarray of shape (n_samples,)
        The released function is ``y_offset_ + k(x, X_train_) @ dual_coef_``;
        ``predict`` returns it clipped to ``y_bounds_``.
    y_offset_ : float
        Prior mean, the midpoint of ``y_bounds``.
    y_bounds_ : tuple of float
        The validated ``y_bounds`` of ``fit``; ``predict`` clips to them.
    L_ : ndarray of shape (n_samples, n_samples)
        Lower Cholesky factor of ``K + alpha I`` (public: inputs only).
    alpha_ : float
        The noise variance used (``alpha``, or the ``alpha=None`` rule).
    sensitivity_ : float
        RKHS sensitivity of the posterior mean (:func:`gp_mean_sensitivity`),
        or the exact sensitivity of the released values in the metric of
        their noise when that is larger (a kernel that is not positive
        semi-definite; see Privacy).
    noise_scale_ : float
        Multiplier of the Gaussian-process sample path.
    delta_ : float
        The delta used.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta_)``.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Privacy
    -------
    Neighbouring datasets have the same inputs and differ in one label, by
    at most the width of ``y_bounds`` (Smith, Zwiessele and Lawrence
    (2016)). Only the labels are protected: the inputs are public and are
    stored in the fitted model (``X_train_``). ``(epsilon, delta)``-DP by
    functional perturbation (Hall, Rinaldo and Wasserman (2013); Dandekar et
    al. (2019), Definition 2) with the exact RKHS sensitivity of
    :func:`gp_mean_sensitivity`, which corrects Dandekar et al.'s (2019)
    bound, and the exact analytic Gaussian calibration. For a kernel that
    may not be positive semi-definite (a callable) the noise is calibrated
    to the larger of that bound and a sensitivity that holds for any
    symmetric kernel matrix. Public inputs: ``y_bounds`` (the labels are
    clipped to it), the inputs ``X`` and the hyperparameters. ``fit`` takes
    no ``sample_weight``: a weight would change every coefficient. Details:
    :ref:`kernel_privacy`.

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    sklearn.gaussian_process.GaussianProcessRegressor : The non-private model.

    Notes
    -----
    The release is pinned to the training inputs: ``f_D(X) + sigma g``,
    ``g ~ N(0, K)``, then interpolated by the kernel. The posterior mean lies
    in ``span{k(., x_i)}``, so the only approximation is a 1e-10 relative
    jitter. Far from the inputs the released mean returns to ``y_offset_``.

    ``predict`` clips the released function to ``y_bounds``: the labels it
    was fitted on lie there, the privacy noise does not (at small epsilon
    it can reach several times the width of ``y_bounds``), and clipping to
    a public interval only moves a prediction closer to any value inside
    it. It reads nothing but the released function and the public bounds,
    so it is post-processing and costs no privacy. ``dual_coef_`` still
    holds the unclipped release.

    ``predict(X, return_std=True)`` returns the same clipped mean and the
    non-private posterior standard deviation, which depends on the public
    inputs only and ignores both the privacy noise and the clipping. It is
    left unchanged: it is the Bayesian model's uncertainty about the
    function, not an error bar of the private release, whose extra
    spread at ``X`` is about ``noise_scale_`` times the prior standard
    deviation ``sqrt(k(x, x))`` before clipping.

    References
    ----------
    Smith, Zwiessele and Lawrence, "Differentially private Gaussian
    processes", arXiv:1606.00720, 2016. Hall, Rinaldo and Wasserman,
    "Differential privacy for functions and functional data", JMLR 14, 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.kernel_methods import PrivateGaussianProcessRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(300, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=300)
    >>> gp = PrivateGaussianProcessRegressor(gamma=0.5, alpha=1.0, y_bounds=(-2, 2),
    ...                                      epsilon=5.0, random_state=0).fit(X, y)
    >>> bool(np.abs(gp.predict([[1.5]])[0] - np.sin(1.5)) < 0.5)
    True
    """

    def __init__(self, kernel="rbf", *, gamma=None, degree=3, coef0=1.0, kernel_params=None,
                 alpha=None, y_bounds=(-1.0, 1.0), epsilon=1.0, delta=None,
                 calibration="analytic", random_state=None, accountant=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.alpha = alpha
        self.y_bounds = y_bounds
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def _resolve_alpha(self, budget):
        """``alpha=None``: ``max(1, 6 s)``, ``s`` the noise multiplier per unit sensitivity.

        Public (epsilon, delta, calibration only). The noise on a released
        value is at most ``s d / (2 sqrt(alpha))``; the factor 6 was chosen on
        the ``gss_wages`` table (1,500 rows, y_bounds its public range):
        ``R^2`` 0.12 at ``epsilon=1`` for ``alpha=30``, 0.01 at 225, negative
        at 1 and at 1000 (the posterior mean shrinks to the midpoint).
        """
        if self.alpha is not None:
            return float(self.alpha)
        s = functional_noise_sigma(1.0, budget.epsilon, budget.delta, self.calibration)
        return max(1.0, 6.0 * s) if math.isfinite(s) else 1.0

    def fit(self, X, y):
        """Release the private posterior mean.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Public training inputs.
        y : array-like of shape (n_samples,)
            Private labels.

        Returns
        -------
        self : PrivateGaussianProcessRegressor
            The fitted estimator.
        """
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        kernel = self._get_kernel(X.shape[1], require_bound=False)
        if self.alpha is not None:
            check_real(self.alpha, "alpha", low=0.0, low_inclusive=False)
        lo, hi = _check_y_bounds(self.y_bounds)
        check_option(self.calibration, "calibration", CALIBRATIONS)
        n = X.shape[0]
        alpha = self._resolve_alpha(self._resolve_budget(n, default_delta,
                                                         allow_zero_delta=False))
        verbose = check_positive_int(self.verbose, "verbose", low=0)
        name = type(self).__name__
        if verbose:  # the slow part, O(n^3) on the public inputs
            print(f"[{name}] computing the label sensitivity and the noise factor from the "
                  f"{n} public inputs")
        K = kernel(X)
        noise_factor = support_factor(K)  # public inputs; before the charge
        # With noise_factor: also the exact sensitivity of what is released, which needs no
        # positive semi-definite K (the RKHS bound does).
        sensitivity, factor = gp_mean_sensitivity(K, alpha, hi - lo, noise_factor=noise_factor)
        budget = self._resolve_budget(n, default_delta, allow_zero_delta=False)
        sigma = functional_noise_sigma(sensitivity, budget.epsilon, budget.delta,
                                       self.calibration)
        # Public bound on every float of mean_at_x below: |y - offset| <= r, so the solves
        # with C = K + alpha I give ||a||_2 <= sqrt(n) r max(1 / alpha, 1 / sqrt(alpha)), and
        # each entry of K a is at most sqrt(n) max k(x, x) ||a||_2.
        r, k_max = 0.5 * (hi - lo), float(np.max(np.diag(K)))
        check_release_scale(
            r * math.sqrt(n) * max(1.0 / alpha, 1.0 / math.sqrt(alpha))
            * max(1.0, math.sqrt(n) * k_max), sigma, K, name)
        offset = 0.5 * (lo + hi)
        # Labels outside y_bounds are clipped silently (a per-record operation): a warning
        # with their count would change when one label moves, and so release data.
        budget, rng = self._start_private_fit(n, default_delta=default_delta,
                                              allow_zero_delta=False)
        if verbose:
            print(f"[{name}] releasing the posterior mean at epsilon={budget.epsilon:g}, "
                  f"delta={budget.delta:g}: RKHS sensitivity {sensitivity:.4g}, noise scale "
                  f"{sigma:.4g}")
        mean_at_x = K @ linalg.cho_solve(factor, np.clip(y, lo, hi) - offset, check_finite=False)
        self.alpha_ = alpha
        self.sensitivity_ = sensitivity
        self.noise_scale_ = sigma
        self.dual_coef_, _ = gp_release(mean_at_x, K, self.noise_scale_, rng,
                                        factor=noise_factor)
        self.X_train_ = X
        self._kernel = kernel  # the release's kernel, whatever set_params does later
        self.y_offset_ = offset
        self.y_bounds_ = (lo, hi)
        self.L_ = np.tril(factor[0])
        self.delta_ = budget.delta
        self.privacy_spent_ = budget
        return self

    def predict(self, X, return_std=False):
        """Evaluate the released posterior mean.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query points.
        return_std : bool, default=False
            Also return the (non-private, public) posterior standard deviation.

        Returns
        -------
        y_mean : ndarray of shape (n_queries,)
            The released mean, clipped to ``y_bounds`` (post-processing).
        y_std : ndarray of shape (n_queries,)
            Only when ``return_std`` is true (see Notes).
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        kernel = self._fitted_kernel(X.shape[1], require_bound=False)
        K_x = kernel(X, self.X_train_)
        # Post-processing of the released function with the public bounds.
        mean = np.clip(self.y_offset_ + K_x @ self.dual_coef_, *self.y_bounds_)
        if not return_std:
            return mean
        v = linalg.solve_triangular(self.L_, K_x.T, lower=True, check_finite=False)
        var = kernel.diag(X) - np.einsum("ij,ij->j", v, v)
        return mean, np.sqrt(np.clip(var, 0.0, None))
