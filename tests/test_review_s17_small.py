"""Review of the s17 small-fixes batch: defects found in the new code paths."""

import threading
import warnings

import numpy as np
import pytest

import skdp.datasets._ratings as ratings_module
from skdp import BudgetAccountant
from skdp.kernel_methods import PrivateKernelClassifier
from skdp.utils import check_real


def test_load_ratings_short_line_at_a_block_start_is_the_clear_error(tmp_path, monkeypatch):
    # A line with two fields is refused with load_ratings' message whichever block it
    # starts (pandas raised its own "Usecols do not match columns" for a block's first line).
    path = tmp_path / "ratings.csv"
    path.write_bytes(b"1,10,4\n2,20\n3,30,5\n")
    monkeypatch.setattr(ratings_module, "_BLOCK_SIZE", 7)  # "2,20" starts the second block
    with pytest.raises(ValueError, match="fewer than three fields"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ratings_module.load_ratings(path)


class _LockedKernel:
    """A callable kernel holding a lock (cannot be deep-copied)."""

    def __init__(self):
        self.lock = threading.Lock()

    def __call__(self, a, b):
        with self.lock:
            return float(a @ b)


def test_callable_kernel_that_cannot_be_deep_copied_still_fits():
    # It fitted before the deep copy at fit was added; the copy must not refuse it.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    X /= np.linalg.norm(X, axis=1).max()
    y = (X[:, 0] > 0).astype(int)
    kernel = _LockedKernel()
    clf = PrivateKernelClassifier(kernel=kernel, kernel_bound=1.0, classes=[0, 1],
                                  random_state=0).fit(X, y)
    assert clf.kernel is kernel
    assert np.all(np.isfinite(clf.decision_function(X)))


def test_check_real_integer_beyond_float_range_is_inf_where_inf_is_allowed():
    # float("inf") is accepted with allow_inf; an int beyond the float range is the same value.
    assert check_real(10**400, "epsilon", low=0.0, allow_inf=True) == np.inf
    assert BudgetAccountant(epsilon=10**400).epsilon == np.inf
    with pytest.raises(ValueError, match="beyond the float range"):
        check_real(10**400, "x")
    with pytest.raises(ValueError, match="beyond the float range"):
        check_real(-(10**400), "x", allow_inf=True)


def test_kernel_params_that_cannot_be_deep_copied_still_fit():
    # kernel_params are copied at fit like the callable; one holding a lock is kept as is.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    X /= np.linalg.norm(X, axis=1).max()
    y = (X[:, 0] > 0).astype(int)

    def kernel(a, b, lock):
        with lock:
            return float(a @ b)

    clf = PrivateKernelClassifier(kernel=kernel, kernel_params={"lock": threading.Lock()},
                                  kernel_bound=1.0, classes=[0, 1], random_state=0).fit(X, y)
    assert np.all(np.isfinite(clf.decision_function(X)))
