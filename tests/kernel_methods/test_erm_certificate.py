"""The kernel ERM releases only on a rigorous bound of the exact RKHS gradient norm."""

import itertools
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from skdp.exceptions import CertificationError
from skdp.kernel_methods import _erm
from skdp.kernel_methods._erm import certificate_tolerance, fit_kernel_erm, rkhs_gradient_norm_bound
from skdp.linear_model._losses import get_loss

ALPHA = 1e-2


def _exact_squared_norm(K, y, loss, alpha, beta, w=None):
    """``g^T K g`` as a Fraction for the stored data (logistic ``l'`` to 60 digits)."""
    n = len(y)
    Kf = [[Fraction(v) for v in row] for row in K]
    bf = [Fraction(v) for v in beta]
    g = []
    for i in range(n):
        z = Fraction(y[i]) * sum(Kf[i][j] * bf[j] for j in range(n))
        if loss.name == "logistic" and abs(z) > 2000:  # |l' - limit| < e^-2000: far below any ulp
            d = Fraction(0) if z > 0 else Fraction(-1)
        elif loss.name == "logistic":
            with localcontext() as ctx:
                ctx.prec = 60
                d = -1 / (1 + Fraction((Decimal(z.numerator) / Decimal(z.denominator)).exp()))
        else:
            h, v = Fraction(loss.h), 1 - z
            d = Fraction(-1) if v > h else (Fraction(0) if v < -h else -v / (2 * h) - Fraction(1, 2))
        weight = 1 if w is None else Fraction(w[i])
        g.append(weight * d * Fraction(y[i]) / n + Fraction(alpha) * bf[i])
    return sum(g[i] * sum(Kf[i][j] * g[j] for j in range(n)) for i in range(n))


def _plain_norm(K, y, loss, alpha, beta, w=None):
    """The check fit_kernel_erm iterates on (plain floating point)."""
    g = (1.0 if w is None else w) * loss.derivative(y * (K @ beta)) * y / len(y) + alpha * beta
    return float(np.sqrt(max(g @ K @ g, 0.0)))


