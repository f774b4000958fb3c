"""Adversarial checks of the SVM certificate (blocked sums) in exact arithmetic.

Every certificate is compared with the exact value (``fractions.Fraction`` over
the floats as stored) on inputs placed where its case analysis or term counts
could fail: margins within a few ulps of 1, ``n`` a multiple of the block,
non-canonical CSR input, and rows whose exact norm exceeds the public bound
after clipping.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from skdp.exceptions import CertificationError
from skdp.linear_model._certificate import gamma_n
from skdp.svm import PrivateLinearSVM
from skdp.svm._base import svm_sensitivity
from skdp.svm._solver import (
    _SUM_BLOCK,
    _blocked_rmatvec,
    _hinge_gap,
    _huber_certificate,
    _Signed,
    _sum_depth,
)
from skdp.utils import clip_rows_l2, row_norms_l2

ETA = 2.0**-1074


def _fr(v):
    return [Fraction(float(x)) for x in np.asarray(v).ravel()]


def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def _exact_gap(X, y, s, a, C, w):
    """``P(w) - D(a)`` for the float ``w`` and the dual point ``v = fl(s a)``, exactly."""
    Xd = _dense(X)
    n, d = Xd.shape
    U = Fraction(C) / n
    v = _fr(a if s is None else s * a)
    sw = _fr(np.ones(n) if s is None else s)
    rows = [_fr(r) for r in Xd]
    yf = _fr(y)
    w_a = [U * sum((vi * yi * r[j] for vi, yi, r in zip(v, yf, rows)), Fraction(0))
           for j in range(d)]
    wf = _fr(w)
    mu = [yi * sum((x * c for x, c in zip(r, wf)), Fraction(0)) for r, yi in zip(rows, yf)]
    primal = sum(c * c for c in wf) / 2 + U * sum(
        (si * max(Fraction(0), 1 - m) for si, m in zip(sw, mu)), Fraction(0))
    dual = U * sum(v, Fraction(0)) - sum(c * c for c in w_a) / 2
    return primal - dual


# --------------------------------------------------------------------------
# Finding: rows clipped to data_norm can have an exact norm above it
# --------------------------------------------------------------------------
def test_certified_radius_reserves_the_clipped_rows_norm_overshoot():
    # clip_rows_l2 scales a row by fl(data_norm / fl(norm)) and rounds every entry: the
    # exact norm of a clipped row can exceed data_norm by a few ulps. Seed 001's Lemma 9
    # (tightened: ||w_D - w_D'|| <= (C/n)(||x|| + ||x'||)) then exceeds the 2 C kappa / n
    # in the sensitivity, so a solver landing anywhere within `radius` of the exact
    # minimizer is only covered when it reserves (C/n)(max_i ||x_i|| - kappa) of it:
    # dist + (C/n)(max ||x_i|| - kappa) <= radius for the data as stored.
    rng = np.random.default_rng(0)
    n, C = 400, 1e-3  # margins far below 1: the all-ones dual point is the exact solution
    X = rng.normal(size=(n, 2)) * 3.0
    y = np.where(rng.uniform(size=n) < 0.5, 0, 1)
    rows = clip_rows_l2(X, 1.0)
    overshoot = max(sum(c * c for c in _fr(r)) for r in rows) - 1  # of the squared norm
    assert overshoot > 0  # the premise: some clipped row lies outside the unit ball
    kappa_excess = Fraction(overshoot) / 3  # ||x|| - 1 = (||x||^2 - 1) / (||x|| + 1), ||x|| <= 2

    def fit(tol):
        return PrivateLinearSVM(epsilon=1.0, C=C, data_norm=1.0, fit_intercept=False,
                                tol=tol, classes=[0, 1], random_state=0).fit(X, y)

    def holds(est, tol):
        radius = 0.5 * tol * svm_sensitivity(C, n, 1.0)  # as in BasePrivateSVM.fit
        return Fraction(est.certified_distance_) + Fraction(C) / n * kappa_excess \
            <= Fraction(radius)

    est = fit(0.01)
    assert holds(est, 0.01)
    # A tol whose radius tol C / n lies just above the distance the solver certifies:
    # the excess no longer fits, and the fit must not release.
    tol = est.certified_distance_ * n / C * (1 + 1e-9)
    with pytest.raises(CertificationError):
        est = fit(tol)
        assert holds(est, tol)  # (reached only if it released: then it must hold)


# --------------------------------------------------------------------------
# The hinge gap's case analysis at margins within a few ulps of 1
# --------------------------------------------------------------------------
@pytest.mark.parametrize("weighted", [False, True])
def test_hinge_gap_with_margins_within_ulps_of_one(weighted):
    rng = np.random.default_rng(5)
    C, n_base, k = 3.0, 40, 60
    n = n_base + k
    base = rng.normal(size=(n_base, 3))
    base *= 0.05 / np.linalg.norm(base, axis=1, keepdims=True)
    s = None
    if weighted:
        s = np.ones(n)
        s[:n_base] = rng.uniform(0.2, 1.0, size=n_base)
        s[:n_base:7] = 0.0
    y = np.ones(n)
    a = np.zeros(n)
    a[:n_base] = 1.0
    a[n_base::2] = 1.0  # half of the near-margin rows at a = 1, half at a = 0
    U = C / n
    w0 = U * (base.T @ (np.ones(n_base) if s is None else s[:n_base]))
    # Near-margin rows c_j * direction(w0): with k1 of them at a = 1 (weight 1),
    # ||w|| = ||w0|| + U k1 c, and margins c ||w|| = 1 solve U k1 c^2 + ||w0|| c - 1 = 0.
    k1, r = int(a[n_base:].sum()), float(np.linalg.norm(w0))
    c = (-r + math.sqrt(r * r + 4.0 * U * k1)) / (2.0 * U * k1)
    ulps = np.arange(k) - k // 2
    near = c * (1.0 + ulps * 2.0**-52)
    X = np.vstack([base, near[:, None] * (w0 / r)])
    kappa = float(np.max(np.linalg.norm(X, axis=1)))
    for fmt in (np.asarray, sp.csr_matrix):
        Z = _Signed(fmt(X), y, s)
        w, gap, _ = _hinge_gap(Z, U, a, C, kappa)
        margins = Z @ w
        # The premise: the near rows' computed margins straddle 1 within a few ulps.
        assert np.sum(np.abs(1.0 - margins[n_base:]) < 1e-13) >= 10
        assert np.any(margins[n_base:] > 1.0) and np.any(margins[n_base:] < 1.0)
        exact = _exact_gap(fmt(X), y, s, a, C, w)
        assert 0 <= exact <= Fraction(gap)


# --------------------------------------------------------------------------
# Term counts: n a multiple of the block, one block, non-canonical CSR
# --------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, _SUM_BLOCK - 1, _SUM_BLOCK, 2 * _SUM_BLOCK,
                               3 * _SUM_BLOCK + 1])
def test_blocked_rmatvec_bound_at_block_boundaries(n):
    # A 1 followed by halves of its ulp (lost by recursive summation), in every block.
    X = np.full((n, 1), 2.0**-53)
    X[::_SUM_BLOCK, 0] = 1.0
    t = np.ones(n)
    got = _blocked_rmatvec(X, t)[0]
    exact = sum((Fraction(float(x)) for x in X[:, 0]), Fraction(0))
    bound = Fraction(gamma_n(_sum_depth(n))) * sum(abs(Fraction(float(x))) for x in X[:, 0])
    assert abs(Fraction(float(got)) - exact) <= bound * (1 + Fraction(1, 2**40)) + n * ETA


def test_hinge_gap_on_non_canonical_csr_input():
    # Duplicates (summed: one stored entry per row and column), explicit zeros and
    # unsorted column indices: the certificate is for the summed matrix.
    rng = np.random.default_rng(7)
    n, d = 300, 4
    rows = np.repeat(np.arange(n), 6)
    cols = rng.integers(0, d, size=rows.size)
    vals = rng.normal(size=rows.size) * 0.2
    vals[::11] = 0.0
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, d))
    # Rebuild with duplicates and unsorted indices kept (the constructor above sums them).
    indptr = np.arange(0, rows.size + 1, 6)
    X = sp.csr_matrix((vals, cols, indptr), shape=(n, d))
    assert not X.has_canonical_format
    before = (X.data.copy(), X.indices.copy())
    y = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    a = rng.uniform(size=n)
    a[::3] = 1.0
    C = 5.0
    kappa = float(np.max(np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())))
    w, gap, _ = _hinge_gap(_Signed(X, y), C / n, a, C, kappa)
    assert np.array_equal(X.data, before[0]) and np.array_equal(X.indices, before[1])
    summed = X.copy()
    summed.sum_duplicates()
    exact = _exact_gap(summed, y, None, a, C, w)
    assert 0 <= exact <= Fraction(gap)
    assert math.isfinite(gap)


# --------------------------------------------------------------------------
# The Huber certificate at the edges of the quadratic zone (1 - m = +-h)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("h", [0.1, 0.5, 2.0**-20])
def test_huber_certificate_with_margins_at_the_zone_edges(h):
    rng = np.random.default_rng(11)
    d, C = 3, 7.0
    w = rng.normal(size=d)
    r = float(np.linalg.norm(w))
    # Rows c w / ||w||: margins c ||w|| at 1 - h, 1, 1 + h, each +- a few ulps.
    targets = np.concatenate([t * (1.0 + np.arange(-8, 9) * 2.0**-52)
                              for t in (1.0 - h, 1.0, 1.0 + h)])
    X = (targets / r)[:, None] * (w / r)
    y = np.where(np.arange(X.shape[0]) % 2 == 0, 1.0, -1.0)
    X *= y[:, None]  # z_i = y_i x_i = c_i w / ||w||
    n = X.shape[0]
    s = rng.uniform(size=n)
    kappa = float(np.max(np.linalg.norm(X, axis=1)))
    for weights in (None, s):
        Z = _Signed(X, y, weights)
        margins = Z @ w
        assert np.any(np.abs(1.0 - margins - h) < 1e-15)  # the premise
        gnorm, bound = _huber_certificate(Z, C / n, C, kappa, h, w)
        wf = _fr(w)
        H, U = Fraction(h), Fraction(C) / n
        sw = _fr(np.ones(n) if weights is None else weights)
        rows, yf = [_fr(row) for row in X], _fr(y)
        grad = list(wf)
        for row, yi, si in zip(rows, yf, sw):
            mu = yi * sum((a * b for a, b in zip(row, wf)), Fraction(0))
            u = 1 - mu
            der = (Fraction(-1) if u > H else Fraction(0) if u < -H
                   else -u / (2 * H) - Fraction(1, 2))
            for j in range(d):
                grad[j] += U * si * der * yi * row[j]
        assert sum(g * g for g in grad) <= Fraction(bound) ** 2


# --------------------------------------------------------------------------
# Finding: a sparse row of tiny entries made every fit fail after the charge
# --------------------------------------------------------------------------
@pytest.mark.parametrize("explicit_zero", [False, True])
def test_sparse_row_of_tiny_entries_still_certifies(explicit_zero):
    # row_norms_l2 rescales a row whose squares underflow by fl(1 / peak), which
    # overflows to inf when every entry is below 2**-1024: the row's norm comes out
    # inf (NaN with an explicit zero, which clip_rows_l2 then leaves unclipped). The
    # solver took that as kappa, its certificate became inf or NaN, and the fit raised
    # CertificationError after spending its budget, whatever the rest of the data:
    # one record decided that no model is released.
    rng = np.random.default_rng(3)
    n = 60
    X = rng.normal(size=(n, 2))
    X *= 0.9 / np.max(np.linalg.norm(X, axis=1))  # inside the unit ball: not clipped
    X[0] = [1e-310, 0.0]
    y = np.where(X[:, 0] + 0.1 * rng.normal(size=n) > 0, 1, 0)
    A = sp.csr_matrix(X)
    if explicit_zero:
        A = sp.csr_matrix((np.r_[1e-310, 0.0, A.data[1:]], np.r_[0, 1, A.indices[1:]],
                           np.r_[0, A.indptr[1:] + 1]), shape=A.shape)
        assert A.nnz == 2 * n
    # Fixed at the root since (skdp/utils/_clipping.py divides by the peak); the solver's
    # _max_row_norm fallback stays as a backstop (test below).
    assert row_norms_l2(A)[0] == pytest.approx(1e-310, rel=1e-12)
    est = PrivateLinearSVM(epsilon=1.0, C=1.0, fit_intercept=False, classes=[0, 1],
                           random_state=0).fit(A, y)
    assert est.certified_distance_ <= 0.5 * est.sensitivity_ * 0.01
    # The certificate's kappa bounds every exact row norm (here the data's largest).
    from skdp.svm._solver import _max_row_norm

    kappa = _max_row_norm(clip_rows_l2(A, 1.0))
    assert math.isfinite(kappa) and kappa >= np.max(np.linalg.norm(X, axis=1))


def test_max_row_norm_bounds_a_row_whose_computed_norm_is_not_finite(monkeypatch):
    from skdp.svm import _solver
    X = np.array([[3e-310, 4e-310], [0.6, 0.0]])
    monkeypatch.setattr(_solver, "row_norms_l2", lambda A: np.array([np.nan, 0.6]))
    kappa = _solver._max_row_norm(X)
    assert math.isfinite(kappa) and kappa >= 0.6
    monkeypatch.setattr(_solver, "row_norms_l2", lambda A: np.array([np.inf, 1e-320]))
    assert _solver._max_row_norm(X) >= 5e-310
