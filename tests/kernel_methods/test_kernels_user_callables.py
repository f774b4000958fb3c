"""User kernels (callables and their kernel_params) are copied at fit and kept by the fitted models."""

import threading

import numpy as np
import pytest
from sklearn.base import clone

from skdp.kernel_methods import PrivateGaussianProcessRegressor, PrivateKernelClassifier


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


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return X, (X[:, 0] > 0).astype(int)


# A user's callable kernel: kept by reference in the parameters (as
# scikit-learn does), copied into the fitted model
class ScaledLinear:
    """A stateful kernel: ``scale * <a, b>``."""

    def __init__(self, scale=1.0):
        self.scale = scale

    def __call__(self, a, b):
        return self.scale * float(np.dot(a, b))


def test_mutating_a_callable_kernel_after_fit_changes_nothing(data):
    X, y = data
    kernel = ScaledLinear(1.0)
    clf = PrivateKernelClassifier(kernel, kernel_bound=4.0, epsilon=5.0, n_public=20,
                                  classes=[0, 1], random_state=0).fit(X[:, :2], y)
    assert clf.kernel is kernel and clf.get_params()["kernel"] is kernel
    before = clf.decision_function(X[:, :2])
    kernel.scale = 3.0
    np.testing.assert_array_equal(clf.decision_function(X[:, :2]), before)
    assert clone(clf).kernel is not kernel  # clone copies non-estimator parameters

    gp = PrivateGaussianProcessRegressor(ScaledLinear(1.0), epsilon=5.0, random_state=0)
    gp.fit(X[:, :2], np.tanh(X[:, 0]))
    before = gp.predict(X[:, :2])
    gp.kernel.scale = 3.0
    np.testing.assert_array_equal(gp.predict(X[:, :2]), before)
