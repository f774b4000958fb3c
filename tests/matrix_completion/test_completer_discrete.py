"""DPMatrixCompleter with ``noise="discrete_gaussian"``: exact discrete Gaussian on a grid.

Calibration (zCDP, Canonne-Kamath-Steinke + seed 004 Lemmas 2.1.12-2.1.13),
grid multiples, the symmetric release's variances, audits, accuracy against
the continuous noise, and the default staying bit-identical.
"""

import math
import pickle
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from skdp import BudgetAccountant
from skdp.accounting import zcdp_for_dp, zcdp_to_dp
from skdp.datasets import make_low_rank_ratings
from skdp.matrix_completion import DPMatrixCompleter
from skdp.matrix_completion import _solvers
from skdp.matrix_completion._calibration import (
    DiscreteGrid,
    discrete_noise,
    noise_sigma,
    release_schedule,
    total_sensitivity,
)
from skdp.matrix_completion._solvers import (
    _gram,
    eigenvalue_release,
    grid_release,
    grid_symmetric_release,
    oja_release,
    private_eigh,
    truncated_rows,
)
from skdp.testing import audit_epsilon
from matrix_completion.test_completer import _rmse, ratings  # noqa: F401 (a fixture)

CONFIGS = [
    dict(method="frank_wolfe", eigensolver="exact", n_iter=3),
    dict(method="frank_wolfe", eigensolver="oja", n_iter=3, oja_iter=2),
    dict(method="pursuit", eigensolver="exact", n_iter=2),
    dict(method="pursuit", eigensolver="oja", n_iter=2, oja_iter=3),
    dict(method="svd", eigensolver="exact", rank=2),
    dict(method="svd", eigensolver="oja", oja_iter=4, rank=3),
    dict(method="pgd", eigensolver="exact", n_iter=2),
]


def _on_grid(values, granularity):
    steps = np.asarray(values) / granularity
    return bool(np.all(steps == np.round(steps)))


# ----------------------------------------------------------------- calibration


def _same(releases, expected):
    return (len(releases) == len(expected)
            and all(d == e_d and s == pytest.approx(e_s, rel=1e-15)
                    for (s, d), (e_s, e_d) in zip(releases, expected)))


def test_release_schedule_by_hand():
    d2 = 1.5**2
    r2 = math.sqrt(2.0)
    # Frank-Wolfe, exact, T = 3, n = 5: sqrt(2) rho_t^2 with rho = (D, 2D, 2D), 25 entries.
    assert _same(release_schedule(1.5, n_iter=3, n_items=5),
                 [(r2 * d2, 25), (4 * r2 * d2, 25), (4 * r2 * d2, 25)])
    # Frank-Wolfe, Oja, T = 2, 2 steps: rho_t^2 per vector (n entries) and per eigenvalue (1).
    assert _same(release_schedule(1.5, eigensolver="oja", n_iter=2, oja_iter=2, n_items=5),
                 [(d2, 5), (d2, 5), (d2, 1), (4 * d2, 5), (4 * d2, 5), (4 * d2, 1)])
    assert _same(release_schedule(1.5, method="pursuit", eigensolver="oja", n_iter=2,
                                  oja_iter=1, n_items=5), [(d2, 5), (d2, 5)])
    assert _same(release_schedule(1.5, method="pgd", n_iter=2, n_items=4), [(r2 * d2, 16)] * 2)
    assert _same(release_schedule(1.5, method="svd", n_items=4), [(r2 * d2, 16)])
    # SVD with Oja, rank 3: min(sqrt 2, sqrt 3) D^2 per block of n * 3 entries.
    assert _same(release_schedule(1.5, method="svd", eigensolver="oja", oja_iter=2, rank=3,
                                  n_items=4), [(r2 * d2, 12)] * 2)
    assert _same(release_schedule(1.5, method="svd", eigensolver="oja", oja_iter=1, rank=1,
                                  n_items=4), [(d2, 4)])


@pytest.mark.parametrize("config", CONFIGS)
def test_release_schedule_composes_to_total_sensitivity(config):
    releases = release_schedule(1.3, n_items=7, **config)
    assert math.sqrt(sum(s * s for s, _ in releases)) == pytest.approx(
        total_sensitivity(1.3, **config), rel=1e-12)


