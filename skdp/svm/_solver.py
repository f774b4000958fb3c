"""Certified solver for the primal SVM ``1/2 ||w||^2 + (C/n) sum_i s_i loss(y_i <w, x_i>)``.

The output-perturbation proof (seed 001, Lemma 9) bounds how far the *exact*
minimizer moves between neighbouring datasets. A numerical solver returns a
nearby point instead, so the solver here also returns a *certified* bound on
its distance to the exact minimizer, and the estimators add twice that bound
to the sensitivity. The row weights ``s_i`` lie in ``[0, 1]`` (all 1 without
``sample_weight``); they keep every loss term convex and leave the
regularizer alone, so the objective is 1-strongly convex whatever they are,
which turns both certificates into distances:

* Huber (smoothed hinge) loss: ``||w - w*|| <= ||grad P(w)||``.
* hinge loss: ``s_i max(0, 1 - m_i) = max over a_i in [0, 1] of
  s_i a_i (1 - m_i)``, so for any dual-feasible ``a`` in ``[0, 1]^n`` the
  weighted dual is ``D(a) = (C/n) sum_i s_i a_i - ||w(a)||^2 / 2`` with
  ``w(a) = (C/n) sum_i s_i a_i y_i x_i``, and the duality gap
  ``g = P(w(a)) - D(a) >= P(w(a)) - P(w*) >= ||w(a) - w*||^2 / 2``, so
  ``||w(a) - w*|| <= sqrt(2 g)``.

Both certificates include worst-case bounds on the floating-point error of
the quantities they are computed from, so rounding cannot fake a certificate.

Hinge loss is solved by a continuation on Huber smoothings of shrinking width
(damped Newton steps on the rows inside the quadratic zone), each followed by
an exact active-set "polish" of the hinge optimality conditions; every
candidate is scored by its exact duality gap, and only a candidate whose
certificate meets the requested radius is returned. Otherwise
:class:`~skdp.exceptions.CertificationError` is raised and nothing is released.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from threadpoolctl import ThreadpoolController

from skdp.exceptions import CertificationError
from skdp.utils._clipping import row_norms_l2

__all__ = ["CertifiedSVM", "solve_svm_certified"]

# Rows of the quadratic zone used to form the Newton system: beyond this many,
# an evenly spaced subset stands in for them (scaled up). The Hessian only
# steers the steps; the certificate is always computed exactly on all rows.
_HESSIAN_ROWS = 300
# Largest free set the exact polish of the hinge solution handles.
_POLISH_ROWS = 300
# Largest absolute rounding error of one product in the subnormal range (2**-1075),
# rounded up: the relative bounds in _rounding hold only for normal results.
_UNDERFLOW = 2.0**-1074


@dataclass(frozen=True)
class CertifiedSVM:
    """A primal SVM solution with its certified distance to the exact minimizer.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        The solution ``w``.
    distance_bound : float
        Certified bound on ``||w - w*||`` (``w*`` the exact minimizer).
    certificate : float
        The duality gap (hinge) or gradient norm (Huber) it rests on.
    n_iter : int
        Iterations: the closed-form starting point counts as one, plus the
        Newton steps taken.
    """

    coef: np.ndarray
    distance_bound: float
    certificate: float
    n_iter: int


def _huber_parts(margins, h):
    """Value, derivative and quadratic-zone mask of the Huber hinge at ``margins``."""
    u = 1.0 - margins
    band = np.abs(u) <= h
    value = np.where(u > h, u, 0.0)
    deriv = np.where(u > h, -1.0, 0.0)
    value[band] = u[band] ** 2 / (4.0 * h) + u[band] / 2.0 + h / 4.0
    deriv[band] = -u[band] / (2.0 * h) - 0.5
    return value, deriv, band


def _huber_value(Z, m, U, h, w):
    """Weighted Huber primal at ``w`` (margins ``m``), the loss derivatives and the band."""
    value, deriv, band = _huber_parts(m, h)
    return 0.5 * float(w @ w) + U * float(np.sum(Z.weigh(value))), deriv, band


def _huber_gradient(Z, U, w, deriv):
    """``grad P(w) = w + (C/n) sum_i s_i loss'(m_i) y_i x_i``."""
    return w + U * Z.rmatvec(Z.weigh(deriv))


