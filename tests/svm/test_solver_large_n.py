"""The SVM certificate's summation bound: blocked sums, row limit far above 6.7 million rows.

Every bound is checked against exact rational arithmetic (``fractions.Fraction``
over the float values) on adversarial inputs.
"""

import math
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC

from skdp.linear_model._certificate import gamma_n
from skdp.svm import PrivateLinearSVM
from skdp.svm._base import _check_float_range
from skdp.svm._solver import (
    _SUM_BLOCK,
    _blocked_rmatvec,
    _blocked_sum,
    _hinge_gap,
    _huber_certificate,
    _Signed,
    _sum_depth,
    _sum_error,
    solve_svm_certified,
)

EPS = 2.0**-52
ETA = 2.0**-1074


# --------------------------------------------------------------------------
# The public floor
# --------------------------------------------------------------------------
def test_floor_accepts_1e8_rows_at_default_tol():
    n, C, kappa, tol = 10**8, 1.0, 1.0, 0.01
    _check_float_range(C, kappa, n, tol, tol * C * kappa / n)  # no error
    # The old floor n (n + 1) 2**-52 refused it by a factor of 200.
    assert n * (n + 1) * EPS > 2 * tol


@pytest.mark.parametrize("n", [10**3, 10**6, 10**9, 3 * 10**10])
def test_floor_refuses_where_the_summation_bound_reaches_the_radius(n):
    floor = n * gamma_n(_sum_depth(n))
    C, kappa = 3.0, 0.5
    shape_only = SimpleNamespace(shape=(n, 7))  # _sum_error reads the public shape only
    for tol in (floor, 0.5 * floor):
        with pytest.raises(ValueError, match="tol="):
            _check_float_range(C, kappa, n, tol, tol * C * kappa / n)
        # Refused because the certificate's own summation bound reaches the radius.
        assert _sum_error(shape_only, C, kappa) >= tol * C * kappa / n
    tol = 2.0 * floor
    _check_float_range(C, kappa, n, tol, tol * C * kappa / n)
    assert _sum_error(shape_only, C, kappa) < tol * C * kappa / n


def test_row_limit_at_default_tol_is_tens_of_billions():
    with pytest.raises(ValueError, match="tol="):
        _check_float_range(1.0, 1.0, 10**11, 0.01, 0.01 / 10**11)
    _check_float_range(1.0, 1.0, 5 * 10**10, 0.01, 0.01 / (5 * 10**10))


def test_sum_depth_counts_block_and_pairwise_levels():
    assert _sum_depth(1) == 1  # one product, no addition
    assert _sum_depth(_SUM_BLOCK) == _SUM_BLOCK
    assert _sum_depth(_SUM_BLOCK + 1) == _SUM_BLOCK + 1  # one pairwise level
    assert _sum_depth(4 * _SUM_BLOCK) == _SUM_BLOCK + 2
    assert _sum_depth(4 * _SUM_BLOCK + 1) == _SUM_BLOCK + 3


# --------------------------------------------------------------------------
# The blocked sum against exact arithmetic
# --------------------------------------------------------------------------
def _exact_rmatvec(X, t):
    X = X.toarray() if sp.issparse(X) else X
    return [sum((Fraction(float(x)) * Fraction(float(v)) for x, v in zip(X[:, j], t)),
                Fraction(0)) for j in range(X.shape[1])]


def _check_blocked(X, t):
    n = X.shape[0]
    got = _blocked_rmatvec(X, t)
    dense = X.toarray() if sp.issparse(X) else X
    scale = np.abs(dense).T @ np.abs(t)  # sum_i |x_ij t_i|, all terms non-negative
    bound = gamma_n(_sum_depth(n)) * scale * (1 + 1e-12) + n * ETA
    exact = _exact_rmatvec(X, t)
    for j in range(X.shape[1]):
        assert abs(Fraction(float(got[j])) - exact[j]) <= Fraction(float(bound[j]))
    return got, exact, bound


