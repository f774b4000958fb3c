"""Noise-adding and selection mechanisms, each small, seeded and tested."""

from skdp.mechanisms._exponential import exponential_mechanism, report_noisy_max
from skdp.mechanisms._gaussian import (
    GaussianMechanism,
    gaussian_delta_analytic,
    gaussian_sigma,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
    gaussian_sigma_thesis,
)
from skdp.mechanisms._laplace import LaplaceMechanism, laplace_scale
from skdp.mechanisms._sparse_vector import SparseVector, sparse_vector_scales

__all__ = [
    "GaussianMechanism",
    "LaplaceMechanism",
    "SparseVector",
    "exponential_mechanism",
    "gaussian_delta_analytic",
    "gaussian_sigma",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
    "gaussian_sigma_thesis",
    "laplace_scale",
    "report_noisy_max",
    "sparse_vector_scales",
]
