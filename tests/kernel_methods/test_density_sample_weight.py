"""sample_weight of PrivateKernelDensity and PrivateHistogram."""

import math
import warnings

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.kernel_methods import PrivateHistogram, PrivateKernelDensity
from skdp.testing import audit_epsilon

ESTIMATORS = [
    lambda **kw: PrivateKernelDensity(bandwidth=0.5, n_public=64, **kw),
    lambda **kw: PrivateHistogram(bins=4, **kw),
    lambda **kw: PrivateHistogram(bins=4, noise="discrete_gaussian", **kw),
]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_unit_weights_are_exactly_the_unweighted_fit(make):
    X = np.random.default_rng(0).normal(size=(80, 1))
    a = make(random_state=3).fit(X)
    b = make(random_state=3).fit(X, sample_weight=np.ones(80))
    queries = np.linspace(-2.5, 2.5, 7)[:, None]
    np.testing.assert_array_equal(a.density(queries), b.density(queries))
    np.testing.assert_array_equal(a.score_samples(queries), b.score_samples(queries))


def test_kde_weighted_values_by_hand():
    # Huge epsilon: the released function is the weighted KDE over the public n.
    X = np.array([[-1.0], [0.5], [2.0]])
    w = np.array([1.0, 0.25, 0.0])
    h = 0.5
    kde = PrivateKernelDensity(bandwidth=h, epsilon=1e12, delta=1e-3, n_public=200,
                               random_state=0).fit(X, sample_weight=w)
    q = np.array([[-1.0], [0.0], [0.5]])
    expected = (np.exp(-(q - X.T) ** 2 / (2 * h * h)) @ w) / (3 * math.sqrt(2 * math.pi) * h)
    np.testing.assert_allclose(kde.density(q), expected, atol=1e-6)


def test_histogram_weighted_frequencies_by_hand():
    X = np.array([[0.1], [0.2], [0.6], [0.9]])
    w = np.array([0.5, 1.0, 0.0, 0.25])
    hist = PrivateHistogram(bins=2, bounds=(0, 1), epsilon=1e12, delta=1e-3,
                            random_state=0).fit(X, sample_weight=w)
    # Frequencies over the public n = 4, per unit of bin width 0.5.
    np.testing.assert_allclose(hist.hist_, np.array([1.5, 0.25]) / 4 / 0.5, atol=1e-6)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_zero_weight_removes_the_point(make):
    X = np.array([[-1.0], [0.5], [2.0], [1.0]])
    a = make(epsilon=1e12, delta=1e-3, random_state=0).fit(X, sample_weight=[1, 1, 0, 1])
    b = make(epsilon=1e12, delta=1e-3, random_state=0).fit(X[[0, 1, 3]])
    # Same released shape; a divides by n = 4 and b by 3, which score_samples renormalizes.
    queries = np.linspace(-2.0, 2.0, 9)[:, None]
    np.testing.assert_allclose(a.density(queries) * 4, b.density(queries) * 3, atol=1e-6)


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("weights, match", [
    ([1.0, -0.5, 1.0], "non-negative"),
    ([1.0, np.nan, 1.0], "finite"),
    ([1.0, 1.0], "shape"),
])
def test_bad_weights_are_refused_before_any_spend(make, weights, match):
    acc = BudgetAccountant(epsilon=5.0, delta=1e-3)
    with pytest.raises(ValueError, match=match):
        make(accountant=acc).fit(np.zeros((3, 1)), sample_weight=weights)
    assert acc.spent is None


def test_discrete_histogram_refuses_fractional_weights_before_any_spend():
    acc = BudgetAccountant(epsilon=5.0, delta=1e-3)
    with pytest.raises(ValueError, match="0 or 1"):
        PrivateHistogram(noise="discrete_gaussian", accountant=acc).fit(
            np.zeros((3, 1)), sample_weight=[1.0, 0.5, 0.0])
    assert acc.spent is None


class _QuarterNoise(PrivateHistogram):
    def _discrete_sigma2(self, budget):
        return super()._discrete_sigma2(budget) / 16


def _audit(cls, noise, rows, weights, n_runs=2000):
    """2 bins; 49 rows in bin 1 (every other one of weight 0), the last ``(rows[b], weights[b])``."""
    others = np.c_[np.full(49, 0.75), np.arange(49) % 2]
    d0, d1 = (np.r_[others, [[r, w]]] for r, w in zip(rows, weights))

    def mechanism(data, rng):
        hist = cls(bins=2, bounds=(0, 1), epsilon=1.0, delta=1e-5, random_state=rng,
                   noise=noise).fit(data[:, :1], sample_weight=data[:, 1])
        return hist.hist_[0] - hist.hist_[1]

    return audit_epsilon(mechanism, d0, d1, n_runs=n_runs, delta=1e-5,
                         random_state=0).epsilon_lower_bound


@pytest.mark.parametrize("noise", ["gaussian", "discrete_gaussian"])
def test_weight_zero_against_one_stays_under_epsilon(noise):
    assert _audit(PrivateHistogram, noise, (0.25, 0.25), (0.0, 1.0)) <= 1.0


def test_weighted_discrete_audit_passes_and_catches_a_quarter_of_the_noise():
    # The worst case (a row moving between bins: the counts move by e_1 - e_0), weighted fit.
    assert _audit(PrivateHistogram, "discrete_gaussian", (0.25, 0.75), (1.0, 1.0)) <= 1.0
    assert _audit(_QuarterNoise, "discrete_gaussian", (0.25, 0.75), (1.0, 1.0),
                  n_runs=3000) > 1.0


@pytest.mark.parametrize("make", ESTIMATORS)
def test_weights_above_one_are_clipped_silently(make):
    X = np.array([[0.5], [-1.0], [2.0]])
    fits = []
    for weights in ([1.0, 3.0, 1.0], [1.0, 1.0, 1.0]):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fits.append(make(random_state=0).fit(X, sample_weight=weights))
    queries = np.linspace(-2.0, 2.0, 5)[:, None]
    np.testing.assert_array_equal(fits[0].score_samples(queries), fits[1].score_samples(queries))