def _adversarial(case, rng):
    n = 5000
    if case == "cancellation":  # huge terms of both signs cancelling, tiny ones remaining
        X = np.empty((n, 2))
        X[:, 0] = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) * (1.0 - rng.uniform(0, 1e-8, n))
        X[:, 1] = rng.uniform(-1e-12, 1e-12, n)
        X[::97, 1] = 1.0
        t = np.ones(n)
    elif case == "mixed_magnitudes":
        X = rng.normal(size=(n, 3)) * 10.0 ** rng.integers(-12, 1, size=(n, 1))
        t = rng.uniform(-1, 1, n)
    elif case == "norm_bound_rows_weights":  # rows at the norm bound, weights 0 and 1
        X = rng.normal(size=(n, 4))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        t = np.where(rng.uniform(size=n) < 0.5, 0.0, 1.0) * rng.choice([-1.0, 1.0], n)
    elif case == "subnormal":
        X = rng.uniform(-1, 1, (n, 2)) * 1e-305
        t = rng.uniform(-1, 1, n) * 1e-10  # products deep in the subnormal range
    else:
        raise ValueError(case)
    return X, t


@pytest.mark.parametrize("fmt", [np.asarray, sp.csr_matrix], ids=["dense", "csr"])
@pytest.mark.parametrize("case", ["cancellation", "mixed_magnitudes", "norm_bound_rows_weights",
                                  "subnormal"])
def test_blocked_rmatvec_within_bound_of_exact(case, fmt):
    X, t = _adversarial(case, np.random.default_rng(0))
    _check_blocked(fmt(X), t)


def test_recursive_summation_exceeds_the_bound_the_blocked_sum_meets():
    # 1 followed by n - 1 halves of its ulp: each addition to 1 rounds back to 1 (ties to
    # even), so left-to-right summation loses them all, an error of (n - 1) u, far above
    # the blocked bound of about (block + log2 n) u.
    n = 20_000
    X = np.full((n, 1), 2.0**-53)
    X[0, 0] = 1.0
    t = np.ones(n)
    got, exact, bound = _check_blocked(X, t)
    naive = np.cumsum(X[:, 0] * t)[-1]  # recursive summation, one term after the other
    assert abs(Fraction(float(naive)) - exact[0]) > 10 * Fraction(float(bound[0]))
    assert abs(Fraction(float(got[0])) - exact[0]) <= Fraction(float(bound[0]))


def test_blocked_sum_of_a_vector():
    rng = np.random.default_rng(3)
    v = rng.uniform(0, 1, 30_000) * 10.0 ** rng.integers(-20, 1, 30_000)
    got = _blocked_sum(v.size, lambda a, b: np.sum(v[a:b]))
    exact = sum((Fraction(float(x)) for x in v), Fraction(0))
    bound = gamma_n(_sum_depth(v.size)) * float(np.sum(v)) * (1 + 1e-12)
    assert abs(Fraction(float(got)) - exact) <= Fraction(bound)


