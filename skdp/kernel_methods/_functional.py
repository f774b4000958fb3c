"""Functional perturbation (Hall, Rinaldo and Wasserman 2013; Dandekar et al. (2019), Sec. 3.2, Definition 2).

The mechanism releases ``f_D + sigma G`` where ``G`` is a sample path of the
zero-mean Gaussian process with covariance ``k``, and ``Delta`` bounds the RKHS
norm ``||f_D - f_D'||_H`` over neighbouring datasets.

How one noise draw answers every query
--------------------------------------
A sample path cannot be stored, and sampling it lazily at each new query
(conditioned on the points answered before) would force the released object
to keep the private data to evaluate ``f_D`` at future queries: a pickled
model would then carry the training set. Instead the release is pinned to a
finite set ``U`` of *public* support points:

1. ``v = f_D(U) + sigma g`` with ``g ~ N(0, K_UU)``. For any ``f, f'`` in the
   RKHS, ``||K_UU^{-1/2} (f(U) - f'(U))||_2 <= ||f - f'||_H <= Delta`` (the
   evaluation vector of the projection of ``f - f'`` onto
   ``span{k(., u)}``), so ``v`` is the Gaussian mechanism with Mahalanobis
   sensitivity ``Delta`` (Hall et al.'s finite-dimensional Proposition, the
   step their proof for sample paths reduces to). The noise is drawn with
   covariance ``K_UU + tau I``, ``tau`` a tiny jitter: more noise, never less.
2. The released function is the kernel interpolant of ``v`` through ``U``:
   ``x -> k(x, U) (K_UU + tau I)^{-1} v``, a deterministic post-processing of
   ``v``. It is the RKHS projection onto ``span{k(., u)}`` of the exact
   release ``f_D + sigma G`` (up to the jitter ``tau`` that keeps the solve
   stable), so it answers every query, any number of times, consistently,
   from the one draw ``g``, and the fitted object holds only ``U`` and the
   coefficients.

The price is an approximation: between support points the released function
is the projection, not ``f_D`` itself, and the noise is the conditional mean
of ``G`` given ``G(U)`` (smaller than ``G``'s). When ``f_D`` lies in
``span{k(., u)}`` (Gaussian process regression with public inputs, where
``U`` is the training inputs) the first error vanishes. For a density on a
grid finer than about half the bandwidth it is negligible.
"""

import math

import numpy as np
from scipy import linalg
from scipy.stats import norm, qmc

from skdp.mechanisms import gaussian_delta_analytic, gaussian_sigma_analytic
from skdp.utils._validation import check_feature_bounds, check_option, check_positive_int

__all__ = [
    "CALIBRATIONS",
    "check_bounds",
    "check_release_scale",
    "default_delta",
    "functional_noise_sigma",
    "gp_release",
    "public_support",
    "sphere_support",
    "subspace_features",
    "support_factor",
]

CALIBRATIONS = ("analytic", "hall")

# Smallest relative jitter added to the support kernel matrix (see gp_release), and the
# number of tenfold steps tried: 1e-10 to 1e-2 times max k(u, u).
_JITTER = 1e-10
_JITTER_STEPS = 9


def default_delta(n_samples):
    """Delta used when ``delta=None``: ``min(1e-5, 1 / n^2)``, well below ``1 / n``.

    Parameters
    ----------
    n_samples : int
        Number of training rows.

    Returns
    -------
    delta : float
    """
    return min(1e-5, 1.0 / n_samples**2)


