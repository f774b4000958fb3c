"""Differentially private support vector machines (seed 001)."""

from skdp.svm._classes import PrivateLinearSVM, PrivateSVMRFF

__all__ = [
    "PrivateLinearSVM",
    "PrivateSVMRFF",
]
