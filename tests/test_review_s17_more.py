"""Review of the discrete options of PermutationSGDClassifier and the kernel learners."""

import math
from fractions import Fraction

import numpy as np
import pytest

from skdp.accounting import BudgetAccountant, PrivacyBudget, advanced_composition
from skdp.kernel_methods import (
    InteractiveKernelPredictor,
    PrivateKernelClassifier,
    PrivateKernelNetClassifier,
)
from skdp.kernel_methods._classifiers import tddl_discrete_laplace, tddl_query_epsilon
from skdp.mechanisms._discrete import _grid_indices


@pytest.mark.parametrize("n_queries, epsilon, delta", [
    # Basic composition beats advanced here: the bisection never moves lo = eps / n,
    # whose float rounds up (3 * fl(eps / 3) summed in floats is one ulp above eps).
    (3, 0.9061385527067806, 3.915988251408464e-06),
    (5, 1.2757460824280014, 1e-6),
])
def test_query_epsilon_composes_within_epsilon_when_basic_composition_wins(n_queries, epsilon,
                                                                           delta):
    eps0 = tddl_query_epsilon(n_queries, epsilon, delta)
    composed = advanced_composition([PrivacyBudget(eps0)] * n_queries, delta).epsilon
    assert composed <= epsilon
    assert eps0 >= epsilon / n_queries * (1.0 - 1e-15)  # at most an ulp or so given up


def test_discrete_laplace_grid_and_scale_by_hand():
    # scale 0.5 -> g = 2**-31 (largest power of two <= 0.5 * 2**-30; the bound 1 asks only
    # 2**-51); Delta / g = 0.05 * 2**31 = 107374182.4 -> 107374183 steps; basic composition
    # over 10 values at epsilon 1: t = 1073741830, rounded up to 24 bits (multiples of 64):
    # 16777217 * 64 = 1073741888.
    g, t, noise_scale = tddl_discrete_laplace(0.5, 0.05, 10, 1.0, 0.0, 1.0)
    assert g == 2.0**-31
    assert t == Fraction(1073741888)
    assert noise_scale == 1073741888 * 2.0**-31
    assert 10 * Fraction(107374183) / t <= 1  # the exact per-value epsilon composes to <= 1


def test_half_up_rounding_moves_by_at_most_ceil_of_the_distance():
    # |floor(a + 1/2) - floor(b + 1/2)| <= ceil(|a - b|): the integer floor(a') - floor(b')
    # is < (a' - b') + 1, so at most ceil(a' - b'). Checked on the grid indices, with the
    # float pairs where a rounded a + 0.5 would break it (0.5 - 2**-54 rounds up to 1).
    g = Fraction(1, 4)
    edge = 0.5 - 2.0**-54
    a = np.array([edge, edge, -edge, 0.5, 1.5, 2.5, -0.5, 1e15 + 0.5]) * 0.25
    b = np.array([-0.5, edge - 1.0, edge, -0.5, 0.5, 1.5, -1.5, 1e15 - 0.5]) * 0.25
    rng = np.random.default_rng(0)
    a = np.concatenate([a, rng.uniform(-3, 3, 2000)])
    b = np.concatenate([b, a[8:] + rng.choice([-1, 1], 2000) * rng.uniform(0, 0.6, 2000)])
    moved = np.abs(_grid_indices(a, g) - _grid_indices(b, g))
    bound = [math.ceil(abs(Fraction(x) - Fraction(y)) / g) for x, y in zip(a, b)]
    assert np.all(moved <= np.array(bound))
    assert _grid_indices(np.array([edge * 0.25]), g)[0] == 0  # exact, not fl(u + 0.5)


@pytest.mark.parametrize("cls, params", [
    (PrivateKernelClassifier, {"n_public": 5}),
    (PrivateKernelNetClassifier, {"n_public": 5, "n_rounds": 2}),
    (InteractiveKernelPredictor, {"max_updates": 2}),
])
def test_grid_out_of_range_fails_before_the_charge(cls, params):
    # alpha = 1e300: the noise scale, and the grid 2**-30 times it, fall below 2**-900, the
    # finest grid the release accepts. That is public: refuse before the budget is spent.
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    accountant = BudgetAccountant(epsilon=10.0, delta=0.5)
    est = cls(alpha=1e300, mechanism="discrete_laplace", classes=[0, 1], random_state=0,
              accountant=accountant, **params)
    with pytest.raises(ValueError, match="granularity"):
        est.fit(X, y)
    assert accountant.spent is None
    with pytest.raises(ValueError, match="granularity"):
        tddl_discrete_laplace(1e-302, 1e-303, 1, 1.0, 0.0, 1e-302)


@pytest.mark.parametrize("mechanism", ["laplace", "discrete_laplace"])
@pytest.mark.parametrize("cls, params", [
    (PrivateKernelClassifier, {"n_public": 5}),
    (PrivateKernelNetClassifier, {"n_public": 5, "n_rounds": 2}),
    (InteractiveKernelPredictor, {"max_updates": 2}),
])
@pytest.mark.parametrize("setting", [{"epsilon": 1e-308}, {"alpha": 5e-324}])
def test_overflowing_noise_scale_fails_before_the_charge(cls, params, mechanism, setting):
    # The Laplace scale (epsilon = 1e-308) or the sensitivity (alpha = 5e-324) overflows:
    # public, so a clear ValueError before the charge (the float path failed after it, the
    # discrete one raised OverflowError).
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    accountant = BudgetAccountant(epsilon=10.0, delta=0.5)
    est = cls(mechanism=mechanism, classes=[0, 1], random_state=0, accountant=accountant,
              **params, **setting)
    with pytest.raises(ValueError):
        est.fit(X, y)
    assert accountant.spent is None
