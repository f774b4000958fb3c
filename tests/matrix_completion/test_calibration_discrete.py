"""DPMatrixCompleter(noise="discrete_gaussian"): the grid, the noise and the Gram matrix at extreme inputs.

Calibration refused before the charge when the noise would exceed 2**52 grid
steps, the rounding term of the symmetric release counted over the full
matrix, and the exact Gram matrix on adversarial rows (all mass on one item,
the value bound just below a power of two).
"""

import math
from fractions import Fraction
from itertools import product

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.accounting import zcdp_for_dp
from skdp.matrix_completion import DPMatrixCompleter
from skdp.matrix_completion._calibration import discrete_noise, release_schedule
from skdp.matrix_completion._solvers import _gram, truncated_rows
from skdp.mechanisms._discrete import _grid_l2_sensitivity_squared


@pytest.mark.parametrize("epsilon", [1e-14, 1e-17, 1e-40])
def test_noise_beyond_2_to_the_52_steps_is_refused_before_the_charge(epsilon):
    # Small but calibratable epsilons: the zCDP sigma^2 is dominated by the rounding
    # term sum_k d_k / (2 rho), beyond 2**52 steps (and, from about 1e-17, beyond the
    # sampler's int64 range, which failed after the charge with an OverflowError).
    # delta = 1e-300: with the CKS conversion a larger delta alone buys a rho of about
    # delta^2, whatever the epsilon.
    releases = release_schedule(1.0, method="frank_wolfe", n_iter=10, n_items=30)
    with pytest.raises(ValueError, match="too small"):
        discrete_noise(epsilon, 1e-300, releases, 40.0)
    X = np.where(np.eye(10, 30) > 0, 1.0, np.nan)
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-2)
    model = DPMatrixCompleter(method="frank_wolfe", epsilon=epsilon, delta=1e-300, nuclear_norm=5.0,
                              noise="discrete_gaussian", eigensolver="exact",
                              accountant=accountant, random_state=0)
    with pytest.raises(ValueError, match="too small"):
        model.fit(X)
    assert accountant.spent is None


def test_noise_just_below_2_to_the_52_steps_is_accepted():
    releases = release_schedule(1.0, method="frank_wolfe", n_iter=10, n_items=30)
    grid = discrete_noise(1e-10, 1e-300, releases, 40.0)
    assert 2**40 < grid.sigma2 ** 0.5 < 2**52


def test_symmetric_rounding_term_is_over_the_full_n_squared_matrix():
    # Hand case in exact arithmetic: n = 2 items, Gram entries all just below a
    # half-step boundary on one data set and just above it on the neighbour. Every
    # one of the n^2 = 4 entries of the full symmetric index matrix moves by one step
    # (||w||_F^2 = 4, the off-diagonal one counted twice) although the exact values
    # move by a tiny amount: the bound over n(n+1)/2 = 3 entries (3) is too small, the
    # one over n^2 (4) holds.
    g = Fraction(1, 2**10)
    half = g / 2
    tiny = Fraction(1, 2**40)
    before = np.array([[half - tiny] * 2] * 2, dtype=object)
    after = np.array([[half + tiny] * 2] * 2, dtype=object)
    s = Fraction(2) * 2 * tiny  # Frobenius norm of the change (4 entries of 2 tiny)

    def index(x):  # round half up, as _grid_indices
        return math.floor(x / g + Fraction(1, 2))

    w = np.array([[index(a) - index(b) for a, b in zip(ra, rb)]
                  for ra, rb in zip(after, before)])
    assert int((w**2).sum()) == 4
    assert _grid_l2_sensitivity_squared(s, g, 3) < 4 <= _grid_l2_sensitivity_squared(s, g, 4)
    # release_schedule counts n^2 for the symmetric release.
    assert release_schedule(1.0, method="svd", n_items=2) == [(math.sqrt(2.0), 4)]


