"""Model-agnostic private learning: subsample and aggregate, sparse vector, knowledge transfer.

Thakkar (2019), Ch. 5: :class:`PrivateQueryAnswerer` answers classification queries
with the majority vote of teachers trained on disjoint parts of the private
data when the vote is stable (Alg. 10); :class:`ModelAgnosticPrivateClassifier`
trains a releasable student on the answers (Alg. 11).
"""

from skdp.ensemble._answerer import PrivateQueryAnswerer
from skdp.ensemble._model_agnostic import LabelPrivateBudget, ModelAgnosticPrivateClassifier
from skdp.ensemble._stability import distance_to_instability, unanimous_vote_teachers

__all__ = [
    "LabelPrivateBudget",
    "ModelAgnosticPrivateClassifier",
    "PrivateQueryAnswerer",
    "distance_to_instability",
    "unanimous_vote_teachers",
]
