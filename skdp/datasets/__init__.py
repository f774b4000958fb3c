"""Synthetic data generators of the seed papers and loaders for files a user already has."""

from skdp.datasets._margin import make_margin_classification

__all__ = ["make_margin_classification"]