def test_discrete_noise_one_case_in_exact_arithmetic():
    # Pursuit, exact solver, T = 2, n = 3, Delta = 1: two releases of s = sqrt(2), d = 9.
    epsilon, delta = 0.5, 1e-6
    releases = release_schedule(1.0, method="pursuit", n_iter=2, n_items=3)
    assert releases == [(math.sqrt(2.0), 9)] * 2
    grid = discrete_noise(epsilon, delta, releases, 100.0)
    rho = Fraction(zcdp_for_dp(epsilon, delta)) * (1 - Fraction(1, 2**40))
    # The largest rho converting to (0.5, 1e-6) by Canonne-Kamath-Steinke Cor. 13 is
    # 0.0066415243566605 (decimal reference of test_zcdp_conversion.py): on its safe side.
    assert 0.0066415243566605 * (1 - 1e-9) <= float(rho) <= 0.0066415243566605
    g = Fraction(grid.granularity)
    D2 = (Fraction(math.sqrt(2.0) * (1 + 2.0**-40)) / g) ** 2
    q = math.ceil(D2) - 1
    w = q + 2 * min(q, math.isqrt(9 * q)) + 9
    # Both releases together: rho_total = 2 W / (2 sigma^2) <= rho.
    assert Fraction(2 * w) / (2 * grid.sigma2) <= rho
    assert grid.sigma2 <= Fraction(2 * w) / (2 * rho) * (1 + Fraction(1, 2**23))
    # Brute force of the rounding bound on a small grid (d = 4, D = 1.5 steps): no
    # integer shift pattern of 4 rounded entries beats it.
    worst = 0
    for shifts in product(range(-3, 4), repeat=4):
        v = [max(abs(k) - 1, 0) for k in shifts]  # the least exact move giving shift k
        if sum(x * x for x in v) < Fraction(9, 4):
            worst = max(worst, sum(k * k for k in shifts))
    assert worst <= _grid_l2_sensitivity_squared(Fraction(3, 2), Fraction(1), 4)


@pytest.mark.parametrize("n_users", [1, 3, 1024])
def test_gram_is_exact_on_adversarial_rows(n_users):
    # All the mass of every user on one item, rows of norm rho (and just above, as a
    # float clipping can leave them), n_users rho^2 just below a power of two: the
    # largest products and partial sums the exactness claim allows.
    rho = math.sqrt(2.0**20 / n_users * (1 - 2.0**-30))
    bound = n_users * rho**2
    h = discrete_noise(1.0, 1e-5, release_schedule(rho, method="svd", n_items=3),
                       bound).row_step
    assert bound < 2.0**52 * h * h <= 4 * bound
    top = np.nextafter(rho, np.inf)
    A = np.zeros((n_users, 3))
    A[:, 0] = top
    A[::2, 1] = -rho / math.sqrt(2.0)
    A[::2, 0] = rho / math.sqrt(2.0)
    A[1::3, 2] = np.nextafter(rho / math.sqrt(3.0), np.inf)
    T = truncated_rows(A, h)
    assert np.all(np.abs(T) <= np.abs(A)) and np.max(np.abs(T / h)) <= 2**26
    exact = [[sum(Fraction(x) * Fraction(y) for x, y in zip(T[:, j], T[:, k]))
              for k in range(3)] for j in range(3)]
    computed = _gram(T)
    assert all(Fraction(computed[j, k]) == exact[j][k] for j in range(3) for k in range(3))


@pytest.mark.parametrize("bound, epsilon, config", [
    (1e76, 1e-2, dict(n_iter=10)),
    (3e76, 0.5, dict(method="svd", eigensolver="oja", rank=3, oja_iter=7)),
])
def test_grid_is_sized_from_the_noise_at_extreme_but_accepted_bounds(bound, epsilon, config):
    # row_norm_bound in the range total_sensitivity accepts: sum_k s_k^2 / (2 rho) used
    # to overflow to inf, so g came from frexp(inf) = 2**-31 and the value-bound floor
    # instead of the noise, and a reasonable budget was refused as "too small".
    releases = release_schedule(bound, n_items=30, **config)
    grid = discrete_noise(epsilon, 1e-4, releases, 10 * 4.0 * bound**2)
    assert 2.0**29 <= grid.sigma / grid.granularity < 2.0**31


def test_grid_at_a_huge_budget_and_tiny_bound_is_the_value_floor():
    # sum_k s_k^2 / (2 rho) used to underflow to 0 here, giving g = 2**-31 (frexp(0)),
    # far above every released value (all rounded to 0); the noise asks for a grid
    # far below the value floor 2**(e - 52), which therefore binds.
    value_bound = 10 * 4.0 * 1e-76**2
    grid = discrete_noise(1e300, 1e-4, release_schedule(1e-76, n_items=30, n_iter=10),
                          value_bound)
    assert grid.granularity == 2.0 ** (math.frexp(value_bound)[1] - 52)