def test_discrete_noise_hand_computed():
    # One symmetric 2 x 2 release (SVD, Delta = 1): s = sqrt(2), d = 4 full-matrix entries.
    epsilon, delta = 1.0, 1e-5
    # The largest rho converting to (1, 1e-5) by Canonne-Kamath-Steinke Cor. 13 (decimal
    # reference of test_zcdp_conversion.py; 0.0208199 by Lemma 2.1.13, used before).
    rho = 0.030556595197639566
    assert rho == pytest.approx(zcdp_for_dp(epsilon, delta), rel=1e-9)
    sigma_ref = math.sqrt(2.0 / (2 * rho))  # 5.7206...
    assert sigma_ref == pytest.approx(5.72067, rel=1e-5)
    grid = discrete_noise(epsilon, delta, [(math.sqrt(2.0), 4)], value_bound=4.0)
    # 2**2 <= sigma_ref < 2**3, so g = 2**(2 - 30).
    assert grid.granularity == 2.0**-28
    # Rounding: D = s (1 + 2**-40) / g steps (the fixed margin against the float s),
    # Q = ceil(D^2) - 1, and the integer bound W = Q + 2 min(Q, isqrt(4 Q)) + 4 (< (D + 2)^2).
    q = math.ceil((Fraction(math.sqrt(2.0) * (1 + 2.0**-40)) * 2**28) ** 2) - 1
    assert 2**57 < q < 2**57 + 2**19
    w = q + 2 * math.isqrt(4 * q) + 4
    exact = Fraction(w) / (2 * Fraction(rho) * (1 - Fraction(1, 2**40)))
    assert exact <= grid.sigma2 <= exact * (1 + Fraction(1, 2**23))
    assert float(grid.sigma2) == pytest.approx(w / (2 * rho), rel=1e-6)
    assert grid.sigma == pytest.approx(sigma_ref, rel=1e-6)  # the rounding term is tiny here


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("epsilon, delta", [(0.3, 1e-6), (1.0, 1e-5), (8.0, 1e-8)])
def test_discrete_noise_meets_the_budget_in_zcdp(config, epsilon, delta):
    n_items, value_bound = 6, 100.0 * 4.0 * 1.3**2
    releases = release_schedule(1.3, n_items=n_items, **config)
    grid = discrete_noise(epsilon, delta, releases, value_bound)
    g = grid.granularity
    assert math.frexp(g)[0] == 0.5  # a power of two
    assert 2.0**52 * g > value_bound  # the index clamp never binds
    # Each release moves by at most (s / g + sqrt(d)) steps in L2 after rounding; the
    # zCDP costs (CKS) add up (Lemma 2.1.12) and convert to at most epsilon (CKS Cor. 13).
    rho = sum((s / g + math.sqrt(d)) ** 2 for s, d in releases) / (2 * float(grid.sigma2))
    assert zcdp_to_dp(rho, delta).epsilon <= epsilon * (1 + 1e-9)
    assert zcdp_to_dp(rho, delta).epsilon == pytest.approx(epsilon, rel=1e-4)
    # The zCDP route costs more noise than exact GDP composition, less than 1.5x here.
    ratio = grid.sigma / noise_sigma(epsilon, delta, total_sensitivity(1.3, **config))
    assert 1.0 < ratio < 1.5


def test_granularity_is_about_2_to_the_minus_30_of_sigma():
    releases = release_schedule(1.0, n_iter=5, n_items=50)
    grid = discrete_noise(1.0, 1e-6, releases, value_bound=1000.0)
    assert 2.0**29 <= grid.sigma / grid.granularity < 2.0**31
    # A huge public value bound raises g so that 2**52 g exceeds it.
    coarse = discrete_noise(1.0, 1e-6, releases, value_bound=1e12)
    assert coarse.granularity == 2.0 ** (math.frexp(1e12)[1] - 52)
    assert coarse.sigma2 < grid.sigma2  # fewer (coarser) steps


