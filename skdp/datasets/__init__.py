"""Synthetic data generators of the seed papers and loaders for files a user already has."""

__all__ = []