def _near_duplicates(seed, n=16, spread=1e-6):
    """Pairs of points ``spread`` apart: the rbf kernel matrix is nearly singular."""
    rng = np.random.default_rng(seed)
    X = np.repeat(rng.uniform(-1, 1, size=(n // 2, 2)), 2, axis=0)
    X += spread * rng.normal(size=X.shape)
    y = np.where(rng.normal(size=n) > 0, 1.0, -1.0)
    return rbf_kernel(X, gamma=1.0), y, rng


def _adversarial(kind, loss, seed, spread=1e-6, shift=1e6):
    K, y, rng = _near_duplicates(seed, spread=spread)
    n = len(y)
    if kind == "null_direction":  # the minimizer moved along K's near-null space
        beta = fit_kernel_erm(K, y, loss, ALPHA, 1e-12)[0]
        beta = beta + shift * np.linalg.eigh(K)[1][:, 0] / (ALPHA * n)
    elif kind == "huge_tiny":  # coefficients over 30 orders of magnitude
        beta = rng.normal(size=n) * 10.0 ** rng.uniform(-20, 10, size=n)
    else:  # "extreme_margins": margins far into both tails of the loss
        beta = rng.normal(size=n) * 1e3
    return K, y, beta


@pytest.mark.parametrize("kind", ["null_direction", "huge_tiny", "extreme_margins"])
@pytest.mark.parametrize("loss_name", ["logistic", "huber"])
def test_bound_covers_the_exact_norm_on_adversarial_tiny_problems(kind, loss_name):
    loss = get_loss(loss_name)
    K, y, beta = _adversarial(kind, loss, seed=len(kind))
    w = np.random.default_rng(0).uniform(0, 1, size=len(y))
    for weights in (None, w):
        exact = _exact_squared_norm(K, y, loss, ALPHA, beta, weights)
        bound = rkhs_gradient_norm_bound(K, y, loss, ALPHA, beta, weights)
        assert Fraction(bound) ** 2 >= exact
        # tight: rounding-level slack (ulps of the coefficients), not a fraction of the norm
        assert bound - math.sqrt(float(exact)) <= 1e-14 * (1.0 + np.max(np.abs(beta)))


def test_rounding_hidden_excess_is_refused():
    """The plain check passes, the exact norm exceeds the tolerance, the bound refuses."""
    loss = get_loss("logistic")
    # Which problems hide half the norm depends on the BLAS's rounding, so search several
    # degrees of near-singularity (pairs 1e-6 to 1e-8 apart) and shifts along the null space.
    for spread, shift, seed in itertools.product((1e-6, 1e-7, 1e-8), (1e6, 1e8), range(20)):
        try:
            K, y, beta = _adversarial("null_direction", loss, seed, spread, shift)
        except CertificationError:  # the base fit's own rounding floor is above 1e-12
            continue
        plain = _plain_norm(K, y, loss, ALPHA, beta)
        exact_squared = float(_exact_squared_norm(K, y, loss, ALPHA, beta))
        # (the stored K itself may be slightly indefinite: skip a negative exact form)
        if exact_squared > 0 and plain <= 0.5 * math.sqrt(exact_squared):
            exact = math.sqrt(exact_squared)
            break
    else:
        pytest.fail("no near-singular problem where rounding hides half the norm")
    tol = math.sqrt(plain * exact) if plain > 0 else 0.5 * exact
    assert plain <= tol < exact  # the old certificate would have released this point
    assert rkhs_gradient_norm_bound(K, y, loss, ALPHA, beta) > tol


def test_solver_refuses_when_only_the_plain_norm_meets_tol(monkeypatch):
    K, y, _ = _near_duplicates(0, n=40)
    monkeypatch.setattr(_erm, "rkhs_gradient_norm_bound", lambda *args: math.inf)
    with pytest.raises(CertificationError, match="could not certify"):
        fit_kernel_erm(K, y, get_loss("logistic"), ALPHA, 1e-6, max_iter=30)


def test_solver_iterates_further_when_the_rigorous_bound_misses(monkeypatch):
    K, y, _ = _near_duplicates(1, n=40)
    loss, tol = get_loss("logistic"), 1e-6
    points = []

    def refuse_first(K, y, loss, alpha, beta, w=None):  # rounding could hide anything, once
        points.append(beta)
        return math.inf if len(points) == 1 else _plain_norm(K, y, loss, alpha, beta, w)

    monkeypatch.setattr(_erm, "rkhs_gradient_norm_bound", refuse_first)
    beta, grad_norm, n_iter = fit_kernel_erm(K, y, loss, ALPHA, tol)
    first_plain = _plain_norm(K, y, loss, ALPHA, points[0])
    assert len(points) == 2 and first_plain <= tol  # the plain check accepted the first point
    assert beta is points[1] and grad_norm <= first_plain / 4  # further steps, tighter target


@pytest.mark.parametrize("loss_name", ["logistic", "huber"])
@pytest.mark.parametrize("weighted", [False, True])
def test_normal_problems_still_certify(loss_name, weighted):
    rng = np.random.default_rng(7)
    n = 600
    X = rng.uniform(-2, 2, size=(n, 3))
    y = np.where(X[:, 0] * X[:, 1] + 0.2 * rng.normal(size=n) > 0, 1.0, -1.0)
    K, loss = rbf_kernel(X, gamma=0.5), get_loss(loss_name)
    w = rng.uniform(0, 1, size=n) if weighted else None
    tol = certificate_tolerance(1.0, n)
    beta, grad_norm, _ = fit_kernel_erm(K, y, loss, 1e-3, tol, sample_weight=w)
    plain = _plain_norm(K, y, loss, 1e-3, beta, w)
    assert grad_norm == rkhs_gradient_norm_bound(K, y, loss, 1e-3, beta, w)
    assert plain <= grad_norm <= tol
    assert grad_norm - plain <= 1e-6 * tol  # the rounding slack is far below the tolerance


def test_overflow_gives_an_infinite_bound():
    K, y, _ = _near_duplicates(2, n=8)
    beta = np.full(8, 1e300)
    assert rkhs_gradient_norm_bound(K, y, get_loss("logistic"), ALPHA, beta) == math.inf