class _Signed:
    """The signed rows ``z_i = y_i x_i`` without copying ``X``, and the row weights ``s``."""

    def __init__(self, X, y, s=None):
        self.X, self.y, self.s = X, y, s
        self.shape = X.shape

    def weigh(self, v):
        """``s * v`` per row; ``v`` itself without weights (unit weights: bit-identical)."""
        return v if self.s is None else self.s * v

    def __matmul__(self, w):
        return self.y * np.asarray(self.X @ w).ravel()

    def rmatvec(self, v):
        return np.asarray(self.X.T @ (self.y * v)).ravel()

    def rows(self, idx):
        B = self.X[idx]
        B = B.toarray() if sp.issparse(B) else B
        return B * self.y[idx, None]


def _newton_direction(Z, band, c, grad):
    """Solve ``(I + c sum_b s_b z_b z_b^T) d = -grad`` for the rows ``b`` in the quadratic zone."""
    if Z.s is not None:
        band = band & (Z.s > 0.0)
    rows = np.flatnonzero(band)
    if rows.size == 0:
        return -grad
    if rows.size > _HESSIAN_ROWS:
        c *= rows.size / _HESSIAN_ROWS
        rows = rows[np.linspace(0, rows.size - 1, _HESSIAN_ROWS).astype(int)]
    B = Z.rows(rows)
    if Z.s is not None:
        B *= np.sqrt(Z.s[rows])[:, None]
    if rows.size < grad.shape[0]:  # Woodbury: (I + c B^T B)^-1 = I - c B^T (I + c B B^T)^-1 B
        K = c * (B @ B.T)
        K[np.diag_indices_from(K)] += 1.0
        inner = linalg.cho_solve(linalg.cho_factor(K, check_finite=False), B @ grad,
                                 check_finite=False)
        return -(grad - c * (B.T @ inner))
    H = c * (B.T @ B)
    H[np.diag_indices_from(H)] += 1.0
    return -linalg.cho_solve(linalg.cho_factor(H, check_finite=False), grad, check_finite=False)


def _newton_huber(Z, U, h, w, gtol, max_iter):
    """Damped Newton on the Huber-smoothed primal; returns ``(w, grad_norm, steps)``.

    The line search moves along precomputed margins, so each step costs two
    passes over the data (``Z @ step`` and the gradient).
    """
    m = Z @ w
    obj, deriv, band = _huber_value(Z, m, U, h, w)
    grad = _huber_gradient(Z, U, w, deriv)
    gnorm = float(np.linalg.norm(grad))
    steps = 0
    while steps < max_iter and gnorm > gtol:
        steps += 1
        step = _newton_direction(Z, band, U / (2.0 * h), grad)
        slope = float(grad @ step)
        if slope >= 0.0:
            step, slope = -grad, -gnorm**2
        dm = Z @ step
        t = 1.0
        for _ in range(50):
            new = _huber_value(Z, m + t * dm, U, h, w + t * step)
            if new[0] <= obj + 1e-4 * t * slope:
                break
            t *= 0.5
        else:
            break  # no decrease left at double precision
        w, m = w + t * step, m + t * dm
        obj, deriv, band = new
        grad = _huber_gradient(Z, U, w, deriv)
        gnorm = float(np.linalg.norm(grad))
    return w, gnorm, steps


def _rounding(Z, C, kappa, w):
    """Bounds on floating-point errors: of ``U Z'v`` (``|v_i| <= 1``) and of one margin.

    ``U Z'v`` sums ``n`` terms of norm at most ``U kappa``: its error is at most
    ``n eps C kappa`` (standard summation bound), plus ``eps C kappa`` for
    rounding the products ``s_i v_i`` when there are weights (``s_i <= 1``);
    a margin ``<z_i, w>`` is a dot product of length ``d``: error at most
    ``d eps kappa ||w||``.
    """
    eps = np.finfo(float).eps
    n_samples, n_features = Z.shape
    sum_error = (n_samples + (Z.s is not None)) * eps * C * kappa
    dot_error = n_features * eps * kappa * float(np.linalg.norm(w))
    # Below the normal range errors are absolute, up to 2**-1075 per product: n per
    # coordinate of Z'v (and of s_i v_i, times |x_ij| <= kappa), then times U, plus the
    # product by U; d per margin. (With C = 1e-323 the relative bound alone was 0.)
    sum_error += np.sqrt(n_features) * (C * (1.0 + kappa) + 1.0) * _UNDERFLOW
    return sum_error, dot_error + n_features * _UNDERFLOW


