"""DPMatrixCompleter instances for scikit-learn's estimator checks."""

from skdp.matrix_completion import DPMatrixCompleter

INSTANCES = [
    DPMatrixCompleter(method="frank_wolfe",
                      epsilon=1.0, delta=1e-5, nuclear_norm=10.0, max_iter=3, random_state=0),
    DPMatrixCompleter(epsilon=1.0, delta=1e-5, method="pursuit", rank=2, eigensolver="oja",
                      oja_iter=2, random_state=0),
    DPMatrixCompleter(epsilon=1.0, delta=1e-5, method="svd", rank=2, random_state=0),
    DPMatrixCompleter(epsilon=1.0, delta=1e-5, method="pgd", nuclear_norm=10.0, max_iter=3,
                      random_state=0),
    DPMatrixCompleter(method="frank_wolfe", epsilon=1.0, delta=1e-5, nuclear_norm=10.0, max_iter=3,
                      noise="discrete_gaussian", random_state=0),
    DPMatrixCompleter(epsilon=1.0, delta=1e-5, method="pursuit", rank=2, eigensolver="oja",
                      oja_iter=2, noise="discrete_gaussian", random_state=0),
]

EXPECTED_FAILED_CHECKS = {}
