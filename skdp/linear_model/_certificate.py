"""A rounding-proof upper bound on the exact gradient norm of a GLM objective.

AMP (Thakkar (2019), Alg. 1 line 5, Lemma 4.3.3) and objective perturbation are
private only if the *exact* gradient of the perturbed objective

``F(theta) = (1/m) sum_i w_i l(z_i) + (reg/2) ||theta||^2 + <b, theta>``

(``z_i = y_i <x_i, theta>``; for the softmax loss ``z_i = W x_i``) has norm at
most ``gamma`` at the released point. The solvers iterate with a fast BLAS
gradient whose rounding error grows with ``m`` (measured at 0.4% of the
thesis' ``gamma = 1/m^2`` at ``m = 4e6``, reaching it near ``m = 1e8``).
:func:`gradient_norm_bound` instead returns a number ``B`` with
``||grad F(theta)|| <= B`` *in exact arithmetic*, for the floating-point data
``X, y, w, reg, b, theta`` as given, so ``B <= gamma`` is a valid certificate.

Assumptions
-----------
* IEEE-754 binary64 arithmetic with round-to-nearest (NumPy's default), unit
  roundoff ``u = 2^-53``; ``+ - * /`` and ``sqrt`` correctly rounded, gradual
  underflow, no overflow (any non-finite intermediate makes ``B = inf``, so
  the certificate fails safely).
* ``numpy.exp`` on float64 is accurate to ``EXP_ULPS = 4`` units in the last
  place (a margin over the <= 1 ulp of glibc's ``exp`` listed in the glibc
  manual, "Errors in Math Functions", and of NumPy's SIMD float64 ``exp``;
  the tests check <= 1 ulp against ``np.longdouble`` on this machine). One
  ulp of ``x`` is at most ``2 u |x|``.
* BLAS is not used for anything the bound depends on (only for the row
  norms, whose computed value is inflated by the standard ``gamma_n`` bound
  valid for any summation order, with or without FMA).

How the bound is built (Higham, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., Sec. 3.1: ``gamma_n = n u / (1 - n u)``)
--------------------------------------------------------------------------
1. Margins ``z_i`` are computed by an accurate dot product: every product
   ``x_ij theta_j`` is split exactly into ``h + r`` by Dekker's TwoProduct
   (Ogita, Rump and Oishi, "Accurate sum and dot product", SIAM J. Sci.
   Comput. 26(6), 2005, Alg. 3.3 and Thm. 3.4: exact without underflow,
   ``<= 5 eta`` off with it, ``eta = 2^-1074``); the ``h`` are then summed
   exactly in any order after an error-free extraction against a power of
   two ``sigma`` (Rump, Ogita and Oishi, "Accurate floating-point summation
   Part I", SIAM J. Sci. Comput. 31(1), 2008, Alg. 3.2 / Lemma 3.2:
   ``h = q + h'`` exactly, ``q`` a multiple of ``u sigma``, ``|h'| <= u
   sigma``; with ``sigma >= 2^ceil(log2(n + 2)) max|h|`` every partial sum of
   the ``q`` is a multiple of ``u sigma`` below ``sigma`` in magnitude, hence
   representable: the sum of the ``q`` is exact). Only the small remainders
   ``h'`` and ``r`` are summed with rounding, error
   ``<= gamma_{2n} n u (sigma + max|h|)`` (Higham eq. (4.4), any order).
   So ``|z_hat - z| <= u |z_hat| (1 + 2u) + (that second-order term)``.
2. Loss derivatives are evaluated by formulas whose rounding is bounded
   explicitly (:func:`_logistic_derivative`, :func:`_huber_derivative`,
   :func:`_softmax_residual`), and the error of the margins is propagated by
   the loss' curvature (``|l''| <= 1/4`` logistic, ``1/(2h)`` Huber; for the
   softmax ``||delta p||_1 <= 2 max_k |delta z_k|``). This gives, per row, a
   bound ``delta_i >= ||s_hat_i - s_i||`` on the computed weighted residuals.
3. ``T = X^T s_hat`` is summed exactly in the same way (TwoProduct +
   extraction per chunk of rows, chunk results accumulated in double-double
   with Knuth's TwoSum), leaving only second-order error terms.
4. ``grad = T / m + reg theta + b`` is formed with TwoProduct/TwoSum, each
   remaining rounding bounded; the norm is ``sqrt(g . g)`` inflated by
   ``1 / (1 - gamma_{n+2})``. The residual errors of step 2 add
   ``(1/m) sum_i delta_i ||x_i||`` (triangle inequality).

Every bound term is a non-negative float computed with fewer than ``10^9``
roundings, so its computed value is within a factor ``1 + 2^-20`` of the exact
one; the total error is doubled to cover that (and it stays orders of
magnitude below ``gamma`` on data that fits in memory: around ``1e-15`` times
the data norm for the binary losses).
"""

