"""Synthetic data generators of the seed papers and loaders for files a user already has."""

from skdp.datasets._matrix_completion import make_low_rank_ratings

__all__ = [
    "make_low_rank_ratings",
]
