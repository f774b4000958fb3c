"""Certified solver for the primal SVM ``1/2 ||w||^2 + (C/n) sum_i s_i loss(y_i <w, x_i>)``.

The output-perturbation proof (Rubinstein et al. (2012), Lemma 9) bounds how far the *exact*
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
  ``w(a) = (C/n) sum_i s_i a_i y_i x_i``, and for any point ``w`` (the
  computed one) the duality gap ``g = P(w) - D(a) >= P(w) - P(w*) >=
  ||w - w*||^2 / 2``, so ``||w - w*|| <= sqrt(2 g)``.

Both certificates include worst-case bounds on the floating-point error of
the quantities they are computed from, so rounding cannot fake a certificate
(binary64, round to nearest, unit roundoff ``u = 2**-53``,
``gamma_k = k u / (1 - k u)``; Higham, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., Lemma 3.1 and eqs. (3.5), (4.3)):

* Sums over the ``n`` rows (``X' t``, the gap's sum) are never left to one
  BLAS call, whose summation order, hence error bound, is unknown
  (``gamma_n``: the certificate then could not go below ``n eps C kappa``,
  above the radius ``tol C kappa / n`` from about 6.7 million rows at
  ``tol = 0.01``). :func:`_blocked_sum` sums blocks of ``b = 1024`` rows by
  BLAS (any order: at most ``b - 1`` additions per term) and combines the
  ``K = ceil(n / b)`` block results pairwise (at most ``ceil(log2 K)``
  more), so every term meets at most ``m = min(n, b) + ceil(log2 K) + 2``
  roundings counting its product, the product by ``U = fl(C / n)`` and
  ``U``'s own rounding. With weights ``|t_i| <= 1`` (``s_i`` times a loss
  derivative or dual variable, all in ``[0, 1]``) and rows of norm at most
  ``kappa``, ``||fl(U X' y t) - (C/n) X' y t|| <= gamma_m C kappa`` plus
  ``2**-1075`` per underflowing product (:func:`_sum_error`). The radius
  must exceed it, which :func:`~skdp.svm._base._check_float_range` checks
  before the charge (``n gamma_m < tol``: about ``8.5e10`` rows at
  ``tol = 0.01``).
* Margins ``<z_i, w>`` are dot products of length ``d``:
  ``gamma_d kappa ||w||``; norms are bounded above from ``fl(v . v)``
  (:func:`_norm_bound`), the data's row norms from the computed ones
  (:func:`_kappa_bound`); CSR input is made canonical (one stored entry per
  row and column) so term counts hold.
* The hinge gap is evaluated at the returned float ``w``, not at the exact
  ``w(a)`` it approximates: the sum's error then enters only through
  ``||w(a) - w||^2 / 2`` and not through every margin. (Through the
  margins, each row at the margin cost ``2 U kappa e`` in the gap for a sum
  error ``e``: with the old ``e = n eps C kappa`` one such row put
  ``sqrt(2 g) >= 2 C kappa sqrt(eps)`` above the radius from about
  ``3.4e5`` rows at ``tol = 0.01``, fewer with more rows at the margin.)
* Every bound is rounded up by a relative ``2**-40`` and an absolute few
  ``2**-1074`` for its own evaluation.

Hinge loss is solved by a continuation on Huber smoothings of shrinking width
(damped Newton steps on the rows inside the quadratic zone), each followed by
an exact active-set "polish" of the hinge optimality conditions; every
candidate is scored by its exact duality gap, and only a candidate whose
certificate meets the requested radius is returned. If none does (many
duplicate rows on the margin can stall the duality gap), a certified
solution of the Huber loss of width ``h ~ radius^2 / C`` is returned
instead: the exact Huber minimizer lies within ``sqrt(C h) / 2`` of the
exact hinge one (:func:`_huber_fallback`), so it is certified within the
same radius. Only if that fails too is
:class:`~skdp.exceptions.CertificationError` raised and nothing released.
"""

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from threadpoolctl import ThreadpoolController

from skdp.exceptions import CertificationError
from skdp.linear_model._certificate import U as _ROUNDOFF
from skdp.linear_model._certificate import gamma_n
from skdp.utils._clipping import row_norms_l2

