"""The private convex-optimization classifiers of skdp.linear_model (issue 4)."""

from common_instances.amp import WEIGHT_CHECKS
from skdp.linear_model import (
    DPSGDClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    PermutationSGDClassifier,
    PrivateFrankWolfeClassifier,
)

# Default privacy (epsilon=1) on the checks' tiny data sets.
INSTANCES = [
    PrivateFrankWolfeClassifier(epsilon=1.0, l1_radius=5.0, max_iter=10, random_state=0),
    DPSGDClassifier(epsilon=1.0, epochs=5, random_state=0),
    PermutationSGDClassifier(epsilon=1.0, random_state=0),
    ObjectivePerturbationClassifier(epsilon=1.0, random_state=0),
    OutputPerturbationClassifier(epsilon=1.0, random_state=0),
    # Exact discrete noise on a public grid (floating-point safe releases).
    OutputPerturbationClassifier(epsilon=1.0, mechanism="discrete_laplace", random_state=0),
    OutputPerturbationClassifier(epsilon=1.0, delta=1e-5, mechanism="discrete_gaussian",
                                 random_state=0),
    PermutationSGDClassifier(epsilon=1.0, mechanism="discrete_gaussian", random_state=0),
]

EXPECTED_FAILED_CHECKS = {
    "PrivateFrankWolfeClassifier": dict(WEIGHT_CHECKS),
    # The softmax fit passes with the Laplace-type and discrete Gaussian noise; the exact
    # discrete Laplace instance does not.
    "OutputPerturbationClassifier": {
        "check_classifiers_train": "accuracy threshold 0.83 on 300 make_blobs samples: with "
                                   "mechanism='discrete_laplace' the noise calibrated to n=300 "
                                   "at epsilon=1 is too large there (DP cost on tiny data)",
        **WEIGHT_CHECKS},
}
# The default step targets an output noise of norm 4 / data_norm, chosen for real rows of
# unit norm (docs/guide/sgd.rst): on the checks' 300 raw make_blobs rows (clipped to norm
# 1) the Gaussian instance passes the accuracy threshold, the discrete Gaussian one (about
# 20% more noise) does not.
EXPECTED_FAILED_CHECKS["PermutationSGDClassifier"] = {
    "check_classifiers_train": "accuracy threshold 0.83 on 300 make_blobs samples: with "
                               "mechanism='discrete_gaussian' the output noise of the "
                               "real-data default step is too large there (DP cost on "
                               "tiny data)",
    **WEIGHT_CHECKS}
# With the tight Jacobian term (half the paper's), objective perturbation's noise at
# epsilon=1 now passes the accuracy threshold on the checks' data.
EXPECTED_FAILED_CHECKS["ObjectivePerturbationClassifier"] = dict(WEIGHT_CHECKS)
EXPECTED_FAILED_CHECKS["DPSGDClassifier"] = dict(WEIGHT_CHECKS)
