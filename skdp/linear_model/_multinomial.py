"""The multinomial (softmax) logistic loss and its perturbed, regularized objective.

For ``K`` classes the model is a matrix ``W`` of shape ``(K, d)``, flattened
row by row into ``theta`` of length ``K d``. The loss of a row ``x`` with
label ``y`` is ``l(W; x, y) = logsumexp(W x) - (W x)_y``. With
``p = softmax(W x)`` and ``e_y`` the one-hot label:

* gradient ``(p - e_y) x^T``, whose norm is ``||p - e_y|| ||x||``;
  ``||p - e_y||^2 = (1 - p_y)^2 + sum_{k != y} p_k^2 <= 2 (1 - p_y)^2 <= 2``,
  so the loss is ``sqrt(2) data_norm``-Lipschitz;
* Hessian ``(diag(p) - p p^T) kron (x x^T)``. ``diag(p) - p p^T`` has the
  all-ones vector in its kernel, so its rank is <= ``K - 1``; for a unit
  vector ``u``, ``u^T (diag(p) - p p^T) u`` is the variance of ``u_k`` under
  ``k ~ p``, at most ``(max_k u_k - min_k u_k)^2 / 4 <= 1/2`` (Popoviciu), so
  the loss is ``data_norm^2 / 2``-smooth. Its trace is
  ``(1 - ||p||^2) ||x||^2 <= (1 - 1/K) data_norm^2``, a smaller bound than
  ``(K - 1) / 2 data_norm^2`` on what the AMP proof (Thakkar (2019), Lemma 4.3.2)
  needs (see ``amp_calibration``).

These constants are checked numerically on random points in the tests.
"""

import math

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp, softmax

__all__ = ["MultinomialLoss", "MultinomialObjective"]


class MultinomialLoss:
    """Softmax cross-entropy over ``n_classes`` classes, with its privacy constants.

    Parameters
    ----------
    n_classes : int
        Number of classes ``K``, >= 2.
    """

    name = "multinomial"

    def __init__(self, n_classes):
        self.n_classes = int(n_classes)

    def lipschitz(self, data_norm):
        """L2-Lipschitz constant ``sqrt(2) data_norm`` in ``W`` for rows of norm <= ``data_norm``."""
        return math.sqrt(2.0) * float(data_norm)

    def smoothness(self, data_norm):
        """Smoothness constant ``beta = data_norm^2 / 2``."""
        return float(data_norm) ** 2 / 2.0

    @property
    def row_hessian_rank(self):
        """``K - 1``: rank of one row's Hessian ``(diag(p) - p p^T) kron x x^T``.

        It is also the dimension of the span of one row's gradients
        ``(p - e_y) x^T``, whose class factor sums to zero.
        """
        return self.n_classes - 1

    def hessian_trace_bound(self, data_norm):
        """Bound ``(1 - 1/K) data_norm^2`` on the trace of one row's Hessian.

        ``tr((diag(p) - p p^T) kron x x^T) = (1 - ||p||^2) ||x||^2`` and
        ``||p||^2 >= 1/K``.
        """
        return (1.0 - 1.0 / self.n_classes) * float(data_norm) ** 2

    def __repr__(self):
        return f"MultinomialLoss(n_classes={self.n_classes})"


