"""Private SVMs (seed 001) and the random Fourier feature map."""

from skdp.kernel_approximation import RandomFourierFeatures
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF

INSTANCES = [
    RandomFourierFeatures(n_components=20, random_state=0),
    PrivateSVMRFF(n_components=20, random_state=0),
    PrivateLinearSVM(random_state=0),
]

EXPECTED_FAILED_CHECKS = {}
