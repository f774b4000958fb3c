"""Observed ratings in compressed-row form: validation, per-user centring and clipping.

Everything here is per user: a user's centred and clipped row depends on her
own ratings only, so these steps cost no privacy.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["Ratings", "ratings_from_input"]


@dataclass
class Ratings:
    """The observed entries of a users x items matrix, row by row (CSR arrays).

    Attributes
    ----------
    indptr : ndarray of shape (n_users + 1,)
    indices : ndarray of shape (n_observed,)
        Item of each observed rating.
    values : ndarray of shape (n_observed,)
        The (centred) ratings.
    means : ndarray of shape (n_users,)
        What was subtracted from each user's ratings (0 without centring and
        for users with no ratings).
    n_items : int
    """

    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    means: np.ndarray
    n_items: int

    @property
    def n_users(self):
        return len(self.indptr) - 1

    @property
    def counts(self):
        """Number of observed ratings of each user."""
        return np.diff(self.indptr)

    def matrix(self, data):
        """CSR matrix with this sparsity pattern and ``data`` on the observed entries."""
        return sp.csr_matrix((data, self.indices, self.indptr),
                             shape=(self.n_users, self.n_items))

    def per_entry(self, per_user):
        """Repeat a per-user array once per observed rating of that user."""
        return np.repeat(per_user, self.counts)

    def row_norms(self, data):
        """L2 norm of ``data`` (one value per observed entry) within each user's row."""
        return np.sqrt(self.matrix(data * data) @ np.ones(self.n_items))

    def rows(self, start, stop):
        """The users ``start:stop`` as a new :class:`Ratings` (arrays are views or small)."""
        lo, hi = self.indptr[start], self.indptr[stop]
        return Ratings(self.indptr[start:stop + 1] - lo, self.indices[lo:hi],
                       self.values[lo:hi], self.means[start:stop], self.n_items)


def clip_scale(norms, bound):
    """Per-row factor ``min(1, bound / norm)`` (1 for zero rows): the projection Pi of Alg. 13."""
    scale = np.ones_like(norms)
    big = norms > bound
    scale[big] = bound / norms[big]
    return scale


def ratings_from_input(X, *, center):
    """Turn validated input into :class:`Ratings`, centring each user if asked.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_users, n_items)
        Already validated by ``validate_data``: a float ndarray with NaN for
        missing entries, or a sparse matrix whose stored entries (explicit
        zeros included) are the observed ratings.
    center : {"user", None}
        ``"user"`` subtracts each user's mean observed rating.

    Returns
    -------
    ratings : Ratings
    """
    n_users, n_items = X.shape
    if sp.issparse(X):
        X = sp.csr_matrix(X)  # never densified; explicit zeros are kept
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        data = np.asarray(X.data, dtype=np.float64)
        if not np.all(np.isfinite(data)):
            raise ValueError(
                "The sparse ratings matrix stores NaN or infinite values. In a sparse "
                "input every stored entry is an observed rating: leave missing "
                "ratings out of the matrix instead of storing NaN."
            )
        indptr, indices = X.indptr.astype(np.int64), X.indices
        values = data.copy()
    else:
        X = np.asarray(X, dtype=np.float64)
        if np.isinf(X).any():
            raise ValueError("The ratings contain infinite values; use NaN for missing ratings.")
        observed = ~np.isnan(X)
        rows, indices = np.nonzero(observed)
        indptr = np.concatenate([[0], np.cumsum(observed.sum(axis=1))]).astype(np.int64)
        values = X[rows, indices]
    ratings = Ratings(indptr, indices.astype(np.int32 if n_items < 2**31 else np.int64),
                      values, np.zeros(n_users), n_items)
    if center == "user":
        counts = ratings.counts
        sums = ratings.matrix(values) @ np.ones(n_items)
        has = counts > 0
        ratings.means[has] = sums[has] / counts[has]
        ratings.values -= ratings.per_entry(ratings.means)
    return ratings
