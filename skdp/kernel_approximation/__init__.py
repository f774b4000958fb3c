"""Data-independent feature maps whose inner products approximate kernels."""

from skdp.kernel_approximation._rff import RandomFourierFeatures

__all__ = [
    "RandomFourierFeatures",
]
