"""DPLogisticRegressionAMP instances for scikit-learn's estimator checks."""

from skdp.linear_model import DPLogisticRegressionAMP

INSTANCES = [
    DPLogisticRegressionAMP(epsilon=1.0, random_state=0),
    DPLogisticRegressionAMP(epsilon=1.0, loss="huber", multi_class="ovr", random_state=0),
]

EXPECTED_FAILED_CHECKS = {}
