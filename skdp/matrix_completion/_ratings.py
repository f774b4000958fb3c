"""Observed ratings in compressed-row form: validation, per-user centring and clipping.

Everything here is per user: a user's centred and clipped row depends on her
own ratings only, so these steps cost no privacy.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from skdp.utils import row_norms_l2

__all__ = ["Ratings", "clip_dense_rows", "clip_rows", "clip_scale", "ratings_from_input"]

# Row norms outside (_TINY, _HUGE) may have over- or underflowed when squared.
_TINY, _HUGE = 1e-140, 1e140


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
        """L2 norm of ``data`` (one value per observed entry) within each user's row.

        Without over- or underflow for entries above ~1e154 or below ~1e-154
        (as :func:`skdp.utils.row_norms_l2`, which is slower on this layout):
        such rows are recomputed scaled by their largest entry. Inf or NaN for
        a row holding them, or whose norm exceeds the float64 range.
        """
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            norms = np.sqrt(self.matrix(data * data) @ np.ones(self.n_items))
            counts = self.counts
            suspect = np.flatnonzero(~((norms > _TINY) & (norms < _HUGE)) & (counts > 0))
            if suspect.size == 0:
                return norms
            lo, sizes = self.indptr[suspect], counts[suspect]
            starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
            entries = np.repeat(lo - starts, sizes) + np.arange(sizes.sum())
            magnitudes = np.abs(data[entries])
            peak = np.maximum.reduceat(magnitudes, starts)
            scaled = magnitudes / np.repeat(peak, sizes)
            rescaled = peak * np.sqrt(np.add.reduceat(scaled * scaled, starts))
            norms[suspect] = np.where(peak == 0.0, 0.0, rescaled)
        return norms

    def rows(self, start, stop):
        """The users ``start:stop`` as a new :class:`Ratings` (arrays are views or small)."""
        lo, hi = self.indptr[start], self.indptr[stop]
        return Ratings(self.indptr[start:stop + 1] - lo, self.indices[lo:hi],
                       self.values[lo:hi], self.means[start:stop], self.n_items)


def clip_scale(norms, bound):
    """Per-row factor ``min(1, bound / norm)``: the projection Pi of Alg. 13.

    1 for zero rows; 0 for rows whose norm is not finite (they hold inf or
    NaN, or overflow float64), which :func:`clip_rows` sets to zero.
    """
    scale = np.ones_like(norms)
    big = ~(norms <= bound)
    with np.errstate(invalid="ignore"):
        scale[big] = bound / norms[big]
    scale[~np.isfinite(norms)] = 0.0
    return scale


def clip_rows(ratings, data, bound):
    """``data`` with each user's row scaled to L2 norm at most ``bound`` (Pi of Alg. 13).

    The sensitivity of every release rests on this bound holding for any
    input (Thakkar (2019), Alg. 13 ``Pi_Delta``, Alg. 15 ``Pi_Delta``). A row that
    is not finite (an overflow in a user's centring, local refit or update)
    becomes zero: a per-user rule, so it costs no privacy, and neither NaN
    nor inf can reach the aggregate, where one user's values would decide
    between a release and an error.

    Parameters
    ----------
    ratings : Ratings
    data : ndarray of shape (n_observed,)
        One value per observed entry.
    bound : float

    Returns
    -------
    clipped : ndarray of shape (n_observed,)
    scale : ndarray of shape (n_users,)
        The factor applied to each row (0 for rows set to zero).
    """
    norms = ratings.row_norms(data)
    scale = clip_scale(norms, bound)
    factor = ratings.per_entry(scale)
    with np.errstate(over="ignore", invalid="ignore"):
        clipped = data * factor
    clipped[factor == 0.0] = 0.0
    # A subnormal factor bound / norm has lost relative precision (it may round
    # up): divide by the norm first on those rare rows.
    for i in np.flatnonzero((scale > 0.0) & (scale < np.finfo(np.float64).tiny)):
        lo, hi = ratings.indptr[i], ratings.indptr[i + 1]
        clipped[lo:hi] = data[lo:hi] / norms[i] * bound
    return clipped, scale


def clip_dense_rows(rows, bound):
    """Scale each row of the dense ``rows`` in place to L2 norm at most ``bound``.

    The same rule as :func:`clip_rows` for whole (dense) rows: non-finite
    rows become zero, subnormal factors are applied by division.

    Returns
    -------
    scale : ndarray of shape (n_rows,)
        The factor applied to each row (0 for rows set to zero).
    """
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        norms = row_norms_l2(rows)
        scale = clip_scale(norms, bound)
        tiny = (scale > 0.0) & (scale < np.finfo(np.float64).tiny)
        exact = rows[tiny] / norms[tiny, None] * bound
        rows *= scale[:, None]
    rows[scale == 0.0] = 0.0
    rows[tiny] = exact
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
