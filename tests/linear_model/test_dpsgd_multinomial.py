"""DPSGDClassifier's softmax fit: one run on the K weight vectors, per-example gradients clipped."""

import math

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.datasets import make_classification
from sklearn.preprocessing import MinMaxScaler, Normalizer

from skdp.linear_model import DPSGDClassifier
from skdp.linear_model._dpsgd import (
    _clipped_softmax_gradient_sum,
    dpsgd_noise_multiplier,
    dpsgd_schedule,
)
from skdp.testing import audit_epsilon


def _softmax_loss(W, x, y):
    scores = W @ x
    return np.log(np.exp(scores).sum()) - scores[y]


def test_gradient_sum_is_the_softmax_gradient_clipped_per_example():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 4))
    y = np.array([0, 1, 2, 0, 1, 2])
    W = rng.normal(size=(3, 4))
    onehot = np.eye(3)[y]
    norms = np.linalg.norm(X, axis=1)
    # Unclipped (a large bound): the sum of the analytic gradients, checked by differences.
    total = _clipped_softmax_gradient_sum(X, y, norms, W, 1e9)
    numeric = np.zeros_like(W)
    for i in range(6):
        for k in range(3):
            for j in range(4):
                E = np.zeros_like(W)
                E[k, j] = 1e-6
                numeric[k, j] += (_softmax_loss(W + E, X[i], y[i])
                                  - _softmax_loss(W - E, X[i], y[i])) / 2e-6
    np.testing.assert_allclose(total, numeric, rtol=1e-6, atol=1e-8)
    # Clipped: each row's contribution (p - e_y) x^T scaled to Frobenius norm <= C.
    for i in range(6):
        one = _clipped_softmax_gradient_sum(X[i:i + 1], y[i:i + 1], norms[i:i + 1], W, 0.3)
        residual = softmax(W @ X[i]) - onehot[i]
        full = np.outer(residual, X[i])
        expected = full * min(1.0, 0.3 / np.linalg.norm(full))
        np.testing.assert_allclose(one, expected, rtol=1e-12)
        assert np.linalg.norm(one) <= 0.3 + 1e-12
    # Row weights multiply the clipped contributions.
    weights = np.linspace(0.0, 1.0, 6)
    weighted = _clipped_softmax_gradient_sum(X, y, norms, W, 0.3, weights)
    rows = [_clipped_softmax_gradient_sum(X[i:i + 1], y[i:i + 1], norms[i:i + 1], W, 0.3)
            for i in range(6)]
    np.testing.assert_allclose(weighted, sum(w * r for w, r in zip(weights, rows)), atol=1e-14)


def _data(n=300, k=4, seed=0):
    X, y = make_classification(n, 6, n_informative=4, n_classes=k, random_state=seed)
    return Normalizer().fit_transform(MinMaxScaler().fit_transform(X)), y


def test_softmax_fit_is_one_run_accounted_once():
    X, y = _data()
    model = DPSGDClassifier(1.0, 1e-5, classes=[0, 1, 2, 3], random_state=0).fit(X, y)
    assert model.multi_class_ == "multinomial"
    assert model.coef_.shape == (4, 6) and model.intercept_.shape == (4,)
    q, steps = dpsgd_schedule(300, model.batch_size_, 20)
    # One run of T steps at the whole (epsilon, delta), not K runs composed.
    assert model.noise_multiplier_ == dpsgd_noise_multiplier(1.0, 1e-5, q, steps)
    assert model.privacy_event_.count == model.n_iter_ == steps
    np.testing.assert_allclose(model.predict_proba(X), softmax(model.decision_function(X), axis=1))
    ovr = DPSGDClassifier(1.0, 1e-5, multi_class="ovr", classes=[0, 1, 2, 3],
                          random_state=0).fit(X, y)
    assert ovr.multi_class_ == "ovr"
    assert ovr.privacy_event_.count == 4 * ovr.n_iter_
    assert ovr.noise_multiplier_ > 1.5 * model.noise_multiplier_


def test_auto_is_one_vs_rest_with_row_clipping():
    X, y = _data()
    assert DPSGDClassifier(1.0, 1e-5, clipping="data", classes=[0, 1, 2, 3],
                           random_state=0).fit(X, y).multi_class_ == "ovr"


def test_softmax_beats_one_vs_rest_on_a_multiclass_table():
    X, y = _data(n=6000, k=5, seed=3)
    Xtr, ytr, Xte, yte = X[:4000], y[:4000], X[4000:], y[4000:]
    kw = dict(epsilon=1.0, classes=list(range(5)))
    soft = [DPSGDClassifier(**kw, random_state=s).fit(Xtr, ytr).score(Xte, yte)
            for s in range(2)]
    ovr = [DPSGDClassifier(**kw, multi_class="ovr", random_state=s).fit(Xtr, ytr).score(Xte, yte)
           for s in range(2)]
    majority = np.bincount(yte).max() / len(yte)
    assert min(soft) > majority + 0.1
    assert np.mean(soft) > np.mean(ovr) + 0.03


