"""PrivateFrankWolfeClassifier: the default l1_radius depends on the number of classes."""

import math

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import Normalizer

from skdp.linear_model import PrivateFrankWolfeClassifier
from skdp.linear_model._frank_wolfe import frank_wolfe_default_radius, frank_wolfe_noise


@pytest.mark.parametrize("steps, data_norm, n_classes, expected", [
    # Binary (K = 2): max(4.5 sqrt(T), T), capped at 200 -- the rule of earlier versions.
    (16, 1.0, 2, 18.0),
    (100, 1.0, 2, 100.0),
    (300, 1.0, 2, 200.0),
    # K = 3: 2 T / 3 wins above T = 5.06 * 9 = 45.6.
    (45, 1.0, 3, 4.5 * math.sqrt(45)),  # 30.19 > 30
    (100, 1.0, 3, 200.0 / 3.0),  # 66.67 > 45
    # K = 5 (the diamonds_cut case: T = 260 at epsilon = 1 on 40,455 rows).
    (68, 1.0, 5, 4.5 * math.sqrt(68)),  # 37.11 > 27.2
    (260, 1.0, 5, 104.0),  # 104 > 72.56
    (1000, 2.0, 5, 100.0),  # min(400, 200) / 2
    # K = 10: the sqrt branch up to T = 506.
    (299, 1.0, 10, 4.5 * math.sqrt(299)),  # 77.81 > 59.8
    (1000, 1.0, 10, 200.0),  # 200 > 142.3, at the cap
])
def test_default_radius_matches_hand_computed_values(steps, data_norm, n_classes, expected):
    assert frank_wolfe_default_radius(steps, data_norm, n_classes) == pytest.approx(expected)


def test_binary_default_radius_is_unchanged_by_the_class_count_argument():
    for steps in (1, 20, 21, 150, 200, 1000):
        old = min(max(4.5 * math.sqrt(steps), steps), 200.0)
        assert frank_wolfe_default_radius(steps) == frank_wolfe_default_radius(steps, 1.0, 2)
        assert frank_wolfe_default_radius(steps) == pytest.approx(old)


def test_fit_reads_the_public_class_count_and_keeps_the_noise_of_its_radius():
    rng = np.random.default_rng(0)
    X = Normalizer().fit_transform(rng.random((600, 8)))
    y = rng.integers(0, 5, size=600)
    five = PrivateFrankWolfeClassifier(epsilon=1.0, max_iter=260, classes=np.arange(5),
                                       random_state=0).fit(X, y)
    assert five.l1_radius_ == pytest.approx(104.0)
    # The privacy constants of a given (max_iter, l1_radius) are those of the calibration.
    assert five.noise_scale_ == frank_wolfe_noise(600, 1.0, 104.0, 1.0, 1 / 600**2, 260,
                                                  n_problems=5)[0]
    binary = PrivateFrankWolfeClassifier(epsilon=1.0, max_iter=260, classes=[0, 1],
                                         random_state=0).fit(X, y % 2)
    assert binary.l1_radius_ == pytest.approx(200.0)


def test_multiclass_default_beats_the_binary_radius_law_on_digits():
    # digits (10 classes, 1,347 training rows, a derive table of the user guide) at
    # epsilon = 100: T = 299 steps; the K-aware radius 77.8 against the binary law's 200.
    X, y = load_digits(return_X_y=True)
    X = Normalizer().fit_transform(X)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    new, old = [], []
    for seed in range(3):
        est = PrivateFrankWolfeClassifier(epsilon=100.0, classes=np.arange(10),
                                          random_state=seed).fit(X_tr, y_tr)
        assert est.n_iter_ == 299 and est.l1_radius_ == pytest.approx(4.5 * math.sqrt(299))
        new.append(est.score(X_te, y_te))
        old.append(PrivateFrankWolfeClassifier(epsilon=100.0, classes=np.arange(10),
                                               l1_radius=200.0, random_state=seed)
                   .fit(X_tr, y_tr).score(X_te, y_te))
    assert np.mean(new) > np.mean(old) + 0.015
    assert np.mean(new) > 0.8  # majority class: 0.10
