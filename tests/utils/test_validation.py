"""Validation helpers shared by every estimator."""

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.preprocessing import PublicBoundsScaler
from skdp.utils import check_real
from skdp.utils._validation import check_feature_bounds, check_n_jobs


@pytest.mark.parametrize("bounds", [np.array([[0.0, 1.0], [2.0, 3.0]]), ((0.0, 1.0), (2.0, 3.0)),
                                    [[0.0, 1.0], [2.0, 3.0]]])
def test_two_feature_bounds_in_an_ambiguous_layout_are_refused(bounds):
    # Read per feature: [0, 1] and [2, 3]; read as (lows, highs): [0, 2] and [1, 3].
    with pytest.raises(ValueError, match="ambiguous.*list of tuples"):
        check_feature_bounds(bounds, 2)
    with pytest.raises(ValueError, match="ambiguous"):
        PublicBoundsScaler(bounds=bounds).fit(np.zeros((3, 2)))


def test_two_feature_bounds_as_a_list_of_pairs_are_read_per_feature():
    lower, upper = check_feature_bounds([(0.0, 1.0), (2.0, 3.0)], 2)
    np.testing.assert_array_equal(lower, [0.0, 2.0])
    np.testing.assert_array_equal(upper, [1.0, 3.0])


@pytest.mark.parametrize("bounds", [np.array([[-3.0, 3.0], [-3.0, 3.0]]),   # one reading only
                                    np.array([[0.0, 2.0], [2.0, 5.0]])])   # both readings agree
def test_unambiguous_two_by_two_arrays_are_accepted(bounds):
    lower, upper = check_feature_bounds(bounds, 2)
    np.testing.assert_array_equal(np.column_stack([lower, upper]), bounds)


def test_the_lows_highs_layout_is_explained():
    with pytest.raises(ValueError, match=r"\(lows, highs\).*zip"):
        check_feature_bounds((np.zeros(3), np.ones(3)), 3)


def test_check_real_integer_beyond_float_range_is_inf_where_inf_is_allowed():
    # float("inf") is accepted with allow_inf; an int beyond the float range is the same value.
    assert check_real(10**400, "epsilon", low=0.0, allow_inf=True) == np.inf
    assert BudgetAccountant(epsilon=10**400).epsilon == np.inf
    with pytest.raises(ValueError, match="beyond the float range"):
        check_real(10**400, "x")
    with pytest.raises(ValueError, match="beyond the float range"):
        check_real(-(10**400), "x", allow_inf=True)


@pytest.mark.parametrize("value", [None, 1, -1, 2, -2, np.int64(3)])
def test_check_n_jobs_accepts_none_and_nonzero_ints(value):
    out = check_n_jobs(value)
    assert out == value and (out is None or type(out) is int)


@pytest.mark.parametrize("value,error", [
    ("two", TypeError), ("2", TypeError), (1.5, TypeError), (2.0, TypeError),
    (True, TypeError), (np.bool_(True), TypeError), (0, ValueError), (np.int32(0), ValueError),
])
def test_check_n_jobs_refuses_with_the_parameter_name(value, error):
    with pytest.raises(error, match="^n_jobs must be None or a nonzero integer"):
        check_n_jobs(value)
    with pytest.raises(error, match="^workers must be"):
        check_n_jobs(value, "workers")
