"""Kernel learners for arbitrary kernels and functional-perturbation models.

Jain and Thakurta (2013, Jain and Thakurta (2013)): private kernel learners whose access to
the data is through a kernel only. Dandekar, Basu and Bressan (2019, Dandekar et al. (2019))
after Hall, Rinaldo and Wasserman (2013): histogram, kernel density, Gaussian
process regression and kernel SVM released as a function perturbed by a
Gaussian-process sample path.
"""

from skdp.kernel_methods._classifiers import PrivateKernelClassifier, PrivateKernelSVC
from skdp.kernel_methods._density import PrivateHistogram, PrivateKernelDensity
from skdp.kernel_methods._gp import PrivateGaussianProcessRegressor
from skdp.kernel_methods._idc import InteractiveKernelPredictor, PrivateKernelNetClassifier

__all__ = [
    "InteractiveKernelPredictor",
    "PrivateGaussianProcessRegressor",
    "PrivateHistogram",
    "PrivateKernelClassifier",
    "PrivateKernelDensity",
    "PrivateKernelNetClassifier",
    "PrivateKernelSVC",
]
