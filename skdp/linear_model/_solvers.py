"""Minimizers that *certify* how close they got to the exact minimum.

Objective perturbation and Approximate Minima Perturbation are private only
for a point whose full-data gradient norm is at most a data-independent
``gamma`` (seed 004, Alg. 1 line 5 and Lemma 4.3.3). These solvers therefore
return the exact gradient norm they reached and raise
:class:`~skdp.exceptions.CertificationError` instead of returning a point that
misses the bound; they never re-draw noise and retry.
"""

from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize

from skdp.exceptions import CertificationError

__all__ = ["CertifiedResult", "minimize_certified"]


@dataclass(frozen=True)
class CertifiedResult:
    """A minimizer with its certificate: ``||grad F(x)|| = grad_norm <= gamma``."""

    x: np.ndarray
    grad_norm: float
    n_iter: int


def _newton(objective, x0, gamma, max_iter, hessian_rows, rng):
    x = np.array(x0, dtype=float)
    value, grad = objective.value_and_grad(x)
    gnorm = float(np.linalg.norm(grad))
    H = None
    for it in range(max_iter):
        if gnorm <= gamma:
            return CertifiedResult(x, gnorm, it)
        rows = None
        if hessian_rows is not None and hessian_rows < objective.m:
            rows = rng.choice(objective.m, size=hessian_rows, replace=False)
        H = objective.hessian(x, rows)
        try:
            step = -linalg.cho_solve(linalg.cho_factor(H, check_finite=False), grad,
                                     check_finite=False)
        except linalg.LinAlgError:
            step = -np.linalg.lstsq(H, grad, rcond=None)[0]
        slope = float(grad @ step)
        if slope >= 0:  # not a descent direction (numerical trouble): fall back to gradient
            step, slope = -grad, -gnorm**2
        t, accepted = 1.0, False
        for _ in range(40):
            new_value, new_grad = objective.value_and_grad(x + t * step)
            if new_value <= value + 1e-4 * t * slope:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            # Near the optimum, value differences drown in rounding; accept a
            # full step when it still shrinks the (exactly computed) gradient.
            new_value, new_grad = objective.value_and_grad(x + step)
            if np.linalg.norm(new_grad) >= gnorm:
                break
            t = 1.0
        x = x + t * step
        value, grad = new_value, new_grad
        gnorm = float(np.linalg.norm(grad))
    if gnorm <= gamma:
        return CertifiedResult(x, gnorm, max_iter)
    raise CertificationError(
        f"the solver reached a gradient norm of {gnorm:.3g} but the privacy proof needs "
        f"<= {gamma:.3g}; nothing was released. Increase max_iter or gamma."
    )


def _scipy(objective, x0, gamma, max_iter, method):
    res = optimize.minimize(objective.value_and_grad, np.asarray(x0, dtype=float), jac=True,
                            method=method, options={"maxiter": max_iter, "gtol": gamma * 1e-3},
                            tol=gamma * 1e-3)
    _, grad = objective.value_and_grad(res.x)
    gnorm = float(np.linalg.norm(grad))
    if gnorm > gamma:
        raise CertificationError(
            f"scipy.optimize.minimize(method={method!r}) stopped at a gradient norm of "
            f"{gnorm:.3g}, above the certified bound {gamma:.3g} the privacy proof needs; "
            "nothing was released. Use solver='newton' or a larger gamma."
        )
    return CertifiedResult(res.x, gnorm, int(getattr(res, "nit", 0)))


def minimize_certified(objective, x0, *, gamma, max_iter=100, solver="newton",
                       hessian_rows=None, rng=None):
    """Minimize ``objective`` until its exact gradient norm is at most ``gamma``.

    Parameters
    ----------
    objective : GLMObjective
        Provides ``value_and_grad(x)`` and ``hessian(x, rows)``.
    x0 : ndarray of shape (d,)
        Starting point (data-independent, or any point: the certificate is
        checked at the end).
    gamma : float
        Required bound on the full-data gradient norm.
    max_iter : int, default=100
        Iteration limit.
    solver : str, default="newton"
        ``"newton"`` (damped Newton, Cholesky solve, Armijo backtracking) or
        any method name accepted by :func:`scipy.optimize.minimize` that uses
        gradients.
    hessian_rows : int or None, default=None
        Estimate the Hessian's data term on this many random rows per
        iteration (speed); the gradient, and so the certificate, stays exact.
    rng : numpy.random.Generator or None
        Generator for Hessian row subsampling.

    Returns
    -------
    result : CertifiedResult
        The point, the certified gradient norm and the iterations used.

    Raises
    ------
    CertificationError
        If the bound is not reached within ``max_iter``.
    """
    if solver == "newton":
        rng = np.random.default_rng(0) if rng is None else rng
        return _newton(objective, x0, gamma, max_iter, hessian_rows, rng)
    return _scipy(objective, x0, gamma, max_iter, solver)