def functional_noise_sigma(sensitivity, epsilon, delta, calibration="analytic"):
    """Scale ``sigma = Delta c(delta) / epsilon`` of the Gaussian-process noise.

    Parameters
    ----------
    sensitivity : float
        ``Delta``, the RKHS-norm sensitivity, > 0.
    epsilon : float
        > 0.
    delta : float
        In ``(0, 1)``.
    calibration : {"analytic", "hall"}, default="analytic"
        ``"hall"``: Dandekar et al. (2019), Definition 2 (Hall et al. 2013):
        ``c(delta) = sqrt(2 log(2 / delta))``. That constant comes from a
        Gaussian tail bound that is not (epsilon, delta)-DP for every epsilon
        (at epsilon = 10, delta = 1e-5 the exact delta it achieves is 1.4
        times the claim), so it is accepted only where the exact privacy
        profile confirms it. ``"analytic"``: the smallest sigma that is
        exactly (epsilon, delta)-DP for the Gaussian mechanism with
        (Mahalanobis) sensitivity ``Delta`` (Balle and Wang 2018), valid for
        every epsilon.

    Returns
    -------
    sigma : float
        The multiplier of the sample path ``G``.
    """
    check_option(calibration, "calibration", CALIBRATIONS)
    if calibration == "analytic":
        return gaussian_sigma_analytic(sensitivity, epsilon, delta)
    # Dandekar et al. (2019), eq. (1) and Definition 2: f_D + Delta c(delta) / epsilon G,
    # c(delta) = sqrt(2 log(2 / delta)).
    sigma = sensitivity * math.sqrt(2.0 * math.log(2.0 / delta)) / epsilon
    achieved = gaussian_delta_analytic(sensitivity, sigma, epsilon)
    if achieved > delta:
        raise ValueError(
            f"calibration='hall' (c(delta) = sqrt(2 log(2/delta))) is not "
            f"({epsilon}, {delta})-DP: its exact delta is {achieved:.3g}. Use "
            "calibration='analytic'."
        )
    return sigma


def support_factor(K_uu):
    """Cholesky factor of ``K_uu + tau I``, the noise covariance of :func:`gp_release`.

    ``tau`` starts at ``1e-10 max k(u, u)`` and grows tenfold until the
    factorization succeeds, up to ``1e-2 max k(u, u)``. It reads the public
    ``K_uu`` only, so callers compute it before the budget is charged: a
    kernel that is not positive semi-definite is refused before anything is
    spent.

    Parameters
    ----------
    K_uu : ndarray of shape (m, m)
        Kernel matrix of the support points (public).

    Returns
    -------
    factor : tuple
        ``scipy.linalg.cho_factor`` output (lower).
    """
    m = K_uu.shape[0]
    if not np.all(np.isfinite(K_uu)):
        # NaN would pass the factorization and make the release NaN after the charge.
        raise ValueError("the kernel matrix of the support points has non-finite entries "
                         "(overflow in the kernel or its parameters); nothing was spent.")
    scale = max(float(np.max(np.diag(K_uu))), np.finfo(float).tiny)
    # Powers of ten computed directly: a running product (jitter *= 10) rounds, and
    # whether its last step compared above 1e-3 * scale decided, by the last bit of
    # max k(u, u), if 1e-2 was tried at all.
    for jitter in _JITTER * scale * 10.0 ** np.arange(_JITTER_STEPS):
        try:
            return linalg.cho_factor(K_uu + jitter * np.eye(m), lower=True, check_finite=False)
        except linalg.LinAlgError:
            pass
    raise ValueError("the kernel matrix of the support points is not positive "
                     "semi-definite; check the kernel.")


