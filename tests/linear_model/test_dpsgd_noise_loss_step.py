"""DP-SGD's default step bounds the excess loss the noise holds the run at (docs/guide/sgd.rst).

``eta_0 = min(2 / beta, nu b / (z C^2 sqrt(d T / 3)), 4 L b^2 / (z^2 C^2 d))`` with
``nu = 30`` and ``L = 0.375``: at a small epsilon the model falls back to the majority
class instead of below it.
"""

import math

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import MinMaxScaler, Normalizer

import skdp.linear_model._dpsgd as dpsgd
from skdp.linear_model import DPSGDClassifier
from skdp.linear_model._dpsgd import DEFAULT_NOISE_LOSS, dpsgd_default_learning_rate


def test_noise_loss_constant():
    assert DEFAULT_NOISE_LOSS == 0.375


@pytest.mark.parametrize("z, b, steps, d, data_norm, expected", [
    # logistic, C = 1: beta = 1/4, 2 / beta = 8.
    # z = 100, b = 400, T = 200, d = 41 (wa_churn at epsilon = 0.1):
    # 30 * 400 / (100 sqrt(41 * 200 / 3)) = 2.2953; 1.5 * (400 / 100)^2 / 41 = 0.58537.
    (100.0, 400.0, 200, 41, 1.0, 1.5 * 16.0 / 41.0),
    # z = 5, b = 64, T = 1651 (wa_churn at epsilon = 1): the noise-norm cap binds, as before:
    # 30 * 64 / (5 sqrt(41 * 1651 / 3)) = 2.5563 < 1.5 * 12.8^2 / 41 = 5.9941 < 8.
    (5.0, 64.0, 1651, 41, 1.0, 30.0 * 64.0 / (5.0 * math.sqrt(41 * 1651 / 3.0))),
    # a tiny z: 2 / beta.
    (1e-3, 64.0, 1000, 41, 1.0, 8.0),
    # C = 2 (beta = 1): 1.5 * (400 / (100 * 2))^2 / 41 = 0.14634 < 30 * 400 / (100 * 4 * 52.28).
    (100.0, 400.0, 200, 41, 2.0, 1.5 * 4.0 / 41.0),
])
def test_default_step_by_hand(z, b, steps, d, data_norm, expected):
    beta = data_norm**2 / 4.0
    step = dpsgd_default_learning_rate(beta, z, b, steps, d, data_norm)
    assert step == pytest.approx(expected, rel=1e-12)


def test_default_step_is_the_rule_in_a_fit():
    X, y = make_classification(1200, 5, n_informative=3, random_state=0)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    clf = DPSGDClassifier(epsilon=0.05, classes=[0, 1], random_state=0).fit(X, y)
    b, z, d, T = clf.sample_rate_ * 1200, clf.noise_multiplier_, 6, clf.n_iter_
    noise_cap = 30 * b / (z * math.sqrt(d * T / 3))
    loss_cap = 4 * 0.375 * (b / z) ** 2 / d
    assert loss_cap < noise_cap  # the new term binds here
    assert clf.learning_rate_ == pytest.approx(min(8.0, noise_cap, loss_cap), rel=1e-12)


@pytest.fixture(scope="module")
def imbalanced_unit_rows():
    # Nonnegative features, rows of unit norm (as the real tables after Normalizer()),
    # a majority class of about 73%.
    X, y = make_classification(5000, 20, n_informative=6, weights=[0.75], flip_y=0.05,
                               class_sep=0.8, random_state=0)
    X = Normalizer().fit_transform(MinMaxScaler().fit_transform(X))
    return X[:4000], y[:4000], X[4000:], y[4000:]


def test_small_epsilon_falls_back_to_the_majority_class(imbalanced_unit_rows, monkeypatch):
    X, y, X_test, y_test = imbalanced_unit_rows
    majority = max(np.mean(y_test), 1 - np.mean(y_test))

    def scores():
        return [DPSGDClassifier(epsilon=0.03, classes=[0, 1], random_state=r)
                .fit(X, y).score(X_test, y_test) for r in range(3)]

    new = scores()
    assert min(new) >= majority - 0.005
    # Without the bound (the earlier default) the noise pushes it well below the majority.
    monkeypatch.setattr(dpsgd, "DEFAULT_NOISE_LOSS", math.inf)
    assert np.mean(scores()) < majority - 0.03
