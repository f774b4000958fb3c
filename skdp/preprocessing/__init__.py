"""Feature scaling that does not leak the private data.

:class:`PublicBoundsScaler` reads nothing from the data and costs no privacy;
:class:`DPStandardScaler` spends a budget on a private mean and standard
deviation. :class:`DPNormClipper` and :class:`DPFeatureClipper` spend a small
budget on a private row-norm quantile or per-feature ranges, so that the
estimator after them needs no public ``data_norm`` or ``bounds``.
scikit-learn's ``StandardScaler``, ``MinMaxScaler`` or ``PCA`` fitted on
private data store exact statistics of it in the fitted pipeline.
"""

from skdp.preprocessing._bounds import PublicBoundsScaler
from skdp.preprocessing._dp_scaler import DPStandardScaler
from skdp.preprocessing._private_bounds import DPFeatureClipper, DPNormClipper

__all__ = [
    "DPFeatureClipper",
    "DPNormClipper",
    "DPStandardScaler",
    "PublicBoundsScaler",
]
