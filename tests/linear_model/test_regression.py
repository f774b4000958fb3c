"""DPLinearRegression (sufficient-statistics perturbation) and DPHuberRegressor."""

import math
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer

from skdp import BudgetAccountant, PrivacyLeakWarning
from skdp.linear_model import DPHuberRegressor, DPLinearRegression
from skdp.linear_model._regression import adassp_ridge, default_huber_steps
from skdp.linear_model._sufficient_statistics import (
    gaussian_mu,
    gram_sensitivity,
    release_gram,
    solve_ridge_psd,
    split_gaussian_budget,
)
from skdp.mechanisms import gaussian_delta_analytic, gaussian_sigma_analytic
from skdp.testing import audit_epsilon


def _linear_data(n=4000, d=5, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, d)) / math.sqrt(d)  # rows within norm 1
    coef = rng.uniform(-2.0, 2.0, size=d)
    y = X @ coef + 0.3 + noise * rng.standard_normal(n)
    return X, y


# --------------------------------------------------------------------------
# Formulas against hand-computed values
# --------------------------------------------------------------------------
def test_gram_sensitivity_is_attained_by_orthogonal_rows():
    # x = B e1, x' = B e2: the upper triangle moves by B^2 on two diagonal entries.
    B = 1.7
    x, x2 = np.array([B, 0.0, 0.0]), np.array([0.0, B, 0.0])
    diff = np.outer(x, x) - np.outer(x2, x2)
    upper = diff[np.triu_indices(3)]
    assert np.linalg.norm(upper) == pytest.approx(gram_sensitivity(B))
    assert gram_sensitivity(B) == pytest.approx(math.sqrt(2) * B**2)
    assert gram_sensitivity(B, "add_remove") == pytest.approx(B**2)
    # No replace-one pair of rows within norm B moves it more.
    rng = np.random.default_rng(0)
    for _ in range(200):
        a, b = rng.standard_normal((2, 3))
        a, b = B * a / np.linalg.norm(a), B * b / np.linalg.norm(b)
        d = np.outer(a, a) - np.outer(b, b)
        assert np.linalg.norm(d[np.triu_indices(3)]) <= gram_sensitivity(B) + 1e-12


def test_split_gaussian_budget_composes_to_the_claimed_epsilon():
    # Two Gaussian releases with shares 0.4 / 0.6 of mu^2 are, jointly, one Gaussian
    # mechanism with Delta / sigma = mu, i.e. exactly (epsilon, delta)-DP.
    eps, delta = 1.0, 1e-6
    s1, s2 = split_gaussian_budget(eps, delta, [2.0, 3.0], [0.4, 0.6])
    mu = math.sqrt((2.0 / s1) ** 2 + (3.0 / s2) ** 2)
    assert mu == pytest.approx(gaussian_mu(eps, delta), rel=1e-12)
    assert gaussian_delta_analytic(1.0, 1.0 / mu, eps) == pytest.approx(delta, rel=1e-6)
    # A single release gets the analytic Gaussian's sigma.
    (s,) = split_gaussian_budget(eps, delta, [2.0], [1.0])
    assert s == pytest.approx(gaussian_sigma_analytic(2.0, eps, delta), rel=1e-12)
    with pytest.raises(ValueError, match="sum to 1"):
        split_gaussian_budget(eps, delta, [1.0, 1.0], [0.5, 0.6])


def test_adassp_ridge_formula():
    # Wang (2018), Alg. 2 line 2 with rho = 0.05: sigma sqrt(d log(2 d^2 / rho)) - lambda_min.
    assert adassp_ridge(4, 2.0) == pytest.approx(2.0 * math.sqrt(4 * math.log(32 / 0.05)))
    assert adassp_ridge(4, 2.0, 3.0) == pytest.approx(adassp_ridge(4, 2.0) - 3.0)
    assert adassp_ridge(4, 2.0, 1e9) == 0.0


