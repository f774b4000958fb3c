"""Certified kernel ERM: the minimizer ``w*`` that Jain and Thakurta (2013) (eq. 2) and Hall et al. perturb.

``J(f) = (1/n) sum_i w_i l(y_i f(x_i)) + (alpha/2) ||f||_H^2`` over the RKHS
``H`` of the kernel, with a margin loss whose derivative is bounded by 1
(logistic or Huber SVM) and row weights ``w_i`` in ``[0, 1]`` (all 1 without
``sample_weight``; the mean is over all ``n`` rows, zero-weight ones
included). The minimizer lies in ``span{k(., x_i)}`` (representer theorem),
so ``f = sum_i beta_i k(., x_i)``.

Privacy needs the *exact* minimizer (DESIGN.md): a solver stopped early has no
sensitivity bound. Here the minimizer is certified instead: ``J`` is
``alpha``-strongly convex in ``H``, so a point whose RKHS gradient has norm at
most ``tol`` lies within ``tol / alpha`` of the exact minimizer, and the
sensitivity of the released point grows by ``2 tol / alpha`` (both datasets'
points may err in opposite directions). The RKHS gradient at
``f = sum beta_i k(., x_i)`` is ``sum g_i k(., x_i)`` with
``g = w * l'(y * K beta) * y / n + alpha * beta``, and its norm
``sqrt(g^T K g)`` is taken on the full kernel matrix. (The
foundation's certified solver measures Euclidean gradients; in the
coefficients ``beta`` that is not the RKHS norm, so the Newton method here
works in the RKHS geometry directly.)

Rounding-proof certificate
--------------------------
The Newton iterations stop on the plain floating-point ``sqrt(g^T K g)``;
the point is released only when :func:`rkhs_gradient_norm_bound`, an upper
bound on the *exact* ``sqrt(g^T K g)`` (margins ``K beta``, loss derivatives,
``g`` and the quadratic form in exact arithmetic), is at most ``tol``. The
plain value can be wrong by far more than ``tol`` when ``g`` has a large
component along a near-null direction of ``K`` (near-duplicate rows): its
rounding is about ``u |g|^T |K| |g|`` while the exact form may be tiny.
When the rigorous bound misses ``tol`` while the plain value met it, the
solver keeps iterating towards a tighter plain target (as
:func:`~skdp.linear_model._solvers.minimize_certified` does). On the points
the solver reaches the two agree to about ``1e-11 tol`` (measured for
``n`` up to ``10^4``, near-duplicate rows included), and the bound costs two
passes over ``K`` (about a tenth of the fit at ``n >= 2000``).

Which kernel the guarantee is about: the bound is exact for the kernel
matrix ``K`` *as stored* (the floating-point values the kernel function
returned), taken as the Gram matrix of the kernel at the training rows. The
rounding of the kernel evaluations themselves (``exp``, squared distances,
the user's callable) is not bounded: it depends on the kernel's
implementation, like the floating-point constants of the noise. The
assumptions on the arithmetic are those of
:mod:`skdp.linear_model._certificate` (binary64, round to nearest,
``numpy.exp`` within 4 ulp).
"""

import math
from types import SimpleNamespace

import numpy as np
from scipy import linalg

from skdp.exceptions import CertificationError
from skdp.linear_model._certificate import (
    ETA,
    U,
    _binary_residuals,
    _Block,
    _chunks,
    _exact_sum,
    two_product,
)

__all__ = ["certificate_tolerance", "check_newton_conditioning", "erm_sensitivity",
           "fit_kernel_erm", "rkhs_gradient_norm_bound"]

# The certified gradient norm is this fraction of the exact-minimizer sensitivity
# term kappa / n: the released sensitivity is (2 kappa / (alpha n)) (1 + _REL_TOL).
_REL_TOL = 1e-3


def certificate_tolerance(kappa, n_samples):
    """Data-independent bound ``tol`` on the RKHS gradient norm of the released minimizer.

    Parameters
    ----------
    kappa : float
        Bound on the feature-map norm, ``sqrt(k(x, x)) <= kappa``.
    n_samples : int
        Number of training rows (public under replace-one neighbours).

    Returns
    -------
    tol : float
        ``1e-3 * kappa / n``.
    """
    return _REL_TOL * kappa / n_samples