class _QuarterNoiseDPSGD(DPSGDClassifier):
    def _noise_multiplier(self, settings, budget):
        return super()._noise_multiplier(settings, budget) / 4


def _audit(cls):
    # Rows x = 0 (no gradient) and one row x = +-10 of class 0: at W = 0 its gradient
    # (p - e_0) x^T is along (-2, 1, 1) / sqrt(6), clipped to norm C = 1 with opposite
    # signs, so one full-batch step moves the release by 2 C along that direction.
    X = np.zeros((9, 1))
    X[-1, 0] = 10.0
    y = np.arange(9) % 3
    y[-1] = 0
    direction = np.array([-2.0, 1.0, 1.0]) / math.sqrt(6)
    kw = dict(epsilon=2.0, delta=1e-5, batch_size=9, epochs=1, fit_intercept=False,
              classes=[0, 1, 2])

    def mechanism(data, rng):
        return float(direction @ cls(**kw, random_state=rng).fit(*data).coef_[:, 0])

    return audit_epsilon(mechanism, (X, y), (-X, y), n_runs=500, n_select=150,
                         delta=1e-5, random_state=12345).epsilon_lower_bound


def test_audit_softmax_steps_keep_the_claim_and_catch_a_quarter_noise_copy():
    assert _audit(DPSGDClassifier) < 2.0
    assert _audit(_QuarterNoiseDPSGD) > 2.0


class _NoiselessDPSGD(DPSGDClassifier):
    def _noise_multiplier(self, settings, budget):
        return 1e-300  # numerically noiseless; a zero scale is refused before the charge


def test_noiseless_steps_are_the_hand_written_clipped_softmax_steps():
    """Full batch, no noise: each step is the sum of w_i clip((p_i - e_y) x_i^T), by hand."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3)) * np.where(np.arange(30) % 3 == 0, 20.0, 1.0)[:, None]
    y = np.arange(30) % 3
    w = rng.uniform(0.2, 1.0, size=30)
    C, eta, steps = 0.5, 0.7, 3
    clf = _NoiselessDPSGD(epsilon=1.0, delta=1e-5, data_norm=C, batch_size=30, epochs=steps,
                          learning_rate=eta, learning_rate_schedule="constant",
                          classes=[0, 1, 2], random_state=0)
    Xa = np.hstack([X, np.ones((30, 1))])  # the intercept column counts in the norm
    W = np.zeros((3, 4))
    clipped_any = False
    for _ in range(steps):
        G = np.zeros_like(W)
        for i in range(30):
            full = np.outer(softmax(W @ Xa[i]) - np.eye(3)[y[i]], Xa[i])
            scale = min(1.0, C / np.linalg.norm(full))
            clipped_any |= scale < 1.0
            G += w[i] * scale * full
        W = W - eta * G / 30
    assert clipped_any
    clf.fit(X, y, sample_weight=w)
    np.testing.assert_allclose(clf.coef_, W[:, :3], rtol=1e-10)
    np.testing.assert_allclose(clf.intercept_, W[:, 3], rtol=1e-10)


def test_noise_on_every_coefficient_has_the_calibrated_deviation():
    # Rows x = 0 have no gradient: one full-batch step releases -eta N(0, (z C)^2) / b on
    # each of the K d coefficients.
    X, y = np.zeros((60, 100)), np.arange(60) % 3
    clf = DPSGDClassifier(epsilon=1.0, delta=1e-5, data_norm=2.0, batch_size=60, epochs=1,
                          learning_rate=0.5, fit_intercept=False, classes=[0, 1, 2],
                          random_state=0).fit(X, y)
    expected = 0.5 * clf.noise_multiplier_ * 2.0 / 60
    assert clf.noise_multiplier_ == dpsgd_noise_multiplier(1.0, 1e-5, 1.0, 1)
    assert np.std(clf.coef_) == pytest.approx(expected, rel=0.1)
    assert abs(np.mean(clf.coef_)) < 0.1 * expected


def test_one_extreme_row_neither_poisons_the_weights_nor_raises():
    clean, y = _data()
    X = clean.copy()
    X[:5] *= 1e305
    X[5, :2] = [1e308, -1e308]  # its scores overflow once the weights grow: dropped
    X[6, 0] = 1e3  # its softmax underflows
    for step in (None, 1e6):
        model = DPSGDClassifier(1.0, 1e-5, learning_rate=step, classes=[0, 1, 2, 3],
                                random_state=0)
        model.fit(clean, y)  # warms the (cached) calibration, which runs before the charge
        with np.errstate(all="raise"):
            model.fit(X, y)
        assert np.all(np.isfinite(model.coef_)) and np.all(np.isfinite(model.intercept_))
