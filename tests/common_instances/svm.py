"""Private SVMs (seed 001) and the random Fourier feature map."""

from common_instances.amp import WEIGHT_CHECKS
from skdp.kernel_approximation import RandomFourierFeatures
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF

INSTANCES = [
    RandomFourierFeatures(n_components=20, random_state=0),
    PrivateSVMRFF(n_components=20, random_state=0),
    PrivateLinearSVM(random_state=0),
    # Exact discrete noise on a public grid (floating-point safe releases).
    PrivateSVMRFF(n_components=20, mechanism="discrete_gaussian", delta=1e-5, random_state=0),
    PrivateLinearSVM(mechanism="discrete_laplace", random_state=0),
]

# The weight-equivalence and all-zero-weight checks fail for the reasons of the other
# weighted classifiers; check_class_weight_classifiers for reasons of the SVMs' own.
EXPECTED_FAILED_CHECKS = {
    "PrivateLinearSVM": {
        **WEIGHT_CHECKS,
        "check_class_weight_classifiers": (
            "rows are clipped to data_norm=1 with the intercept as a regularized feature (DP), "
            "and the default C=1 is LinearSVC's C=1/n (seed 001's parametrization; the noise "
            "grows with C), so on the check's unscaled blobs (std 20) no class weight moves 87% "
            "of the predictions to one class (without noise it passes with data_norm=100 and "
            "C=10, not with C=1); tests/svm/test_sample_weight.py checks class_weight"),
    },
    "PrivateSVMRFF": {
        **WEIGHT_CHECKS,
        "check_class_weight_classifiers": (
            "the kernel width gamma='auto' (1 / n_features) is public (SVC's gamma='scale' "
            "reads the private feature variance), too narrow for the check's std-20 blobs, and at "
            "epsilon=1 the noise calibrated to its 50 rows dominates (it passes with "
            "gamma=1e-3 and no noise); tests/svm/test_sample_weight.py checks class_weight"),
    },
}