# Largest condition number kappa^2 sup l'' / alpha of the RKHS Hessian that the Newton
# solver accepts (check_newton_conditioning): 1 / u of binary64 round to nearest.
_MAX_CONDITION = 2.0**52
# Smallest kernel bound kappa^2 accepted: far above the square root of the subnormals, the
# absolute term of the certificate's row-norm bounds (as skdp.svm's _MIN_RADIUS).
_MIN_KERNEL_BOUND = 2.0**-500


def check_newton_conditioning(loss, kappa, alpha, owner):
    """Refuse, before the charge, an ``alpha`` or ``kappa`` the certified solver cannot handle.

    The RKHS Hessian ``H = (1/n) sum_i w_i l''_i phi_i phi_i^T + alpha I`` has
    eigenvalues in ``[alpha, alpha + c kappa^2]``, ``c = sup l''`` (``1/4``
    logistic, ``1 / (2 h)`` Huber; ``loss.smoothness(kappa) = c kappa^2``),
    whatever the data and weights in ``[0, 1]``. :func:`fit_kernel_erm` forms
    ``alpha c = g - S (alpha I + S K S / n)^{-1} S K g / n`` (Woodbury): the
    subtraction is rounded by about ``u |g|`` (``u = 2**-53``) while its exact
    value can be as small as ``|g| alpha / (alpha + c kappa^2)``, so the
    computed Newton step has a relative error of about
    ``u c kappa^2 / alpha``. At ``c kappa^2 / alpha >= 2**52`` that is about
    one half or more: the step need not be a descent direction (measured: the
    logistic loss, RBF kernel, ``n = 30``, ``alpha = 1e-20`` gave an ascent
    direction at ``beta = 0``; every fit at ``alpha`` from ``1e-20`` to
    ``1e-300`` spent its budget, then raised ``CertificationError``). Such an
    ``alpha`` is refused from public values only (``loss``, ``kappa``,
    ``alpha``). It is no useful setting either: each released value then has
    sensitivity ``2 kappa^2 / (alpha n) >= 2**53 / (c n)``.

    A kernel bound ``kappa^2 < 2**-500`` is refused too: the certificate
    (:func:`rkhs_gradient_norm_bound`) bounds each row of ``K`` by its norm
    plus ``sqrt(n 2**-1074)`` (the error-free products of
    :mod:`skdp.linear_model._certificate` allow for underflow), which
    dominates entries of size ``kappa^2`` near ``2**-537``; the bound then
    stayed above ``tol = 1e-3 kappa / n`` at every iterate (measured: the
    linear kernel, ``n = 300``, ``alpha = 0.01``, every ``kappa <= 1e-110``
    raised ``CertificationError`` after the charge, every ``kappa`` from
    ``1e-100`` to 1 certified; the threshold mirrors :mod:`skdp.svm`'s
    ``2**-500``, with a wide margin, rather than an exact floor).

    This is not a proof that no data set certifies (two copies of one point
    with opposite labels certify at ``beta = 0`` for any ``alpha``), and fits
    below the bound can still fail, depending on the data (slow damped-Newton
    convergence at a small ``alpha`` or ``huber_h``): the failure is not
    covered by the guarantee, so a failed fit must stay confidential.

    Parameters
    ----------
    loss : LogisticLoss or HuberSVMLoss
        Margin loss.
    kappa : float
        Feature-map norm bound.
    alpha : float
        Regularization, > 0.
    owner : str
        Name of the estimator, for the error message.

    Raises
    ------
    ValueError
        If ``loss.smoothness(kappa) / alpha`` is not below ``2**52`` (or
        overflows), or ``kappa^2 < 2**-500``.
    """
    if not kappa * kappa >= _MIN_KERNEL_BOUND:
        raise ValueError(
            f"{owner}: the kernel bound kappa^2 = {kappa * kappa:.3g} is below 2**-500: the "
            "certified solver's rounding allowance for underflow then reaches its tolerance "
            "1e-3 kappa / n_samples and fits fail to certify. Rescale the kernel "
            "(kernel_bound) to larger values. Nothing was spent.")
    try:
        condition = loss.smoothness(kappa) / alpha  # inf on overflow of the division
    except OverflowError:  # kappa ** 2
        condition = math.inf
    if not condition < _MAX_CONDITION:
        raise ValueError(
            f"{owner}: alpha={alpha!r} is too small for the certified Newton solver in floating "
            f"point: the condition number kappa^2 sup l'' / alpha = {condition:.3g} of the "
            f"RKHS Hessian is not below 2**52 (kappa={kappa:.3g}), so its steps can be pure "
            "rounding and the minimizer cannot be certified. Use a larger alpha (or a smaller "
            "kernel_bound, or a larger huber_h). Nothing was spent.")


