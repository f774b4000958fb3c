"""Minimizers that *certify* how close they got to the exact minimum.

Objective perturbation and Approximate Minima Perturbation are private only
for a point whose full-data gradient norm is at most a data-independent
``gamma`` (Thakkar (2019), Alg. 1 line 5 and Lemma 4.3.3). These solvers iterate with the
fast (BLAS) gradient, then certify the final point with
:func:`~skdp.linear_model._certificate.gradient_norm_bound`, a rigorous upper
bound on the *exact* gradient norm that accounts for every rounding error; if
that bound misses ``gamma`` while the fast norm met it, they take further
steps towards a tighter target (within ``max_iter``). They raise
:class:`~skdp.exceptions.CertificationError` instead of returning a point that
misses the bound; they never re-draw noise and retry.
"""

from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize
from scipy.sparse import linalg as sparse_linalg

from skdp.exceptions import CertificationError
from skdp.linear_model._certificate import gradient_norm_bound

__all__ = ["CertifiedResult", "minimize_certified"]

# Above this many parameters the Newton solver stops forming the dense
# Hessian (memory n^2, Cholesky n^3) and solves each step by preconditioned
# conjugate gradients on Hessian-vector products instead.
DENSE_HESSIAN_LIMIT = 2000


@dataclass(frozen=True)
class CertifiedResult:
    """A minimizer with its certificate: exact ``||grad F(x)|| <= grad_norm <= gamma``.

    ``grad_norm`` is the rigorous bound of
    :func:`~skdp.linear_model._certificate.gradient_norm_bound`, rounding
    errors included.
    """

    x: np.ndarray
    grad_norm: float
    n_iter: int


def _factorize(objective, x, n_rows, rng):
    """Cholesky factor of the (possibly row-subsampled) Hessian at ``x``, or None."""
    rows = None
    if n_rows is not None and n_rows < objective.m:
        rows = np.sort(rng.choice(objective.m, size=n_rows, replace=False))
    H = objective.hessian(x, rows)
    try:
        return linalg.cho_factor(H, check_finite=False)
    except linalg.LinAlgError:
        return None


def _line_search(objective, x, value, grad, gnorm, step, slope):
    """Armijo backtracking; returns ``(t, value, grad, gnorm)`` or None on failure.

    Near the optimum, value differences drown in rounding, so a step whose
    value rises by no more than rounding noise is also accepted when it
    shrinks the (exactly computed) gradient norm.
    """
    noise = 1e-13 * max(1.0, abs(value))
    t = 1.0
    for _ in range(40):
        new_value, new_grad = objective.value_and_grad(x + t * step)
        new_gnorm = float(np.linalg.norm(new_grad))
        if new_value <= value + 1e-4 * t * slope or (
                new_value <= value + noise and new_gnorm < gnorm):
            return t, new_value, new_grad, new_gnorm
        t *= 0.5
    return None


def _newton(objective, x0, gamma, max_iter, hessian_rows, rng, reuse_hessian=True):
    """Damped Newton with an exact gradient and a subsampled, reused Hessian.

    The Hessian only steers the step, so it may be estimated on a random
    subset of rows and kept across iterations: a factorization is reused
    while full steps keep at least halving the gradient norm, and recomputed
    otherwise. When a fresh subsampled Hessian shrinks the gradient norm by
    less than fourfold, the next subsample is twice as large. The stopping
    test is the exact full-data gradient norm, so none of this can weaken
    the certificate.
    """
    x = np.array(x0, dtype=float)
    value, grad = objective.value_and_grad(x)
    gnorm = float(np.linalg.norm(grad))
    n_rows = hessian_rows
    factor, fresh, n_iter = None, False, 0
    target = gamma
    while n_iter < max_iter:
        if gnorm <= target:
            done, target = _check(objective, x, gnorm, target, gamma, n_iter)
            if done is not None:
                return done
            continue
        if factor is None:
            factor, fresh = _factorize(objective, x, n_rows, rng), True
        if factor is not None:
            step = -linalg.cho_solve(factor, grad, check_finite=False)
            slope = float(grad @ step)
        if factor is None or not slope < 0:
            if not fresh:  # a stale factorization misled the step: refresh it
                factor = None
                continue
            step, slope = -grad, -gnorm**2  # numerical trouble: gradient step
        found = _line_search(objective, x, value, grad, gnorm, step, slope)
        n_iter += 1
        if found is None:
            if fresh:
                break  # no progress even with a fresh Hessian: stalled
            factor = None
            continue
        t, value, new_grad, new_gnorm = found
        x = x + t * step
        rate = new_gnorm / gnorm
        grad, gnorm = new_grad, new_gnorm
        if fresh and t == 1.0 and rate > 0.25 and n_rows is not None:
            n_rows = min(objective.m, 2 * n_rows)  # the subsample limits the rate
        if t == 1.0 and rate <= 0.5 and reuse_hessian:
            fresh = False  # keep the factorization for the next step
        else:
            factor = None
    return _certify(objective, x, gnorm, n_iter, gamma)


