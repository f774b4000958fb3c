from _dummy import NoisyCentroidClassifier
from skdp.model_selection import PrivateParameterSelector

INSTANCES = [
    PrivateParameterSelector(NoisyCentroidClassifier(), {"epsilon": [5.0, 10.0]}, epsilon=5.0,
                             random_state=0),
]

EXPECTED_FAILED_CHECKS = {}
