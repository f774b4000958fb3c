"""Per-row and per-entry clipping.

Clipping each row independently is a per-record operation: it changes no
neighbouring relation and costs no privacy, and it is what makes the
sensitivity bounds of every mechanism hold for arbitrary input.
"""

import numpy as np
import scipy.sparse as sp

from skdp.utils._validation import check_real

__all__ = ["clip_entries", "clip_rows_l2", "row_norms_l2"]


def _row_sums_of_squares(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


# Norms outside (_TINY, _HUGE) may have over- or underflowed when squared (float64
# constants: a Python float would overflow when cast to a float32 input's dtype).
_TINY, _HUGE = np.float64(1e-140), np.float64(1e140)
_CHUNK = 4096  # rows rescaled at a time: bounded memory however many rows are suspect


def row_norms_l2(X):
    """Euclidean norm of each row of a dense array or sparse matrix.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Input data.

    Returns
    -------
    norms : ndarray of shape (n_samples,)
        The row norms.
    """
    # The under- and overflows below are expected and handled; a global np.seterr(all="raise")
    # must not turn them into errors that depend on the rows (inside a fit, after the charge).
    with np.errstate(all="ignore"):
        return _row_norms_l2(X)


def _row_norms_l2(X):
    norms = np.sqrt(_row_sums_of_squares(X))
    # Squares of entries above ~1e154 overflow (clipping would then zero the
    # row) and below ~1e-154 underflow: recompute such rows scaled by their
    # largest entry. Rows holding inf or NaN keep their norm.
    suspect = np.flatnonzero(~((norms > _TINY) & (norms < _HUGE)))
    if sp.issparse(X) and X.format == "csr":
        suspect = suspect[np.diff(X.indptr)[suspect] > 0]  # no stored entry: exactly 0
    for start in range(0, suspect.size, _CHUNK):
        idx = suspect[start:start + _CHUNK]
        rows = abs(X[idx])
        peak = rows.max(axis=1)
        peak = np.asarray(peak.todense()).ravel() if sp.issparse(peak) else np.asarray(peak)
        ok = (peak > 0) & np.isfinite(peak)
        rows, peak, idx = rows[ok], peak[ok], idx[ok]
        if sp.issparse(rows):
            # Divide each stored entry by its row's peak: 1 / peak overflows below 2**-1024.
            scaled = sp.csr_matrix(rows, copy=True)
            scaled.data = scaled.data / np.repeat(peak, np.diff(scaled.indptr))
        else:
            scaled = rows / peak[:, None]
        norms[idx] = peak * np.sqrt(_row_sums_of_squares(scaled))
    return norms


def clip_rows_l2(X, max_norm):
    """Scale every row whose L2 norm exceeds ``max_norm`` down to that norm.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Input data; not modified.
    max_norm : float
        The norm bound, > 0.

    Returns
    -------
    X_clipped : {ndarray, sparse matrix}
        A clipped copy in the same format (CSR for sparse input).
    """
    max_norm = check_real(max_norm, "max_norm", low=0.0, low_inclusive=False)
    norms = row_norms_l2(X)
    scale = np.ones_like(norms)
    big = norms > max_norm
    with np.errstate(all="ignore"):  # scaling tiny entries may underflow (see row_norms_l2)
        scale[big] = max_norm / norms[big]
        if sp.issparse(X):
            return sp.diags(scale).dot(sp.csr_matrix(X)).tocsr()
        return X * scale[:, None]


def clip_entries(X, bound):
    """Clip every entry of ``X`` to ``[-bound, bound]`` (an L-infinity bound per row).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Input data; not modified.
    bound : float
        The bound, > 0.

    Returns
    -------
    X_clipped : {ndarray, sparse matrix}
        A clipped copy in the same format (CSR for sparse input).
    """
    bound = check_real(bound, "bound", low=0.0, low_inclusive=False)
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        # An entry stored several times is the sum of its copies: merge them
        # first, or each copy is clipped and the entry can exceed the bound.
        X.sum_duplicates()
        np.clip(X.data, -bound, bound, out=X.data)
        return X
    return np.clip(X, -bound, bound)