def _truncated_newton(objective, x0, gamma, max_iter):
    """Newton steps solved inexactly by Jacobi-preconditioned conjugate gradients.

    For wide problems: only Hessian-vector products are formed. The CG
    tolerance shrinks with the gradient (forcing term
    ``min(0.5, sqrt(||g||))``), which keeps the convergence superlinear;
    as in :func:`_newton`, only the exact full gradient decides when to stop.
    """
    x = np.array(x0, dtype=float)
    value, grad = objective.value_and_grad(x)
    gnorm = float(np.linalg.norm(grad))
    n_iter, target = 0, gamma
    while n_iter < max_iter:
        if gnorm <= target:
            done, target = _check(objective, x, gnorm, target, gamma, n_iter)
            if done is not None:
                return done
            continue
        matvec, diagonal = objective.hessian_operator(x)
        n = len(x)
        H = sparse_linalg.LinearOperator((n, n), matvec=matvec, dtype=float)
        M = sparse_linalg.LinearOperator((n, n), matvec=lambda r: r / diagonal, dtype=float)
        step, _ = sparse_linalg.cg(H, -grad, rtol=min(0.5, np.sqrt(gnorm)), atol=0.0,
                                   maxiter=max(50, min(n, 500)), M=M)
        slope = float(grad @ step)
        if not slope < 0:  # CG broke down numerically: fall back to the gradient
            step, slope = -grad, -gnorm**2
        found = _line_search(objective, x, value, grad, gnorm, step, slope)
        n_iter += 1
        if found is None:
            break
        t, value, grad, gnorm = found
        x = x + t * step
    return _certify(objective, x, gnorm, n_iter, gamma)


def _check(objective, x, gnorm, target, gamma, n_iter):
    """Rigorous certificate at a point whose fast gradient norm met ``target``.

    Returns ``(result, target)``: the certified result, or None and a tighter
    target when rounding error could hide an exact norm above ``gamma`` (the
    solver then keeps iterating; the noise is never redrawn).
    """
    bound = gradient_norm_bound(objective, x)
    if bound <= gamma:
        return CertifiedResult(x, bound, n_iter), target
    target = min(target, gnorm) / 4.0
    if target == 0.0:  # the fast norm is 0: no step can lower it, the bound stays
        _refuse(gamma)
    return None, target


def _certify(objective, x, gnorm, n_iter, gamma):
    """Final check when the iterations ran out or stalled.

    The rigorous bound decides whenever the fast norm meets ``gamma`` (even
    above a tightened ``target``): the fast norm alone never certifies.
    """
    bound = gradient_norm_bound(objective, x) if gnorm <= gamma else gnorm
    if bound <= gamma:
        return CertifiedResult(x, bound, n_iter)
    _refuse(gamma)


def _refuse(gamma):
    # Raised after the budget is charged: the message names public values only (the
    # gradient norm reached and the iterations used are functions of the private rows).
    raise CertificationError(
        f"the solver could not certify a gradient norm <= gamma={gamma:.3g} (rounding "
        "included) within max_iter iterations, which the privacy proof needs; nothing was "
        "released. Increase max_iter or gamma."
    )


# Options each scipy method understands (others warn "Unknown solver options"):
# TNC counts function evaluations, Newton-CG and SLSQP have no gradient tolerance
# (``tol`` sets their own stopping rule).
_ITERATION_OPTION = {"tnc": "maxfun"}
_NO_GTOL = ("newton-cg", "slsqp")


def _scipy(objective, x0, gamma, max_iter, method):
    options = {_ITERATION_OPTION.get(method.lower(), "maxiter"): max_iter}
    if method.lower() not in _NO_GTOL:
        options["gtol"] = gamma * 1e-3
    res = optimize.minimize(objective.value_and_grad, np.asarray(x0, dtype=float), jac=True,
                            method=method, options=options, tol=gamma * 1e-3)
    _, grad = objective.value_and_grad(res.x)
    gnorm = float(np.linalg.norm(grad))
    bound = gradient_norm_bound(objective, res.x) if gnorm <= gamma else gnorm
    if bound > gamma:
        raise CertificationError(  # after the charge: public values only
            f"scipy.optimize.minimize(method={method!r}) stopped before a gradient norm <= "
            f"gamma={gamma:.3g} (rounding included) could be certified, which the privacy "
            "proof needs; nothing was released. Use solver='newton' or a larger gamma."
        )
    return CertifiedResult(res.x, bound, int(getattr(res, "nit", 0)))


def minimize_certified(objective, x0, *, gamma, max_iter=100, solver="newton",
                       hessian_rows=None, rng=None, reuse_hessian=True, matrix_free=None):
    """Minimize ``objective`` until its exact gradient norm is certified ``<= gamma``.

    The certificate is a rigorous upper bound on the exact gradient norm,
    rounding errors included (:mod:`skdp.linear_model._certificate`).

    Parameters
    ----------
    objective : GLMObjective or MultinomialObjective
        Provides ``value_and_grad(x)``, ``hessian(x, rows)`` and
        ``hessian_operator(x)``.
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
        Estimate the Hessian's data term on this many random rows (speed;
        doubled automatically when convergence is slow); the gradient, and so
        the certificate, stays exact. ``None`` uses all rows.
    rng : numpy.random.Generator or None
        Generator for Hessian row subsampling. Give a stream separate from
        the privacy noise.
    reuse_hessian : bool, default=True
        Keep a Hessian factorization across Newton steps while they converge
        fast (``"newton"`` only).
    matrix_free : bool or None, default=None
        ``"newton"`` only: solve each step by preconditioned conjugate
        gradients on Hessian-vector products (``objective.hessian_operator``)
        instead of a dense Cholesky factorization. ``None`` does so above
        ``DENSE_HESSIAN_LIMIT`` parameters.

    Returns
    -------
    result : CertifiedResult
        The point, the certified bound on its exact gradient norm and the
        iterations used.

    Raises
    ------
    CertificationError
        If the bound is not reached within ``max_iter``.
    """
    if solver == "newton":
        if matrix_free is None:
            matrix_free = len(x0) > DENSE_HESSIAN_LIMIT
        if matrix_free:
            return _truncated_newton(objective, x0, gamma, max_iter)
        rng = np.random.default_rng(0) if rng is None else rng
        return _newton(objective, x0, gamma, max_iter, hessian_rows, rng, reuse_hessian)
    return _scipy(objective, x0, gamma, max_iter, solver)
