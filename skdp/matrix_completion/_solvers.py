"""Numerics of private matrix completion: noisy eigen-decompositions (global) and
per-user updates (local), Thakkar (2019), Ch. 6.

The global functions are the only ones that see all users together, and every
value they return is a post-processing of Gaussian releases calibrated in
:mod:`skdp.matrix_completion._calibration`. The local functions compute each
user's row from that user's own ratings and the released values only.
"""

import math

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from skdp.matrix_completion._ratings import clip_dense_rows, clip_rows
from skdp.mechanisms import sample_discrete_gaussian
from skdp.mechanisms._discrete import _check_granularity, _grid_indices, _grid_release

__all__ = [
    "clipped_values",
    "eigenvalue_release",
    "frank_wolfe_local",
    "grid_release",
    "grid_symmetric_release",
    "least_squares_coef",
    "nuclear_shrinkage",
    "oja_release",
    "pgd_local",
    "private_eigh",
    "private_oja",
    "private_top_eigen",
    "project_l1_ball",
    "pursuit_local",
    "step_sizes",
    "svd_coef",
    "symmetric_noise",
    "truncated_rows",
]

_ROWS_PER_BLOCK = 20_000


# --------------------------------------------------------------------------- global


def symmetric_noise(n, sigma, rng):
    """Symmetric ``n x n`` Gaussian matrix, isotropic in the Frobenius geometry.

    ``E = sigma (G + G^T) / 2`` with ``G`` i.i.d. standard normal: diagonal
    entries have variance ``sigma^2``, off-diagonal ones ``sigma^2 / 2``. In the
    orthonormal basis ``{e_j e_j^T} U {(e_j e_k^T + e_k e_j^T) / sqrt(2)}`` of
    symmetric matrices every coordinate of ``E`` is ``N(0, sigma^2)``, so
    releasing ``W + E`` is the Gaussian mechanism with L2 sensitivity equal to
    the Frobenius sensitivity of ``W``.
    """
    g = rng.standard_normal((n, n))
    return sigma * (g + g.T) / 2.0


def grid_release(value, grid, rng):
    """``g (round(value / g) + Z)``, ``Z`` i.i.d. exact discrete Gaussian of ``grid.sigma2`` steps.

    The floating-point-safe counterpart of adding ``N(0, sigma^2)`` to every
    entry of ``value`` (CKS Alg. 3 noise on the grid indices, which
    :func:`~skdp.mechanisms._discrete._grid_indices` computes exactly and
    clamps to ``+-2**52``). ``grid`` is a
    :class:`~skdp.matrix_completion._calibration.DiscreteGrid`.

    Returns
    -------
    released : ndarray of the shape of ``value``
        Exact multiples of ``grid.granularity``.
    """
    g = _check_granularity(grid.granularity)
    indices = _grid_indices(np.asarray(value, dtype=np.float64), g)
    return _grid_release(indices, sample_discrete_gaussian(grid.sigma2, indices.size, rng), g)


def grid_symmetric_release(W, grid, rng):
    """Floating-point-safe counterpart of ``W + symmetric_noise(n, sigma, rng)``.

    The upper triangle of ``W`` (diagonal included; the lower one is never
    read, so a float ``W`` that is not exactly symmetric is symmetrized by
    it) is rounded to the grid, exact discrete Gaussian noise of
    ``grid.sigma2`` steps is added to each diagonal index and of
    ``grid.sigma2 / 2`` to each off-diagonal one, and the result is mirrored.
    As :func:`symmetric_noise` in the Frobenius geometry, the zCDP cost is
    ``||w||_F^2 / (2 sigma2)`` for a change ``w`` of the full symmetric index
    matrix (see :func:`~skdp.matrix_completion._calibration.discrete_noise`).

    Returns
    -------
    released : ndarray of shape (n, n)
        Symmetric, every entry an exact multiple of ``grid.granularity``.
    """
    n = W.shape[0]
    upper = np.triu_indices(n)
    g = _check_granularity(grid.granularity)
    indices = _grid_indices(np.asarray(W, dtype=np.float64)[upper], g)
    noise = np.empty(indices.size, dtype=np.int64)
    diagonal = upper[0] == upper[1]
    # Diagonal sigma^2, off-diagonal sigma^2 / 2 (exact Fractions), as E's variances.
    noise[diagonal] = sample_discrete_gaussian(grid.sigma2, n, rng)
    if n > 1:
        noise[~diagonal] = sample_discrete_gaussian(grid.sigma2 / 2, indices.size - n, rng)
    released = np.empty((n, n))
    released[upper] = _grid_release(indices, noise, g)
    released[upper[1], upper[0]] = released[upper]
    return released


