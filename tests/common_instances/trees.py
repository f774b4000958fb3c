"""Instances of skdp's private tree ensembles for the scikit-learn estimator checks."""

from skdp.ensemble import DPHistGradientBoostingClassifier, DPRandomForestClassifier

# The checks' data lie within about (-10, 10) (blobs) and are clipped to these public
# bounds; a huge epsilon so that the checks' accuracy thresholds hold on tens of rows.
_BOUNDS = (-12.0, 12.0)
INSTANCES = [
    DPHistGradientBoostingClassifier(epsilon=1e5, bounds=_BOUNDS, random_state=0),
    DPRandomForestClassifier(epsilon=1e5, bounds=_BOUNDS, random_state=0),
]
EXPECTED_FAILED_CHECKS = {}