import math

import numpy as np
import scipy.sparse as sp

__all__ = ["gradient_norm_bound", "two_product", "two_sum"]

U = 2.0**-53  # unit roundoff of binary64, round to nearest
ETA = 2.0**-1074  # smallest positive subnormal
EXP_ULPS = 4  # assumed accuracy of numpy.exp (see module docstring)
_SPLITTER = 134217729.0  # 2^27 + 1, Dekker's splitting constant
# Elements per chunk: keeps the temporaries (a few arrays of this size) in cache
# and the memory O(chunk), whatever m is.
_CHUNK_ELEMENTS = 1 << 15


def gamma_n(n):
    """Higham's ``gamma_n = n u / (1 - n u)`` (Sec. 3.1), for ``n u < 1``."""
    return n * U / (1.0 - n * U)


def two_sum(a, b):
    """Knuth's TwoSum: ``a + b = s + e`` exactly, ``s = fl(a + b)`` (no overflow)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _split(a):
    """Dekker's split ``a = hi + lo`` with both halves of at most 26 significant bits."""
    c = _SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


def two_product(a, b, a_split=None, b_split=None):
    """Dekker's TwoProduct: ``a * b = p + e`` exactly (no underflow or overflow).

    Pre-computed splits of ``a`` or ``b`` (from ``_split``) may be passed to
    reuse them.
    """
    p = a * b
    ah, al = _split(a) if a_split is None else a_split
    bh, bl = _split(b) if b_split is None else b_split
    e = al * bl - (((p - ah * bh) - al * bh) - ah * bl)
    return p, e


def _exact_sum(h, r, reduce, n_terms, top):
    """Sum ``h + r`` with ``reduce`` as ``S + C`` with ``|S + C - exact| <= err``.

    ``reduce`` adds up the entries of an array of the shape of ``h`` in groups
    of at most ``n_terms`` (a row or column sum, or a ``bincount``), in any
    order. ``S`` is the exact sum of the high parts of ``h`` extracted
    against a power of two ``sigma`` (ROO 2008, Alg. 3.2 / Lemma 3.2); ``C``
    the rounded sum of the remainders and of ``r`` (``|r| <= u |h|``, as from
    TwoProduct); ``top >= max |h|``.
    """
    levels = math.ceil(math.log2(n_terms + 2))
    # >= 2^levels * top; inf (not OverflowError) near overflow, so the bound is inf
    sigma = float(np.ldexp(1.0, levels + math.frexp(top)[1]))
    q = (sigma + h) - sigma  # h = q + (h - q) exactly, q a multiple of u sigma
    S = reduce(q)  # exact: every partial sum is a multiple of u sigma below sigma
    C = reduce((h - q) + r)
    # |h - q| <= u sigma and |r| <= u top: 2 n terms summed in some order with
    # error <= gamma_{2n-1} sum |.| (Higham eq. (4.4)), plus 5 eta per TwoProduct
    # for underflow (ORO 2005, Thm. 3.4).
    err = gamma_n(2 * n_terms) * n_terms * U * (sigma + top) * (1.0 + U) + 5 * n_terms * ETA
    return S, C, err


