"""Synthetic data generators of the seed papers and loaders for files a user already has."""

from skdp.datasets._margin import make_margin_classification
from skdp.datasets._matrix_completion import make_low_rank_ratings
from skdp.datasets._ratings import load_ratings, split_ratings
from skdp.datasets._spheres import make_concentric_spheres
from skdp.datasets._synthetic import make_synthetic_h, make_synthetic_l

__all__ = [
    "load_ratings",
    "make_concentric_spheres",
    "make_low_rank_ratings",
    "make_margin_classification",
    "make_synthetic_h",
    "make_synthetic_l",
    "split_ratings",
]
