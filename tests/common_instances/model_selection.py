import numpy as np
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from common_instances.amp import WEIGHT_CHECKS
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.model_selection import PrivateParameterSelector

# The candidates' classifier takes sample_weight, so the selector's weighted fit is checked too;
# a large epsilon, since each candidate learns from a third of the checks' tiny data sets.
INSTANCES = [
    PrivateParameterSelector(DPLogisticRegressionAMP(50.0, 1e-6), {"loss": ["logistic", "huber"]},
                             epsilon=5.0, random_state=1),
    PrivateParameterSelector(make_pipeline(FunctionTransformer(np.tanh),
                                           DPLogisticRegressionAMP(50.0, 1e-6)),
                             {"dplogisticregressionamp__loss": ["logistic", "huber"]}, epsilon=5.0,
                             random_state=0),
]

EXPECTED_FAILED_CHECKS = {"PrivateParameterSelector": WEIGHT_CHECKS}