def truncated_rows(A, step):
    """``A`` (sparse or dense) with every entry truncated toward zero to a multiple of ``step``.

    ``step`` is a power of two: ``a / step``, ``trunc`` and the product are
    exact. No entry grows in absolute value, so no row norm grows.
    """
    if sp.issparse(A):
        A = A.copy()
        A.data = np.trunc(A.data / step) * step
        return A
    return np.trunc(np.asarray(A) / step) * step


def _gram(A):
    """``A^T A`` as a dense array (``A`` sparse or dense)."""
    W = A.T @ A
    return W.toarray() if hasattr(W, "toarray") else np.asarray(W)


_EXPLICIT_MAX_ENTRIES = 2_000_000


def _explicit_gram(A, k):
    # Form A^T A when the users x items shape is small (or k is too close to n
    # for ARPACK); otherwise apply A^T A + E to vectors only. The choice uses
    # the public shape, never the private sparsity pattern.
    n_users, n_items = A.shape
    return k >= n_items - 1 or n_users * n_items <= _EXPLICIT_MAX_ENTRIES


def private_top_eigen(A, sigma, rng, k=1, grid=None):
    """Top-``k`` eigenpairs of ``A^T A + E``, ``E`` from :func:`symmetric_noise`.

    This is the exact eigensolver (Thakkar (2019), Alg. 13 global component and
    Alg. 15): one release of the noisy ``n x n`` matrix, of which the
    eigenpairs are a post-processing. ``A``'s rows have L2 norm at most
    ``rho`` (clipped ratings or residuals) and ``sigma`` comes from
    :func:`~skdp.matrix_completion._calibration.noise_sigma`. With a
    ``grid`` (:class:`~skdp.matrix_completion._calibration.DiscreteGrid`)
    the released matrix is :func:`grid_symmetric_release` of ``A^T A``
    instead (always formed, exactly, from the rows truncated to
    ``grid.row_step``: :func:`truncated_rows`; ``sigma`` is unused), and
    its top eigenpairs are computed as for the continuous release.
    For large inputs ``A^T A`` is not formed: the released matrix
    ``A^T A + E`` is only applied to vectors (ARPACK, relative tolerance
    ``1e-6``); the result is the same function of the released matrix.

    Returns
    -------
    vectors : ndarray of shape (n_items, k)
        Orthonormal eigenvectors, largest eigenvalue first.
    values : ndarray of shape (k,)
    """
    n = A.shape[1]
    if grid is None:
        E = symmetric_noise(n, sigma, rng)

        def matvec(x):
            return A.T @ (A @ x) + E @ x

        released = None
    else:
        released = grid_symmetric_release(_gram(truncated_rows(A, grid.row_step)), grid, rng)
        matvec = released.__matmul__
    start = rng.standard_normal(n)
    if not _explicit_gram(A, k):
        op = LinearOperator((n, n), matvec=matvec, dtype=np.float64)
        try:
            values, vectors = eigsh(op, k=k, which="LA", v0=start, tol=1e-6, maxiter=50 * n)
            order = np.argsort(values)[::-1]
            return vectors[:, order], values[order]
        except ArpackNoConvergence:  # fall back to a dense eigensolver
            pass
    if released is None:
        released = _gram(A) + E
    values, vectors = linalg.eigh(released, subset_by_index=[n - k, n - 1])
    return vectors[:, ::-1], values[::-1]


def oja_release(A, V, sigma, rng, grid=None):
    """One release of private Oja's method: ``A^T A V + G``, ``G`` i.i.d. ``N(0, sigma^2)``.

    With a ``grid``: :func:`grid_release` of ``A^T A V`` (``sigma`` unused).
    """
    if grid is not None:
        return grid_release(A.T @ (A @ V), grid, rng)
    return A.T @ (A @ V) + sigma * rng.standard_normal(V.shape)


def eigenvalue_release(A, v, sigma, rng, grid=None):
    """Release ``||A v||^2 + N(0, sigma^2)`` (Thakkar (2019), Alg. 14, last line).

    With a ``grid``: :func:`grid_release` of ``||A v||^2`` (``sigma`` unused).
    """
    Av = A @ v
    if grid is not None:
        return float(grid_release(Av @ Av, grid, rng))
    return float(Av @ Av) + sigma * rng.standard_normal()