def erm_sensitivity(kappa, alpha, n_samples, tol):
    """RKHS-norm sensitivity of the certified kernel ERM minimizer (replace-one).

    Jain and Thakurta (2013), Sec. 4, eq. (2) with a loss that is 1-Lipschitz in the margin:
    the exact minimizers of neighbouring datasets satisfy
    ``||w*(D) - w*(D')||_H <= 2 L R_phi / (lambda n)`` with ``L = 1`` and
    ``R_phi = kappa``: Chaudhuri et al. (2011), Corollary 1 (Chaudhuri, Monteleoni and
    Sarwate 2011), whose strong-convexity argument holds verbatim in an
    RKHS. (Hall, Rinaldo and Wasserman 2013 bound the same quantity for
    their kernel SVM by an algorithmic-stability argument; we had only their
    abstract and rely on the derivation above.) Each released point is
    within ``tol / alpha`` of its exact minimizer, which adds ``2 tol / alpha``.

    The bound holds unchanged for row weights ``w_i`` in ``[0, 1]``
    (re-derived, not assumed): with ``G`` the objective without the replaced
    row, ``J_D = G + (w/n) l(y <f, phi(x)>)`` and
    ``J_D' = G + (w'/n) l(y' <f, phi(x')>)``; their difference has RKHS
    gradient norm at most ``(w + w') L kappa / n <= 2 L kappa / n`` (a
    weight at most 1 keeps the replaced row's loss ``L kappa``-Lipschitz in
    ``f``), and ``J_D`` is still ``lambda``-strongly convex (the weighted
    loss stays convex for ``w >= 0``; the regularizer does not depend on
    the weights). As ``grad J_D(w*(D')) = -grad (J_D' - J_D)(w*(D'))`` and
    ``grad J_D(w*(D)) = 0``, strong convexity gives
    ``lambda ||w*(D) - w*(D')||^2 <= (2 L kappa / n) ||w*(D) - w*(D')||``.

    Parameters
    ----------
    kappa : float
        Feature-map norm bound.
    alpha : float
        Regularization ``lambda`` of eq. (2).
    n_samples : int
        Number of training rows.
    tol : float
        Certified RKHS gradient-norm bound.

    Returns
    -------
    sensitivity : float
        ``2 kappa / (alpha n) + 2 tol / alpha``.
    """
    return 2.0 * kappa / (alpha * n_samples) + 2.0 * tol / alpha


def _weighted(values, sample_weight):
    # None (every weight 1) keeps the unweighted arithmetic bit for bit.
    return values if sample_weight is None else sample_weight * values


def _objective(K, y, loss, alpha, beta, sample_weight=None):
    Kb = K @ beta
    data_term = float(np.mean(_weighted(loss.value(y * Kb), sample_weight)))
    return data_term + 0.5 * alpha * float(beta @ Kb), Kb


def _accurate_matvec(K, vector):
    """``K @ vector`` by error-free dot products, with a bound on each entry's error."""
    n = K.shape[0]
    if not np.any(vector):
        # K @ 0 = 0 exactly. (Through _exact_sum a zero vector has top = 0 and the power of
        # two sigma = 2**levels, not a multiple of top: an error bound of about n^3 u^2 that
        # made tol = 1e-3 kappa / n unreachable at beta = 0 or g = 0 once kappa <~ 1e-9 n.)
        return np.zeros(n), np.zeros(n)
    out, err = np.empty(n), np.empty(n)
    for start, stop in _chunks(n, n):  # blocks of rows small enough to stay in cache
        Z, Z_err = _Block(K, start, stop).scores(vector[None, :])
        out[start:stop], err[start:stop] = Z[:, 0], Z_err[:, 0]
    return out, err