def test_noise_scales_of_the_estimator():
    X, y = _linear_data(n=500, d=3)
    reg = DPLinearRegression(epsilon=1.0, delta=1e-6, y_bounds=(-4, 4), method="ssp",
                             random_state=0).fit(X, y)
    row = math.sqrt(1.25)  # data_norm = 1 and the intercept column 1/2
    mu = gaussian_mu(1.0, 1e-6)
    assert reg.noise_scales_["gram"] == pytest.approx(math.sqrt(2) * row**2 / (mu * math.sqrt(0.4)))
    assert reg.noise_scales_["moment"] == pytest.approx(2 * row * 4.0 / (mu * math.sqrt(0.6)))
    assert reg.ridge_ == pytest.approx(0.35 * adassp_ridge(4, reg.noise_scales_["gram"]))
    ada = DPLinearRegression(epsilon=1.0, delta=1e-6, y_bounds=(-4, 4), method="adassp",
                             random_state=0).fit(X, y)
    assert ada.noise_scales_["lambda_min"] == pytest.approx(row**2 / (mu * math.sqrt(0.1)))
    assert reg.delta_ == 1e-6
    assert DPLinearRegression(y_bounds=(-4, 4)).fit(X, y).delta_ == pytest.approx(1 / 500**2)
    gd = DPLinearRegression(epsilon=1.0, delta=1e-6, y_bounds=(-4, 4), method="gd",
                            random_state=0).fit(X, y)
    steps = default_huber_steps(1.0, 1e-6, 500)
    assert gd.n_iter_ == steps and gd.ridge_ is None
    assert gd.noise_scales_["gradient"] == pytest.approx(row * 4.0 * math.sqrt(steps) / mu)


def test_auto_method_rule():
    # "gd" below mu n = 20000, "ssp" from there on (mu about 0.24 at (1, 1e-6)).
    X, y = _linear_data(n=500, d=3)
    kw = dict(delta=1e-6, y_bounds=(-4, 4), random_state=0)
    assert DPLinearRegression(epsilon=1.0, **kw).fit(X, y).method_ == "gd"
    assert DPLinearRegression(epsilon=1e6, **kw).fit(X, y).method_ == "ssp"
    n_switch = 20000 / gaussian_mu(1.0, 1e-6)
    assert 50000 < n_switch < 120000


def test_default_huber_steps():
    mu = gaussian_mu(1.0, 1e-6)
    assert default_huber_steps(1.0, 1e-6, 3000) == min(1000, round((mu * 3000 / 60) ** 2))
    assert default_huber_steps(1.0, 1e-6, 1000) == 20  # mu n = 236: the floor of 20
    assert default_huber_steps(0.01, 1e-6, 100) == 1  # mu n = 0.2: one step
    assert default_huber_steps(1.0, 1e-6, 200) == round(gaussian_mu(1.0, 1e-6) * 200 / 4)
    assert default_huber_steps(1e6, 1e-6, 100) == 1000


def test_solve_ridge_psd_is_post_processing_that_never_fails():
    G = np.array([[1.0, 0.0], [0.0, -5.0]])  # a noisy Gram with a negative eigenvalue
    assert np.allclose(solve_ridge_psd(G, np.array([2.0, 3.0]), 1.0), [1.0, 3.0])
    assert np.allclose(solve_ridge_psd(G, np.array([2.0, 3.0]), 0.0), [2.0, 0.0])
    rng = np.random.default_rng(0)
    g = release_gram(np.eye(3), 0.5, rng)
    assert np.array_equal(g, g.T)


# --------------------------------------------------------------------------
# Empirical audits: the correct calibration passes, a quarter-noise copy is caught
# --------------------------------------------------------------------------
class _QuarterSSP(DPLinearRegression):
    def _noise_scales(self, budget, method, row_norm, y_half, n_steps=None):
        return {k: v / 4 for k, v in super()._noise_scales(budget, method, row_norm,
                                                           y_half, n_steps).items()}


class _QuarterHuber(DPHuberRegressor):
    def _noise_scale(self, budget, sensitivity, n_steps):
        return super()._noise_scale(budget, sensitivity, n_steps) / 4


