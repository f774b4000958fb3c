"""The multi-class default step of PermutationSGDClassifier (docs/guide/sgd.rst).

With K > 2 classes the default step targets a class score's noise deviation of 0.3
(an output-noise norm of min(4, 0.3 sqrt(d)) / R) instead of the binary norm 4 / R.
"""

import math

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skdp.linear_model import PermutationSGDClassifier
from skdp.linear_model._permutation_sgd import (
    permutation_sgd_noise_step,
    permutation_sgd_noise_target,
    permutation_sgd_sigma,
)
from skdp.mechanisms import gaussian_sigma_analytic


def test_noise_target_rule_by_hand():
    # Two classes: 4 whatever d. K > 2: min(4, 0.3 sqrt(d)).
    assert permutation_sgd_noise_target(2, 23) == 4.0
    assert permutation_sgd_noise_target(2, 400) == 4.0
    assert permutation_sgd_noise_target(3, 25) == pytest.approx(1.5, rel=1e-15)
    assert permutation_sgd_noise_target(5, 23) == pytest.approx(1.438749, rel=1e-6)
    assert permutation_sgd_noise_target(10, 65) == pytest.approx(2.418677, rel=1e-6)
    assert permutation_sgd_noise_target(10, 400) == 4.0  # 0.3 * 20 = 6, capped at 4
    assert permutation_sgd_noise_target(3, 1) == pytest.approx(0.3, rel=1e-15)


def test_multiclass_default_step_by_hand():
    # n = 1000, b = 64: N = 15 minibatches of at least 66, k = 50 passes; R = 2; d = 4 + 1;
    # K = 4 classes released jointly at (1, 1e-6): c = sigma for sensitivity sqrt(4) = 2.
    # Target 0.3 sqrt(5) / R, so eta = 0.3 sqrt(5) b / (2 c k R^2 sqrt(5)) = 0.3 b / (2 c k R^2)
    # and the noise per coordinate is c Delta = c 2 k eta R / b = 0.3 / R.
    X, y = make_classification(1000, 4, n_informative=3, n_redundant=0, n_classes=4,
                               random_state=1)
    est = PermutationSGDClassifier(epsilon=1.0, delta=1e-6, data_norm=2.0, multi_class="ovr",
                                   classes=[0, 1, 2, 3], random_state=0).fit(X, y)
    c = gaussian_sigma_analytic(2.0, 1.0, 1e-6)
    assert est.epochs_ == 50
    assert est.learning_rate_ == pytest.approx(0.3 * 66 / (2 * c * 50 * 2.0**2), rel=1e-12)
    assert est.sensitivity_ == pytest.approx(2 * 50 * est.learning_rate_ * 2.0 / 66, rel=1e-12)
    assert est.noise_std_ == pytest.approx(0.3 / 2.0, rel=1e-9)


def test_binary_default_step_unchanged():
    # Two classes keep the noise norm 4 / R: noise per coordinate 4 / (R sqrt(d)).
    X, y = make_classification(1000, 4, random_state=1)
    est = PermutationSGDClassifier(epsilon=1.0, delta=1e-6, classes=[0, 1],
                                   random_state=0).fit(X, y)
    c = permutation_sgd_sigma(1.0, 1.0, 1e-6)
    assert est.learning_rate_ == permutation_sgd_noise_step(1000, 64, 50, 1.0, 5, c, 4.0,
                                                            noise_norm=4.0)
    assert est.noise_std_ * math.sqrt(5) == pytest.approx(4.0, rel=1e-9)


def _tabular(n, n_classes, seed, class_sep):
    """Rows like the real tables: 10 features in [0, 1], two one-hot blocks of 4, unit norm.

    Geometric class priors (0.6 ** k, normalized).
    """
    priors = 0.6 ** np.arange(n_classes)
    Z, y = make_classification(n, 12, n_informative=5, n_redundant=2, n_classes=n_classes,
                               n_clusters_per_class=1, weights=list(priors / priors.sum()),
                               class_sep=class_sep, flip_y=0.05, random_state=seed)
    Z = Z[:, np.random.default_rng(seed).permutation(12)]
    cont = np.clip((Z[:, :10] + 3.0) / 6.0, 0.0, 1.0)
    cats = [np.eye(4)[np.digitize(Z[:, j], [-1.0, 0.0, 1.0])] for j in (10, 11)]
    X = np.hstack([cont] + cats)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


def test_multiclass_default_beats_the_majority_where_the_binary_target_did_not():
    # 5 classes, 8,000 rows, epsilon = 1, d = 18 + 1. With the binary target (noise norm 4,
    # each class score's noise of deviation 4 / sqrt(19) = 0.92) the noise can decide the
    # argmax for every row: one of the two draws predicts a minority class almost
    # everywhere (13% accuracy) and the mean is below the majority class. With the
    # multi-class target (deviation 0.3) both draws beat it (measured: 42.7 and 41.5%
    # against 41.1%; the binary target 13.2 and 43.0%).
    X, y = _tabular(11_000, 5, seed=1, class_sep=0.4)
    X_tr, y_tr, X_te, y_te = X[:8000], y[:8000], X[8000:], y[8000:]
    majority = np.mean(y_te == np.bincount(y_tr).argmax())
    classes = list(range(5))

    def scores(**kw):
        return [PermutationSGDClassifier(epsilon=1.0, classes=classes, random_state=s,
                                         multi_class="ovr", **kw).fit(X_tr, y_tr)
                .score(X_te, y_te)
                for s in range(2)]

    new = scores()
    c = permutation_sgd_sigma(math.sqrt(5), 1.0, 1.0 / 8000**2)
    old = scores(learning_rate=permutation_sgd_noise_step(8000, 64, 50, 1.0, 19, c, 4.0,
                                                          noise_norm=4.0))
    assert min(new) > majority
    assert np.mean(old) < majority - 0.05
    assert min(old) < majority - 0.2  # a collapse onto a minority class