def rkhs_gradient_norm_bound(K, y, loss, alpha, beta, sample_weight=None):
    """Rigorous upper bound on the exact RKHS gradient norm ``sqrt(g^T K g)`` at ``beta``.

    ``g = w * l'(y * K beta) * y / n + alpha * beta`` and the quadratic form
    are taken in exact arithmetic on the stored ``K, y, w, alpha, beta`` (the
    kernel matrix as evaluated: see the module docstring).

    1. The margins ``K beta`` and then ``v = K g_hat`` are computed row by row
       with the error-free dot products of
       :mod:`skdp.linear_model._certificate` (TwoProduct, exact extraction
       against a power of two), each entry with a bound on its error; the
       loss derivatives and the margins' error propagated through the
       curvature give ``|s_hat_i - s_i| <= delta_i`` for
       ``s = w y l'`` (``_binary_residuals``, shared with the GLM certificate).
    2. ``g_hat = fl(fl(s_hat / n) + fl(alpha beta))`` is within
       ``e_i = delta_i / n + u (|s_hat / n| + |alpha beta_i| + |g_hat_i|) (1 + 2u)``
       of the exact ``g_i`` (three roundings, plus ``3 eta`` for underflow).
    3. ``q = g_hat . v`` is summed exactly up to a second-order term, and
       ``|g_hat . (v - K g_hat)| <= |g_hat| . v_err``.
    4. With ``g = g_hat + d``, ``|d| <= e``:
       ``g^T K g = g_hat^T K g_hat + 2 d^T K g_hat + d^T K d
       <= q + err + 2 e . |K g_hat| + max|K_ij| ||e||_1^2``; no positive
       semi-definiteness of the stored ``K`` is assumed.

    Every error term is a non-negative float sum with relative rounding far
    below ``2^-20``; their total is doubled to cover it, as in
    :func:`~skdp.linear_model._certificate.gradient_norm_bound`.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix of the training rows.
    y : ndarray of shape (n,)
        Labels in ``{-1, +1}``.
    loss : LogisticLoss or HuberSVMLoss
        Margin loss.
    alpha : float
        Regularization.
    beta : ndarray of shape (n,)
        Coefficients of ``f = sum beta_i k(., x_i)``.
    sample_weight : ndarray of shape (n,) or None, default=None
        Row weights.

    Returns
    -------
    bound : float
        ``B >= sqrt(g^T K g)`` in exact arithmetic; ``inf`` if anything
        overflowed.
    """
    n = K.shape[0]
    beta = np.asarray(beta, dtype=float)
    with np.errstate(all="ignore"):
        Kb, Kb_err = _accurate_matvec(K, beta)
        rows = SimpleNamespace(y=y, loss=loss, sample_weight=sample_weight)
        s, delta = _binary_residuals(rows, Kb[:, None], Kb_err[:, None], slice(None))
        a, b = s[:, 0] / n, alpha * beta
        g = a + b
        e = delta / n + U * (np.abs(a) + np.abs(b) + np.abs(g)) * (1.0 + 2 * U) + 3 * ETA
        v, v_err = _accurate_matvec(K, g)
        h, r = two_product(g, v)
        # top >= max |h| and > 0: for h = 0 (g = 0) top = 0 gave the loose sigma = 2**levels.
        top = max(float(np.max(np.abs(h), initial=0.0)), ETA)
        S, C, sum_err = _exact_sum(h, r, np.sum, n, top)
        q, e_sum = S + C, float(np.sum(e))
        error = (U * abs(q) + sum_err + float(np.abs(g) @ v_err)
                 + 2.0 * float(e @ (np.abs(v) + v_err))
                 + float(np.max(np.abs(K), initial=0.0)) * e_sum * e_sum)
        bound = math.sqrt(max(q + 2.0 * error, 0.0)) * (1.0 + 4 * U)
    return bound if math.isfinite(bound) else math.inf


