from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer

from _dummy import NoisyCentroidClassifier
from skdp.model_selection import PrivateParameterSelector

INSTANCES = [
    PrivateParameterSelector(NoisyCentroidClassifier(), {"epsilon": [5.0, 10.0]}, epsilon=5.0,
                             random_state=0),
    PrivateParameterSelector(make_pipeline(Normalizer(), NoisyCentroidClassifier()),
                             {"noisycentroidclassifier__epsilon": [5.0, 10.0]}, epsilon=5.0,
                             random_state=0),
]

EXPECTED_FAILED_CHECKS = {}