def _hinge_gap(Z, U, a, C, kappa):
    """Primal point ``w(a)`` of dual-feasible ``a`` and a rigorous bound on its duality gap.

    With ``v_i = s_i a_i`` (the product rounded; it stays in ``[0, s_i]``, so
    it is an exactly feasible weighted dual point) and ``w = U sum_i v_i z_i``
    exactly, the gap ``P(w) - D(a)`` equals
    ``U sum_i [s_i max(0, 1 - m_i) - v_i (1 - m_i)]`` (``m_i = <z_i, w>``), a
    sum of non-negative terms computed without cancellation. Rounding is paid
    for: each term whose margin could sit across the hinge (or whose ``a_i``
    is fractional or on the wrong side) may move by twice the margin error
    times ``s_i <= 1``, and the returned point differs from the exact ``w(a)``
    by at most ``w_error``. A row of weight 0 adds exactly 0.

    Returns
    -------
    w : ndarray
    gap : float
        Upper bound on the duality gap of the exact ``w(a)``.
    w_error : float
        Bound on ``||w - w(a)||``.
    """
    v = Z.weigh(a)
    w = U * Z.rmatvec(v)
    m = Z @ w
    w_error, dot_error = _rounding(Z, C, kappa, w)
    m_error = dot_error + kappa * w_error
    u = 1.0 - m
    gap = U * float(np.sum(Z.weigh(np.maximum(u, 0.0)) - v * u))
    exposed = (np.abs(u) <= m_error) | ((a > 0.0) & (a < 1.0)) | ((a == 1.0) & (u < 0.0)) \
        | ((a == 0.0) & (u > 0.0))
    if Z.s is not None:
        exposed &= Z.s > 0.0
    n_exposed = np.count_nonzero(exposed)
    # Plus the underflow of each exposed term's two products and of the product by U
    # (the other terms are exact zeros; with none exposed the gap is an exact 0).
    gap += 2.0 * U * m_error * n_exposed + (U + 1.0) * n_exposed * _UNDERFLOW
    return w, max(gap, 0.0), w_error


def _box_qp(G, r, a, max_rounds=20):
    """Minimize ``a'Ga/2 - r'a`` over ``[0, 1]^k`` by primal-dual active sets.

    Each round fixes at a bound the coordinates whose projected-gradient step
    leaves ``[0, 1]`` and solves the others exactly (Hintermueller, Ito and
    Kunisch 2002); it stops when the sets repeat. The result is always
    clipped into the box, so it is feasible whether or not it converged.
    """
    step = 1.0 / max(float(np.max(np.diag(G))), 1e-300)
    sets = None
    for _ in range(max_rounds):
        trial = a - step * (G @ a - r)
        upper, lower = trial > 1.0, trial < 0.0
        if sets is not None and np.array_equal(upper, sets[0]) and np.array_equal(lower, sets[1]):
            break
        sets = (upper, lower)
        free = ~(upper | lower)
        a = upper.astype(float)
        if free.any():
            rhs = r[free] - G[np.ix_(free, upper)].sum(axis=1)
            a[free] = linalg.lstsq(G[np.ix_(free, free)], rhs, check_finite=False)[0]
    return np.clip(a, 0.0, 1.0)


def _polish(Z, U, m, width):
    """Exact hinge dual point for the rows within ``width`` of the margin.

    Rows with margin below ``1 - width`` get ``a = 1``, above ``1 + width``
    get ``a = 0``. When ``width`` bounds the distance of ``m`` to the exact
    solution's margins, these are the exact solution's values, and the rest
    is a small box-constrained quadratic program in the free rows,
    ``max U s'a - ||w(a)||^2 / 2`` over ``a_free`` in ``[0, 1]``. Rows of
    weight 0 do not enter ``w(a)`` and are left out.
    """
    a = (m < 1.0 - width).astype(float)
    near = np.abs(1.0 - m) <= width
    if Z.s is not None:
        near &= Z.s > 0.0
    free = np.flatnonzero(near)
    if free.size == 0 or free.size > _POLISH_ROWS:
        return a
    B = Z.rows(free)
    # With w(a) = w_fixed + U B' S a_free (S = diag(s_free)) the dual is, up to a
    # constant, -(a'Ga/2 - r'a) with G = U S BB' S and r = S (1 - B w_fixed).
    # (Without weights S = I: multiplying by 1.0 is exact.)
    s_free = np.ones(free.size) if Z.s is None else Z.s[free]
    G = U * (s_free[:, None] * (B @ B.T) * s_free)
    r = s_free * (1.0 - B @ (U * Z.rmatvec(Z.weigh(a))))
    a[free] = _box_qp(G, r, (m[free] < 1.0).astype(float))
    return a