# --------------------------------------------------------------------------
# The certificates against exact arithmetic
# --------------------------------------------------------------------------
def _problem(fmt, weighted, rng, n=600, d=3):
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)  # every row at the norm bound 1
    X[: n // 3] *= 1e-3 * rng.uniform(size=(n // 3, 1))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    s = None
    if weighted:
        s = rng.uniform(size=n)
        s[::3], s[1::5] = 0.0, 1.0
    return fmt(X), y, s


def _fractions(v):
    return [Fraction(float(x)) for x in np.asarray(v).ravel()]


def _exact_margins(X, y, w):
    X = X.toarray() if sp.issparse(X) else X
    return [Fraction(float(yi)) * sum((a * b for a, b in zip(_fractions(row), w)), Fraction(0))
            for row, yi in zip(X, y)]


# C = 1e-315: U = C / n and every product of the certificate are subnormal.
@pytest.mark.parametrize("C", [37.0, 1e-315])
@pytest.mark.parametrize("fmt", [np.asarray, sp.csr_matrix], ids=["dense", "csr"])
@pytest.mark.parametrize("weighted", [False, True])
def test_hinge_gap_bounds_the_exact_gap_of_the_returned_point(fmt, weighted, C):
    rng = np.random.default_rng(1)
    X, y, s = _problem(fmt, weighted, rng)
    n = X.shape[0]
    a = rng.uniform(size=n)
    a[::4], a[1::4] = 0.0, 1.0
    Z = _Signed(X, y, s)
    w, gap, w_error = _hinge_gap(Z, C / n, a, C, 1.0)
    # The exact dual point: v = fl(s a) is the feasible point, w(a) = (C/n) sum v_i y_i x_i.
    v = _fractions(Z.weigh(a))
    U = Fraction(C) / n
    Xd = X.toarray() if sp.issparse(X) else X
    w_exact = [U * sum((vi * Fraction(float(yi)) * Fraction(float(x))
                        for vi, yi, x in zip(v, y, Xd[:, j])), Fraction(0))
               for j in range(Xd.shape[1])]
    assert sum((Fraction(float(c)) - e) ** 2 for c, e in zip(w, w_exact)) <= Fraction(w_error)**2
    # The certified point is the float w itself: P(w) - D(a) in exact arithmetic.
    w_frac = _fractions(w)
    m = _exact_margins(X, y, w_frac)
    sw = _fractions(np.ones(n) if s is None else s)
    primal = (sum(c * c for c in w_frac) / 2
              + U * sum(si * max(Fraction(0), 1 - mi) for si, mi in zip(sw, m)))
    dual = U * sum(v) - sum(e * e for e in w_exact) / 2
    assert 0 <= primal - dual <= Fraction(gap)
    assert gap <= float(primal - dual) * (1 + 1e-6) + 1e-12  # and not absurdly loose


@pytest.mark.parametrize("C", [11.0, 1e-315])
@pytest.mark.parametrize("fmt", [np.asarray, sp.csr_matrix], ids=["dense", "csr"])
@pytest.mark.parametrize("weighted", [False, True])
def test_huber_certificate_bounds_the_exact_gradient_norm(fmt, weighted, C):
    rng = np.random.default_rng(2)
    X, y, s = _problem(fmt, weighted, rng)
    n, h = X.shape[0], 0.1
    w = rng.normal(size=X.shape[1]) * (0.7 if C > 1 else 1e-310)
    gnorm, bound = _huber_certificate(_Signed(X, y, s), C / n, C, 1.0, h, w)
    m = _exact_margins(X, y, _fractions(w))
    H = Fraction(h)
    deriv = [Fraction(-1) if 1 - mi > H else Fraction(0) if 1 - mi < -H
             else -(1 - mi) / (2 * H) - Fraction(1, 2) for mi in m]
    sw = _fractions(np.ones(n) if s is None else s)
    Xd = X.toarray() if sp.issparse(X) else X
    U = Fraction(C) / n
    grad = [Fraction(float(w[j])) + U * sum((si * di * Fraction(float(yi)) * Fraction(float(x))
                                             for si, di, yi, x in zip(sw, deriv, y, Xd[:, j])),
                                            Fraction(0))
            for j in range(Xd.shape[1])]
    assert sum(g * g for g in grad) <= Fraction(bound) ** 2
    assert bound <= gnorm * (1 + 1e-6) + 1e-12


# --------------------------------------------------------------------------
# A fit the old floor refused
# --------------------------------------------------------------------------
def test_fit_at_a_tol_the_old_floor_refused():
    rng = np.random.default_rng(5)
    n, tol = 200_000, 5e-6
    assert n * (n + 1) * EPS >= tol  # the old floor refused this
    X = rng.normal(size=(n, 2))
    y = np.where(X @ np.array([1.0, -0.5]) + 0.4 * rng.normal(size=n) > 0, 1, 0)
    X /= np.linalg.norm(X, axis=1).max()
    C = 200.0
    radius = tol * C / n
    sol = solve_svm_certified(X, 2.0 * y - 1, C, radius=radius)
    assert sol.distance_bound <= radius
    est = PrivateLinearSVM(epsilon=1.0, C=C, tol=tol, data_norm=1.0, fit_intercept=False,
                           classes=[0, 1], random_state=0).fit(X, y)
    assert est.certified_distance_ <= radius
    ref = LinearSVC(C=C / n, loss="hinge", fit_intercept=False, tol=1e-8, max_iter=100_000)
    baseline = ref.fit(X, y).score(X, y)
    assert baseline > 0.85
    assert est.score(X, y) >= baseline - 0.02
    assert math.isfinite(est.sensitivity_)
