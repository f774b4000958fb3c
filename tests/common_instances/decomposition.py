"""The private PCA of skdp.decomposition."""

from skdp.decomposition import DPPCA

INSTANCES = [
    DPPCA(n_components=2, epsilon=1.0, random_state=0),
    DPPCA(epsilon=1.0, center=0.0, random_state=0),
    DPPCA(n_components=2, epsilon=1.0, svd_solver="oja", n_iter=3, random_state=0),
]

EXPECTED_FAILED_CHECKS = {}