def check_release_scale(value_bound, sigma, K_uu, owner):
    """Refuse, before the charge, a release of :func:`gp_release` whose floats could overflow.

    A public bound, from quantities fixed before any noise is drawn: with
    ``|values| <= value_bound`` and ``k = max k(u, u)``, each noise entry
    ``sigma (L z)_i`` is ``N(0, sigma^2 (K_uu + tau I)_ii)``, below
    ``40 sigma sqrt(1.001 m k)`` for every draw that can occur (Cauchy-Schwarz
    on the partial sums of ``L z`` with ``|z_j| < 40``); the triangular solves
    for the coefficients multiply the L2 norm of the noisy values (at most
    ``sqrt(m)`` times their largest entry) by at most ``1 / sqrt(tau)`` and
    ``1 / tau`` (``tau >= 1e-10 k``, :func:`support_factor`), and an
    evaluation at a point with ``k(x, x) <= k`` is at most ``sqrt(m) k`` times
    the coefficients' L2 norm.
    Without this check a noise scale of ``inf`` (a normalizer near the float
    limit, at small epsilon) or noise draws that overflow produced a NaN
    release after the budget was charged. The bound only refuses settings
    with ``value_bound`` or ``sigma`` beyond about ``1e290``.

    Parameters
    ----------
    value_bound : float
        Public bound on ``|f_D(u)|`` over datasets and support points (and on
        any intermediate value of computing them).
    sigma : float
        Noise multiplier.
    K_uu : ndarray of shape (m, m)
        Kernel matrix of the support points (public, finite).
    owner : str
        Name of the estimator, for the error message.
    """
    m = K_uu.shape[0]
    k = max(float(np.max(np.diag(K_uu))), np.finfo(float).tiny)
    noisy = value_bound + 40.0 * sigma * math.sqrt(1.001 * m * k)
    tau = _JITTER * k
    solve = max(1.0 / tau, 1.0 / math.sqrt(tau))
    bound = noisy * math.sqrt(m) * solve * max(1.0, math.sqrt(m) * k)
    if not bound < np.finfo(float).max:  # also inf and NaN
        raise ValueError(
            f"{owner}: the release would overflow the float range (noise scale {sigma:g}, "
            f"function values up to {value_bound:g}). Rescale the data, bounds or bandwidth "
            "by constants fixed in advance. Nothing was spent.")


def gp_release(values, K_uu, sigma, rng, factor=None):
    """Release ``values + sigma g``, ``g ~ N(0, K_uu + tau I)``, as interpolation coefficients.

    Parameters
    ----------
    values : ndarray of shape (m,) or (m, k)
        ``f_D`` at the support points (one column per released function).
    K_uu : ndarray of shape (m, m)
        Kernel matrix of the support points (public).
    sigma : float
        Noise multiplier from :func:`functional_noise_sigma`.
    rng : numpy.random.Generator
        Noise source.
    factor : tuple or None, default=None
        :func:`support_factor` of ``K_uu``, when the caller computed it
        (before the charge); ``None`` computes it here.

    Returns
    -------
    coef : ndarray of shape (m,) or (m, k)
        ``(K_uu + tau I)^{-1} (values + sigma g)``: the released function is
        ``x -> k(x, U) @ coef``.
    noisy_values : ndarray like ``values``
        ``values + sigma g``, the released values at the support points.

    Notes
    -----
    One Cholesky factor ``L L^T = K_uu + tau I`` serves both steps: the noise
    ``g = L z`` has covariance ``K_uu + tau I``, which dominates ``K_uu`` (more
    noise, never less), and the interpolation solves with the same matrix,
    so the released noise has variance
    ``k(x, U) (K_uu + tau I)^{-1} k(U, x) <= k(x, x)`` everywhere (``tau``:
    see :func:`support_factor`).
    """
    values = np.asarray(values, dtype=float)
    m = K_uu.shape[0]
    if factor is None:
        factor = support_factor(K_uu)
    z = rng.standard_normal(values.shape).reshape(m, -1)
    noisy = values + sigma * (np.tril(factor[0]) @ z).reshape(values.shape)
    coef = linalg.cho_solve(factor, noisy.reshape(m, -1), check_finite=False)
    return coef.reshape(values.shape), noisy


def check_bounds(bounds, n_features, owner="bounds"):
    """Validate a public box: ``(low, high)`` for every feature, or one pair per feature.

    Parameters
    ----------
    bounds : array-like of shape (2,) or (n_features, 2)
        The box.
    n_features : int
        Number of features.
    owner : str, default="bounds"
        Name of the estimator, for error messages.

    Returns
    -------
    box : ndarray of shape (n_features, 2)
    """
    return np.column_stack(check_feature_bounds(bounds, n_features, owner))


