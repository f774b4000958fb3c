"""Private naive Bayes and k-means."""

from skdp.cluster import DPKMeans
from skdp.naive_bayes import DPGaussianNB

# Scalar bounds: the checks use data of several widths; values outside are clipped. A large
# epsilon, as the checks test accuracy on easy data.
INSTANCES = [
    DPGaussianNB(epsilon=1e3, bounds=(-10.0, 10.0), random_state=0),
    DPGaussianNB(epsilon=1e3, delta=0.0, bounds=(-10.0, 10.0), random_state=0),
    DPKMeans(n_clusters=3, epsilon=1e3, bounds=(-10.0, 10.0), random_state=0),
    DPKMeans(n_clusters=3, epsilon=1e3, delta=0.0, bounds=(-10.0, 10.0), random_state=0),
]

EXPECTED_FAILED_CHECKS = {}
