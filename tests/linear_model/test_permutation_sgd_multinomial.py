"""PermutationSGDClassifier's softmax fit: one SGD run on the K weight vectors, one output release."""

import math

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import MinMaxScaler, Normalizer

from skdp.accounting import BudgetAccountant
from skdp.linear_model import PermutationSGDClassifier
from skdp.linear_model._perturbation import output_perturbation_discrete_noise
from skdp.mechanisms import gaussian_sigma_analytic
from skdp.testing import audit_epsilon
from linear_model.test_private_glm_multiclass import _three_class_pair as _tiny


def _data(n=300, k=4, seed=0):
    X, y = make_classification(n, 6, n_informative=4, n_classes=k, random_state=seed)
    return Normalizer().fit_transform(MinMaxScaler().fit_transform(X)), y


def test_softmax_sensitivity_is_hand_computed():
    # Wu et al. (2017), Thm. 3 with L = sqrt(2) R: 2 k eta sqrt(2) R / b. n = 300, b = 64:
    # N = 4 minibatches of at least 75 rows; k = 2 passes, eta = 0.1, R = 2.
    X, y = _data()
    kw = dict(epsilon=1.0, delta=1e-6, data_norm=2.0, learning_rate=0.1, epochs=2,
              classes=[0, 1, 2, 3], random_state=0)
    est = PermutationSGDClassifier(**kw).fit(X, y)
    expected = 2.0 * 2 * 0.1 * math.sqrt(2.0) * 2.0 / 75
    assert est.multi_class_ == "multinomial"
    assert est.coef_.shape == (4, 6) and est.intercept_.shape == (4,)
    assert est.sensitivity_ == pytest.approx(expected, rel=1e-14)
    # One release of K d coefficients at the whole budget (no sqrt(K) factor).
    assert est.noise_std_ == pytest.approx(gaussian_sigma_analytic(expected, 1.0, 1e-6), rel=1e-14)
    ovr = PermutationSGDClassifier(multi_class="ovr", **kw).fit(X, y)
    assert ovr.multi_class_ == "ovr"
    assert ovr.sensitivity_ == pytest.approx(2.0 * 2 * 0.1 * 2.0 / 75, rel=1e-14)
    assert ovr.noise_std_ == pytest.approx(
        gaussian_sigma_analytic(2.0 * ovr.sensitivity_, 1.0, 1e-6), rel=1e-14)
    # Strongly convex: 2 sqrt(2) R / (alpha b N) = 2 sqrt(2) 2 / (0.5 * 75 * 4).
    sc = PermutationSGDClassifier(epsilon=1.0, delta=1e-6, data_norm=2.0, strongly_convex=True,
                                  alpha=0.5, classes=[0, 1, 2, 3], random_state=0).fit(X, y)
    assert sc.sensitivity_ == pytest.approx(4.0 * math.sqrt(2.0) / 150.0, rel=1e-14)


def test_softmax_discrete_noise_is_calibrated_on_the_k_d_coefficients():
    X, y = _data()
    est = PermutationSGDClassifier(epsilon=1.0, delta=1e-6, learning_rate=0.1, epochs=2,
                                   mechanism="discrete_gaussian", classes=[0, 1, 2, 3],
                                   random_state=0).fit(X, y)
    sens = 2.0 * 2 * 0.1 * math.sqrt(2.0) / 75
    # ||W||_F <= T eta sqrt(2) R (T = 8 updates); F = K d = 4 * 7 coefficients, one release.
    granularity, _, scale = output_perturbation_discrete_noise(
        "discrete_gaussian", sens, 28, 1.0, 1e-6, 8 * 0.1 * math.sqrt(2.0))
    assert est.sensitivity_ == pytest.approx(sens, rel=1e-14)
    assert est.noise_granularity_ == granularity
    assert est.noise_std_ == pytest.approx(scale, rel=1e-12)
    W = np.column_stack([est.coef_, est.intercept_])
    assert np.array_equal(W / granularity, np.round(W / granularity))


class _Noiseless(PermutationSGDClassifier):
    def _noise_std(self, settings, budget):
        return 1e-300  # numerically noiseless


