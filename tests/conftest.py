import os
import sys

# One BLAS/OpenMP thread per test process. The suite's linear algebra is small
# (kernel matrices of a few hundred rows, thousands of tiny fits per audit), where
# extra BLAS threads only contend: on a busy 2-core machine a 300 x 300 Cholesky
# took 30 times longer with OpenBLAS' default threads than with one. The suite
# runs its parallelism across test processes instead (pytest-xdist, see
# pyproject.toml), and joblib's loky workers limit their own threads. The
# variables are set before numpy is imported (and reach subprocesses); the
# threadpoolctl call covers libraries a plugin may have loaded earlier. An
# explicit setting in the environment wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy  # noqa: E402  (loaded so that threadpoolctl sees its BLAS)
import scipy.linalg  # noqa: E402,F401
from threadpoolctl import threadpool_limits  # noqa: E402

threadpool_limits(limits=int(os.environ["OPENBLAS_NUM_THREADS"]), user_api="blas")
del numpy

# Make ``common_instances`` importable as a top-level package of the test tree.
sys.path.insert(0, os.path.dirname(__file__))
# The studies behind the defaults (``studies/`` at the repository root, not installed) are
# imported by the tests that check their rules.
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