class _Accumulator:
    """Double-double running sum ``hi + lo`` of arrays, with a bound ``err`` on its error."""

    def __init__(self, shape):
        self.hi = np.zeros(shape)
        self.lo = np.zeros(shape)
        self.err = np.zeros(shape)

    def add(self, k, S, C, err):
        """Add ``S + C`` (known to within ``err``) to row ``k``; ``S`` enters exactly (TwoSum)."""
        self.hi[k], e = two_sum(self.hi[k], S)
        t = e + C
        self.lo[k] = self.lo[k] + t
        self.err[k] += U * (np.abs(t) + np.abs(self.lo[k])) + err


def _chunks(m, width):
    """Row ranges of about ``_CHUNK_ELEMENTS / width`` rows each."""
    step = max(1, _CHUNK_ELEMENTS // max(1, width))
    for start in range(0, m, step):
        yield start, min(m, start + step)


class _Block:
    """One chunk of rows of ``X`` (dense or CSR), split once for all TwoProducts."""

    def __init__(self, X, start, stop):
        B = X[start:stop]
        self.n_rows, self.n_cols = B.shape
        if sp.issparse(B):
            B = B.tocsr()
            self.values, self.cols = B.data, B.indices
            self.rows = np.repeat(np.arange(self.n_rows), np.diff(B.indptr))
            self.row_terms = max(1, int(np.diff(B.indptr).max(initial=0)))
        else:
            self.values = np.ascontiguousarray(B)
        self.sparse = sp.issparse(B)
        self.split = _split(self.values)
        # Upper bounds on the rows' L2 norms (computed norm times 1 + gamma_{d+2}),
        # and so on every |x_ij|.
        if self.sparse:
            norm_values, norm_rows = self.values, self.rows
            if not B.has_canonical_format:
                # Duplicates add up in every product: bound each entry by the sum of
                # its parts' |.|, rounded up (positive sums of <= row_terms parts).
                A = sp.csr_matrix((np.abs(B.data), B.indices.copy(), B.indptr.copy()),
                                  shape=B.shape)  # own indices: sum_duplicates sorts in place
                A.sum_duplicates()
                norm_values = A.data * (1.0 + gamma_n(self.row_terms + 1))
                norm_rows = np.repeat(np.arange(self.n_rows), np.diff(A.indptr))
            squares = norm_values * norm_values
            sums = np.bincount(norm_rows, weights=squares, minlength=self.n_rows)
        else:
            sums = (self.values * self.values).sum(axis=1)
        self.row_norms = (np.sqrt(sums) * (1.0 + gamma_n(self.n_cols + 2))
                          + math.sqrt(self.n_cols * ETA))
        self.max_entry = float(self.row_norms.max(initial=0.0))

    def _top(self, v):
        """Bound on ``|fl(x_ij v)|`` over the block."""
        return self.max_entry * float(np.max(np.abs(v), initial=0.0)) * (1.0 + 2 * U)

    def scores(self, thetas):
        """Accurate ``B @ theta_k`` for each row of ``thetas``; ``(Z, err)``, both (c, K)."""
        K = thetas.shape[0]
        Z, err = np.empty((self.n_rows, K)), np.empty((self.n_rows, K))
        for k in range(K):
            if self.sparse:
                h, r = two_product(self.values, thetas[k, self.cols], self.split)
                S, C, e = _exact_sum(h, r, self._row_sum, self.row_terms, self._top(thetas[k]))
            else:
                h, r = two_product(self.values, thetas[k], self.split)
                S, C, e = _exact_sum(h, r, lambda a: a.sum(axis=1), self.n_cols,
                                     self._top(thetas[k]))
            Z[:, k] = S + C
            # the final rounding of S + C, then the remainders' error
            err[:, k] = U * np.abs(Z[:, k]) * (1.0 + 2 * U) + e
        return Z, err

    def add_transposed_product(self, s, acc):
        """``acc[k] += B^T s[:, k]`` accurately, for each column ``k`` of ``s``."""
        for k in range(s.shape[1]):
            if self.sparse:
                h, r = two_product(self.values, s[self.rows, k], self.split)
                S, C, e = _exact_sum(h, r, self._col_sum, self.n_rows, self._top(s[:, k]))
            else:
                col = s[:, k:k + 1]
                h, r = two_product(self.values, col, self.split, _split(col))
                S, C, e = _exact_sum(h, r, lambda a: a.sum(axis=0), self.n_rows,
                                     self._top(col))
            acc.add(k, S, C, e)

    def _row_sum(self, a):
        return np.bincount(self.rows, weights=a, minlength=self.n_rows)

    def _col_sum(self, a):
        return np.bincount(self.cols, weights=a, minlength=self.n_cols)


def _logistic_derivative(z):
    """``l'(z) = -1 / (1 + e^z)`` and a bound on its evaluation error at ``z``.

    With ``E = exp(-|z|)`` (relative error ``<= 2 EXP_ULPS u``), ``l'`` is
    ``-E / (1 + E)`` for ``z >= 0`` and ``-1 / (1 + E)`` otherwise: at most
    ``4 EXP_ULPS + 2`` relative roundings, so the error is
    ``<= gamma_{4 EXP_ULPS + 3} |l'|`` (Higham Lemma 3.1), plus ``2^-1000``
    for an underflowing ``E``.
    """
    E = np.exp(-np.abs(z))
    d = np.where(z >= 0, -E, -1.0) / (1.0 + E)
    return d, gamma_n(4 * EXP_ULPS + 3) * np.abs(d) + 2.0**-1000


def _huber_derivative(z, h):
    """Huber SVM ``l'(z)`` (width ``h``) and a bound ``4 u`` on its evaluation error.

    ``v = fl(1 - z)``; in the quadratic zone ``-v / (2h) - 1/2`` has three
    roundings (``2h`` is exact), <= ``2 u`` in all as ``|v| <= h``. Where the
    computed ``v`` and the exact ``1 - z`` fall on different sides of ``+-h``
    they are within ``u h`` of it, and ``l'`` (continuous, slope ``1/(2h)``)
    moves by at most ``u / 2`` there.
    """
    v = 1.0 - z
    d = np.where(v > h, -1.0, np.where(v < -h, 0.0, -v / (2.0 * h) - 0.5))
    return d, np.full_like(d, 4.0 * U)


def _binary_residuals(objective, Z, Z_err, rows):
    """``s_i = w_i y_i l'(z_i)`` for a block and a bound on ``|s_hat_i - s_i|``."""
    y = objective.y[rows]
    z, z_err = y * Z[:, 0], Z_err[:, 0]  # y in {-1, +1}: exact
    loss = objective.loss
    if loss.name == "logistic":
        d, d_err = _logistic_derivative(z)
        curvature = 0.25  # sup |l''| of the logistic loss
    elif loss.name == "huber":
        d, d_err = _huber_derivative(z, loss.h)
        curvature = 1.0 / (2.0 * loss.h)  # sup |l''| of the Huber SVM loss
    else:
        raise TypeError(f"no rigorous certificate for the loss {loss!r}")
    # the exact margin is within z_err of z_hat: l' moves by <= curvature * z_err
    delta = d_err + curvature * z_err * (1.0 + U)
    s = d * y
    if objective.sample_weight is not None:
        w = objective.sample_weight[rows]
        s = s * w
        delta = delta * w + U * np.abs(s)
    return s[:, None], delta


def _softmax_residuals(objective, Z, Z_err, rows):
    """``s_ik = w_i (p_ik - [y_i = k])`` for a block and a bound on ``||s_hat_i - s_i||_1``.

    ``p = softmax(z)`` as ``E_k / sum_j E_j`` with ``E_k = exp(D_k)``,
    ``D_k = fl(z_k - max z)``: ``E_k`` is off by a relative
    ``rho_k <= u |D_k| (1 + 1e-12) + 2 EXP_ULPS u``, so
    ``|p_hat_k - p_k| <= p_k (rho_k + sum_j p_j rho_j + gamma_{K+1})`` to first
    order; the sum over ``k`` is ``2 sum_k p_k rho_k + gamma_{K+1}``, taken with
    a 10% margin for the second-order terms and ``p`` vs ``p_hat``. The margins'
    error moves the softmax by ``||delta p||_1 <= 2 max_k |delta z_k|``
    (Jacobian ``diag(p) - p p^T``). Subtracting the one-hot label and the
    weights add a rounding each.
    """
    K = Z.shape[1]
    D = Z - Z.max(axis=1, keepdims=True)
    E = np.exp(D)
    P = E / E.sum(axis=1, keepdims=True)
    rho = U * np.abs(D) * (1.0 + 1e-12) + 2 * EXP_ULPS * U
    p_err = 1.1 * (2.0 * np.sum(P * rho, axis=1) + gamma_n(K + 1)) + K * 2.0**-1000
    delta = p_err + 2.0 * Z_err.max(axis=1) * (1.0 + U) + U
    labels = objective.y[rows]
    P[np.arange(len(labels)), labels] -= 1.0
    if objective.sample_weight is not None:
        w = objective.sample_weight[rows]
        P *= w[:, None]
        delta = delta * w + U * np.abs(P).sum(axis=1)
    return P, delta


def gradient_norm_bound(objective, theta):
    """Rigorous upper bound on the exact gradient norm of ``objective`` at ``theta``.

    Parameters
    ----------
    objective : GLMObjective or MultinomialObjective
        The objective (logistic or Huber SVM loss for the binary one).
    theta : ndarray of shape (n_params,)
        The point.

    Returns
    -------
    bound : float
        ``B >= ||grad F(theta)||`` in exact arithmetic on the given floating
        point data (see the module docstring for the assumptions); ``inf`` if
        anything overflowed.

    Raises
    ------
    ValueError
        If the objective's ``sample_weight`` has a negative or non-finite
        entry: the residual error bound ``delta_i w_i`` of a row is valid
        only for ``w_i >= 0`` (a negative weight would *subtract* it and
        certify a point that may not meet the bound).
    """
    multinomial = hasattr(objective, "n_classes")
    X = objective.X
    m, d = X.shape
    weights = objective.sample_weight
    if weights is not None and not (np.all(np.isfinite(weights)) and np.all(weights >= 0.0)):
        raise ValueError("gradient_norm_bound: sample_weight must be finite and >= 0; the "
                         "bound does not cover other weights.")
    thetas = np.asarray(theta, dtype=float).reshape(-1, d)
    residuals = _softmax_residuals if multinomial else _binary_residuals
    acc = _Accumulator(thetas.shape)
    residual_term = 0.0
    with np.errstate(all="ignore"):
        # entries touched per row: d (dense) or the mean number stored (sparse)
        width = (X.nnz / max(1, m) if sp.issparse(X) else d) * thetas.shape[0]
        for start, stop in _chunks(m, math.ceil(width)):
            block = _Block(X, start, stop)
            Z, Z_err = block.scores(thetas)
            s, delta = residuals(objective, Z, Z_err, slice(start, stop))
            block.add_transposed_product(s, acc)
            residual_term += float(delta @ block.row_norms)
        g, g_err = _assemble(acc, m, objective.reg, thetas, objective.b.reshape(thetas.shape))
        n = g.size
        squares = float(np.dot(g, g))
        norm = math.sqrt((squares * (1.0 + gamma_n(n)) + n * ETA) / (1.0 - U)) * (1.0 + 4 * U)
        # (1/m) sum_i delta_i ||x_i|| bounds the effect of the residuals' error
        error = float(np.sqrt(np.dot(g_err, g_err))) + residual_term / m
        bound = norm + 2.0 * error  # doubled: covers rounding in the bound itself
    return bound if math.isfinite(bound) else math.inf


def _assemble(acc, m, reg, thetas, b):
    """``g = (hi + lo) / m + reg theta + b`` and a bound on ``|g_hat - g|`` per entry."""
    a1 = acc.hi / m
    a2 = acc.lo / m
    p, r = two_product(np.full_like(thetas, reg), thetas)
    s1, e1 = two_sum(a1, p)
    s2, e2 = two_sum(s1, b)
    rest = ((a2 + r) + e1) + e2
    g = s2 + rest
    err = (U * (np.abs(a1) + np.abs(a2)) * (1.0 + 2 * U) + acc.err / m * (1.0 + 2 * U)
           + gamma_n(3) * (np.abs(a2) + np.abs(r) + np.abs(e1) + np.abs(e2))
           + U * np.abs(g) + 5 * ETA)
    return g.ravel(), err.ravel()
