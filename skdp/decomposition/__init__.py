"""Matrix decompositions with differential privacy.

:class:`DPPCA` releases the rows' second moment with Gaussian noise (Dwork,
Talwar, Thakurta and Zhang 2014) and keeps its top eigenvectors; scikit-learn's
``PCA`` fitted on private data stores exact statistics of it.
"""

from skdp.decomposition._pca import DPPCA

__all__ = [
    "DPPCA",
]
