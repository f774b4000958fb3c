"""Private ensembles: model-agnostic subsample and aggregate, random forests, boosting.

:class:`PrivateQueryAnswerer` answers classification queries with the majority
vote of teachers trained on disjoint parts of the private data when the vote is
stable (Thakkar 2019, Alg. 10); :class:`ModelAgnosticPrivateClassifier` trains a
releasable student on the answers (Alg. 11). :class:`DPRandomForestClassifier`
and :class:`DPHistGradientBoostingClassifier` (Maddock et al. 2022) grow trees
whose splits on public bins are chosen by the exponential mechanism.
"""

from skdp.ensemble._answerer import PrivateQueryAnswerer
from skdp.ensemble._boosting import DPHistGradientBoostingClassifier
from skdp.ensemble._forest import DPRandomForestClassifier
from skdp.ensemble._model_agnostic import LabelPrivateBudget, ModelAgnosticPrivateClassifier
from skdp.ensemble._stability import distance_to_instability, unanimous_vote_teachers

__all__ = [
    "DPHistGradientBoostingClassifier",
    "DPRandomForestClassifier",
    "LabelPrivateBudget",
    "ModelAgnosticPrivateClassifier",
    "PrivateQueryAnswerer",
    "distance_to_instability",
    "unanimous_vote_teachers",
]
