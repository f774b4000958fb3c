"""Density estimators: degenerate public parameters (boxes, bins, bandwidths) are refused before the charge, in any feature order."""

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.kernel_methods import PrivateHistogram, PrivateKernelDensity
from skdp.kernel_methods._density import _box_volume


def test_box_volume_order_independent():
    sides = np.array([1e200, 1e200, 1e-200, 1e-200, 3.0, 0.1])
    rng = np.random.default_rng(0)
    values = {_box_volume(rng.permutation(sides)) for _ in range(20)}
    assert len(values) == 1
    assert values.pop() == pytest.approx(0.3, rel=1e-14)


# Density estimators: a box, bin or bandwidth outside the float range is
# refused before the charge (it fitted, then scored -inf or failed)
DENSITY_REFUSED = [
    # the bin volume 1e-301^2 underflows to 0 (score_samples: ZeroDivisionError)
    (PrivateHistogram, {"bounds": (0.0, 1e-300)}, "volume"),
    # the box volume (2e300)^2 overflows (every score -inf)
    (PrivateHistogram, {"bounds": (-1e300, 1e300)}, "volume"),
    (PrivateKernelDensity, {"bounds": (-1e300, 1e300), "n_public": 20}, "volume"),
    # 1 / (2 h^2) overflows (ZeroDivisionError) or h^2 overflows (OverflowError)
    (PrivateKernelDensity, {"bandwidth": 1e-300, "n_public": 20}, "bandwidth"),
    (PrivateKernelDensity, {"bandwidth": 1e300, "n_public": 20}, "bandwidth"),
]


@pytest.mark.parametrize("cls, params, word", DENSITY_REFUSED,
                         ids=[f"{c.__name__}-{p}" for c, p, _ in DENSITY_REFUSED])
def test_density_degenerate_parameters_refused_before_charge(cls, params, word):
    X = np.random.default_rng(0).normal(size=(50, 2))
    accountant = BudgetAccountant(epsilon=100.0, delta=0.5)
    with pytest.raises(ValueError, match=word):
        cls(random_state=0, accountant=accountant, **params).fit(X)
    assert accountant.spent is None


def test_histogram_too_many_bins_fails_before_charge():
    # 1e12 cells: the counts cannot be allocated; that now fails before the charge.
    X = np.random.default_rng(0).normal(size=(50, 2))
    accountant = BudgetAccountant(epsilon=100.0, delta=0.5)
    with pytest.raises((MemoryError, ValueError)):
        PrivateHistogram(bins=10**6, random_state=0, accountant=accountant).fit(X)
    assert accountant.spent is None


# The density estimators' box / bin volume check does not depend on the
# order of the features (it used a running float product that overflowed
# on the way for one order and not for another).
_SIDES = np.array([1e200, 1e200, 1e-200, 1e-200])  # volume 1 in exact arithmetic


DENSITIES = [
    lambda bounds: PrivateHistogram(bins=1, bounds=bounds, epsilon=1.0, random_state=0),
    lambda bounds: PrivateKernelDensity(bandwidth=1.0, bounds=bounds, n_public=20, epsilon=1.0,
                                        random_state=0),
]


@pytest.mark.parametrize("make", DENSITIES)
def test_volume_check_is_order_independent(make):
    X = np.random.default_rng(0).uniform(size=(50, 4)) * _SIDES
    scores = []
    for order in ([0, 1, 2, 3], [0, 2, 1, 3], [2, 3, 0, 1]):
        bounds = np.column_stack([np.zeros(4), _SIDES])[order]
        est = make(bounds).fit(X[:, order])  # every order accepted (was: only the 2nd)
        scores.append(est.score_samples(X[:5, order]))
        # the score after the charge uses the same order-independent volume
        assert np.all(np.isfinite(scores[-1]))
    if isinstance(est, PrivateHistogram):
        # one bin, the same noise draw: the same density whatever the order
        np.testing.assert_array_equal(scores[0], scores[1])
        np.testing.assert_array_equal(scores[0], scores[2])


@pytest.mark.parametrize("make", DENSITIES)
@pytest.mark.parametrize("sides", [[1e200, 1e200, 1e-10], [1e-200, 1e-200, 1e10]])
def test_volume_out_of_range_refused_in_every_order(make, sides):
    sides = np.array(sides)
    X = np.random.default_rng(0).uniform(size=(20, 3)) * sides
    for order in ([0, 1, 2], [0, 2, 1], [2, 0, 1]):
        bounds = np.column_stack([np.zeros(3), sides])[order]
        with pytest.raises(ValueError, match="volume"):
            make(bounds).fit(X[:, order])
