"""Kernel learners and functional-perturbation models (seed 000, seed 003)."""
from skdp.kernel_methods import (
    PrivateGaussianProcessRegressor,
    PrivateHistogram,
    PrivateKernelClassifier,
    PrivateKernelDensity,
    PrivateKernelNetClassifier,
    PrivateKernelSVC,
)

INSTANCES = [
    PrivateGaussianProcessRegressor(alpha=0.1, y_bounds=(-4.0, 4.0),
                                    epsilon=1e4, random_state=0),
    PrivateHistogram(bins=3, epsilon=10.0, random_state=0),
    PrivateKernelClassifier(alpha=0.01, epsilon=1e3, n_public=64, random_state=0),
    PrivateKernelDensity(bandwidth=0.5, epsilon=10.0, n_public=64, random_state=0),
    PrivateKernelNetClassifier(alpha=0.05, epsilon=1e3, n_public=100, n_rounds=40,
                               random_state=0),
    PrivateKernelSVC(alpha=0.01, epsilon=1e3, n_public=64, random_state=0),
]

EXPECTED_FAILED_CHECKS = {}
