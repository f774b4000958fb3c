"""Feature scaling that does not leak the private data.

:class:`PublicBoundsScaler` reads nothing from the data and costs no privacy;
:class:`DPStandardScaler` spends a budget on a private mean and standard
deviation. scikit-learn's ``StandardScaler``, ``MinMaxScaler`` or ``PCA``
fitted on private data store exact statistics of it in the fitted pipeline.
"""

from skdp.preprocessing._bounds import PublicBoundsScaler
from skdp.preprocessing._dp_scaler import DPStandardScaler

__all__ = [
    "DPStandardScaler",
    "PublicBoundsScaler",
]