def _pair(n=10):
    """Rows x = 0 plus one row x = 1 whose label is +1 or -1 (replace-one neighbours)."""
    X = np.zeros((n, 1))
    X[-1, 0] = 1.0
    y0 = np.zeros(n)
    y0[-1] = 1.0
    y1 = y0.copy()
    y1[-1] = -1.0
    return (X, y0), (X, y1)


def _audit(make, delta):
    d0, d1 = _pair()

    def mechanism(data, rng):
        return make(rng).fit(*data).coef_[0]
    return audit_epsilon(mechanism, d0, d1, n_runs=600, n_select=200, delta=delta,
                         random_state=12345).epsilon_lower_bound


def test_audit_ssp():
    # X^T y moves by 2 B_x B_y = 2; with a large fixed ridge the coefficient is
    # nearly linear in the noisy X^T y (the noisy Gram barely moves the denominator).
    kw = dict(epsilon=1.0, delta=1e-3, y_bounds=(-1, 1), fit_intercept=False, alpha=1000.0,
              method="ssp")
    assert _audit(lambda r: DPLinearRegression(**kw, random_state=r), 1e-3) < 1.0
    assert _audit(lambda r: _QuarterSSP(**kw, random_state=r), 1e-3) > 1.0


def test_audit_linear_regression_gd():
    # method="gd" with n = 10: mu n = 3.9, one step of the default rule.
    kw = dict(epsilon=1.0, delta=1e-3, y_bounds=(-1, 1), fit_intercept=False, method="gd")
    assert DPLinearRegression(**kw).fit(*_pair()[0]).n_iter_ == 1
    assert _audit(lambda r: DPLinearRegression(**kw, random_state=r), 1e-3) < 1.0
    assert _audit(lambda r: _QuarterSSP(**kw, random_state=r), 1e-3) > 1.0


def test_audit_huber():
    # One step from 0: psi(-y) = -+1/2 (huber_m = 1/2), so the summed gradient moves by
    # 2 huber_m B_x = 1 and the coefficient is -lr (sum + noise) / n.
    kw = dict(epsilon=1.0, delta=1e-3, y_bounds=(-1, 1), fit_intercept=False, huber_m=0.5,
              max_iter=1)
    assert _audit(lambda r: DPHuberRegressor(**kw, random_state=r), 1e-3) < 1.0
    assert _audit(lambda r: _QuarterHuber(**kw, random_state=r), 1e-3) > 1.0


# --------------------------------------------------------------------------
# Behaviour
# --------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["ssp", "adassp"])
def test_large_epsilon_gives_the_least_squares_fit(method):
    X, y = _linear_data()
    ols = LinearRegression().fit(X, y)
    reg = DPLinearRegression(epsilon=1e6, y_bounds=(-5, 5), method=method,
                             random_state=0).fit(X, y)
    assert np.allclose(reg.coef_, ols.coef_, atol=0.01)
    assert reg.intercept_ == pytest.approx(ols.intercept_, abs=0.01)
    assert reg.score(X, y) == pytest.approx(ols.score(X, y), abs=1e-3)


def test_huber_large_epsilon_is_close_to_least_squares():
    X, y = _linear_data(d=3)
    reg = DPHuberRegressor(epsilon=1e6, y_bounds=(-5, 5), random_state=0).fit(X, y)
    assert reg.score(X, y) >= LinearRegression().fit(X, y).score(X, y) - 0.03


def test_accuracy_at_epsilon_one_against_ridge():
    # 20k generated rows, normalized as in the real-data protocol.
    X, y = _linear_data(n=25000, d=10, noise=0.3, seed=1)
    Xtr, Xte, ytr, yte = X[:20000], X[20000:], y[:20000], y[20000:]
    twin = make_pipeline(Normalizer(), Ridge()).fit(Xtr, ytr).score(Xte, yte)
    priv = make_pipeline(Normalizer(), DPLinearRegression(
        epsilon=1.0, delta=1e-6, y_bounds=(-5, 5), random_state=0)).fit(Xtr, ytr).score(Xte, yte)
    assert priv >= twin - 0.05


