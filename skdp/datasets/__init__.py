"""Synthetic data generators of the seed papers and loaders for files a user already has."""

from skdp.datasets._spheres import make_concentric_spheres

__all__ = [
    "make_concentric_spheres",
]
