"""Privately released item biases (``center="user_item"``).

Every user first subtracts her own mean rating (local, free). The item biases
are a global statistic: each user ``i`` contributes, with a per-user weight
``w_i``, her centred ratings ``x_i = w_i e_i / s`` (``s`` the public half
range of the ratings) and her rating indicator ``z_i = w_i 1_{Omega_i}``,
with ``w_i = min(1, D / ||e_i / s||, D / sqrt(|Omega_i|))`` so that
``||x_i||, ||z_i|| <= D``. The pair of item sums ``(sum_i x_i, sum_i z_i)`` is
released once with Gaussian noise. Replacing user ``i`` by ``i'`` changes it by
``(x_i - x_i', z_i - z_i')`` with ``||x_i - x_i'|| <= 2 D`` and, the
indicators being non-negative, ``||z_i - z_i'||^2 = ||z_i||^2 + ||z_i'||^2 -
2 z_i . z_i' <= 2 D^2``: L2 sensitivity ``sqrt(6) D``. The bias of item ``j``
is ``s X_j / (max(Z_j, 0) + lambda)``, a post-processing; each user then
re-centres her own ratings on ``r_ij - b_j`` (local).
"""

import math

import numpy as np

from skdp.matrix_completion._ratings import Ratings, clip_scale

__all__ = ["ITEM_SENSITIVITY_FACTOR", "item_statistics", "item_biases", "recentre"]

ITEM_SENSITIVITY_FACTOR = math.sqrt(6.0)  # L2 sensitivity of (X, Z) is sqrt(6) D (module doc)


def item_statistics(ratings, *, scale, clip):
    """The item sums ``(X, Z)`` of the module docstring, before noise.

    Parameters
    ----------
    ratings : Ratings
        User-centred ratings.
    scale : float
        ``s``, the public half range of the ratings.
    clip : float
        ``D``.

    Returns
    -------
    stats : ndarray of shape (2 * n_items,)
        ``X`` then ``Z``.
    """
    n = ratings.n_items
    values = ratings.values / scale
    weight = np.minimum(clip_scale(ratings.row_norms(values), clip),
                        clip_scale(np.sqrt(ratings.counts.astype(np.float64)), clip))
    per_entry = ratings.per_entry(weight)
    x = values * per_entry
    x[per_entry == 0.0] = 0.0  # a non-finite row contributes nothing
    return np.concatenate([np.bincount(ratings.indices, weights=x, minlength=n),
                           np.bincount(ratings.indices, weights=per_entry, minlength=n)])


def item_biases(released, *, scale, prior):
    """``b_j = s X_j / (max(Z_j, 0) + prior)`` from the released ``(X, Z)``."""
    n = len(released) // 2
    sums, counts = released[:n], released[n:]
    return scale * sums / (np.maximum(counts, 0.0) + prior)


def recentre(ratings, biases):
    """Re-centre each user on ``r_ij - b_j``: her mean of it becomes her offset (local).

    ``ratings`` holds user-centred values and their means; the result holds
    ``r_ij - b_j - m_i`` with ``m_i`` the user's mean of ``r_ij - b_j`` (0 for
    users with no ratings).
    """
    raw = ratings.values + ratings.per_entry(ratings.means) - biases[ratings.indices]
    counts = ratings.counts
    sums = ratings.matrix(raw) @ np.ones(ratings.n_items)
    means = np.zeros(ratings.n_users)
    has = counts > 0
    means[has] = sums[has] / counts[has]
    return Ratings(ratings.indptr, ratings.indices, raw - ratings.per_entry(means), means,
                   ratings.n_items)
