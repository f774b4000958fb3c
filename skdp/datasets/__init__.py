"""Synthetic generators, the offline real-data collection, and loaders for files a user has."""

from skdp.datasets._margin import make_margin_classification
from skdp.datasets._matrix_completion import make_low_rank_ratings
from skdp.datasets._ratings import load_ratings, split_ratings
from skdp.datasets._real import REAL_DATASETS, load_real_dataset
from skdp.datasets._spheres import make_concentric_spheres
from skdp.datasets._synthetic import make_synthetic_h, make_synthetic_l

__all__ = [
    "load_ratings",
    "load_real_dataset",
    "make_concentric_spheres",
    "make_low_rank_ratings",
    "make_margin_classification",
    "make_synthetic_h",
    "make_synthetic_l",
    "split_ratings",
]
