"""Review tests of skdp.matrix_completion: extreme inputs and parameters (session 15).

A fit must release finite values, raise nothing data-dependent once the budget
is charged, and emit no data-dependent warning, whatever finite ratings one
user holds: the row clipping is what makes the sensitivity bound hold for any
input (seed 004, Alg. 13 ``Pi_Delta``, Alg. 15 ``Pi_Delta``).
"""

import warnings

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.matrix_completion import DPMatrixCompleter
from skdp.matrix_completion._ratings import ratings_from_input
from skdp.matrix_completion._solvers import clipped_values

CASES = [
    ("frank_wolfe", "exact"), ("frank_wolfe", "oja"), ("pursuit", "exact"),
    ("pursuit", "oja"), ("svd", "exact"), ("svd", "oja"), ("pgd", "exact"),
]


def _ratings(extreme):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (40, 6))
    X[rng.random(X.shape) < 0.3] = np.nan
    X[0] = extreme  # one user with huge, finite ratings
    X[0, 1] = np.nan
    X[1, :3] = [1e200, -1e200, 3e199]
    return X


@pytest.mark.parametrize("center", ["user", None])
@pytest.mark.parametrize("method, eigensolver", CASES)
def test_one_user_with_huge_ratings_changes_nothing_observable(method, eigensolver, center):
    # Before the fix, ratings above ~1e154 overflowed in the row norm (the row
    # was zeroed, with a RuntimeWarning), and ratings near the float64 maximum
    # overflowed in the centring or the local refit, so NaN reached the
    # released matrix and the fit raised after the budget was charged: one
    # user's data decided between a release and an exception (epsilon = inf).
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-2)
    model = DPMatrixCompleter(epsilon=1.0, delta=1e-4, method=method, eigensolver=eigensolver,
                              center=center, nuclear_norm=5.0, rank=2, max_iter=3,
                              accountant=accountant, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(_ratings(1.7e308))
    assert np.all(np.isfinite(model.components_))
    if model.singular_values_ is not None:
        assert np.all(np.isfinite(model.singular_values_))
    assert accountant.spent.epsilon == 1.0
    completed = model.transform(_ratings(0.5)[2:])
    assert np.all(np.isfinite(completed))


@pytest.mark.parametrize("method, eigensolver", [("frank_wolfe", "exact"), ("frank_wolfe", "oja")])
def test_huge_nuclear_norm_does_not_overflow_into_the_release(method, eigensolver):
    # k u_i v_j overflows for the users with the largest |u_i|: which users
    # overflow depends on their data, and their inf rows became NaN in the
    # next release.
    X = _ratings(0.5)
    model = DPMatrixCompleter(epsilon=1.0, delta=1e-4, method=method, eigensolver=eigensolver,
                              nuclear_norm=1e308, max_iter=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(X)
    assert np.all(np.isfinite(model.components_))


def test_clipping_a_row_with_entries_above_1e154_keeps_its_direction():
    # The squares overflowed to inf, the scale bound / inf was 0 and the row
    # was zeroed instead of scaled to the bound.
    X = np.array([[1e200, 1e200, np.nan], [3.0, 4.0, np.nan], [1e-200, np.nan, 1e-200]])
    ratings = ratings_from_input(X, center=None)
    clipped = clipped_values(ratings, ratings.values, 2.0)
    norms = ratings.row_norms(clipped)
    np.testing.assert_allclose(norms, [2.0, 2.0, np.sqrt(2) * 1e-200], rtol=1e-12)
    np.testing.assert_allclose(clipped[:2], [np.sqrt(2), np.sqrt(2)], rtol=1e-12)


@pytest.mark.parametrize("bound", [1e-200, 1e200])
def test_bound_whose_sensitivity_under_or_overflows_is_refused_before_spending(bound):
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-2)
    model = DPMatrixCompleter(epsilon=1.0, delta=1e-4, method="svd", row_norm_bound=bound,
                              accountant=accountant, random_state=0)
    with pytest.raises(ValueError, match="row_norm_bound"):
        model.fit(_ratings(0.5))
    assert accountant.spent is None


def test_a_noise_calibration_that_fails_spends_nothing(monkeypatch):
    # sigma used to be computed after the accountant was charged (e.g. the
    # analytic calibration fails for epsilon = 1e300: budget spent, no model).
    from skdp.matrix_completion import _completer

    def failing(*args):
        raise ValueError("calibration failed")

    monkeypatch.setattr(_completer, "noise_sigma", failing)
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-2)
    model = DPMatrixCompleter(epsilon=1.0, delta=1e-4, method="svd", accountant=accountant)
    with pytest.raises(ValueError, match="calibration failed"):
        model.fit(_ratings(0.5))
    assert accountant.spent is None
