"""OutputPerturbationClassifier's softmax fit: one certified minimizer, noise on K d coefficients."""

import math

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import MinMaxScaler, Normalizer

from skdp.linear_model import OutputPerturbationClassifier
from skdp.linear_model._multinomial import MultinomialObjective
from skdp.linear_model._perturbation import (
    output_perturbation_discrete_noise,
    output_perturbation_softmax_sensitivity,
)
from skdp.linear_model._solvers import minimize_certified
from skdp.mechanisms import gaussian_sigma_analytic
from skdp.testing import audit_epsilon
from linear_model.test_private_glm_multiclass import _three_class_pair as _tiny


def _data(n=300, k=4, seed=0):
    X, y = make_classification(n, 6, n_informative=4, n_classes=k, random_state=seed)
    return Normalizer().fit_transform(MinMaxScaler().fit_transform(X)), y


def test_softmax_sensitivity_is_hand_computed():
    # Chaudhuri et al. (2011), Cor. 1 with L = sqrt(2) R, plus 2 tol / Lambda (certificate):
    # n = 300, R = 2, Lambda = 0.1, tol = 1e-4: 2 sqrt(2) 2 / 30 + 2e-4 / 0.1.
    expected = 4.0 * math.sqrt(2.0) / 30.0 + 2e-3
    assert output_perturbation_softmax_sensitivity(300, 2.0, 0.1, 1e-4, 4) == pytest.approx(
        expected, rel=1e-14)
    X, y = _data()
    est = OutputPerturbationClassifier(epsilon=2.0, data_norm=2.0, alpha=0.1, tol=1e-4,
                                       classes=[0, 1, 2, 3], random_state=0).fit(X, y)
    assert est.multi_class_ == "multinomial"
    assert est.coef_.shape == (4, 6) and est.intercept_.shape == (4,)
    assert est.sensitivity_ == pytest.approx(expected, rel=1e-14)
    # One release at the whole epsilon (not epsilon / K per class).
    assert est.noise_scale_ == pytest.approx(expected / 2.0, rel=1e-14)
    ovr = OutputPerturbationClassifier(epsilon=2.0, data_norm=2.0, alpha=0.1, tol=1e-4,
                                       multi_class="ovr", classes=[0, 1, 2, 3],
                                       random_state=0).fit(X, y)
    assert ovr.multi_class_ == "ovr"
    assert ovr.sensitivity_ == pytest.approx(4.0 / 30.0 + 2e-3, rel=1e-14)
    assert ovr.noise_scale_ == pytest.approx(ovr.sensitivity_ / 0.5, rel=1e-14)


@pytest.mark.parametrize("mechanism, delta", [("discrete_laplace", 0.0),
                                              ("discrete_gaussian", 1e-6)])
def test_softmax_discrete_noise_is_calibrated_on_the_k_d_coefficients(mechanism, delta):
    X, y = _data()
    est = OutputPerturbationClassifier(epsilon=1.0, delta=delta, mechanism=mechanism, alpha=0.1,
                                       tol=1e-4, classes=[0, 1, 2, 3], random_state=0).fit(X, y)
    sens = 2.0 * math.sqrt(2.0) / 30.0 + 2e-3
    # ||W||_F <= (sqrt(2) R + tol) / Lambda bounds the grid; F = K d = 4 * 7 coefficients.
    granularity, _, scale = output_perturbation_discrete_noise(
        mechanism, sens, 28, 1.0, delta, (math.sqrt(2.0) + 1e-4) / 0.1)
    assert est.sensitivity_ == pytest.approx(sens, rel=1e-14)
    assert est.noise_granularity_ == granularity
    assert est.noise_scale_ == pytest.approx(scale, rel=1e-12)
    W = np.column_stack([est.coef_, est.intercept_])
    assert np.array_equal(W / granularity, np.round(W / granularity))


def _exact(X, y, k, alpha, tol=1e-12):
    objective = MultinomialObjective(X, y, k, alpha)
    return minimize_certified(objective, np.zeros(k * X.shape[1]), gamma=tol).x


