"""PrivateHistogram(noise="discrete_gaussian"): integer counts plus exact discrete Gaussian noise."""

import math

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.kernel_methods import PrivateHistogram
from skdp.mechanisms import discrete_gaussian_sigma2
from skdp.testing import audit_epsilon


def test_noise_scale_is_the_discrete_calibration_on_counts():
    X = np.random.default_rng(0).uniform(0, 1, size=(400, 1))
    hist = PrivateHistogram(bins=4, bounds=(0, 1), epsilon=0.7, delta=1e-6, random_state=0,
                            noise="discrete_gaussian").fit(X)
    sigma2 = discrete_gaussian_sigma2(math.sqrt(2.0), 0.7, 1e-6)
    assert hist.noise_scale_ == pytest.approx(math.sqrt(sigma2) / 400, rel=1e-15)
    # The release is integer counts: frequency x n is an integer in every bin.
    counts = hist.hist_ * (1 / 4) * 400
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-9)


def test_noisy_counts_have_the_calibrated_spread():
    X = np.full((200, 1), 0.1)  # every row in bin 0 of 2
    sigma = math.sqrt(discrete_gaussian_sigma2(math.sqrt(2.0), 1.0, 1e-5))
    noisy = np.array([PrivateHistogram(bins=2, bounds=(0, 1), delta=1e-5, random_state=s,
                                       noise="discrete_gaussian").fit(X).hist_[0] * 0.5 * 200
                      for s in range(1500)])
    assert np.mean(noisy) == pytest.approx(200, abs=4 * sigma / math.sqrt(1500))
    assert np.std(noisy) == pytest.approx(sigma, rel=0.07)


class _QuarterNoise(PrivateHistogram):
    def _discrete_sigma2(self, budget):
        return super()._discrete_sigma2(budget) / 16


def _audit(cls):
    # One row moves from bin 0 to bin 1: the worst case (the count vector moves by e_1 - e_0).
    others = np.full((49, 1), 0.75)
    d0, d1 = np.r_[others, [[0.25]]], np.r_[others, [[0.75]]]

    def mechanism(X, rng):
        hist = cls(bins=2, bounds=(0, 1), epsilon=1.0, delta=1e-5, random_state=rng,
                   noise="discrete_gaussian").fit(X)
        return hist.hist_[0] - hist.hist_[1]

    return audit_epsilon(mechanism, d0, d1, n_runs=6000, delta=1e-5,
                         random_state=0).epsilon_lower_bound


def test_audit_passes_and_catches_a_quarter_of_the_noise():
    assert _audit(PrivateHistogram) <= 1.0
    assert _audit(_QuarterNoise) > 1.0


def test_bad_noise_is_refused_before_any_spend():
    acc = BudgetAccountant(epsilon=5.0, delta=1e-3)
    with pytest.raises(ValueError, match="noise"):
        PrivateHistogram(noise="laplace", accountant=acc).fit(np.zeros((10, 1)))
    assert acc.spent is None
