"""Clustering with differentially private centres.

:class:`DPKMeans` runs Lloyd's algorithm with every step released privately,
from an initialization computed on a private summary of the data.
"""

from skdp.cluster._kmeans import DPKMeans

__all__ = [
    "DPKMeans",
]