__all__ = ["CertifiedSVM", "solve_svm_certified"]

# Rows of the quadratic zone used to form the Newton system: beyond this many,
# an evenly spaced subset stands in for them (scaled up). The Hessian only
# steers the steps; the certificate is always computed exactly on all rows.
_HESSIAN_ROWS = 300
# Largest free set the exact polish of the hinge solution handles.
_POLISH_ROWS = 300
# Largest absolute rounding error of one product in the subnormal range (2**-1075),
# rounded up: the relative bounds (u = 2**-53 per operation) hold only for normal results.
_UNDERFLOW = 2.0**-1074
# Rows per block of the certificate's sums (_blocked_sum): each block is summed by BLAS
# or scipy in any order, the block results pairwise, so a term meets at most
# _SUM_BLOCK + ceil(log2(n / _SUM_BLOCK)) roundings instead of n.
_SUM_BLOCK = 1024
# Every computed bound is rounded up by this factor: each is a non-negative expression
# of fewer than 100 roundings (of non-negative operands, no cancellation) after its
# sums, so its computed value is within (1 + u)**100 < 1 + 2**-46 of the exact one.
_UP = 1.0 + 2.0**-40


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
        if sp.issparse(X) and not X.has_canonical_format:
            # One stored entry per row and column: the sums' error bounds count terms.
            X = X.copy()
            X.sum_duplicates()
        self.X, self.y, self.s = X, y, s
        self.shape = X.shape

    def weigh(self, v):
        """``s * v`` per row; ``v`` itself without weights (unit weights: bit-identical)."""
        return v if self.s is None else self.s * v

    def __matmul__(self, w):
        return self.y * np.asarray(self.X @ w).ravel()

    def rmatvec(self, v):
        return np.asarray(self.X.T @ (self.y * v)).ravel()

    def rmatvec_blocked(self, v):
        """``rmatvec`` with the rounding bound of :func:`_blocked_rmatvec` (for certificates)."""
        return _blocked_rmatvec(self.X, self.y * v)

    def rows(self, idx):
        B = self.X[idx]
        B = B.toarray() if sp.issparse(B) else B
        return B * self.y[idx, None]


def _newton_direction(Z, band, c, grad, max_rows=_HESSIAN_ROWS):
    """Solve ``(I + c sum_b s_b z_b z_b^T) d = -grad`` for the rows ``b`` in the quadratic zone.

    Beyond ``max_rows`` such rows, an evenly spaced subset stands in for them.
    """
    if Z.s is not None:
        band = band & (Z.s > 0.0)
    rows = np.flatnonzero(band)
    if rows.size == 0:
        return -grad
    if rows.size > max_rows:
        c *= rows.size / max_rows
        rows = rows[np.linspace(0, rows.size - 1, max_rows).astype(int)]
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


def _newton_huber(Z, U, h, w, gtol, max_iter, max_rows=_HESSIAN_ROWS):
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
        step = _newton_direction(Z, band, U / (2.0 * h), grad, max_rows)
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