def fit_kernel_erm(K, y, loss, alpha, tol, max_iter=100, sample_weight=None):
    """Minimize ``J`` to a certified RKHS gradient norm ``<= tol`` (damped Newton in the RKHS).

    The iterations stop on the plain floating-point norm; the point is
    returned only when :func:`rkhs_gradient_norm_bound` (rounding included)
    is ``<= tol``, otherwise the plain target shrinks fourfold and the
    iterations go on.

    The Newton step in the RKHS, ``H^{-1} grad J`` with
    ``H = (1/n) sum_i w_i l''_i phi_i phi_i^T + alpha I``, is
    ``sum_i c_i phi(x_i)`` with ``(alpha I + D K / n) c = g``,
    ``D = diag(w_i l''(y_i f(x_i)))``; by the Woodbury identity
    ``c = (g - S (alpha I + S K S / n)^{-1} S K g / n) / alpha`` with
    ``S = D^{1/2}``, one Cholesky factorization per iteration. Steps are
    damped by Armijo backtracking on ``J``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix of the (clipped) training rows.
    y : ndarray of shape (n,)
        Labels in ``{-1, +1}``.
    loss : LogisticLoss or HuberSVMLoss
        Margin loss with derivative bounded by 1.
    alpha : float
        Regularization, > 0.
    tol : float
        Required bound on the RKHS gradient norm.
    max_iter : int, default=100
        Newton iterations.
    sample_weight : ndarray of shape (n,) or None, default=None
        Row weights in ``[0, 1]`` (validated by the caller), multiplying each
        row's loss; ``None`` means 1 for every row. ``J`` stays
        ``alpha``-strongly convex, so the certificate holds as for ``None``.

    Returns
    -------
    beta : ndarray of shape (n,)
        Coefficients of the minimizer, ``f = sum beta_i k(., x_i)``.
    grad_norm : float
        A rigorous upper bound on its exact RKHS gradient norm
        (:func:`rkhs_gradient_norm_bound`, ``<= tol``).
    n_iter : int
        Newton iterations used.

    Raises
    ------
    CertificationError
        If the bound is not reached; nothing may then be released.
    """
    n = K.shape[0]
    beta = np.zeros(n)
    w = sample_weight
    value, Kb = _objective(K, y, loss, alpha, beta, w)

    def gradient(beta, Kb):
        g = _weighted(loss.derivative(y * Kb), w) * y / n + alpha * beta
        return g, float(np.sqrt(max(g @ K @ g, 0.0)))

    g, grad_norm = gradient(beta, Kb)
    target = tol  # the plain norm at which the rigorous bound is tried
    n_iter = 0
    for it in range(max_iter):
        if grad_norm <= target:
            bound = rkhs_gradient_norm_bound(K, y, loss, alpha, beta, w)
            if bound <= tol:
                return beta, bound, it
            # rounding could hide an exact norm above tol: iterate further
            target = min(target, grad_norm) / 4.0
        root = np.sqrt(_weighted(loss.second_derivative(y * Kb), w))
        M = (root[:, None] * K * root[None, :]) / n
        M[np.diag_indices(n)] += alpha
        Kg = K @ g
        inner = linalg.cho_solve(linalg.cho_factor(M, check_finite=False), root * Kg / n,
                                 check_finite=False)
        step = (g - root * inner) / alpha
        slope = -float(Kg @ step)  # <grad J, -H^{-1} grad J>_H < 0
        t = 1.0
        for _ in range(40):
            new_value, new_Kb = _objective(K, y, loss, alpha, beta - t * step, w)
            if new_value <= value + 1e-4 * t * slope:
                break
            t *= 0.5
        else:
            # Near the optimum value differences drown in rounding: accept the
            # full step if it still shrinks the (plain) gradient norm.
            t = 1.0
            new_value, new_Kb = _objective(K, y, loss, alpha, beta - step, w)
            if gradient(beta - step, new_Kb)[1] >= grad_norm:
                break
        beta = beta - t * step
        n_iter = it + 1
        value, Kb = new_value, new_Kb
        g, grad_norm = gradient(beta, Kb)
    bound = rkhs_gradient_norm_bound(K, y, loss, alpha, beta, w) if grad_norm <= tol else grad_norm
    if bound <= tol:
        return beta, bound, n_iter
    raise CertificationError(  # after the charge: public values only
        f"the kernel ERM could not certify an RKHS gradient norm <= {tol:.3g} (rounding "
        "included) within max_iter iterations, which the privacy proof needs; nothing was "
        "released. Increase max_iter."
    )