def test_noiseless_steps_are_the_hand_written_softmax_steps():
    """Full batch, no noise: W <- W - eta ((1/n) sum_i w_i (p_i - e_y) x_i^T + alpha W)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3))
    y = np.arange(30) % 3
    sw = rng.uniform(0.2, 1.0, size=30)
    R, eta, alpha, steps = 3.0, 0.15, 0.2, 4
    est = _Noiseless(epsilon=1.0, delta=1e-6, data_norm=R, learning_rate=eta, alpha=alpha,
                     batch_size=30, epochs=steps, classes=[0, 1, 2],
                     random_state=0).fit(X, y, sample_weight=sw)
    Xa = np.hstack([X, np.ones((30, 1))])
    norms = np.linalg.norm(Xa, axis=1)
    Xa = Xa * np.minimum(1.0, R / norms)[:, None]  # rows clipped to norm R
    W = np.zeros((3, 4))
    for _ in range(steps):
        grad = np.zeros_like(W)
        for i in range(30):
            p = np.exp(W @ Xa[i]) / np.exp(W @ Xa[i]).sum()
            p[y[i]] -= 1.0
            grad += sw[i] * np.outer(p, Xa[i]) / 30
        W -= eta * (grad + alpha * W)
    np.testing.assert_allclose(np.column_stack([est.coef_, est.intercept_]), W,
                               rtol=1e-10, atol=1e-12)
    assert est.n_iter_ == steps


class _QuarterNoise(PermutationSGDClassifier):
    def _noise_std(self, settings, budget):
        return super()._noise_std(settings, budget) / 4


def test_audit_pair_moves_the_release_as_computed():
    # b = 1, one pass, W stays 0 until the row x = +-1 (the others have no gradient), whose
    # step is -eta (p - e_0) x with p uniform: the two outputs are 2 eta sqrt(2/3) apart,
    # 0.58 of the bound 2 eta sqrt(2) R / b.
    d0, d1 = _tiny()
    kw = dict(epsilon=1.0, delta=1e-5, learning_rate=0.5, batch_size=1, epochs=1,
              fit_intercept=False, classes=[0, 1, 2], random_state=0)
    w0 = _Noiseless(**kw).fit(*d0).coef_[:, 0]
    w1 = _Noiseless(**kw).fit(*d1).coef_[:, 0]
    np.testing.assert_allclose(w0, 0.5 * np.array([2.0, -1.0, -1.0]) / 3, atol=1e-12)
    np.testing.assert_allclose(w1, -w0, atol=1e-12)
    sens = PermutationSGDClassifier(**kw).fit(*d0).sensitivity_
    assert sens == pytest.approx(2 * 0.5 * math.sqrt(2.0))
    assert 0.57 * sens < np.linalg.norm(w0 - w1) < 0.58 * sens


def _audit(cls):
    # At W = 0 no pair moves the release by more than sqrt((K - 1) / (2 K)) of the bound
    # (p is uniform), 0.58 here; delta = 1e-2 keeps the quarter-noise copy's shift, in
    # units of its noise, at about 2, as in the audits of the margin losses.
    d0, d1 = _tiny()
    direction = np.array([2.0, -1.0, -1.0]) / math.sqrt(6.0)  # along w0 - w1
    kw = dict(epsilon=2.0, delta=1e-2, learning_rate=0.5, batch_size=1, epochs=1,
              fit_intercept=False, classes=[0, 1, 2])

    def mechanism(data, rng):
        return float(direction @ cls(**kw, random_state=rng).fit(*data).coef_[:, 0])

    return audit_epsilon(mechanism, d0, d1, n_runs=500, n_select=150, delta=1e-2,
                         random_state=12345).epsilon_lower_bound


def test_audit_softmax_release_keeps_the_claim_and_catches_a_quarter_noise_copy():
    assert _audit(PermutationSGDClassifier) < 2.0
    assert _audit(_QuarterNoise) > 2.0


def test_step_above_the_softmax_bound_is_refused_before_the_charge():
    # R = 1: 2 / beta is 8 for the logistic loss (one-vs-rest) but 4 for the softmax.
    X, y = _data()
    acc = BudgetAccountant(10.0, 1e-3)
    kw = dict(epsilon=1.0, delta=1e-6, learning_rate=5.0, classes=[0, 1, 2, 3], accountant=acc)
    with pytest.raises(ValueError, match="softmax loss"):
        PermutationSGDClassifier(**kw).fit(X, y)
    assert acc.spent is None or acc.spent.epsilon == 0.0
    assert PermutationSGDClassifier(multi_class="ovr", **kw).fit(X, y).multi_class_ == "ovr"


@pytest.mark.parametrize("multi_class", ["multinomial", "ovr"])
def test_default_step_holds_a_class_score_noise_at_its_target(multi_class):
    # d = 7 coefficients per class: min(4, 0.3 sqrt(7)) / R per class, i.e. a noise
    # deviation 0.3 / R per coordinate (a class score's x . b_k: 0.3), either fit.
    X, y = _data(3000)
    est = PermutationSGDClassifier(1.0, 1e-6, data_norm=2.0, multi_class=multi_class,
                                   classes=[0, 1, 2, 3], random_state=0).fit(X, y)
    assert est.noise_std_ == pytest.approx(0.3 / 2.0, rel=1e-9)
    assert est.learning_rate_ < 1.0 / (2.0 ** 2 / (2.0 if multi_class == "multinomial" else 4.0))


def test_softmax_at_huge_epsilon_is_logistic_regression():
    X, y = _data(3000, 4, seed=1)
    est = PermutationSGDClassifier(1e6, classes=[0, 1, 2, 3], random_state=0).fit(X, y)
    assert est.learning_rate_ == 2.0  # 1 / beta = 2 / R^2 of the softmax loss
    twin = LogisticRegression().fit(X, y)
    assert abs(est.score(X, y) - twin.score(X, y)) < 0.02
    np.testing.assert_allclose(est.predict_proba(X), softmax(est.decision_function(X), axis=1))


def test_softmax_release_is_the_sgd_path_plus_gaussian_noise_on_every_coefficient():
    # The estimator's generator draws the permutation, then N(0, sigma^2) on the K d
    # coefficients of W (the analytic Gaussian at the whole budget).
    from skdp.linear_model._permutation_sgd import _permutation_sgd_softmax_path
    from skdp.utils import check_random_state

    X, y = _data()
    est = PermutationSGDClassifier(epsilon=1.0, delta=1e-6, learning_rate=0.1, epochs=2,
                                   classes=[0, 1, 2, 3], random_state=5).fit(X, y)
    settings = dict(n_batches=4, epochs=2, alpha=0.0, beta=0.5, strongly_convex=False,
                    learning_rate=0.1)
    rng = check_random_state(5)
    Xa = np.hstack([X, np.ones((300, 1))])
    Xa /= np.maximum(1.0, np.linalg.norm(Xa, axis=1))[:, None]
    W = _permutation_sgd_softmax_path(Xa, y, 4, settings, rng)
    W = W + rng.normal(0.0, gaussian_sigma_analytic(est.sensitivity_, 1.0, 1e-6), size=W.shape)
    np.testing.assert_allclose(np.column_stack([est.coef_, est.intercept_]), W,
                               rtol=1e-12, atol=1e-12)
