"""Differentially private support vector machines (Rubinstein et al. (2012))."""

from skdp.svm._classes import PrivateLinearSVM, PrivateSVMRFF

__all__ = [
    "PrivateLinearSVM",
    "PrivateSVMRFF",
]
