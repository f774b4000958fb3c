"""The regularized, linearly perturbed GLM objective that the ERM mechanisms minimize.

``F(theta) = (1/m) sum_i w_i l(y_i <x_i, theta>) + (reg/2) ||theta||^2 + <b, theta>``

with optional row weights ``w_i`` in ``[0, 1]`` (1 when not given). The mean
is over all ``m`` rows, zero-weight ones included: ``m`` is public under
replace-one neighbours, the sum of the weights is not.

Objective perturbation (Chaudhuri et al. (2011), Alg. 2), Approximate Minima Perturbation
(Thakkar (2019), Alg. 1 line 4, with ``reg = Lambda / m``) and output perturbation
(``b = 0``) are all instances.
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["GLMObjective"]


class GLMObjective:
    """Value, gradient and Hessian of a perturbed, L2-regularized GLM objective.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (m, d)
        Rows already clipped (and augmented with an intercept column if any).
    y : ndarray of shape (m,)
        Labels in ``{-1, +1}``.
    loss : LogisticLoss or HuberSVMLoss
        The margin loss.
    reg : float
        Coefficient of ``||theta||^2 / 2`` (>= 0).
    b : ndarray of shape (d,) or None
        Linear perturbation term.
    sample_weight : ndarray of shape (m,) or None, default=None
        Row weights in ``[0, 1]`` (validated by the caller); ``None`` weighs
        every row 1.
    """

    def __init__(self, X, y, loss, reg, b=None, sample_weight=None):
        self.X = X
        self.y = np.asarray(y, dtype=float)
        self.loss = loss
        self.reg = float(reg)
        self.b = np.zeros(X.shape[1]) if b is None else np.asarray(b, dtype=float)
        self.m = X.shape[0]
        self.sample_weight = sample_weight

    def _row_factor(self, rows=None):
        """Each row's factor ``w_i / n`` in the data term (``n`` rows used)."""
        n = self.m if rows is None else len(rows)
        if self.sample_weight is None:
            return 1.0 / n
        return (self.sample_weight if rows is None else self.sample_weight[rows]) / n

    def _data_loss(self, z):
        if self.sample_weight is None:
            return float(np.mean(self.loss.value(z)))
        return float(self.sample_weight @ self.loss.value(z)) / self.m

    def _margins(self, theta):
        return self.y * (self.X @ theta)

    def value(self, theta):
        """Objective value at ``theta``."""
        z = self._margins(theta)
        return self._data_loss(z) + 0.5 * self.reg * float(theta @ theta) + float(self.b @ theta)

    def value_and_grad(self, theta):
        """Objective value and exact full-data gradient at ``theta``."""
        z = self._margins(theta)
        dz = self.loss.derivative(z) * self.y * self._row_factor()
        grad = self.X.T @ dz
        grad = np.asarray(grad).ravel() + self.reg * theta + self.b
        value = self._data_loss(z) + 0.5 * self.reg * float(theta @ theta) + float(self.b @ theta)
        return value, grad

    def hessian(self, theta, rows=None):
        """Hessian at ``theta``; with ``rows``, the data term is estimated on those rows only.

        A subsampled Hessian only steers the Newton step: certification always
        uses the exact full gradient, so it cannot weaken any guarantee.
        """
        X = self.X if rows is None else self.X[rows]
        y = self.y if rows is None else self.y[rows]
        z = y * (X @ theta)
        w = self.loss.second_derivative(z) * self._row_factor(rows)
        if sp.issparse(X):
            H = (X.T @ sp.diags(w) @ X).toarray()
        else:
            H = (X * w[:, None]).T @ X
        H[np.diag_indices_from(H)] += self.reg
        return H

    def hessian_operator(self, theta):
        """Matrix-free Hessian at ``theta``: ``(matvec, diagonal)``, for wide data.

        ``matvec(v) = X^T (w * (X v)) + reg v`` with ``w = w_i l''(z) / m`` costs two
        passes over ``X``; the diagonal serves as a preconditioner.
        """
        w = self.loss.second_derivative(self._margins(theta)) * self._row_factor()
        X, reg = self.X, self.reg

        def matvec(v):
            return np.asarray(X.T @ (w * (X @ v))).ravel() + reg * v

        squares = X.multiply(X) if sp.issparse(X) else X * X
        diagonal = np.asarray(squares.T @ w).ravel() + reg
        return matvec, diagonal
