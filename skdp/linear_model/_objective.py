"""The regularized, linearly perturbed GLM objective that the ERM mechanisms minimize.

``F(theta) = (1/m) sum_i l(y_i <x_i, theta>) + (reg/2) ||theta||^2 + <b, theta>``

Objective perturbation (seed 002, Alg. 2), Approximate Minima Perturbation
(seed 004, Alg. 1 line 4, with ``reg = Lambda / m``) and output perturbation
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
    """

    def __init__(self, X, y, loss, reg, b=None):
        self.X = X
        self.y = np.asarray(y, dtype=float)
        self.loss = loss
        self.reg = float(reg)
        self.b = np.zeros(X.shape[1]) if b is None else np.asarray(b, dtype=float)
        self.m = X.shape[0]

    def _margins(self, theta):
        return self.y * (self.X @ theta)

    def value(self, theta):
        """Objective value at ``theta``."""
        z = self._margins(theta)
        return (float(np.mean(self.loss.value(z))) + 0.5 * self.reg * float(theta @ theta)
                + float(self.b @ theta))

    def value_and_grad(self, theta):
        """Objective value and exact full-data gradient at ``theta``."""
        z = self._margins(theta)
        dz = self.loss.derivative(z) * self.y / self.m
        grad = self.X.T @ dz
        grad = np.asarray(grad).ravel() + self.reg * theta + self.b
        value = (float(np.mean(self.loss.value(z))) + 0.5 * self.reg * float(theta @ theta)
                 + float(self.b @ theta))
        return value, grad

    def hessian(self, theta, rows=None):
        """Hessian at ``theta``; with ``rows``, the data term is estimated on those rows only.

        A subsampled Hessian only steers the Newton step: certification always
        uses the exact full gradient, so it cannot weaken any guarantee.
        """
        X = self.X if rows is None else self.X[rows]
        y = self.y if rows is None else self.y[rows]
        z = y * (X @ theta)
        w = self.loss.second_derivative(z) / X.shape[0]
        if sp.issparse(X):
            H = (X.T @ sp.diags(w) @ X).toarray()
        else:
            H = (X * w[:, None]).T @ X
        H[np.diag_indices_from(H)] += self.reg
        return H

    def hessian_operator(self, theta):
        """Matrix-free Hessian at ``theta``: ``(matvec, diagonal)``, for wide data.

        ``matvec(v) = X^T (w * (X v)) + reg v`` with ``w = l''(z) / m`` costs two
        passes over ``X``; the diagonal serves as a preconditioner.
        """
        w = self.loss.second_derivative(self._margins(theta)) / self.m
        X, reg = self.X, self.reg

        def matvec(v):
            return np.asarray(X.T @ (w * (X @ v))).ravel() + reg * v

        squares = X.multiply(X) if sp.issparse(X) else X * X
        diagonal = np.asarray(squares.T @ w).ravel() + reg
        return matvec, diagonal