def solve_svm_certified(X, y, C, *, loss="hinge", huber_h=0.1, radius, max_iter=200,
                        sample_weight=None):
    """Minimize ``1/2 ||w||^2 + (C/n) sum_i s_i loss(y_i <w, x_i>)`` with a certified distance.

    Parameters
    ----------
    X : {ndarray, CSR matrix} of shape (n_samples, n_features)
        Rows, already clipped to the norm bound the privacy proof uses.
    y : ndarray of shape (n_samples,)
        Labels in ``{-1, +1}``.
    C : float
        Regularization parameter, > 0.
    loss : {"hinge", "huber"}, default="hinge"
        The margin loss; ``"huber"`` is the smoothed hinge of half-width
        ``huber_h`` (:class:`~skdp.linear_model.HuberSVMLoss`).
    huber_h : float, default=0.1
        Half-width of the Huber loss's quadratic zone.
    radius : float
        Required certified bound on ``||w - w*||``; data-independent.
    max_iter : int, default=200
        Total Newton steps allowed.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Row weights ``s_i`` in ``[0, 1]`` (already validated and clipped);
        ``None`` means every row weighs 1. The loss is still divided by all
        ``n`` rows, zero-weight ones included.

    Returns
    -------
    result : CertifiedSVM

    Raises
    ------
    CertificationError
        If no point with a certified distance ``<= radius`` was found.
    """
    Z = _Signed(X, np.asarray(y, dtype=float), sample_weight)
    if X.shape[0] * X.shape[1] < 100_000:
        return _solve(Z, C, loss, huber_h, radius, max_iter)
    # Small dense factorizations dominate; multi-threaded BLAS only adds
    # contention for them (scikit-learn's liblinear baseline is single-threaded too).
    with _blas_controller().limit(limits=1, user_api="blas"):
        return _solve(Z, C, loss, huber_h, radius, max_iter)


_CONTROLLER = []


def _blas_controller():
    # Inspecting the loaded libraries is slow: do it once per process.
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def _solve(Z, C, loss, huber_h, radius, max_iter):
    n_samples = Z.shape[0]
    U = C / n_samples
    # The all-ones dual point: the exact solution when no margin can reach 1.
    w = U * Z.rmatvec(Z.weigh(np.ones(n_samples)))
    kappa = float(np.max(row_norms_l2(Z.X)))
    if loss == "huber":
        w, gnorm, steps = _newton_huber(Z, U, huber_h, w, 0.5 * radius, max_iter)
        # Rounding: of the gradient's sum, and of the margins through the
        # derivative (Lipschitz 1/(2h), times s_i <= 1) over all n rows.
        sum_error, m_error = _rounding(Z, C, kappa, w)
        distance = gnorm + sum_error + C * kappa * m_error / (2.0 * huber_h)
        if distance <= radius:
            return CertifiedSVM(w, distance, gnorm, steps + 1)
        raise CertificationError(  # after the charge: public values only
            f"the SVM solver could not certify a distance <= {radius:.3g} to the exact "
            "minimizer within max_iter Newton steps, which the privacy proof needs; nothing "
            "was released. Increase max_iter or tol.")

    total, h = 0, 0.01
    w_cand, gap, w_error = _hinge_gap(Z, U, np.ones(n_samples), C, kappa)
    while True:
        distance = float(np.sqrt(2.0 * gap)) + w_error
        if distance <= radius:
            return CertifiedSVM(w_cand, distance, gap, total + 1)
        if total >= max_iter or h < 1e-14:
            break
        w, gnorm, steps = _newton_huber(Z, U, h, w, min(1e-2 * h, radius), max_iter - total)
        total += steps
        m = Z @ w
        w_cand, gap, w_error = _hinge_gap(Z, U, -_huber_parts(m, h)[1], C, kappa)
        # ||w_h - w*||^2 <= C h / 2 (smoothing moves P by at most (C/n) sum_i s_i h / 4
        # <= C h / 4), so the exact margins lie within `widest` of m; narrower widths
        # are tried first.
        widest = h + kappa * (np.sqrt(C * h / 2.0) + gnorm)
        for width in (h, 10.0 * h, 100.0 * h, widest):
            if np.sqrt(2.0 * gap) + w_error <= radius or width > widest:
                break
            polished = _hinge_gap(Z, U, _polish(Z, U, m, width), C, kappa)
            if polished[1] < gap:
                w_cand, gap, w_error = polished
        h *= 0.1
    raise CertificationError(  # after the charge: public values only
        f"the SVM solver could not certify a distance <= {radius:.3g} to the exact minimizer "
        f"(a duality gap below about {0.5 * radius**2:.3g}) within max_iter Newton steps, "
        "which the privacy proof needs; nothing was released. Increase max_iter or tol.")
