"""The rigorous gradient-norm certificate: error-free transformations, the bound vs exact
arithmetic on adversarial data, and the solvers' use of it."""

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from skdp.exceptions import CertificationError
from skdp.linear_model._certificate import U, gradient_norm_bound, two_product, two_sum
from skdp.linear_model._losses import LogisticLoss, get_loss
from skdp.linear_model._multinomial import MultinomialObjective
from skdp.linear_model._objective import GLMObjective
from skdp.linear_model._solvers import minimize_certified


def test_two_sum_and_two_product_are_exact():
    rng = np.random.default_rng(0)
    a = rng.normal(size=500) * np.exp2(rng.integers(-40, 40, size=500))
    b = rng.normal(size=500) * np.exp2(rng.integers(-40, 40, size=500))
    s, e = two_sum(a, b)
    p, f = two_product(a, b)
    for i in range(500):
        assert Fraction(s[i]) + Fraction(e[i]) == Fraction(a[i]) + Fraction(b[i])
        assert Fraction(p[i]) + Fraction(f[i]) == Fraction(a[i]) * Fraction(b[i])
        assert s[i] == a[i] + b[i] and p[i] == a[i] * b[i]


def test_numpy_exp_is_within_the_assumed_ulps():
    if np.finfo(np.longdouble).nmant < 63:
        pytest.skip("no extended precision to compare with")  # pragma: no cover
    x = np.random.default_rng(1).uniform(-745, 709, size=20000)
    ref = np.exp(x.astype(np.longdouble))
    ulp = np.spacing(np.abs(np.exp(x)))
    assert np.max(np.abs((np.exp(x) - ref) / ulp)) <= 1.0  # the bound assumes <= 4


def _exact_margin_derivative(loss, z):
    """l'(z) for an exact rational z: logistic to ~30 digits via longdouble of the
    exact z is not enough, so use math.fsum-free closed forms in Fraction where
    possible (Huber) and mpmath-free high precision via Decimal (logistic)."""
    if loss.name == "huber":
        h = Fraction(loss.h)
        v = 1 - z
        if v > h:
            return Fraction(-1)
        if v < -h:
            return Fraction(0)
        return -v / (2 * h) - Fraction(1, 2)
    from decimal import Decimal, getcontext
    getcontext().prec = 60
    zd = Decimal(z.numerator) / Decimal(z.denominator)
    val = -1 / (1 + zd.exp())
    return Fraction(val)


def _exact_gradient_norm(X, y, loss, reg, b, theta, w=None):
    m, d = X.shape
    Xf = [[Fraction(v) for v in row] for row in X]
    th = [Fraction(v) for v in theta]
    g = [Fraction(0)] * d
    for i in range(m):
        z = Fraction(y[i]) * sum(a * t for a, t in zip(Xf[i], th))
        s = _exact_margin_derivative(loss, z) * Fraction(y[i])
        if w is not None:
            s *= Fraction(w[i])
        g = [gj + s * a for gj, a in zip(g, Xf[i])]
    g = [gj / m + Fraction(reg) * t + Fraction(bj) for gj, t, bj in zip(g, th, b)]
    return math.sqrt(float(sum(v * v for v in g))), g


def _adversarial(kind, rng):
    m, d = 60, 4
    X = rng.normal(size=(m, d))
    if kind == "huge_tiny":
        X *= np.exp2(rng.integers(-30, 3, size=(m, d)))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    y = rng.choice([-1.0, 1.0], size=m)
    theta = rng.normal(size=d)
    if kind == "cancel":  # pairs of rows whose gradients cancel exactly but for rounding
        X[1::2] = X[0::2]
        y[1::2] = -y[0::2]
        theta *= 1e-3
    if kind == "extreme_margins":  # margins near +-700 and near 0
        theta = np.zeros(d)
        theta[0] = 700.0
        X[:, 0] = rng.choice([-1.0, 1.0, 1e-17, 0.9999999], size=m)
        X[:, 1:] *= 1e-3
    return X, y, theta


@pytest.mark.parametrize("kind", ["plain", "cancel", "huge_tiny", "extreme_margins"])
@pytest.mark.parametrize("loss_name", ["logistic", "huber"])
def test_bound_covers_the_exact_norm_on_adversarial_data(kind, loss_name):
    rng = np.random.default_rng(hash((kind, loss_name)) % 2**32)
    X, y, theta = _adversarial(kind, rng)
    loss = get_loss(loss_name)
    reg, b = 1e-3, rng.normal(size=X.shape[1]) * 1e-9
    w = rng.uniform(0, 1, size=len(y))
    for weights in (None, w):
        exact, _ = _exact_gradient_norm(X, y, loss, reg, b, theta, weights)
        for data in (X, sp.csr_matrix(X)):
            bound = gradient_norm_bound(GLMObjective(data, y, loss, reg, b, weights), theta)
            assert bound >= exact
            # tight: a few ulps of the terms and margins (u |z| curvature), not a
            # fraction of the norm
            assert bound - exact <= 1e-14 * (1.0 + np.max(np.abs(theta)))


