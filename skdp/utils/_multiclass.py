"""One-vs-rest fitting with an evenly split privacy budget."""

import numpy as np
from joblib import Parallel, delayed

from skdp.utils._random import spawn_random_states

__all__ = ["fit_one_vs_rest"]


def fit_one_vs_rest(fit_binary, X, y_index, n_classes, rng, *, n_jobs=None):
    """Run a private binary learner once per class, in parallel.

    The caller gives each call ``budget.split(n_classes)`` (basic
    composition, seed 004 Lemma 2.1.5); this function only organizes the
    calls. With two classes a single problem is solved (positive class =
    index 1), as scikit-learn's binary linear models do.

    Parameters
    ----------
    fit_binary : callable
        ``fit_binary(X, y_pm1, rng)`` with ``y_pm1`` in ``{-1, +1}``; returns
        any result (for linear models, typically a weight vector).
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Training data.
    y_index : ndarray of shape (n_samples,)
        Class indices in ``range(n_classes)``.
    n_classes : int
        Number of classes, >= 2.
    rng : numpy.random.Generator
        Parent generator; each call gets an independent child.
    n_jobs : int or None, default=None
        joblib parallelism across classes.

    Returns
    -------
    results : list
        One result for binary problems, otherwise one per class in order.
    """
    targets = [1] if n_classes == 2 else list(range(n_classes))
    rngs = spawn_random_states(rng, len(targets))
    if len(targets) == 1:  # a binary problem: skip joblib's dispatch overhead
        return [fit_binary(X, np.where(y_index == 1, 1.0, -1.0), rngs[0])]
    return Parallel(n_jobs=n_jobs)(
        delayed(fit_binary)(X, np.where(y_index == k, 1.0, -1.0), child)
        for k, child in zip(targets, rngs)
    )
