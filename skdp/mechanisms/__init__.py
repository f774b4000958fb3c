"""Noise-adding and selection mechanisms, each small, seeded and tested."""

from skdp.mechanisms._discrete import (
    DiscreteGaussianMechanism,
    DiscreteLaplaceMechanism,
    discrete_gaussian_sigma2,
    discrete_laplace_scale,
    sample_bernoulli_exp,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)
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
    "DiscreteGaussianMechanism",
    "DiscreteLaplaceMechanism",
    "GaussianMechanism",
    "LaplaceMechanism",
    "SparseVector",
    "discrete_gaussian_sigma2",
    "discrete_laplace_scale",
    "exponential_mechanism",
    "gaussian_delta_analytic",
    "gaussian_sigma",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
    "gaussian_sigma_thesis",
    "laplace_scale",
    "report_noisy_max",
    "sample_bernoulli_exp",
    "sample_discrete_gaussian",
    "sample_discrete_laplace",
    "sparse_vector_scales",
]