def test_symmetric_release_zcdp_algebra():
    # Diagonal sigma2 and off-diagonal sigma2 / 2 (mirrored): the Renyi bound
    # sum_j w_j^2 / (2 s_j^2) over the released upper triangle equals the full
    # matrix's ||w||_F^2 / (2 sigma2), the quantity discrete_noise bounds.
    rng = np.random.default_rng(0)
    sigma2 = Fraction(37, 3)
    for n in (1, 2, 5):
        w = rng.integers(-9, 10, (n, n))
        w = np.triu(w) + np.triu(w, 1).T
        upper = np.triu_indices(n)
        cost = sum(Fraction(int(v) ** 2) / (2 * (sigma2 if i == j else sigma2 / 2))
                   for i, j, v in zip(*upper, w[upper]))
        assert cost == Fraction(int((w**2).sum())) / (2 * sigma2)


def test_symmetric_release_variances_and_grid():
    # Empirical variances: diagonal g^2 sigma2, off-diagonal g^2 sigma2 / 2 (5.5 standard
    # errors of a sample variance with 60 x 60 = 1830 off-diagonal and 60 diagonal draws
    # per release, 40 releases).
    grid = DiscreteGrid(2.0**-20, Fraction(3 * 2**40))
    rng = np.random.default_rng(1)
    W = np.random.default_rng(2).uniform(-5, 5, (60, 60))
    draws = np.array([grid_symmetric_release(W, grid, rng) for _ in range(40)])
    assert np.array_equal(draws, draws.transpose(0, 2, 1))
    assert _on_grid(draws, grid.granularity)
    noise = draws - np.triu(W) - np.triu(W, 1).T  # the released matrix reads the upper triangle
    var = float(grid.sigma2) * grid.granularity**2
    diag = noise[:, np.arange(60), np.arange(60)].ravel()
    off = noise[:, *np.triu_indices(60, 1)].ravel()
    assert np.mean(diag**2) / var == pytest.approx(1.0, abs=5.5 * math.sqrt(2 / diag.size))
    assert np.mean(off**2) / (var / 2) == pytest.approx(1.0, abs=5.5 * math.sqrt(2 / off.size))


def test_vector_releases_are_on_the_grid_with_the_claimed_variance():
    grid = DiscreteGrid(2.0**-10, Fraction(2**40))
    rng = np.random.default_rng(3)
    A = sp.csr_matrix(np.random.default_rng(4).uniform(-1, 1, (30, 20)))
    V = np.linalg.qr(np.random.default_rng(5).standard_normal((20, 2)))[0]
    exact = A.T @ (A @ V)
    draws = np.array([oja_release(A, V, 1.0, rng, grid) for _ in range(300)])
    assert draws.shape == (300, 20, 2) and _on_grid(draws, grid.granularity)
    var = float(grid.sigma2) * grid.granularity**2
    z = (draws - exact).ravel()
    assert np.mean(z**2) / var == pytest.approx(1.0, abs=5.5 * math.sqrt(2 / z.size))
    values = np.array([eigenvalue_release(A, V[:, 0], 1.0, rng, grid) for _ in range(3000)])
    assert _on_grid(values, grid.granularity)
    z = values - float((A @ V[:, 0]) @ (A @ V[:, 0]))
    assert np.mean(z**2) / var == pytest.approx(1.0, abs=5.5 * math.sqrt(2 / z.size))
    # grid_release of a value already on the grid adds exactly the integer noise.
    released = grid_release(np.array([0.5, -3.0]), grid, rng)
    assert _on_grid(released, grid.granularity)