def private_oja(A, sigma, rng, *, n_steps, k=1, eigenvalue=False, grid=None):
    """Private Oja's method (Thakkar (2019), Alg. 14), never forming an ``n x n`` matrix.

    Starts from a random orthonormal ``V`` (independent of the data); each
    step releases ``Y = A^T A V + G`` (:func:`oja_release`; ``V`` depends on
    earlier releases only) and moves ``V <- orth(V + eta Y)`` with
    ``eta = 1 / (sigma sqrt(n))``, so that ``eta ||G||`` is about one. (Alg. 14
    has ``eta = 1 / (Gamma sigma sqrt(n))``, made for a large number of steps
    ``Gamma``: with the few steps a private budget affords, it barely moves
    ``V`` away from its random start.) With ``eigenvalue=True`` the top
    eigenvalue is released by :func:`eigenvalue_release`. Memory is
    ``O(nnz(A) + n_users + n k)``. With a ``grid``, every release is on it
    (:func:`oja_release`, :func:`eigenvalue_release`); ``sigma`` is then
    ``grid.sigma``, used by the step size only.

    Returns
    -------
    vectors : ndarray of shape (n_items, k)
    value : float or None
        Noisy ``||A v_1||^2`` when ``eigenvalue=True``.
    """
    n = A.shape[1]
    V = linalg.qr(rng.standard_normal((n, k)), mode="economic")[0]
    eta = 1.0 / (sigma * math.sqrt(n)) if sigma > 0 else 1.0
    for _ in range(n_steps):
        V = linalg.qr(V + eta * oja_release(A, V, sigma, rng, grid), mode="economic")[0]
    value = eigenvalue_release(A, V[:, 0], sigma, rng, grid) if eigenvalue else None
    return V, value


def private_eigh(gram, sigma, rng, grid=None):
    """All eigenpairs of ``gram + E``, ``E`` from :func:`symmetric_noise`.

    The global component of private projected gradient descent (Thakkar (2019),
    Alg. 16): one release of the noisy ``n x n`` Gram matrix
    ``sum_i y_i y_i^T + E`` of the users' (clipped) iterate rows ``y_i``.
    Alg. 16 adds a matrix ``N`` with i.i.d. ``N(0, sigma^2)`` entries; the
    symmetric part ``(N + N^T) / 2`` of that release has the distribution of
    ``E``, so using ``E`` is a post-processing of Thakkar's (2019) release.
    With a ``grid``, the release is :func:`grid_symmetric_release` of
    ``gram`` (``sigma`` unused).

    Returns
    -------
    values : ndarray of shape (n,)
        Eigenvalues, largest first.
    vectors : ndarray of shape (n, n)
        Orthonormal eigenvectors (columns), in the same order.
    """
    released = (gram + symmetric_noise(gram.shape[0], sigma, rng) if grid is None
                else grid_symmetric_release(gram, grid, rng))
    values, vectors = linalg.eigh(released)
    return values[::-1], vectors[:, ::-1]