def test_huber_is_robust_to_gross_label_errors():
    X, y = _linear_data(n=5000, d=3, noise=0.05, seed=2)
    y_bad = y.copy()
    y_bad[:250] = 5.0  # 5% of the labels at the top of the public range
    kw = dict(epsilon=10.0, delta=1e-6, y_bounds=(-5, 5), random_state=0)
    huber = DPHuberRegressor(**kw, huber_m=0.2).fit(X, y_bad).score(X, y)
    ls = DPLinearRegression(**kw).fit(X, y_bad).score(X, y)
    assert huber > ls + 0.05


@pytest.mark.parametrize("cls", [DPLinearRegression, DPHuberRegressor])
def test_y_bounds_none_warns_and_public_bounds_clip_silently(cls):
    X, y = _linear_data(n=300, d=3)
    with pytest.warns(PrivacyLeakWarning, match="y_bounds=None"):
        est = cls(epsilon=1.0, random_state=0).fit(X, y)
    assert est.y_bounds_ == (y.min(), y.max())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # labels outside y_bounds: no data-dependent warning
        est = cls(epsilon=1.0, y_bounds=(-0.1, 0.1), random_state=0).fit(X, y)
    assert np.all(np.abs(est.predict(X)) <= 0.1)  # predictions clipped to y_bounds


@pytest.mark.parametrize("cls", [DPLinearRegression, DPHuberRegressor])
@pytest.mark.parametrize("params, match", [
    (dict(y_bounds=(1.0, 0.0)), "low < high"),
    (dict(y_bounds=(0.0, np.inf)), "finite"),
    (dict(y_bounds=3.0), "pair"),
    (dict(data_norm=0.0), "data_norm"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(delta=1.0), "delta"),
    (dict(fit_intercept="yes"), "fit_intercept"),
])
def test_bad_input_refused_before_the_charge(cls, params, match):
    X, y = _linear_data(n=200, d=3)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    kw = dict(epsilon=1.0, y_bounds=(-5, 5), accountant=acc, random_state=0)
    kw.update(params)
    with pytest.raises((ValueError, TypeError), match=match):
        cls(**kw).fit(X, y)
    assert acc.spent is None


@pytest.mark.parametrize("params", [dict(method="ols"), dict(alpha=-1.0)])
def test_bad_linear_regression_params_refused_before_the_charge(params):
    X, y = _linear_data(n=200, d=3)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError):
        DPLinearRegression(epsilon=1.0, y_bounds=(-5, 5), accountant=acc, **params).fit(X, y)
    assert acc.spent is None


@pytest.mark.parametrize("params", [dict(huber_m=0.0), dict(max_iter=0),
                                    dict(learning_rate=-1.0)])
def test_bad_huber_params_refused_before_the_charge(params):
    X, y = _linear_data(n=200, d=3)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError):
        DPHuberRegressor(epsilon=1.0, y_bounds=(-5, 5), accountant=acc, **params).fit(X, y)
    assert acc.spent is None


def test_privacy_spent_and_accountant_charge():
    X, y = _linear_data(n=300, d=3)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    reg = DPLinearRegression(epsilon=0.5, delta=1e-5, y_bounds=(-5, 5), accountant=acc,
                             random_state=0).fit(X, y)
    assert (reg.privacy_spent_.epsilon, reg.privacy_spent_.delta) == (0.5, 1e-5)
    assert acc.spent.epsilon == pytest.approx(0.5)


def test_same_seed_same_release_and_different_seeds_differ():
    X, y = _linear_data(n=300, d=3)
    a = DPLinearRegression(y_bounds=(-5, 5), random_state=3).fit(X, y).coef_
    b = DPLinearRegression(y_bounds=(-5, 5), random_state=3).fit(X, y).coef_
    c = DPLinearRegression(y_bounds=(-5, 5), random_state=4).fit(X, y).coef_
    assert np.array_equal(a, b) and not np.array_equal(a, c)