@pytest.mark.parametrize("sparse", [False, True])
def test_truncated_rows_make_the_gram_exact(sparse):
    rng = np.random.default_rng(11)
    n_users, n_items, rho = 300, 6, 1.7
    A = rng.standard_normal((n_users, n_items)) * 10.0 ** rng.integers(-8, 1, (n_users, n_items))
    A *= rho * rng.random((n_users, 1)) / np.linalg.norm(A, axis=1, keepdims=True)
    grid = discrete_noise(1.0, 1e-5, release_schedule(rho, method="svd", n_items=n_items),
                          n_users * rho**2)
    # n_users rho^2 = 867 < 2**10: h = 2**((10 - 52) / 2) = 2**-21 (2**52 h^2 = 1024 >= 867,
    # and 2**-22 would give 256).
    h = grid.row_step
    assert h == 2.0**-21
    T = truncated_rows(sp.csr_matrix(A) if sparse else A, h)
    T = T.toarray() if sparse else T
    assert np.all(np.abs(T) <= np.abs(A)) and np.all(np.abs(A - T) < h)
    assert np.all(T / h == np.round(T / h)) and np.max(np.abs(T / h)) <= 2**26
    # (Without the truncation all 36 float64 entries of this Gram matrix are inexact.)
    exact = [[sum(Fraction(x) * Fraction(y) for x, y in zip(T[:, j], T[:, k]))
              for k in range(n_items)] for j in range(n_items)]
    computed = _gram(sp.csr_matrix(T) if sparse else T)
    assert all(Fraction(computed[j, k]) == exact[j][k]
               for j in range(n_items) for k in range(n_items))


# ----------------------------------------------------------------- audits


def _symmetric_audit(noise_factor, epsilon=1.0, delta=1e-5, blocks=64):
    """The exact-solver release of SVD on two users of 2 items (Delta = 1).

    Neighbours: the differing user's row is e_1 or e_2 (orthogonal, norm
    Delta: the worst case, ||D||_F = sqrt(2)); the other user's row is
    public. The statistic W_00 - W_11 of the released matrix is the
    likelihood-ratio direction. Runs are batched as diagonal blocks of one
    release (their diagonal noise is independent; off-block entries are unused).
    """
    grid = discrete_noise(epsilon, delta, release_schedule(1.0, method="svd", n_items=2), 8.0)
    grid = DiscreteGrid(grid.granularity, grid.sigma2 * Fraction(noise_factor) ** 2)
    other = np.array([0.3, 0.4])
    grams = [np.outer(row, row) + np.outer(other, other) for row in np.eye(2)]

    def mechanism(user, rng, n):
        out = []
        for start in range(0, n, blocks):
            m = min(blocks, n - start)
            released = grid_symmetric_release(np.kron(np.eye(m), grams[user]), grid, rng)
            diag = np.diag(released)
            out.append(diag[0::2] - diag[1::2])
        return np.concatenate(out)

    return mechanism


@pytest.mark.parametrize("noise_factor, caught", [(1.0, False), (0.25, True)])
def test_audit_discrete_symmetric_release(noise_factor, caught):
    res = audit_epsilon(_symmetric_audit(noise_factor), 0, 1, n_runs=20000, delta=1e-5,
                        vectorized=True, random_state=5)
    assert (res.epsilon_lower_bound > 1.0) is caught


# ----------------------------------------------------------------- estimator


@pytest.mark.parametrize("method, eigensolver", [
    ("frank_wolfe", "exact"), ("frank_wolfe", "oja"), ("pursuit", "oja"), ("svd", "exact"),
    ("pgd", "exact"),
])
def test_fitted_releases_are_exact_grid_multiples(method, eigensolver, ratings, monkeypatch):
    seen = []
    for name in ("grid_release", "grid_symmetric_release"):
        original = getattr(_solvers, name)
        monkeypatch.setattr(_solvers, name, lambda *a, f=original: seen.append(f(*a)) or seen[-1])
    model = DPMatrixCompleter(epsilon=1.0, delta=1e-6, method=method, eigensolver=eigensolver,
                              nuclear_norm=60.0, max_iter=3, rank=2, oja_iter=2,
                              row_norm_bound=1.0, center="user",
                              noise="discrete_gaussian", random_state=0).fit(ratings.train[:500])
    expected = {"frank_wolfe": 3 * (3 if eigensolver == "oja" else 1), "pursuit": 2 * 2,
                "svd": 1, "pgd": 3}[method]
    assert len(seen) == expected
    assert all(_on_grid(r, model.granularity_) for r in seen)
    assert model.sigma_ == pytest.approx(
        model.granularity_ * math.sqrt(float(discrete_noise(
            1.0, 1e-6, release_schedule(1.0, method=method, eigensolver=model.eigensolver_,
                                        n_iter=model.n_iter_, oja_iter=2, rank=2, n_items=30),
            500 * (4.0 if method == "frank_wolfe" else 1.0)).sigma2)))