def project_l1_ball(values, radius):
    """Euclidean projection of non-negative ``values`` onto ``{z: sum |z_i| <= radius}``.

    Thakkar (2019), Alg. 16: if ``sum(values) > radius``, ``z_i = max(0, values_i -
    tau)`` with ``tau`` chosen so that ``sum(z) = radius``; otherwise
    ``z = values``. ``tau`` is found by sorting (Duchi et al. 2008, Fig. 1).
    Applied to singular values, this is the projection onto the nuclear-norm
    ball of radius ``radius``.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.sum() <= radius:
        return values.copy()
    ranked = np.sort(values)[::-1]
    cumulative = np.cumsum(ranked) - radius
    last = np.nonzero(ranked * np.arange(1, len(ranked) + 1) > cumulative)[0][-1]
    tau = cumulative[last] / (last + 1)
    return np.maximum(values - tau, 0.0)


def nuclear_shrinkage(eigenvalues, radius):
    """The nuclear-norm projection of Alg. 16 as per-direction factors.

    With ``Y^T Y + E = V diag(lambda) V^T`` released, Alg. 16 sets
    ``Lambda = sqrt(lambda)``, projects ``Lambda`` onto the L1 ball of radius
    ``k`` (:func:`project_l1_ball`) to get ``Z``, and each user moves her row
    to ``y_i V Lambda^{-1} Z V^T``. Noisy eigenvalues can be negative: here
    ``Lambda = sqrt(max(lambda, 0))``, and directions with ``Z = 0`` (those
    included) are dropped. Without noise ``y -> y V diag(Z / Lambda) V^T`` is
    exactly the Frobenius projection of ``Y`` onto ``{||Y||_nuc <= k}``.

    Returns
    -------
    keep : ndarray of bool, shape (n,)
        Directions with ``Z > 0``.
    factors : ndarray of shape (n_kept,)
        ``Z / Lambda`` on those directions, in ``(0, 1]``.
    """
    singular = np.sqrt(np.maximum(eigenvalues, 0.0))
    projected = project_l1_ball(singular, radius)
    keep = projected > 0
    return keep, projected[keep] / singular[keep]


# --------------------------------------------------------------------------- local


def step_sizes(n_iter, schedule):
    """Frank-Wolfe step sizes ``eta_1, ..., eta_T``.

    ``"constant"``: ``1 / T`` at every step (Thakkar (2019), Alg. 12 and 13).
    ``"standard"``: ``2 / (t + 1)`` (Jaggi 2013), whose first step is 1.
    """
    t = np.arange(1, n_iter + 1, dtype=np.float64)
    return np.full(n_iter, 1.0 / n_iter) if schedule == "constant" else 2.0 / (t + 1.0)


def clipped_values(ratings, values, bound):
    """``values`` with each user's row scaled to L2 norm at most ``bound`` (Pi of Alg. 13).

    Non-finite rows become zero (see :func:`~skdp.matrix_completion._ratings.clip_rows`).
    """
    return clip_rows(ratings, values, bound)[0]


def frank_wolfe_local(ratings, directions, *, nuclear_norm, bound, etas, coefficients=False):
    """Run the local component of private Frank-Wolfe for every user of ``ratings``.

    Thakkar (2019), Alg. 13, ``A_local``: with ``A_i = P_Omega(Y_i - Y*_i)``, user
    ``i`` sets ``u_i = A_i v_t / lambda_t`` and
    ``Y_i <- Pi_Delta((1 - eta_t) Y_i - eta_t k u_i v_t^T)``, where ``Pi_Delta``
    scales the row so that its observed entries have norm at most ``Delta``
    and ``Y*_i`` is the user's ratings clipped the same way. Only the row's
    observed entries and its coefficients on ``v_1..v_t`` are stored, never a
    dense row.

    Parameters
    ----------
    ratings : Ratings
    directions : callable
        ``directions(t, A)`` returns ``(v_t, lambda_t)``. In ``fit`` it is the
        private global component (which sees the residual matrix ``A`` of all
        users); in ``transform`` it reads the stored components and ignores ``A``.
    nuclear_norm : float
        ``k``.
    bound : float
        ``Delta``.
    etas : ndarray of shape (T,)
        Step sizes.
    coefficients : bool, default=False
        Whether to return each user's coefficients on the directions.

    Returns
    -------
    coef : ndarray of shape (n_users, T) or None
        Completed rows are ``coef @ components``.
    """
    target = clipped_values(ratings, ratings.values, bound)
    y = np.zeros_like(target)
    coef = np.zeros((ratings.n_users, len(etas))) if coefficients else None
    for t, eta in enumerate(etas):
        A = ratings.matrix(y - target)
        v, lam = directions(t, A)
        u = (A @ v) / lam if lam > 0 else np.zeros(ratings.n_users)
        y *= 1.0 - eta
        y -= eta * nuclear_norm * ratings.per_entry(u) * v[ratings.indices]
        y, scale = clip_rows(ratings, y, bound)
        if coefficients:
            coef *= 1.0 - eta
            coef[:, t] = -eta * nuclear_norm * u
            coef *= scale[:, None]
            coef[scale == 0.0] = 0.0  # an overflowed row was set to zero
    return coef


_RIDGE = 1e-2  # relative ridge of the per-user least squares (numerical safeguard)
_ABS_RIDGE = 0.1  # the solvers' own default (the estimator passes its ridge)


def _observed_fit(ratings, coef, V):
    """``P_Omega(coef @ V)``: each user's fitted values on her observed entries."""
    out = np.empty(len(ratings.values))
    for start in range(0, ratings.n_users, _ROWS_PER_BLOCK):
        stop = min(start + _ROWS_PER_BLOCK, ratings.n_users)
        lo, hi = ratings.indptr[start], ratings.indptr[stop]
        rows = np.repeat(np.arange(stop - start), np.diff(ratings.indptr[start:stop + 1]))
        out[lo:hi] = np.einsum("er,re->e", coef[start:stop][rows],
                               V[:, ratings.indices[lo:hi]])
    return out