def public_support(bounds, n_points, n_features):
    """Data-independent public points covering a box.

    A regular grid when at least 8 points per axis fit in ``n_points``,
    otherwise ``n_points`` points of a scrambled Halton sequence. Neither
    depends on the data, and both are deterministic (the scrambling is not
    privacy noise), so they can be laid out before any budget is spent.

    Parameters
    ----------
    bounds : array-like
        See :func:`check_bounds`.
    n_points : int
        Target number of points.
    n_features : int
        Dimension.

    Returns
    -------
    points : ndarray of shape (m, n_features)
    """
    box = check_bounds(bounds, n_features)
    n_points = check_positive_int(n_points, "n_public")
    per_axis = int(math.floor(n_points ** (1.0 / n_features) + 1e-9))
    if per_axis >= 8:
        axes = [np.linspace(lo, hi, per_axis) for lo, hi in box]
        return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, n_features)
    unit = qmc.Halton(d=n_features, scramble=True, rng=np.random.default_rng(0)).random(n_points)
    return box[:, 0] + unit * (box[:, 1] - box[:, 0])


def sphere_support(n_points, n_features, radius):
    """Data-independent public points on the sphere of radius ``radius``.

    A scrambled Halton sequence (fixed seed, so deterministic and free of
    the data) mapped to standard normal coordinates and scaled to norm
    ``radius``: a quasi-uniform cover of the sphere, the default support of
    the kernel classifiers for rows in the ball of radius ``data_norm``
    (e.g. after :class:`~sklearn.preprocessing.Normalizer`).

    Parameters
    ----------
    n_points : int
        Number of points.
    n_features : int
        Dimension.
    radius : float
        Radius of the sphere, > 0.

    Returns
    -------
    points : ndarray of shape (n_points, n_features)
    """
    n_points = check_positive_int(n_points, "n_public")
    unit = qmc.Halton(d=n_features, scramble=True, rng=np.random.default_rng(0)).random(n_points)
    gauss = norm.ppf(np.clip(unit, 1e-12, 1.0 - 1e-12))
    lengths = np.linalg.norm(gauss, axis=1, keepdims=True)
    gauss = np.where(lengths > 0, gauss / np.where(lengths > 0, lengths, 1.0), 1.0 / math.sqrt(n_features))
    return radius * gauss


def subspace_features(kernel, factor, support, X, kappa):
    """Coordinates ``z(x) = L^{-1} k(U, x)`` of the projection of ``phi(x)`` on the support span.

    ``L L^T = K_uu + tau I`` is :func:`support_factor`'s Cholesky factor of
    the public support ``U``. In exact arithmetic ``z`` is an orthonormal
    coordinate system of ``span{phi(u)}`` (up to the jitter ``tau``, which
    only shrinks it): ``<z(x), theta> = f(x)`` for
    ``f = sum_j a_j phi(u_j)``, ``a = L^{-T} theta``, and
    ``||f||_H <= ||theta||``, ``||z(x)|| <= sqrt(k(x, x)) <= kappa``. The
    computed rows are then clipped to norm ``kappa`` (times ``1 - 2**-40``,
    so the clipped norm stays below ``kappa`` after rounding): a public,
    per-record map whose rows provably satisfy ``||z(x)|| <= kappa``, which
    is all the privacy proofs need (Chaudhuri, Monteleoni and Sarwate 2011,
    Cor. 1 for the linear ERM on ``z``).

    Parameters
    ----------
    kernel : ResolvedKernel
        The kernel.
    factor : tuple
        :func:`support_factor` of ``kernel(support)``.
    support : ndarray of shape (m, n_features)
        Public support points.
    X : ndarray of shape (n, n_features)
        Points to map.
    kappa : float
        Bound on the feature-map norm.

    Returns
    -------
    Z : ndarray of shape (n, m)
    """
    L = factor[0]
    out = np.empty((X.shape[0], support.shape[0]))
    for start in range(0, X.shape[0], 4096):  # blocks: memory O(4096 m)
        K_ux = kernel(support, X[start:start + 4096])
        out[start:start + 4096] = linalg.solve_triangular(
            L, K_ux, lower=True, check_finite=False).T
    with np.errstate(all="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", out, out))
        limit = kappa * (1.0 - 2.0**-40)
        big = ~(norms <= limit)  # also inf and NaN
        out[big] *= (limit / norms[big])[:, None]
        out[~np.isfinite(norms)] = 0.0
    return out