def test_l2_laplace_noise_is_one_norm_gamma_draw_over_k_d_coefficients():
    # Chaudhuri et al. (2011), Alg. 1: density proportional to exp(-||b|| / scale) on all
    # K d = 3 coefficients, i.e. ||b|| ~ Gamma(3, scale) (mean 3 scale, sd sqrt(3) scale);
    # K separate draws (or one of d dimensions) would have another norm distribution.
    (X, y), _ = _tiny()
    kw = dict(epsilon=1.0, alpha=1.0, fit_intercept=False, classes=[0, 1, 2])
    center = _exact(X, y, 3, 1.0)
    runs = [OutputPerturbationClassifier(**kw, random_state=s).fit(X, y) for s in range(400)]
    scale = runs[0].noise_scale_
    norms = np.array([np.linalg.norm(r.coef_[:, 0] - center) for r in runs]) / scale
    assert abs(norms.mean() - 3.0) < 5 * math.sqrt(3.0) / 20
    assert abs(norms.var() - 3.0) < 1.2


def test_softmax_pair_moves_the_minimizer_as_computed():
    # The audit's pair: the exact minimizers are W and -W, W = (p - e_0) / (n Lambda) up to
    # sign with p near uniform, so they are 2 sqrt(2/3) / (n Lambda) apart, 0.58 of the
    # bound 2 sqrt(2) / (n Lambda) (the bound needs p on a class other than y).
    d0, d1 = _tiny()
    w0, w1 = _exact(*d0, 3, 1.0), _exact(*d1, 3, 1.0)
    np.testing.assert_allclose(w0, -w1, atol=1e-12)
    gap = np.linalg.norm(w0 - w1)
    bound = output_perturbation_softmax_sensitivity(9, 1.0, 1.0, 0.0, 3)
    assert 0.55 * bound < gap < 0.58 * bound


class _QuarterNoise(OutputPerturbationClassifier):
    def _noise_scale(self, settings, budget):
        sensitivity, scale = super()._noise_scale(settings, budget)
        return sensitivity, scale / 4


def _audit(cls, epsilon):
    d0, d1 = _tiny()
    direction = np.array([2.0, -1.0, -1.0]) / math.sqrt(6.0)  # along w0 - w1
    kw = dict(epsilon=epsilon, alpha=1.0, fit_intercept=False, classes=[0, 1, 2])

    def mechanism(data, rng):
        return float(direction @ cls(**kw, random_state=rng).fit(*data).coef_[:, 0])

    return audit_epsilon(mechanism, d0, d1, n_runs=500, n_select=150,
                         random_state=12345).epsilon_lower_bound


def test_audit_softmax_release_keeps_the_claim_and_catches_a_quarter_noise_copy():
    assert _audit(OutputPerturbationClassifier, 2.0) < 2.0
    assert _audit(_QuarterNoise, 2.0) > 2.0


def test_softmax_at_huge_epsilon_is_logistic_regression_and_gives_softmax_probabilities():
    X, y = _data(2000, 4, seed=1)
    est = OutputPerturbationClassifier(1e6, classes=[0, 1, 2, 3], random_state=0).fit(X, y)
    # alpha="auto" at epsilon = 1e6 is the floor n Lambda = 1/2: LogisticRegression(C=1) on
    # [x, 1] / sqrt(2) (the intercept column inside the unit norm).
    assert est.alpha_ == pytest.approx(0.5 / 2000)
    twin = LogisticRegression().fit(X, y)
    assert abs(est.score(X, y) - twin.score(X, y)) < 0.01
    np.testing.assert_allclose(est.predict_proba(X), softmax(est.decision_function(X), axis=1))


@pytest.mark.parametrize("mechanism, delta, ratio", [
    ("l2_laplace", 0.0, math.sqrt(28.0)),  # sqrt(F) / epsilon, F = K d = 4 * (6 + 1)
    ("discrete_laplace", 0.0, math.sqrt(28.0)),
    ("discrete_gaussian", 1e-6, gaussian_sigma_analytic(1.0, 1.0, 1e-6)),  # the whole budget
])
def test_softmax_alpha_auto_rule(mechanism, delta, ratio):
    # n Lambda / R^2 = max(1/2, 2 K r) with r the ratio of one release of K d coefficients.
    X, y = _data()
    est = OutputPerturbationClassifier(epsilon=1.0, delta=delta, mechanism=mechanism,
                                       classes=[0, 1, 2, 3], random_state=0).fit(X, y)
    assert est.alpha_ == pytest.approx(max(0.5, 8.0 * ratio) / 300, rel=1e-12)
    given = OutputPerturbationClassifier(epsilon=1.0, delta=delta, mechanism=mechanism,
                                         alpha=est.alpha_, classes=[0, 1, 2, 3],
                                         random_state=0).fit(X, y)
    np.testing.assert_array_equal(given.coef_, est.coef_)