class _LeastSquares:
    """Each user's ridge least-squares coefficients on a growing set of directions.

    User ``i`` solves ``min_c ||P_Omega_i(c V) - y_i||^2 + alpha_i ||c||^2``
    with ``alpha_i = 0.01 |Omega_i| / n + ridge``: one percent of the expected
    diagonal of her Gram matrix when ``V`` has orthonormal rows (a numerical
    safeguard), plus an absolute ``ridge`` (the estimator's ``ridge``, default
    0.3) that shrinks her coefficients toward zero. Her Gram matrix and right-hand
    side grow by one column per new direction.
    """

    def __init__(self, ratings, max_dim, ridge=_ABS_RIDGE):
        self.ratings = ratings
        self.pattern = ratings.matrix(np.ones(len(ratings.values)))
        self.observed = ratings.matrix(ratings.values)
        self.gram = np.zeros((ratings.n_users, max_dim, max_dim))
        self.rhs = np.zeros((ratings.n_users, max_dim))
        self.ridge = _RIDGE * ratings.counts / ratings.n_items + ridge
        self.V = np.zeros((0, ratings.n_items))

    def add(self, v, solve=True):
        """Append direction ``v``; return the refitted coefficients (if ``solve``)."""
        self.V = np.vstack([self.V, v])
        d = len(self.V)
        column = self.pattern @ (self.V * v).T  # (n_users, d): <V_a, v> on Omega_i
        self.gram[:, :d, d - 1] = column
        self.gram[:, d - 1, :d] = column
        self.rhs[:, d - 1] = self.observed @ v
        if not solve:
            return None
        system = self.gram[:, :d, :d] + self.ridge[:, None, None] * np.eye(d)
        empty = self.ratings.counts == 0
        system[empty] = np.eye(d)  # users with no ratings keep coefficients 0
        return np.linalg.solve(system, self.rhs[:, :d, None])[:, :, 0]


def pursuit_local(ratings, directions, *, n_iter, bound, ridge=_ABS_RIDGE):
    """Rank-one pursuit with a per-user least-squares refit (local component).

    In iteration ``t`` each user sends ``Pi_Delta(P_Omega(Y_i - y_i))``, her
    residual on her observed ratings clipped to norm ``Delta``, to the global
    component, which returns a new direction ``v_t``; she then refits her own
    row as the least-squares combination of ``v_1..v_t`` on her observed
    ratings. The refit uses her unclipped ratings: clipping only bounds what
    she contributes to the shared statistic.

    Parameters
    ----------
    ratings : Ratings
    directions : callable
        ``directions(t, A)`` returns ``(v_t, None)`` from the clipped residuals ``A``.
    n_iter : int
    bound : float

    Returns
    -------
    coef : ndarray of shape (n_users, n_iter)
    """
    solver = _LeastSquares(ratings, n_iter, ridge)
    coef = np.zeros((ratings.n_users, 0))
    for t in range(n_iter):
        residual = (_observed_fit(ratings, coef, solver.V) if t else 0.0) - ratings.values
        v, _ = directions(t, ratings.matrix(clipped_values(ratings, residual, bound)))
        coef = solver.add(v)
    return coef


def least_squares_coef(ratings, V, ridge=_ABS_RIDGE):
    """Each user's ridge least-squares coefficients on the rows of ``V``.

    The local step of pursuit in ``transform``; see :class:`_LeastSquares`.
    """
    solver = _LeastSquares(ratings, len(V), ridge)
    for v in V[:-1]:
        solver.add(v, solve=False)
    return solver.add(V[-1])


def svd_coef(ratings, V):
    """Local step of private SVD completion: ``(n / |Omega_i|) P_Omega(y_i) V^T``.

    Thakkar (2019), Alg. 15 scales by ``m / |Omega|``; its proof (Thm. 30) uses
    ``1 / p`` with ``p = |Omega| / (m n)``. Here each user uses her own
    observed fraction ``p_i = |Omega_i| / n``, a local quantity, instead of the
    global ``|Omega|``, which would itself have to be released privately.
    Users with no ratings get zero coefficients.
    """
    counts = ratings.counts
    factor = np.zeros(ratings.n_users)
    factor[counts > 0] = ratings.n_items / counts[counts > 0]
    return (ratings.matrix(ratings.values) @ V.T) * factor[:, None]