class MultinomialObjective:
    """Value, gradient and Hessian of a perturbed, L2-regularized softmax objective.

    ``F(theta) = (1/m) sum_i w_i l(W; x_i, y_i) + (reg/2) ||theta||^2 + <b, theta>``
    with ``theta = W.ravel()`` and optional row weights ``w_i`` in ``[0, 1]``. It has the interface
    :func:`~skdp.linear_model._solvers.minimize_certified` expects
    (``m``, ``value_and_grad``, ``hessian``).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (m, d)
        Rows already clipped (and augmented with an intercept column if any).
    y : ndarray of shape (m,)
        Class indices in ``range(n_classes)``.
    n_classes : int
        Number of classes ``K``.
    reg : float
        Coefficient of ``||theta||^2 / 2`` (>= 0).
    b : ndarray of shape (K * d,) or None
        Linear perturbation term.
    sample_weight : ndarray of shape (m,) or None, default=None
        Row weights in ``[0, 1]`` (validated by the caller); ``None`` weighs
        every row 1. The mean is over all ``m`` rows either way.
    """

    def __init__(self, X, y, n_classes, reg, b=None, sample_weight=None):
        self.X = X
        self.y = np.asarray(y, dtype=np.intp)
        self.n_classes = int(n_classes)
        self.reg = float(reg)
        self.m, self.d = X.shape
        n_params = self.n_classes * self.d
        self.b = np.zeros(n_params) if b is None else np.asarray(b, dtype=float)
        self.sample_weight = sample_weight

    def _row_factor(self, rows=None):
        """Each row's factor ``w_i / n`` as a column (``n`` rows used), or a scalar."""
        n = self.m if rows is None else len(rows)
        if self.sample_weight is None:
            return 1.0 / n
        w = self.sample_weight if rows is None else self.sample_weight[rows]
        return (w / n)[:, None]

    def _scores(self, theta, X):
        W = theta.reshape(self.n_classes, self.d)
        return np.asarray(X @ W.T)

    def value_and_grad(self, theta):
        """Objective value and exact full-data gradient at ``theta``."""
        Z = self._scores(theta, self.X)
        lse = logsumexp(Z, axis=1)
        rows = np.arange(self.m)
        losses = lse - Z[rows, self.y]
        loss = (float(np.mean(losses)) if self.sample_weight is None
                else float(self.sample_weight @ losses) / self.m)
        R = np.exp(Z - lse[:, None])  # softmax probabilities
        R[rows, self.y] -= 1.0
        R *= self._row_factor()
        grad = np.asarray(self.X.T @ R).T.ravel() + self.reg * theta + self.b
        value = loss + 0.5 * self.reg * float(theta @ theta) + float(self.b @ theta)
        return value, grad

    def value(self, theta):
        """Objective value at ``theta``."""
        return self.value_and_grad(theta)[0]

    def hessian(self, theta, rows=None):
        """Hessian at ``theta``; with ``rows``, the data term is estimated on those rows only.

        ``sum_i (diag(p_i) - p_i p_i^T) kron (x_i x_i^T)`` is assembled as a
        block diagonal ``X^T diag(p_k) X`` minus one Gram matrix of the
        stacked ``[p_1 x, ..., p_K x]`` (a single large matrix product).
        """
        X = self.X if rows is None else self.X[rows]
        d, K = self.d, self.n_classes
        P = softmax(self._scores(theta, X), axis=1)
        factor = self._row_factor(rows)

        def stack(Q):  # [q_1 x, ..., q_K x] row by row
            if sp.issparse(X):
                return sp.hstack([X.multiply(Q[:, [k]]) for k in range(K)], format="csr")
            return np.hstack([X * Q[:, [k]] for k in range(K)])

        XP = stack(P)
        # The row factors w_i / n enter one side of each product; without
        # weights they are one scalar, applied at the end.
        XWP, scale = (XP, factor) if np.isscalar(factor) else (stack(P * factor), 1.0)
        H = -(XP.T @ XWP)
        diag_blocks = [X.T @ XWP[:, k * d:(k + 1) * d] for k in range(K)]
        if sp.issparse(X):
            H, diag_blocks = H.toarray(), [block.toarray() for block in diag_blocks]
        for k, block in enumerate(diag_blocks):
            H[k * d:(k + 1) * d, k * d:(k + 1) * d] += block
        H *= scale
        H[np.diag_indices_from(H)] += self.reg
        return H

    def hessian_operator(self, theta):
        """Matrix-free Hessian at ``theta``: ``(matvec, diagonal)``, for wide data.

        For a direction ``V`` (``K x d``), each row contributes
        ``(diag(p) - p p^T) (V x) x^T``: two passes over ``X`` per product.
        """
        X, K, d, reg = self.X, self.n_classes, self.d, self.reg
        P = softmax(self._scores(theta, X), axis=1)
        factor = self._row_factor()

        def matvec(v):
            S = P * np.asarray(X @ v.reshape(K, d).T)
            S -= P * S.sum(axis=1, keepdims=True)
            return np.asarray(X.T @ (S * factor)).T.ravel() + reg * v

        squares = X.multiply(X) if sp.issparse(X) else X * X
        diagonal = np.asarray(squares.T @ ((P - P * P) * factor)).T.ravel() + reg
        return matvec, diagonal