def test_softmax_bound_covers_a_high_precision_reference():
    rng = np.random.default_rng(3)
    m, d, K = 400, 5, 4
    X = rng.normal(size=(m, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = rng.integers(K, size=m)
    theta = rng.normal(size=K * d) * 20  # large scores: p near 0 and 1
    b = rng.normal(size=K * d) * 1e-3
    W = theta.reshape(K, d).astype(np.longdouble)
    Z = X.astype(np.longdouble) @ W.T
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    P[np.arange(m), y] -= 1
    g = (P.T @ X.astype(np.longdouble)).ravel() / m + np.longdouble(0.01) * theta + b
    reference = float(np.sqrt(np.sum(g * g)))
    for data in (X, sp.csr_matrix(X)):
        bound = gradient_norm_bound(MultinomialObjective(data, y, K, 0.01, b), theta)
        assert reference <= bound <= reference * (1 + 1e-12) + 1e-14


def test_rounding_hidden_excess_is_refused():
    """The plain check passes, the exact norm exceeds gamma, the new check refuses."""
    rng = np.random.default_rng(5)
    X, y, theta = _adversarial("cancel", rng)
    loss = get_loss("logistic")
    # choose b so that the exact gradient is tiny and the float one is (nearly) zero
    obj = GLMObjective(X, y, loss, 0.0, None)
    _, g_float = obj.value_and_grad(theta)
    _, g_exact = _exact_gradient_norm(X, y, loss, 0.0, np.zeros(X.shape[1]), theta)
    b = -g_float
    exact = math.sqrt(float(sum((gj + Fraction(bj)) ** 2 for gj, bj in zip(g_exact, b))))
    obj = GLMObjective(X, y, loss, 0.0, b)
    plain = float(np.linalg.norm(obj.value_and_grad(theta)[1]))
    gamma = 0.5 * exact
    assert plain <= gamma < exact  # the old certificate would have released this point
    assert gradient_norm_bound(obj, theta) > gamma
    with pytest.raises(CertificationError):
        minimize_certified(obj, theta, gamma=gamma, max_iter=0)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("kind", ["logistic", "huber", "softmax"])
def test_certificate_still_passes_on_normal_problems(kind, sparse):
    rng = np.random.default_rng(8)
    m, d = 20000, 30
    X = rng.normal(size=(m, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = sp.csr_matrix(X) if sparse else X
    if kind == "softmax":
        obj = MultinomialObjective(X, rng.integers(3, size=m), 3, 1e-4, rng.normal(size=3 * d) * 1e-3)
    else:
        y = np.sign(X @ rng.normal(size=d) + 0.3 * rng.normal(size=m))
        obj = GLMObjective(X, y, get_loss(kind), 1e-4, rng.normal(size=d) * 1e-3)
    gamma = 1.0 / m**2
    res = minimize_certified(obj, np.zeros(obj.b.size), gamma=gamma, matrix_free=sparse)
    fast = float(np.linalg.norm(obj.value_and_grad(res.x)[1]))
    assert fast <= res.grad_norm <= gamma
    assert res.grad_norm - fast <= 1e-3 * gamma  # the rounding slack is far below gamma


def test_extra_newton_steps_when_the_rigorous_bound_misses(monkeypatch):
    from skdp.linear_model import _solvers
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 10))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    obj = GLMObjective(X, np.sign(X[:, 0] + 0.1), get_loss("logistic"), 1e-3, None)
    gamma = 1e-8
    calls = []

    def pessimistic(objective, x):  # pretend rounding could hide 10 * the fast norm
        calls.append(1)
        return 10 * float(np.linalg.norm(objective.value_and_grad(x)[1]))

    monkeypatch.setattr(_solvers, "gradient_norm_bound", pessimistic)
    res = minimize_certified(obj, np.zeros(10), gamma=gamma)
    assert res.grad_norm <= gamma and len(calls) >= 1
    assert np.linalg.norm(obj.value_and_grad(res.x)[1]) <= gamma / 10


def _small_problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(rng.random(200) < 0.5, -1.0, 1.0)
    return GLMObjective(X, y, get_loss("logistic"), 0.01, rng.normal(size=5) * 0.1)


@pytest.mark.parametrize("matrix_free", [False, True])
def test_never_released_on_the_fast_norm_after_a_failed_check(matrix_free):
    """gamma below the rounding floor: the fast norm meets it, the rigorous bound cannot.

    The solvers must raise, never return the point with its fast norm as ``grad_norm``.
    """
    obj = _small_problem()
    gamma = 1e-15  # the rigorous bound at the optimum is about 2.4e-15 here
    with pytest.raises(CertificationError):
        res = minimize_certified(obj, np.zeros(5), gamma=gamma, max_iter=100,
                                 matrix_free=matrix_free)
        # what was released: its rigorous bound exceeds gamma
        assert gradient_norm_bound(obj, res.x) <= gamma, "released an uncertified point"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("matrix_free", [False, True])
def test_exactly_zero_fast_gradient_below_the_floor_terminates(matrix_free):
    """A fast gradient of exactly 0 with gamma under the rounding floor must not loop."""
    X = np.array([[1.0], [1.0]])
    obj = GLMObjective(X, np.array([1.0, -1.0]), get_loss("logistic"), 0.0, None)
    assert not np.any(obj.value_and_grad(np.zeros(1))[1])  # exactly zero
    with pytest.raises(CertificationError):
        minimize_certified(obj, np.zeros(1), gamma=1e-20, max_iter=5, matrix_free=matrix_free)


def test_row_norm_bounds_cover_duplicate_csr_entries():
    """A non-canonical CSR row (duplicates summed by every product) has the norm of the sums."""
    from skdp.linear_model._certificate import _Block

    parts = np.full(100, 0.01)  # one entry stored as 100 parts: x_00 = 1.0
    X = sp.csr_matrix((np.r_[parts, 0.3, -0.2], np.r_[np.zeros(100, int), 0, 1],
                       [0, 100, 102]), shape=(2, 2))
    assert not X.has_canonical_format
    exact = np.linalg.norm(X.toarray(), axis=1)
    assert np.all(_Block(X, 0, 2).row_norms >= exact)


def test_bound_on_unsorted_csr_with_duplicates_matches_canonical():
    rng = np.random.default_rng(4)
    m, d = 300, 40
    rows, cols = np.repeat(np.arange(m), 6), rng.integers(d, size=6 * m)  # some repeat
    vals = rng.normal(size=6 * m) / 4
    order = rng.permutation(6 * m)
    coo = sp.coo_matrix((vals[order], (rows[order], cols[order])), shape=(m, d))
    X = sp.csr_matrix((coo.data, coo.col, np.r_[0, np.cumsum(np.bincount(coo.row, minlength=m))]),
                      shape=(m, d))  # rows grouped, columns unsorted, duplicates kept
    assert not X.has_canonical_format and len(set(zip(coo.row, coo.col))) < 6 * m
    y = rng.choice([-1.0, 1.0], size=m)
    theta = rng.normal(size=d)
    canon = X.copy()
    canon.sum_duplicates()
    bounds = [gradient_norm_bound(GLMObjective(A, y, get_loss("logistic"), 1e-3, None), theta)
              for A in (X, canon, canon.toarray())]
    assert bounds[0] == pytest.approx(bounds[2], rel=1e-9)
    assert bounds[1] == pytest.approx(bounds[2], rel=1e-9)


@pytest.mark.parametrize("t", [1e307, 1.7e308])
def test_bound_is_inf_not_an_exception_near_overflow(t):
    obj = GLMObjective(np.array([[1.0]]), np.array([1.0]), get_loss("logistic"), 0.0, None)
    assert gradient_norm_bound(obj, np.array([t])) == math.inf


# gradient_norm_bound refuses weights its guarantee does not cover
@pytest.mark.parametrize("bad", [-0.5, np.nan, np.inf])
def test_gradient_norm_bound_refuses_bad_weights(bad):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    y = np.where(rng.random(20) < 0.5, -1.0, 1.0)
    w = rng.uniform(size=20)
    theta = rng.normal(size=3)
    good = gradient_norm_bound(GLMObjective(X, y, LogisticLoss(), 0.1, sample_weight=w), theta)
    assert np.isfinite(good)
    w[3] = bad
    with pytest.raises(ValueError, match="sample_weight"):
        gradient_norm_bound(GLMObjective(X, y, LogisticLoss(), 0.1, sample_weight=w), theta)