_DENSE_BLOCK_ENTRIES = 2_000_000  # dense iterate entries formed at a time


def pgd_local(ratings, release, *, bound, etas, gram=False, coefficients=True, gram_step=None):
    """Local component of private projected gradient descent (Thakkar (2019), Alg. 16).

    In iteration ``t`` each user takes a gradient step on her own observed
    entries of ``f(Y) = ||P_Omega(Y - Y*)||_F^2 / 2``,
    ``y_i <- y_i - eta_t P_Omega(y_i - y*_i)``, clips her whole row to norm
    ``rho`` (an skdp addition that bounds the sensitivity, see
    :mod:`~skdp.matrix_completion._calibration`), and contributes
    ``y_i y_i^T`` to the global Gram matrix. The global component releases
    the directions ``V_t`` and factors ``s_t`` of :func:`nuclear_shrinkage`;
    she then moves to ``y_i <- (y_i V_t^T * s_t) V_t``. A row is stored as
    coefficients on the previous directions; it is formed densely (a block of
    users at a time) only to read its observed entries, its norm and, in
    ``fit``, its contribution to the Gram matrix.

    Parameters
    ----------
    ratings : Ratings
    release : callable
        ``release(t, W)`` returns ``(V_t, s_t)``, ``V_t`` of shape
        ``(r_t, n_items)`` with orthonormal rows. ``W`` is
        ``sum_i y_i y_i^T`` over the clipped rows when ``gram=True`` (``fit``:
        the private global component releases it with noise), else ``None``
        (``transform``: the stored releases are read).
    bound : float
        ``rho``: bound on the L2 norm of each user's whole row.
    etas : ndarray of shape (T,)
        Step sizes.
    gram : bool, default=False
        Whether to compute ``W``.
    coefficients : bool, default=True
        Whether to compute the last projection's coefficients (``fit`` only
        needs the releases).
    gram_step : float or None, default=None
        A power of two: ``W`` is summed from the rows truncated to it
        (:func:`truncated_rows`), exactly (discrete noise); ``None`` sums the
        rows themselves.

    Returns
    -------
    coef : ndarray of shape (n_users, r_T) or None
    basis : ndarray of shape (r_T, n_items)
        Completed rows are ``coef @ basis``.
    """
    n_users, n_items = ratings.n_users, ratings.n_items
    size = max(1, _DENSE_BLOCK_ENTRIES // n_items)
    blocks = [(start, min(start + size, n_users)) for start in range(0, n_users, size)]
    coef, basis = np.zeros((n_users, 0)), np.zeros((0, n_items))
    for t, eta in enumerate(etas):
        step = np.empty(len(ratings.values))  # eta_t P_Omega(y* - y), before clipping
        scale = np.empty(n_users)  # Pi_rho
        W = np.zeros((n_items, n_items)) if gram else None
        for start, stop in blocks:
            lo, hi = ratings.indptr[start], ratings.indptr[stop]
            rows = coef[start:stop] @ basis
            where = np.repeat(np.arange(stop - start) * n_items,
                              np.diff(ratings.indptr[start:stop + 1])) + ratings.indices[lo:hi]
            flat = rows.reshape(-1)
            step[lo:hi] = eta * (ratings.values[lo:hi] - flat[where])
            flat[where] += step[lo:hi]
            scale[start:stop] = clip_dense_rows(rows, bound)
            if gram:
                kept = rows if gram_step is None else truncated_rows(rows, gram_step)
                W += kept.T @ kept
        V, factors = release(t, W)
        if t == len(etas) - 1 and not coefficients:
            return None, V
        # (y_i V^T) * s with y_i = scale_i (coef_i basis + step_i), without dense rows.
        change, steps = basis @ V.T, ratings.matrix(step)
        new = np.empty((n_users, len(factors)))
        for start, stop in blocks:
            new[start:stop] = coef[start:stop] @ change
            new[start:stop] += steps[start:stop] @ V.T
            new[start:stop] *= scale[start:stop, None] * factors
        coef, basis = new, V
    return coef, basis
