"""DPLogisticRegressionAMP instances for scikit-learn's estimator checks."""

from skdp.linear_model import DPLogisticRegressionAMP

INSTANCES = [
    DPLogisticRegressionAMP(epsilon=1.0, random_state=0),
    DPLogisticRegressionAMP(epsilon=1.0, loss="huber", multi_class="ovr", random_state=0),
    # Exact discrete Gaussian output noise on a public grid (floating-point safe release).
    DPLogisticRegressionAMP(epsilon=1.0, output_noise="discrete_gaussian", random_state=0),
]

_WEIGHT_REASON = ("DP bounds one row's influence: weights above 1 are clipped to 1, and "
                  "zero-weight rows still count in m (the sum of weights is private)")
# Shared with the other weighted classifiers (common_instances.convex).
WEIGHT_CHECKS = {
    "check_sample_weight_equivalence_on_dense_data": _WEIGHT_REASON,
    "check_sample_weight_equivalence_on_sparse_data": _WEIGHT_REASON,
    "check_class_weight_classifiers": (
        "rows are clipped to data_norm with the intercept as a regularized feature (DP), so on "
        "the check's unscaled blobs (std 20) no class weight moves 87% of the predictions to "
        "one class; tests/linear_model/test_objective_sample_weight.py checks class_weight"),
    "check_all_zero_sample_weights_error": (
        "weights are protected like the rows: an error only for all-zero weights would tell "
        "that data set from its neighbours, so the fit releases a noise-only model"),
}

EXPECTED_FAILED_CHECKS = {"DPLogisticRegressionAMP": WEIGHT_CHECKS}
