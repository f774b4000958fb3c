"""Tests of skdp.matrix_completion (seed 004, Ch. 6)."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from sklearn.base import clone

from skdp import BudgetAccountant, BudgetExceededError
from skdp.accounting import zcdp_to_dp
from skdp.datasets import make_low_rank_ratings
from skdp.matrix_completion import DPMatrixCompleter
from skdp.matrix_completion import _completer
from skdp.matrix_completion._calibration import noise_sigma, thesis_sigma, total_sensitivity
from skdp.matrix_completion._solvers import (
    eigenvalue_release,
    nuclear_shrinkage,
    oja_release,
    pgd_local,
    private_top_eigen,
    project_l1_ball,
    symmetric_noise,
)
from skdp.testing import audit_epsilon


@pytest.fixture(scope="module")
def ratings():
    return make_low_rank_ratings(4000, 30, n_ratings=10, random_state=0)


def _rmse(completed, test):
    test = test.tocoo()
    return float(np.sqrt(np.mean((completed[test.row, test.col] - test.data) ** 2)))


def _user_mean_rmse(data):
    train = data.train
    counts = np.maximum(train.getnnz(axis=1), 1)
    means = np.asarray(train.sum(axis=1)).ravel() / counts
    test = data.test.tocoo()
    return float(np.sqrt(np.mean((means[test.row] - test.data) ** 2)))


# ----------------------------------------------------------------- sensitivity and sigma


def test_frobenius_sensitivity_of_one_user_is_4_sqrt2_delta_squared():
    # Lemma 6.2.1 says 4 Delta^2; orthogonal residual rows of norm 2 Delta attain 4 sqrt(2).
    delta = 1.5
    a, b = np.array([2 * delta, 0.0, 0.0]), np.array([0.0, 2 * delta, 0.0])
    diff = np.outer(a, a) - np.outer(b, b)
    assert np.linalg.norm(diff) == pytest.approx(4 * math.sqrt(2) * delta**2)
    assert np.linalg.norm(diff) > 4 * delta**2
    rng = np.random.default_rng(0)
    for _ in range(2000):  # and nothing exceeds it
        a, b = rng.standard_normal((2, 3))
        a *= 2 * delta * rng.random() / np.linalg.norm(a)
        b *= 2 * delta * rng.random() / np.linalg.norm(b)
        diff = np.outer(a, a) - np.outer(b, b)
        assert np.linalg.norm(diff) <= 4 * math.sqrt(2) * delta**2 + 1e-12
        assert np.linalg.norm(diff, 2) <= 4 * delta**2 + 1e-12  # Oja's (operator) bound


def test_total_sensitivity_matches_hand_computation():
    d2 = 1.5**2
    # Frank-Wolfe, T = 4: rho = (Delta, 2D, 2D, 2D); exact releases sqrt(2) rho^2 each.
    fw = math.sqrt(2 * (1 + 3 * 16)) * d2
    assert total_sensitivity(1.5, n_iter=4) == pytest.approx(fw)
    assert total_sensitivity(1.5, n_iter=4) < math.sqrt(4) * 4 * math.sqrt(2) * d2
    # Oja, 3 steps + one eigenvalue per iteration, rho^2 each: sqrt(4 * 49) Delta^2.
    assert total_sensitivity(1.5, eigensolver="oja", n_iter=4, oja_iter=3) == pytest.approx(
        14 * d2)
    assert total_sensitivity(1.5, method="pursuit", n_iter=3) == pytest.approx(
        math.sqrt(6) * d2)
    assert total_sensitivity(1.5, method="pursuit", eigensolver="oja", n_iter=3,
                             oja_iter=3) == pytest.approx(3 * d2)
    assert total_sensitivity(1.5, method="svd") == pytest.approx(math.sqrt(2) * d2)
    assert total_sensitivity(1.5, method="svd", eigensolver="oja", oja_iter=4,
                             rank=1) == pytest.approx(2 * d2)
    assert total_sensitivity(1.5, method="svd", eigensolver="oja", oja_iter=4,
                             rank=3) == pytest.approx(2 * math.sqrt(2) * d2)


@pytest.mark.parametrize("epsilon, delta", [(0.1, 1e-6), (1.0, 1e-6), (5.0, 1e-6), (2.0, 1e-3)])
def test_sigma_is_the_exact_gaussian_calibration(epsilon, delta):
    s = total_sensitivity(2.0, n_iter=10)
    sigma = noise_sigma(epsilon, delta, s)
    # Balle and Wang (2018), Thm. 8, written out with scipy's normal cdf.
    a, b = s / (2 * sigma), epsilon * sigma / s
    exact_delta = stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b)
    assert exact_delta == pytest.approx(delta, rel=1e-6)
    assert exact_delta <= delta


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, 5.0])
def test_sigma_is_smaller_than_the_thesis(epsilon):
    delta, bound, T = 1e-6, 2.0, 10
    ours = noise_sigma(epsilon, delta, total_sensitivity(bound, n_iter=T))
    thesis = thesis_sigma(epsilon, delta, bound, n_iter=T)
    # Thesis: Delta^2 sqrt(64 T ln(1/delta)) / epsilon with sensitivity 4 Delta^2.
    assert thesis == pytest.approx(bound**2 * math.sqrt(64 * T * math.log(1 / delta)) / epsilon)
    # Corrected sensitivity 4 sqrt(2) Delta^2 on the thesis' zCDP route:
    corrected = math.sqrt(2) * thesis
    assert ours < thesis < corrected
    # The zCDP route is valid where the thesis claims: rho = T s^2 / (2 sigma^2) -> (eps, delta).
    rho = T * (4 * math.sqrt(2) * bound**2) ** 2 / (2 * corrected**2)
    assert zcdp_to_dp(rho, delta).epsilon <= epsilon


def test_thesis_calibration_requires_epsilon_at_most_2_ln_1_over_delta():
    delta = 0.01
    log_term = -math.log(delta)  # as the code computes it (ln(1/delta) of the float delta)
    thesis_sigma(2 * log_term, delta, 1.0)  # allowed at the limit
    with pytest.raises(ValueError, match="2 ln"):
        thesis_sigma(2.01 * log_term, delta, 1.0)
    # The thesis spends rho = epsilon^2 / (8 ln(1/delta)) (that is what
    # sqrt(64 T ln(1/delta)) / epsilon gives with sensitivity 4 Delta^2); it
    # converts back to at most epsilon only up to epsilon = 2 ln(1/delta).
    for epsilon, valid in ((0.5, True), (2 * log_term, True), (3 * log_term, False)):
        rho = epsilon**2 / (8 * log_term)
        sigma = thesis_sigma(min(epsilon, 2 * log_term), delta, 1.0, n_iter=4)
        if valid:
            assert 4 * 4.0**2 / (2 * sigma**2) == pytest.approx(rho)
        # (The thesis' own conversion, seed 004 Lemma 2.1.13; CKS Cor. 13 is valid a bit further.)
        assert (zcdp_to_dp(rho, delta, conversion="bun-steinke").epsilon <= epsilon) is valid
    # The analytic calibration holds at any epsilon.
    s = total_sensitivity(1.0, n_iter=3)
    assert 0 < noise_sigma(3 * log_term, delta, s) < noise_sigma(2 * log_term, delta, s)


def test_symmetric_noise_is_isotropic_in_frobenius_geometry():
    rng = np.random.default_rng(1)
    sigma, n = 2.0, 3
    draws = np.array([symmetric_noise(n, sigma, rng) for _ in range(20000)])
    assert np.allclose(draws, draws.transpose(0, 2, 1))
    assert np.var(draws[:, 0, 0]) == pytest.approx(sigma**2, rel=0.05)
    assert np.var(draws[:, 0, 1]) == pytest.approx(sigma**2 / 2, rel=0.05)
    # Any unit-Frobenius symmetric direction sees variance sigma^2.
    B = np.array([[0.3, 0.5, 0.0], [0.5, -0.2, 0.1], [0.0, 0.1, 0.4]])
    B /= np.linalg.norm(B)
    assert np.var(np.einsum("kij,ij->k", draws, B)) == pytest.approx(sigma**2, rel=0.05)


# ----------------------------------------------------------------- audits


def _frank_wolfe_gram_audit(noise_factor, bound=1.0, T=3, epsilon=1.0, delta=1e-5):
    """T releases of the global statistic on a worst-case pair of users.

    The differing user's residual row has norm Delta in the first iteration
    and 2 Delta after (Y = -Y* on her ratings); the two neighbours' rows are
    orthogonal. The statistic is the likelihood-ratio direction of each
    release, read from both eigenpairs of the released 2 x 2 matrix.
    """
    sigma = noise_sigma(epsilon, delta, total_sensitivity(bound, n_iter=T)) * noise_factor
    other = np.array([[0.3, 0.4]])
    residuals = {(user, rho): np.vstack([rho * np.eye(2)[user], other])
                 for user in (0, 1) for rho in (bound, 2 * bound)}

    def mechanism(user, rng):
        total = 0.0
        for t in range(T):
            A = residuals[user, bound if t == 0 else 2 * bound]
            vectors, values = private_top_eigen(A, sigma, rng, k=2)
            W = (vectors * values) @ vectors.T
            total += W[0, 0] - W[1, 1]
        return total

    return mechanism


@pytest.mark.parametrize("noise_factor, caught", [(1.0, False), (0.25, True)])
def test_audit_frank_wolfe_global_component(noise_factor, caught):
    res = audit_epsilon(_frank_wolfe_gram_audit(noise_factor), 0, 1, n_runs=20000,
                        delta=1e-5, random_state=2)
    assert (res.epsilon_lower_bound > 1.0) is caught


def _oja_audit(noise_factor, bound=1.0, oja_iter=2, epsilon=1.0, delta=1e-5):
    # One Frank-Wolfe iteration with Oja: oja_iter vector releases and one
    # eigenvalue release; the differing row is parallel to v or orthogonal to it.
    s = total_sensitivity(bound, eigensolver="oja", n_iter=1, oja_iter=oja_iter)
    sigma = noise_sigma(epsilon, delta, s) * noise_factor
    v = np.array([1.0, 0.0])
    matrices = [sp.csr_matrix([[bound, 0.0], [0.3, 0.4]]),
                sp.csr_matrix([[0.0, bound], [0.3, 0.4]])]

    def mechanism(user, rng):
        A = matrices[user]
        total = sum(oja_release(A, v, sigma, rng)[0] for _ in range(oja_iter))
        return total + eigenvalue_release(A, v, sigma, rng)

    return mechanism


@pytest.mark.parametrize("noise_factor, caught", [(1.0, False), (0.25, True)])
def test_audit_oja_releases(noise_factor, caught):
    res = audit_epsilon(_oja_audit(noise_factor), 0, 1, n_runs=20000, delta=1e-5,
                        random_state=3)
    assert (res.epsilon_lower_bound > 1.0) is caught


@pytest.mark.parametrize("noise_factor, caught", [(1.0, False), (0.25, True)])
def test_audit_fitted_estimator(noise_factor, caught, monkeypatch):
    # End to end: one Frank-Wolfe iteration on one item; the released
    # singular value is a monotone function of the noisy statistic.
    monkeypatch.setattr(_completer, "noise_sigma",
                        lambda *args: noise_factor * noise_sigma(*args))
    datasets = [np.array([[1.0], [0.5]]), np.array([[0.0], [0.5]])]

    def mechanism(which, rng):
        model = DPMatrixCompleter(method="frank_wolfe",
                                  epsilon=1.0, delta=1e-5, nuclear_norm=1.0, max_iter=1,
                                  row_norm_bound=1.0, center=None, random_state=rng)
        return model.fit(datasets[which]).singular_values_[0]

    res = audit_epsilon(mechanism, 0, 1, n_runs=4000, delta=1e-5, random_state=4)
    assert (res.epsilon_lower_bound > 1.0) is caught


# ----------------------------------------------------------------- behaviour


def _dense_frank_wolfe(Y, observed, k, bound, T):
    """Reference: Alg. 12 with exact top singular vectors, Pi_Delta and the 2/(t+1) steps."""
    def clip(M):
        norms = np.linalg.norm(np.where(observed, M, 0.0), axis=1)
        return M * np.minimum(1.0, bound / np.maximum(norms, 1e-300))[:, None]

    target = clip(np.where(observed, Y, 0.0))
    Z = np.zeros_like(Y)
    for t in range(1, T + 1):
        A = np.where(observed, Z - target, 0.0)
        u, s, vt = np.linalg.svd(A)
        eta = 2.0 / (t + 1)
        Z = clip((1 - eta) * Z - eta * k * np.outer(u[:, 0], vt[0]))
    return Z


@pytest.mark.filterwarnings("ignore:.*delta=0.5:skdp.exceptions.WeakPrivacyWarning")  # no-noise reference
def test_frank_wolfe_without_noise_matches_dense_reference():
    rng = np.random.default_rng(5)
    Y = rng.uniform(-1, 1, (40, 1)) @ rng.uniform(-1, 1, (1, 8))
    observed = rng.random(Y.shape) < 0.6
    X = np.where(observed, Y, np.nan)
    model = DPMatrixCompleter(method="frank_wolfe",
                              epsilon=1e16, delta=0.5, nuclear_norm=5.0, max_iter=6,
                              row_norm_bound=1.2, center=None, eigensolver="exact",
                              random_state=0).fit(X)
    expected = _dense_frank_wolfe(Y, observed, 5.0, 1.2, 6)
    assert np.allclose(model.transform(X), expected, atol=1e-5)


@pytest.mark.filterwarnings("ignore:.*delta=0.5:skdp.exceptions.WeakPrivacyWarning")  # no-noise reference
def test_pursuit_and_svd_without_noise_match_closed_forms():
    rng = np.random.default_rng(6)
    Y = rng.uniform(-1, 1, (60, 2)) @ rng.uniform(-1, 1, (2, 10))
    observed = rng.random(Y.shape) < 0.7
    X = np.where(observed, Y, np.nan)
    common = dict(epsilon=1e16, delta=0.5, row_norm_bound=4.0, center=None, rank=2,
                  ridge=0.0, random_state=0)
    svd = DPMatrixCompleter(method="svd", **common).fit(X)
    P = np.where(observed, Y, 0.0)
    V = np.linalg.svd(P)[2][:2]
    assert np.allclose(np.abs(svd.components_ @ V.T), np.eye(2), atol=1e-6)
    # Each user's ridge least squares on the released subspace (ridge 1% of
    # |Omega_i| / n plus ridge=0), the local step shared with pursuit.
    V = svd.components_

    def ridge(V, i, o):
        return np.linalg.solve(V[:, o] @ V[:, o].T + 0.01 * o.sum() / 10 * np.eye(len(V)),
                               V[:, o] @ Y[i, o])

    expected = np.array([ridge(V, i, o) for i, o in enumerate(observed)]) @ V
    assert np.allclose(svd.transform(X), expected, atol=1e-6)
    # Pursuit: top eigenvector of the residuals' Gram matrix, then each user's
    # ridge least squares on the directions so far.
    directions, coef = np.zeros((0, 10)), np.zeros((60, 0))
    for _ in range(2):
        residual = np.where(observed, coef @ directions - Y, 0.0)
        directions = np.vstack([directions, np.linalg.eigh(residual.T @ residual)[1][:, -1]])
        coef = np.array([ridge(directions, i, o) for i, o in enumerate(observed)])
    pursuit = DPMatrixCompleter(method="pursuit", **common).fit(X)
    assert np.allclose(pursuit.transform(X), coef @ directions, atol=1e-6)
    unobserved = ~observed
    assert np.sqrt(np.mean((coef @ directions - Y)[unobserved] ** 2)) < 0.2 * np.sqrt(
        np.mean(Y[unobserved] ** 2))


@pytest.mark.parametrize("method", ["frank_wolfe", "pursuit", "svd", "pgd"])
def test_locality_of_completed_rows(ratings, method):
    model = DPMatrixCompleter(epsilon=1.0, delta=1e-6, nuclear_norm=ratings.nuclear_norm,
                              method=method, rank=2, max_iter=4, random_state=0)
    X = ratings.train
    full = model.fit(X).transform(X)
    keep = np.r_[0:10, 11:50]  # user 10 removed from transform's input
    # Equal up to BLAS rounding (a matrix product of another shape may round differently).
    same = dict(rtol=1e-12, atol=1e-12)
    assert np.allclose(model.transform(X[keep]), full[keep], **same)
    changed = X[:50].tolil()
    changed[10, :] = 0.0  # user 10 replaced by other ratings
    others = np.r_[0:10, 11:50]
    assert np.allclose(model.transform(changed.tocsr())[others], full[others], **same)
    assert not np.allclose(model.transform(changed.tocsr())[10], full[10], **same)
    assert np.allclose(model.transform(X[[7]]), full[[7]], **same)


@pytest.mark.parametrize("eigensolver", ["exact", "oja"])
def test_accuracy_against_per_user_mean_and_non_private(ratings, eigensolver):
    baseline = _user_mean_rmse(ratings)
    common = dict(delta=1e-6, row_norm_bound=1.0, eigensolver=eigensolver, ridge=0.0,
                  center="user", random_state=0)
    fw = DPMatrixCompleter(method="frank_wolfe",
                           epsilon=5.0, nuclear_norm=ratings.nuclear_norm, max_iter=5, **common)
    assert _rmse(fw.fit(ratings.train).transform(ratings.train), ratings.test) < 0.9 * baseline
    pursuit = DPMatrixCompleter(epsilon=5.0, method="pursuit", rank=2, **common)
    private = _rmse(pursuit.fit(ratings.train).transform(ratings.train), ratings.test)
    exact = clone(pursuit).set_params(epsilon=1e9)
    reference = _rmse(exact.fit(ratings.train).transform(ratings.train), ratings.test)
    assert private < min(1.3 * reference, 0.5 * baseline)


def test_unseen_users_are_completed(ratings):
    model = DPMatrixCompleter(epsilon=1.0, delta=1e-6, method="pursuit", rank=2,
                              random_state=0).fit(ratings.train[:3000])
    new = ratings.train[3000:]
    completed = model.transform(new)
    assert completed.shape == new.shape
    assert _rmse(completed, ratings.test[3000:]) < _user_mean_rmse(ratings)


def test_users_without_ratings():
    X = np.array([[1.0, np.nan, 0.5], [np.nan, np.nan, np.nan], [0.2, 0.4, np.nan]])
    for method in ("frank_wolfe", "pursuit", "svd", "pgd"):
        # With center="user_item" a user without ratings gets the released item biases.
        biased = DPMatrixCompleter(epsilon=1.0, delta=1e-3, nuclear_norm=2.0, method=method,
                                   random_state=0).fit(X)
        assert np.array_equal(biased.transform(X)[1], biased.item_biases_)
        model = DPMatrixCompleter(epsilon=1.0, delta=1e-3, nuclear_norm=2.0, method=method,
                                  center="user", random_state=0)
        completed = model.fit(X).transform(X)
        assert np.all(np.isfinite(completed))
        assert np.array_equal(completed[1], np.zeros(3))
        sparse = sp.csr_matrix(np.nan_to_num(X))  # stored entries: zeros are ratings
        empty_row = sp.csr_matrix((3, 3))
        assert np.array_equal(model.transform(empty_row), np.zeros((3, 3)))
        model.fit(sparse)
    all_empty = np.full((4, 3), np.nan)
    assert DPMatrixCompleter(epsilon=1.0, delta=1e-3, method="svd", random_state=0).fit(
        all_empty).transform(all_empty).shape == (4, 3)


def test_sparse_and_dense_inputs_agree_and_explicit_zeros_are_ratings():
    rng = np.random.default_rng(7)
    dense = np.where(rng.random((30, 6)) < 0.5, rng.uniform(-1, 1, (30, 6)), np.nan)
    dense[0, :3] = 0.0  # observed zero ratings
    rows, cols = np.nonzero(~np.isnan(dense))
    sparse = sp.csr_matrix((dense[rows, cols], (rows, cols)), shape=dense.shape)
    assert sparse.nnz == len(rows)  # explicit zeros stored
    params = dict(epsilon=1.0, delta=1e-3, nuclear_norm=3.0, random_state=0)
    a = DPMatrixCompleter(**params).fit(dense)
    b = DPMatrixCompleter(**params).fit(sparse)
    assert np.allclose(a.components_, b.components_)
    assert np.allclose(a.transform(dense), b.transform(sparse.tocoo()))
    # Dropping the explicit zeros changes user 0's mean: they were ratings.
    dropped = sparse.copy()
    dropped.eliminate_zeros()
    assert not np.allclose(b.transform(dropped)[0], b.transform(sparse)[0])


def test_oja_never_forms_an_items_by_items_matrix():
    import tracemalloc

    n_items = 6000
    data = make_low_rank_ratings(3000, n_items, n_ratings=5, random_state=0)
    model = DPMatrixCompleter(method="frank_wolfe",
                              epsilon=1.0, delta=1e-6, nuclear_norm=data.nuclear_norm,
                              max_iter=2, oja_iter=2, eigensolver="oja", random_state=0)
    tracemalloc.start()
    model.fit(data.train)
    fit_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    model.transform(data.train[:100])
    transform_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert fit_peak < 0.01 * n_items**2 * 8  # the n x n matrix alone would be 288 MB
    assert transform_peak < 2.5 * 100 * n_items * 8  # about the dense output itself
    assert model.eigensolver_ == "oja"
    assert DPMatrixCompleter(method="frank_wolfe",
                             nuclear_norm=1.0, delta=1e-6).set_params(eigensolver="auto").fit(
        data.train[:50]).eigensolver_ == "oja"


def test_budget_bookkeeping(ratings):
    X = ratings.train[:200]
    model = DPMatrixCompleter(method="frank_wolfe",
                              epsilon=0.5, nuclear_norm=10.0, random_state=0).fit(X)
    assert model.delta_ == pytest.approx(1 / 200**2)
    assert model.privacy_spent_.epsilon == 0.5
    assert model.n_iter_ == 10 and model.components_.shape == (10, 30)
    accountant = BudgetAccountant(epsilon=1.0, delta=1e-3)
    shared = DPMatrixCompleter(method="frank_wolfe", epsilon=0.6, delta=1e-4, nuclear_norm=10.0,
                               accountant=accountant)
    shared.fit(X)
    with pytest.raises(BudgetExceededError):
        clone(shared).fit(X)


@pytest.mark.parametrize("params, X, message", [
    ({"nuclear_norm": 0.0}, None, "nuclear_norm"),
    ({"nuclear_norm": -1.0}, None, "nuclear_norm"),
    ({"row_norm_bound": 0.0}, None, "row_norm_bound"),
    ({"row_norm_bound": -2.0}, None, "row_norm_bound"),
    ({"method": "als"}, None, "method"),
    ({"eigensolver": "lanczos"}, None, "eigensolver"),
    ({"center": "item"}, None, "center"),
    ({"method": "svd", "rank": 31}, None, "rank"),
    ({"item_share": 1.0}, None, "item_share"),
    ({"item_share": 0.0}, None, "item_share"),
    ({"rating_bounds": (1.0, 1.0)}, None, "rating_bounds"),
    ({"rating_bounds": (1.0,)}, None, "rating_bounds"),
    ({"ridge": -1.0}, None, "ridge"),
    ({"method": "pgd", "eigensolver": "oja"}, None, "eigensolver"),
    ({"method": "pgd", "learning_rate": 0.0}, None, "learning_rate"),
    ({"method": "pgd", "learning_rate": 2.0}, None, "learning_rate"),
    ({"method": "pgd", "learning_rate": [1.0, 0.5]}, None, "max_iter"),
    ({"method": "pgd", "learning_rate": [[1.0] * 10]}, None, "learning_rate"),
    ({}, sp.csr_matrix(([1.0, np.nan], ([0, 1], [0, 1])), shape=(3, 30)), "NaN"),
    ({}, np.ones(30), "2D"),
    ({}, np.ones((2, 3, 4)), "dim"),
    ({}, np.array([[1.0, np.inf]]), "infinit"),
])
def test_bad_input_is_refused_before_spending(params, X, message):
    X = np.where(np.eye(10, 30) > 0, 1.0, np.nan) if X is None else X
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-2)
    model = DPMatrixCompleter(epsilon=1.0, delta=1e-4, accountant=accountant,
                              **{"method": "frank_wolfe", "nuclear_norm": 5.0, **params})
    with pytest.raises(ValueError, match=message):
        model.fit(X)
    assert accountant.spent is None


# ----------------------------------------------------------------- projected gradient descent


def test_pgd_calibration_matches_hand_computation():
    # T releases of sum_i y_i y_i^T with whole rows clipped to rho: sqrt(2) rho^2 each.
    rho, T, epsilon, delta = 1.5, 4, 1.0, 1e-6
    s = total_sensitivity(rho, method="pgd", n_iter=T)
    assert s == pytest.approx(math.sqrt(8) * 2.25)  # 6.3640
    sigma = noise_sigma(epsilon, delta, s)
    a, b = s / (2 * sigma), epsilon * sigma / s
    assert stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b) == pytest.approx(
        delta, rel=1e-6)
    # The thesis' zCDP route with the corrected sensitivity: rho^2 sqrt(8 T ln(1/delta)) / eps
    # spends s^2 / (2 sigma^2) = epsilon^2 / (8 ln(1/delta)), valid (Lemma 2.1.13) but looser.
    zcdp_sigma = rho**2 * math.sqrt(8 * T * math.log(1 / delta)) / epsilon
    zcdp_rho = s**2 / (2 * zcdp_sigma**2)
    assert zcdp_rho == pytest.approx(epsilon**2 / (8 * math.log(1 / delta)))
    assert zcdp_to_dp(zcdp_rho, delta).epsilon <= epsilon
    assert sigma < zcdp_sigma
    with pytest.raises(ValueError, match="exact"):
        total_sensitivity(rho, method="pgd", eigensolver="oja")
    # The estimator uses exactly this sigma.
    X = np.where(np.eye(6, 4) > 0, 1.0, np.nan)
    model = DPMatrixCompleter(epsilon=epsilon, delta=delta, method="pgd", nuclear_norm=2.0,
                              max_iter=T, row_norm_bound=rho, center="user",
                              random_state=0).fit(X)
    assert model.sensitivity_ == pytest.approx(s)
    assert model.sigma_ == pytest.approx(sigma)
    assert model.eigensolver_ == "exact" and len(model.projections_) == T


@pytest.mark.parametrize("epsilon", [0.05, 0.1, 0.2])
def test_pgd_printed_thesis_sigma_is_not_private_at_small_epsilon(epsilon):
    # Alg. 16 prints Delta^2 sqrt(64 T ln(1/delta) / epsilon): epsilon inside the root.
    delta, bound, T = 1e-6, 1.0, 5
    printed = thesis_sigma(epsilon, delta, bound, method="pgd", n_iter=T)
    assert printed == pytest.approx(math.sqrt(64 * T * math.log(1 / delta) / epsilon))
    assert printed == pytest.approx(
        thesis_sigma(epsilon, delta, bound, n_iter=T) * math.sqrt(epsilon))
    # Even with the thesis' own per-step sensitivity 4 Delta^2 (rows of norm 2 Delta,
    # copied from Frank-Wolfe) the T composed releases are not (epsilon, delta)-DP:
    s = math.sqrt(T) * 4 * bound**2
    a, b = s / (2 * printed), epsilon * printed / s
    assert stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b) > 5 * delta
    assert printed < noise_sigma(epsilon, delta, s)


def test_project_l1_ball_and_nuclear_shrinkage_hand_computed():
    # sorted (3, 2.5, 0.5), radius 4: tau = (3 + 2.5 - 4) / 2 = 0.75.
    assert np.allclose(project_l1_ball([0.5, 3.0, 2.5], 4.0), [0.0, 2.25, 1.75])
    assert np.allclose(project_l1_ball([3.0, 1.0, 0.5], 2.0), [2.0, 0.0, 0.0])
    assert np.allclose(project_l1_ball([1.0, 0.5], 2.0), [1.0, 0.5])  # inside the ball
    rng = np.random.default_rng(0)
    for _ in range(200):  # the projection: closest point of the ball
        v = rng.exponential(size=5)
        z = project_l1_ball(v, 1.0)
        assert z.sum() <= 1.0 + 1e-12 and np.all(z >= 0)
        other = project_l1_ball(rng.exponential(size=5), 1.0)
        assert np.linalg.norm(v - z) <= np.linalg.norm(v - other) + 1e-12
    # Eigenvalues (9, 1, -4): singular values (3, 1, 0); radius 2 keeps only (2,).
    keep, factors = nuclear_shrinkage(np.array([9.0, 1.0, -4.0]), 2.0)
    assert keep.tolist() == [True, False, False] and np.allclose(factors, [2 / 3])
    keep, factors = nuclear_shrinkage(np.array([9.0, 1.0, -4.0]), 10.0)
    assert keep.tolist() == [True, True, False] and np.allclose(factors, [1.0, 1.0])


def _dense_pgd(Y, observed, k, bound, etas):
    """Reference: Alg. 16 without noise, with Pi_rho on whole rows and the exact SVD."""
    Z = np.zeros_like(Y)
    for eta in etas:
        Z = Z - eta * np.where(observed, Z - Y, 0.0)
        Z *= np.minimum(1.0, bound / np.maximum(np.linalg.norm(Z, axis=1), 1e-300))[:, None]
        u, s, vt = np.linalg.svd(Z, full_matrices=False)
        Z = (u * project_l1_ball(s, k)) @ vt
    return Z


@pytest.mark.filterwarnings("ignore:.*delta=0.5:skdp.exceptions.WeakPrivacyWarning")  # no-noise reference
@pytest.mark.parametrize("k, learning_rate", [(3.0, 0.7), (50.0, [1.0, 0.5, 0.5, 0.3, 1.0])])
def test_pgd_without_noise_matches_dense_reference(k, learning_rate):
    rng = np.random.default_rng(5)
    Y = rng.uniform(-1, 1, (40, 2)) @ rng.uniform(-1, 1, (2, 8))
    observed = rng.random(Y.shape) < 0.6
    X = np.where(observed, Y, np.nan)
    model = DPMatrixCompleter(epsilon=1e16, delta=0.5, method="pgd", nuclear_norm=k,
                              max_iter=5, row_norm_bound=1.5, learning_rate=learning_rate,
                              center=None, random_state=0).fit(X)
    expected = _dense_pgd(Y, observed, k, 1.5, np.broadcast_to(learning_rate, 5))
    completed = model.transform(X)
    assert np.allclose(completed, expected, atol=1e-6)
    assert np.allclose(model.components_, model.projections_[-1][0])
    assert np.linalg.svd(completed, compute_uv=False).sum() <= k + 1e-6


def test_pgd_gram_uses_rows_clipped_to_the_bound():
    # Ratings far above the bound: every released Gram matrix is a sum of rows of norm <= rho.
    X = np.where(np.random.default_rng(8).random((50, 6)) < 0.5, 100.0, np.nan)
    X[0] = np.nan
    ratings = _completer.ratings_from_input(X, center=None)
    traces = []

    def release(t, gram):
        traces.append(np.trace(gram))
        values, vectors = np.linalg.eigh(gram)
        return vectors[:, ::-1][:, :2].T, np.full(2, 0.5)

    pgd_local(ratings, release, bound=2.0, etas=np.ones(3), gram=True)
    assert np.allclose(traces, 49 * 2.0**2)  # 49 users with ratings, each clipped to norm 2


def _pgd_fitted_audit(noise_factor, monkeypatch, n_iter=2, k=10.0):
    """End to end, worst case: the differing user rates item 0 or item 1 (1.0).

    Next to her, 50 users rate item 0 and 50 item 1, so that the released
    Gram matrix is near ``diag(51, 50)`` or ``diag(50, 51)``; her clipped
    row and its replacement are (nearly) orthogonal rows of norm ``rho = 1``,
    the case that attains the sensitivity ``sqrt(2) rho^2``. With
    ``nuclear_norm=k`` below the sum of the two singular values, both
    directions are kept and ``tau = k / sum(1 / (1 - s_i) - 1)``,
    ``Lambda_i = tau / (1 - s_i)``: the released eigenpairs give back
    ``W = V^T diag(Lambda^2) V``, and the statistic is ``sum_t W_00 - W_11``.
    """
    monkeypatch.setattr(_completer, "noise_sigma",
                        lambda *args: noise_factor * noise_sigma(*args))
    others = np.vstack([np.tile([1.0, np.nan], (50, 1)), np.tile([np.nan, 1.0], (50, 1))])
    datasets = [np.vstack([row, others]) for row in ([1.0, np.nan], [np.nan, 1.0])]

    def mechanism(which, rng):
        model = DPMatrixCompleter(epsilon=1.0, delta=1e-5, method="pgd", nuclear_norm=k,
                                  max_iter=n_iter, row_norm_bound=1.0, center=None,
                                  random_state=rng).fit(datasets[which])
        total = 0.0
        for V, factors in model.projections_:
            if len(factors) == 2 and factors.max() < 1:
                tau = k / np.sum(1.0 / (1.0 - factors) - 1.0)
                W = (V.T * (tau / (1.0 - factors)) ** 2) @ V
            else:  # rare: one direction kept (Lambda_1 = k / s_1) or none
                W = (V.T * (k / factors) ** 2) @ V
            total += W[0, 0] - W[1, 1]
        return total

    return mechanism


@pytest.mark.parametrize("noise_factor, caught", [(1.0, False), (0.25, True)])
def test_audit_pgd_fitted_estimator(noise_factor, caught, monkeypatch):
    res = audit_epsilon(_pgd_fitted_audit(noise_factor, monkeypatch), 0, 1, n_runs=2000,
                        delta=1e-5, random_state=9)
    assert (res.epsilon_lower_bound > 1.0) is caught


def test_pgd_accuracy_against_per_user_mean_and_non_private(ratings):
    common = dict(delta=1e-6, method="pgd", nuclear_norm=ratings.nuclear_norm, max_iter=10,
                  row_norm_bound=0.5 * math.sqrt(30), random_state=0)
    private = DPMatrixCompleter(epsilon=5.0, **common).fit(ratings.train)
    private_rmse = _rmse(private.transform(ratings.train), ratings.test)
    exact = DPMatrixCompleter(epsilon=1e9, **common).fit(ratings.train)
    reference = _rmse(exact.transform(ratings.train), ratings.test)
    assert private_rmse < min(1.2 * reference, 0.7 * _user_mean_rmse(ratings))


def test_pgd_default_nuclear_norm_is_the_rank_one_public_value():
    X = np.random.default_rng(0).uniform(-1, 1, size=(16, 5))
    # pgd, like frank_wolfe: sqrt(n_users) * row_norm_bound (no data involved).
    model = DPMatrixCompleter(method="pgd", row_norm_bound=0.5, max_iter=2,
                              random_state=0).fit(X)
    assert model.nuclear_norm_ == pytest.approx(2.0)
