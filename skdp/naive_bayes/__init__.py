"""Naive Bayes classifiers with differentially private class statistics.

:class:`DPGaussianNB` releases the class counts and the per-class sums and
sums of squares of the (publicly bounded) features in one noisy vector, and
builds scikit-learn's Gaussian naive Bayes model from it.
"""

from skdp.naive_bayes._gaussian import DPGaussianNB

__all__ = [
    "DPGaussianNB",
]