def test_default_is_the_continuous_gaussian_bit_for_bit(ratings):
    X = ratings.train[:500]
    for params in (dict(method="frank_wolfe", nuclear_norm=60.0, max_iter=3),
                   dict(method="pursuit", rank=2, eigensolver="oja")):
        default = DPMatrixCompleter(epsilon=1.0, delta=1e-6, random_state=0, **params).fit(X)
        explicit = DPMatrixCompleter(epsilon=1.0, delta=1e-6, noise="gaussian", random_state=0,
                                     **params).fit(X)
        assert np.array_equal(default.components_, explicit.components_)
        assert default.granularity_ is None
        assert default.sigma_ == noise_sigma(1.0, 1e-6, default.sensitivity_)
    # The release functions without a grid draw exactly what they drew before.
    A = sp.csr_matrix(np.random.default_rng(0).uniform(-1, 1, (8, 4)))
    V = np.eye(4)[:, :1]
    expected = A.T @ (A @ V) + 2.0 * np.random.default_rng(9).standard_normal(V.shape)
    assert np.array_equal(oja_release(A, V, 2.0, np.random.default_rng(9)), expected)
    gram = (A.T @ A).toarray()
    g = np.random.default_rng(7).standard_normal((4, 4))
    values = np.linalg.eigvalsh(gram + 2.0 * (g + g.T) / 2.0)[::-1]
    assert np.allclose(private_eigh(gram, 2.0, np.random.default_rng(7))[0], values)


def test_accuracy_close_to_the_continuous_noise():
    # Same data, several seeds: the discrete option's noise is ~1.27 times the continuous
    # (zCDP against exact GDP composition), so its RMSE is close, and both beat the
    # per-user mean by a wide margin.
    data = make_low_rank_ratings(4000, 30, n_ratings=10, random_state=1)
    train = data.train
    counts = np.maximum(train.getnnz(axis=1), 1)
    means = np.asarray(train.sum(axis=1)).ravel() / counts
    test = data.test.tocoo()
    baseline = float(np.sqrt(np.mean((means[test.row] - test.data) ** 2)))
    rmse = {}
    for noise in ("gaussian", "discrete_gaussian"):
        rmse[noise] = np.mean([_rmse(DPMatrixCompleter(
            epsilon=1.0, delta=1e-6, method="pursuit", rank=2, noise=noise,
            row_norm_bound=1.0, center="user", ridge=0.0, random_state=seed).fit(train).transform(train), data.test) for seed in range(3)])
    assert rmse["discrete_gaussian"] < 0.5 * baseline
    assert rmse["discrete_gaussian"] == pytest.approx(rmse["gaussian"], rel=0.25)


def test_clone_and_pickle_keep_the_discrete_option(ratings):
    X = ratings.train[:300]
    model = DPMatrixCompleter(epsilon=1.0, delta=1e-5, method="svd", rank=2,
                              noise="discrete_gaussian", random_state=0)
    assert clone(model).get_params()["noise"] == "discrete_gaussian"
    model.fit(X)
    restored = pickle.loads(pickle.dumps(model))
    assert restored.granularity_ == model.granularity_
    assert np.array_equal(restored.transform(X[:20]), model.transform(X[:20]))
    refit = clone(model).fit(X)
    assert np.array_equal(refit.components_, model.components_)  # same seed, same draws


@pytest.mark.parametrize("params, message", [
    ({"noise": "laplace"}, "noise"),
    # (delta tiny too: with the CKS conversion delta alone buys a rho of about delta^2.)
    ({"noise": "discrete_gaussian", "epsilon": 1e-200, "delta": 1e-300}, "too small"),
])
def test_bad_noise_or_failed_calibration_spends_nothing(params, message):
    X = np.where(np.eye(10, 30) > 0, 1.0, np.nan)
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-2)
    model = DPMatrixCompleter(**{"method": "frank_wolfe",
                                "epsilon": 1.0, "delta": 1e-4, "nuclear_norm": 5.0,
                                 "accountant": accountant, **params})
    with pytest.raises(ValueError, match=message):
        model.fit(X)
    assert accountant.spent is None