def _sum_depth(n_rows):
    """Most roundings one term of a :func:`_blocked_sum` of products over ``n_rows`` rows meets.

    One for the product itself, at most ``b - 1`` additions inside its block of
    ``b = min(n, _SUM_BLOCK)`` rows (summed by BLAS or scipy in any order), and at
    most ``ceil(log2 K)`` in the pairwise combination of the ``K = ceil(n / b)``
    block results (see :func:`_blocked_sum`).
    """
    n_blocks = -(-n_rows // _SUM_BLOCK)
    return min(n_rows, _SUM_BLOCK) + (n_blocks - 1).bit_length()


def _blocked_sum(n_rows, part):
    """``sum_k part(start_k, stop_k)`` over blocks of ``_SUM_BLOCK`` rows, combined pairwise.

    The block results enter a binary counter: two partial sums of ``2**l``
    blocks each are added as soon as both exist, and what is left at the end
    (at most one partial sum per level, of distinct sizes ``2**l_1 > 2**l_2 >
    ...``) is folded from the smallest up. A block in the partial sum of level
    ``l_i`` then meets ``l_i`` additions, plus one per fold it is part of:
    ``l_i + i <= l_1 + 1`` (the levels are distinct) and ``l_r + r - 1 <= l_1``
    for the smallest, so at most ``ceil(log2 K)`` for ``K`` blocks (exactly
    ``log2 K`` when ``K`` is a power of two, otherwise ``floor(log2 K) + 1``).
    """
    stack = []  # (level, partial sum of 2**level blocks), levels strictly decreasing
    for start in range(0, n_rows, _SUM_BLOCK):
        level, total = 0, part(start, min(n_rows, start + _SUM_BLOCK))
        while stack and stack[-1][0] == level:
            total = stack.pop()[1] + total
            level += 1
        stack.append((level, total))
    total = stack.pop()[1] if stack else part(0, 0)
    while stack:
        total = stack.pop()[1] + total
    return total


def _blocked_rmatvec(X, t):
    """``X' t`` by :func:`_blocked_sum`, each block ``X[a:b]' t[a:b]`` by BLAS or scipy (CSR).

    Every coordinate of a block result is a dot product of at most
    ``_SUM_BLOCK`` terms (CSR in canonical format: one stored entry per row
    and column), so whatever order BLAS or scipy use, it is within
    ``gamma_b sum |x_ij t_i|`` of the block's exact sum (Higham, eq. (3.5)),
    and the whole sum within ``gamma_{_sum_depth(n)} sum_i |x_ij t_i|``
    (Higham, eq. (4.3): a term meeting ``k`` roundings carries a factor
    ``1 + theta_k``, ``|theta_k| <= gamma_k``), plus ``2**-1075`` per
    underflowing product.
    """
    return _blocked_sum(X.shape[0], lambda a, b: np.asarray(X[a:b].T @ t[a:b]).ravel())


def _max_row_norm(X):
    """Largest row norm of ``X`` as computed, each row's finite or bounded from its peak.

    :func:`~skdp.utils.row_norms_l2` rescales a row whose squares underflow by
    ``fl(1 / peak)``, which overflows when every entry is below ``2**-1024``:
    such a row's norm comes out ``inf`` (``nan`` with an explicit zero). Its
    exact norm is at most ``sqrt(d) peak`` (rounded up, :func:`_kappa_bound`
    covers the rest), which replaces it; the certificate would otherwise be
    ``inf`` or ``nan`` and every fit on such data fail after the charge.
    """
    norms = row_norms_l2(X)
    bad = np.flatnonzero(~np.isfinite(norms))
    if bad.size:
        peak = abs(X[bad]).max(axis=1)
        peak = np.asarray(peak.toarray() if sp.issparse(peak) else peak, dtype=float).ravel()
        norms[bad] = math.sqrt(X.shape[1]) * peak * _UP
    return float(np.max(norms))


def _kappa_bound(kappa, n_features):
    """Upper bound on every row's exact norm from the computed largest norm ``kappa``.

    :func:`~skdp.utils.row_norms_l2` takes at most ``d + 6`` relative roundings
    (squares, their sum in any order, the square root; rows rescaled by their
    largest entry take three more), and squares underflowing below ``2**-1022``
    lower the squared norm by at most ``d 2**-1075``, its square root by at
    most ``sqrt(d) 2**-537``.
    """
    return (kappa * (1.0 + gamma_n(n_features + 8)) + math.sqrt(n_features) * 2.0**-537) * _UP


def _norm_bound(v):
    """Upper bound on the exact Euclidean norm of the float vector ``v``.

    ``fl(v . v)`` sums ``d`` non-negative products: it is at least
    ``(1 - gamma_d) v.v - d 2**-1075``.
    """
    squares = float(v @ v)
    return math.sqrt((squares + v.size * _UNDERFLOW) / (1.0 - gamma_n(v.size))) * _UP


def _sum_error_factor(n_samples):
    """``gamma_m`` with ``m = _sum_depth(n) + 2``: the relative bound of :func:`_sum_error`."""
    return gamma_n(_sum_depth(n_samples) + 2)


def _sum_error(Z, C, kappa_up):
    """Bound on ``||fl(U _blocked_rmatvec(X, y t)) - (C/n) sum_i t_i z_i||`` for ``|t_i| <= 1``.

    Each coordinate is ``(C/n) sum_i x_ij y_i t_i`` with every term carrying at
    most ``m = _sum_depth(n) + 2`` relative roundings: those of
    :func:`_blocked_rmatvec`, the product by ``U = fl(C/n)`` and the rounding
    of ``U`` itself (``y_i = +-1``: exact). So the error vector is at most
    ``gamma_m (C/n) sum_i |t_i| |x_i|`` entrywise, whose norm is at most
    ``gamma_m (C/n) sum_i ||x_i|| <= gamma_m C kappa`` (``kappa`` bounding the
    exact row norms). Below the normal range the errors are absolute, up to
    ``2**-1075`` per product: ``n`` per coordinate times ``U`` (at most
    ``C 2**-1075 (1 + gamma_m)``), the product by ``U`` (``2**-1075``), and a
    subnormal ``U`` off by ``2**-1075`` times ``||X' y t|| <= n kappa``. The
    bound is data-independent: it is what :func:`~skdp.svm._base._check_float_range`
    compares with the radius before the charge.
    """
    n_samples, n_features = Z.shape
    # (C + 2: one more 2**-1074 for the two products of gamma_m C kappa, which may underflow)
    return (_sum_error_factor(n_samples) * C * kappa_up
            + (math.sqrt(n_features) * (C + 2.0) + n_samples * kappa_up) * _UNDERFLOW) * _UP


def _margins(Z, w, kappa_up):
    """Fresh margins ``m = Z @ w`` and a bound on ``|m_i - <z_i, w>|``.

    A dot product of at most ``d`` terms (any order): ``gamma_d ||z_i|| ||w||``
    (Higham, eq. (3.5)) plus ``2**-1075`` per underflowing product.
    """
    n_features = Z.shape[1]
    m = Z @ w
    # (+ 2: the two products of the bound itself may underflow)
    return m, (gamma_n(n_features) * kappa_up * _norm_bound(w)
               + (n_features + 2) * _UNDERFLOW) * _UP


def _huber_certificate(Z, U, C, kappa, h, w):
    """Computed gradient norm of the Huber primal at ``w`` and a rigorous bound on the exact one.

    ``grad P(w) = w + (C/n) sum_i s_i l'(<z_i, w>) z_i``. The float gradient
    is ``fl(w + U X'(y fl(s d)))`` with ``d`` the Huber derivative evaluated at
    the computed margins (:func:`_margins`, fresh: the Newton iterations'
    margins are updated along steps and have drifted). Its error is at most:

    * ``s_i (e_i + 5u) + 2**-1075`` per row for ``fl(s_i d_i)`` against
      ``s_i l'(<z_i, w>)``: ``l'`` is ``1/(2h)``-Lipschitz and takes values in
      ``[-1, 0]``, so the margin error moves it by ``e_i <= min(1, m_err /
      (2h))``, and by nothing for a row whose computed ``1 - m_i`` lies
      beyond ``h`` plus that row's bound on ``|1 - m_i - (1 - <z_i, w>)|``
      (``m_err + 2u |1 - m_i|``): the exact value is then outside the
      quadratic zone on the same side, where ``l'`` is exactly ``-1`` or
      ``0``, as computed. The other rows are "exposed". Its evaluation is
      within ``4u`` (three roundings in the quadratic zone, ``2h`` is exact;
      a computed ``1 - m`` on the other side of ``+-h`` than the exact one is
      within ``u h`` of it, where ``l'`` moves by ``u/2``), the product by
      ``s_i`` adds ``u |s_i d_i| <= u s_i``; weighted by ``(C/n) ||x_i||`` and
      summed: ``C kappa (5u + 2**-1075) + (C/n) kappa n_exposed min(1, m_err /
      (2h))``;
    * :func:`_sum_error` for the sum of the float terms ``|fl(s_i d_i)| <= 1``;
    * ``u ||fl(grad)||`` for the final addition (no underflow in additions).

    Returns
    -------
    gnorm : float
        Upper bound on the norm of the float gradient.
    bound : float
        Upper bound on ``||grad P(w)||`` in exact arithmetic.
    """
    kappa_up = _kappa_bound(kappa, Z.shape[1])
    m, m_error = _margins(Z, w, kappa_up)
    u = 1.0 - m
    deriv = _huber_parts(m, h)[1]
    gnorm = _norm_bound(w + U * Z.rmatvec_blocked(Z.weigh(deriv)))
    # Only "exposed" rows carry the margin error into l': a row whose computed 1 - m lies
    # beyond h + (m_err + 2u|1 - m|) (rounded up) has its exact 1 - <z_i, w> on the same
    # side of the quadratic zone, where l' is exactly -1 or 0 as computed.
    slack = (m_error + 2.0 * _ROUNDOFF * np.abs(u)) * (1.0 + 4.0 * _ROUNDOFF) + 2.0 * _UNDERFLOW
    exposed = np.abs(u) <= (h + slack) * _UP
    if Z.s is not None:
        exposed &= Z.s > 0.0
    # (C/n) sum over exposed rows of ||x_i|| min(1, m_err / (2h)), with C/n rounded up.
    c_over_n = (U + _UNDERFLOW) / (1.0 - _ROUNDOFF) * _UP
    margin_term = (c_over_n * float(np.count_nonzero(exposed)) * kappa_up
                   * min(1.0, m_error / (2.0 * h)) * _UP)
    error = (_sum_error(Z, C, kappa_up)
             + C * kappa_up * (5.0 * _ROUNDOFF + _UNDERFLOW) + margin_term
             + _ROUNDOFF * gnorm + 6.0 * _UNDERFLOW)  # (the products above may underflow)
    return gnorm, (gnorm + error) * _UP


def _hinge_gap(Z, U, a, C, kappa):
    """Primal point of dual-feasible ``a`` and a rigorous bound on its duality gap.

    With ``v_i = s_i a_i`` (the product rounded; it stays in ``[0, s_i]``, so
    it is an exactly feasible weighted dual point), ``w(a) = (C/n) sum_i v_i z_i``
    and ``D(a) = (C/n) sum_i v_i - ||w(a)||^2 / 2``, the returned float point
    ``w`` (``fl(U X'(y v))``, within ``w_error`` of ``w(a)``, :func:`_sum_error`)
    is certified directly: weak duality gives ``D(a) <= P(w*)``, so
    ``||w - w*||^2 / 2 <= P(w) - P(w*) <= G = P(w) - D(a)``. Writing
    ``e = w(a) - w`` and ``mu_i = <z_i, w>`` (exact), ``sum_i v_i mu_i = <w(a), w> n / C``
    turns it into a sum without cancellation:
    ``G = (C/n) sum_i T_i + ||e||^2 / 2`` with
    ``T_i = s_i max(0, 1 - mu_i) - v_i (1 - mu_i) >= 0``. The margins ``m_i``
    are computed within ``m_err = gamma_d kappa ||w||`` (plus underflow,
    :func:`_margins`) of ``mu_i``, and ``u_i = fl(1 - m_i)`` within
    ``m_err + u |u_i|`` of ``1 - mu_i``; the sum's error enters only squared.

    * A row with ``a_i = 1`` and ``u_i > m_err (1 + 4u)`` has ``1 - mu_i > 0``
      and ``v_i = s_i``, and one with ``a_i = 0`` and ``u_i < -m_err (1 + 4u)``
      has ``1 - mu_i < 0`` and ``v_i = 0``: both ``T_i`` and the computed term
      are exactly 0. So is a row of weight 0.
    * Every other ("exposed") row: ``T(x) = s max(0, x) - v x`` has slopes
      ``s - v`` and ``-v``, so it is ``s``-Lipschitz (``0 <= v <= s <= 1``):
      ``|T(u_i) - T_i| <= m_err + u |u_i|``; its float evaluation (two
      products and a subtraction) is within ``2u |u_i| + u |T_hat_i| +
      2**-1074``. The bound adds these (rounded up to ``4u |u_i|`` and
      ``2**-1073``).

    The resulting non-negative bounds ``b_i`` are summed by :func:`_blocked_sum`
    (computed sum at least ``(1 - gamma_m) sum b_i``, ``m = _sum_depth(n)``)
    and multiplied by ``fl(C/n)`` (``C/n <= (U + 2**-1075) / (1 - u)``).

    Returns
    -------
    w : ndarray
        The certified point.
    gap : float
        Upper bound on ``P(w) - D(a)``, so ``||w - w*|| <= sqrt(2 gap)``.
    w_error : float
        Bound on ``||w - w(a)||`` (already inside ``gap``).
    """
    n_samples, n_features = Z.shape
    kappa_up = _kappa_bound(kappa, n_features)
    v = Z.weigh(a)
    w = U * Z.rmatvec_blocked(v)
    w_error = _sum_error(Z, C, kappa_up)
    m, m_error = _margins(Z, w, kappa_up)
    u = 1.0 - m
    terms = Z.weigh(np.maximum(u, 0.0)) - v * u
    exposed = (np.abs(u) <= m_error * (1.0 + 4.0 * _ROUNDOFF)) | ((a > 0.0) & (a < 1.0)) \
        | ((a == 1.0) & (u < 0.0)) | ((a == 0.0) & (u > 0.0))
    if Z.s is not None:
        exposed &= Z.s > 0.0
    bounds = terms + np.where(exposed, m_error + 4.0 * _ROUNDOFF * np.abs(u)
                              + _ROUNDOFF * terms + 2.0 * _UNDERFLOW, 0.0)
    total = _blocked_sum(n_samples, lambda start, stop: float(np.sum(bounds[start:stop])))
    # Plus 8 * 2**-1074 for the products below that may underflow (w_error**2 does
    # when C is subnormal: the gap would read 0).
    gap = ((U + _UNDERFLOW) * total / (1.0 - gamma_n(_sum_depth(n_samples) + 1))
           + 0.5 * w_error * w_error + 8.0 * _UNDERFLOW) * _UP
    return w, gap, w_error


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


def solve_svm_certified(X, y, C, *, loss="hinge", huber_h=0.1, radius, max_iter=1000,
                        sample_weight=None, norm_bound=None):
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
    max_iter : int, default=1000
        Total Newton steps allowed.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Row weights ``s_i`` in ``[0, 1]`` (already validated and clipped);
        ``None`` means every row weighs 1. The loss is still divided by all
        ``n`` rows, zero-weight ones included.
    norm_bound : float or None, default=None
        The public row-norm bound ``kappa`` of the sensitivity ``2 C kappa / n``
        the caller adds ``2 radius`` to. Rows clipped to it in floating point
        can have an exact norm a few ulps above it, and Rubinstein et al. (2012), Lemma 9
        (tightened) moves the exact minimizer by ``(C/n)(||x|| + ||x'||)``:
        a point is then accepted only when its distance plus
        ``(C/n) max(0, max_i ||x_i|| - kappa)`` (exact row norms bounded by
        :func:`_kappa_bound`) is at most ``radius``, so the released points
        of neighbouring datasets stay within ``2 C kappa / n + 2 radius``.
        ``None``: no reservation (``radius`` bounds the distance alone).

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
        return _solve(Z, C, loss, huber_h, radius, max_iter, norm_bound)
    # Small dense factorizations dominate; multi-threaded BLAS only adds
    # contention for them (scikit-learn's liblinear baseline is single-threaded too).
    with _blas_controller().limit(limits=1, user_api="blas"):
        return _solve(Z, C, loss, huber_h, radius, max_iter, norm_bound)


_CONTROLLER = []


def _blas_controller():
    # Inspecting the loaded libraries is slow: do it once per process.
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def _norm_reserve(C, n_samples, kappa, n_features, norm_bound):
    """Upper bound on ``(C/n) max(0, max_i ||x_i|| - norm_bound)`` (exact row norms).

    The exact norms are at most :func:`_kappa_bound` of the computed largest
    one; ``C/n <= (fl(C/n) + 2**-1075) / (1 - u)``; the subtraction and the
    products are rounded up by ``_UP``.
    """
    if norm_bound is None:
        return 0.0
    excess = _kappa_bound(kappa, n_features) - norm_bound
    if not excess > 0.0:
        return 0.0
    # (+ 2 * 2**-1074: the three products above may underflow)
    return (C / n_samples + _UNDERFLOW) * excess / (1.0 - _ROUNDOFF) * _UP + 2.0 * _UNDERFLOW


# Shares of the radius given to the smoothing term sqrt(C h) / 2 of _huber_fallback, tried
# in this order (the rest pays the Huber certificate).
_FALLBACK_SHARES = (0.5, 0.8, 0.25)
# Largest rows * d^2 of the fallback's Newton systems (a few tenths of a second per step).
_FALLBACK_HESSIAN_WORK = 5e7
# Newton steps per width of the fallback's continuation (its intermediate widths only
# steer the warm start).
_FALLBACK_LEVEL_STEPS = 20
_FALLBACK_LEVEL_FACTOR = 0.3
# Newton steps the Huber fallback may take per share, in units of max_iter.
_FALLBACK_STEP_FACTOR = 5


def _huber_fallback(Z, U, C, kappa, radius, reserve, w, max_iter):
    """A certified Huber solution within ``radius`` of the exact *hinge* minimizer, or None.

    Smoothing bound. With ``P`` the hinge primal and ``P_h`` the Huber one
    (:func:`_huber_parts`: ``0 <= l_h - hinge <= h / 4`` pointwise, the gap
    ``h / 4`` at ``1 - m = 0``), ``P <= P_h <= P + (C/n) sum_i s_i h / 4 <= P + C h / 4``
    (weights in ``[0, 1]``). Both are 1-strongly convex; adding
    ``P(w_h) - P(w*) >= ||w_h - w*||^2 / 2`` and ``P_h(w*) - P_h(w_h) >=
    ||w_h - w*||^2 / 2`` gives ``||w_h - w*||^2 <= (P_h - P)(w*) - (P_h - P)(w_h)
    <= C h / 4``, so ``||w_h - w*|| <= sqrt(C h) / 2`` for every dataset (the
    one-sided argument gives ``sqrt(C h / 2)``). A point ``w`` with a
    certified ``||w - w_h|| <= g`` (:func:`_huber_certificate`) is then within
    ``sqrt(C h) / 2 + g`` of the hinge minimizer: ``h`` is chosen so that the
    first term is a fixed share of the radius and the Huber solve must certify
    the rest. The release is as private as a certified hinge point (the
    sensitivity only needs every released point within ``radius`` of the
    exact minimizer), and which of the two is released is not revealed.

    Returns
    -------
    (w, distance, gradient_norm, steps) or None
    """
    budget = radius / _UP - reserve  # what (distance + reserve) * _UP <= radius leaves
    # A width this small puts many rows (duplicates on the margin) in the quadratic zone:
    # the Newton steps use all of them while the Hessian stays cheap.
    max_rows = max(_HESSIAN_ROWS, int(_FALLBACK_HESSIAN_WORK / Z.shape[1] ** 2))
    steps_total, start = 0, w
    for share in _FALLBACK_SHARES:
        h = (2.0 * share * budget) ** 2 / C
        if not h > 0.0 or not math.isfinite(h):
            continue
        # sqrt(C h) / 2 for the float h the loss uses, rounded up (C h may underflow).
        smoothing = math.sqrt(C * h + 2.0 * _UNDERFLOW) * 0.5 * _UP
        room = budget - smoothing
        if not room > 0.0:
            continue
        # Each share gets up to max_iter Newton steps: a continuation down to h (warm
        # starts), then the solve at h itself.
        w, level, steps_share = start, 0.01, 0
        while level > h and steps_share < max_iter:
            w, _, steps = _newton_huber(Z, U, level, w, max(1e-2 * level, 0.25 * room),
                                        min(_FALLBACK_LEVEL_STEPS, max_iter - steps_share),
                                        max_rows)
            steps_share, level = steps_share + steps, _FALLBACK_LEVEL_FACTOR * level
        w, _, steps = _newton_huber(Z, U, h, w, 0.25 * room, max_iter - steps_share, max_rows)
        steps_total += steps_share + steps
        gnorm, distance = _huber_certificate(Z, U, C, kappa, h, w)
        total = (distance + smoothing) * _UP
        if (total + reserve) * _UP <= radius:
            return w, total, gnorm, steps_total
    return None


def _solve(Z, C, loss, huber_h, radius, max_iter, norm_bound=None):
    n_samples = Z.shape[0]
    U = C / n_samples
    # The all-ones dual point: the exact solution when no margin can reach 1.
    w = U * Z.rmatvec(Z.weigh(np.ones(n_samples)))
    kappa = _max_row_norm(Z.X)
    # Rows whose exact norm exceeds the public bound move the exact minimizer further
    # than the sensitivity 2 C kappa / n counts (Rubinstein et al. (2012), Lemma 9 tightened:
    # (C/n)(||x|| + ||x'||)): each dataset's point pays the excess out of its radius.
    reserve = _norm_reserve(C, n_samples, kappa, Z.shape[1], norm_bound)

    def within(distance):
        return (distance + reserve) * _UP <= radius

    if loss == "huber":
        w, _, steps = _newton_huber(Z, U, huber_h, w, 0.5 * radius, max_iter)
        gnorm, distance = _huber_certificate(Z, U, C, kappa, huber_h, w)
        if within(distance):
            return CertifiedSVM(w, distance, gnorm, steps + 1)
        raise CertificationError(  # after the charge: public values only
            f"the SVM solver could not certify a distance <= {radius:.3g} to the exact "
            "minimizer within max_iter Newton steps, which the privacy proof needs; nothing "
            "was released. Increase max_iter or tol.")

    total, h = 0, 0.01
    w_cand, gap, _ = _hinge_gap(Z, U, np.ones(n_samples), C, kappa)
    while True:
        distance = math.sqrt(2.0 * gap) * _UP
        if within(distance):
            return CertifiedSVM(w_cand, distance, gap, total + 1)
        if total >= max_iter or h < 1e-14:
            break
        w, gnorm, steps = _newton_huber(Z, U, h, w, min(1e-2 * h, radius), max_iter - total)
        total += steps
        m = Z @ w
        w_cand, gap, _ = _hinge_gap(Z, U, -_huber_parts(m, h)[1], C, kappa)
        # ||w_h - w*||^2 <= C h / 2 (smoothing moves P by at most (C/n) sum_i s_i h / 4
        # <= C h / 4), so the exact margins lie within `widest` of m; narrower widths
        # are tried first.
        widest = h + kappa * (np.sqrt(C * h / 2.0) + gnorm)
        for width in (h, 10.0 * h, 100.0 * h, widest):
            if within(math.sqrt(2.0 * gap) * _UP) or width > widest:
                break
            polished = _hinge_gap(Z, U, _polish(Z, U, m, width), C, kappa)
            if polished[1] < gap:
                w_cand, gap, _ = polished
        h *= 0.1
    # No hinge candidate was certified (e.g. many duplicate rows on the margin make the
    # duality gap stall): release a certified Huber solution instead, which is as close to
    # the exact hinge minimizer as the radius requires (_huber_fallback).
    # The fallback runs only when the hinge path failed; a raise now would come after
    # the charge, so it gets a larger step allowance.
    fallback = _huber_fallback(Z, U, C, kappa, radius, reserve, w,
                               _FALLBACK_STEP_FACTOR * max_iter)
    if fallback is not None:
        w_fb, distance, gnorm, steps = fallback
        return CertifiedSVM(w_fb, distance, gnorm, total + steps + 1)
    raise CertificationError(  # after the charge: public values only
        f"the SVM solver could not certify a distance <= {radius:.3g} to the exact minimizer "
        f"(a duality gap below about {0.5 * radius**2:.3g}) within max_iter Newton steps, "
        "which the privacy proof needs; nothing was released. Increase max_iter or tol.")
