"""Synthetic low-rank ratings matrices (Thakkar (2019), Sec. 6.4)."""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

from skdp.utils._random import check_random_state
from skdp.utils._validation import check_positive_int, check_real

__all__ = ["make_low_rank_ratings"]

_CHUNK = 50_000  # users generated per block, bounds the temporary memory


def _distinct_items(rng, n_rows, n_items, k):
    """``k`` distinct uniformly random items per row, as an ``(n_rows, k)`` array.

    For ``k`` small against ``n_items`` the first ``k`` distinct values of a
    row of i.i.d. uniform draws form a uniform random ``k``-subset; rows whose
    draws held fewer than ``k`` distinct values are drawn again. Otherwise the
    ``k`` smallest of ``n_items`` uniform keys are taken.
    """
    if 4 * k >= n_items:
        return np.argpartition(rng.random((n_rows, n_items)), k - 1, axis=1)[:, :k]
    n_draws = k + 2 * (k * k // n_items) + 10
    dtype = np.uint16 if n_items <= np.iinfo(np.uint16).max else np.int64
    out = np.empty((n_rows, k), dtype=np.int64)
    todo = np.arange(n_rows)
    while todo.size:
        # 16-bit item ids let the stable sort below use a radix sort.
        draws = rng.integers(0, n_items, size=(todo.size, n_draws), dtype=dtype)
        order = np.argsort(draws, axis=1, kind="stable")
        ranked = np.take_along_axis(draws, order, axis=1)
        first_sorted = np.ones(ranked.shape, dtype=bool)
        first_sorted[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
        first = np.empty_like(first_sorted)
        np.put_along_axis(first, order, first_sorted, axis=1)
        keep = first & (np.cumsum(first, axis=1) <= k)
        full = keep.sum(axis=1) == k
        out[todo[full]] = draws[full][keep[full]].reshape(-1, k)
        todo = todo[~full]
    return out


def make_low_rank_ratings(n_users=500_000, n_items=400, *, n_ratings=80, rank=1,
                          test_fraction=0.01, noise=0.0, random_state=None):
    """Sparse ratings of a random low-rank matrix with entries in ``[-1, 1]``.

    Thakkar (2019), Sec. 6.4 ("Synthetic"): a random rank-one matrix
    ``Y* = u v^T`` with unit L-infinity norm, ``n_users = 500,000`` and
    ``n_items = 400`` (or 900); each user reveals ``n_ratings`` ratings at
    random items, and a random ``test_fraction`` of all revealed ratings is
    held out for testing, so every training row has at most ``n_ratings``
    ratings.

    The factors have i.i.d. uniform ``[-1, 1]`` entries; ``Y* = U V^T`` is
    scaled so that its largest absolute entry is 1.

    Parameters
    ----------
    n_users : int, default=500_000
        Number of users (rows).
    n_items : int, default=400
        Number of items (columns).
    n_ratings : int, default=80
        Ratings revealed per user (capped at ``n_items``), before the hold-out.
    rank : int, default=1
        Rank of ``Y*``.
    test_fraction : float, default=0.01
        Probability that a revealed rating is held out, in ``[0, 1)``.
    noise : float, default=0.0
        Standard deviation of Gaussian noise added to the revealed ratings.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the generator.

    Returns
    -------
    data : Bunch
        ``train`` and ``test``: CSR matrices of shape ``(n_users, n_items)``
        whose stored entries are the training and held-out ratings;
        ``user_factors`` (``n_users, rank``) and ``item_factors``
        (``n_items, rank``) with ``Y* = user_factors @ item_factors.T``;
        ``nuclear_norm``: the nuclear norm of ``Y*``.

    Examples
    --------
    >>> from skdp.datasets import make_low_rank_ratings
    >>> data = make_low_rank_ratings(1000, 50, n_ratings=10, random_state=0)
    >>> data.train.shape, int(data.train.getnnz(axis=1).max())
    ((1000, 50), 10)
    """
    n_users = check_positive_int(n_users, "n_users")
    n_items = check_positive_int(n_items, "n_items")
    k = min(check_positive_int(n_ratings, "n_ratings"), n_items)
    rank = check_positive_int(rank, "rank", high=min(n_users, n_items))
    test_fraction = check_real(test_fraction, "test_fraction", low=0.0, high=1.0,
                               high_inclusive=False)
    noise = check_real(noise, "noise", low=0.0)
    rng = check_random_state(random_state)

    u = rng.uniform(-1.0, 1.0, size=(n_users, rank))
    v = rng.uniform(-1.0, 1.0, size=(n_items, rank))
    # Unit L-infinity norm. For rank one max|u_i v_j| = max|u| max|v|; for
    # higher rank the maximum is found block by block.
    if rank == 1:
        peak = np.abs(u).max() * np.abs(v).max()
    else:
        peak = max(np.abs(u[s:s + _CHUNK] @ v.T).max() for s in range(0, n_users, _CHUNK))
    u /= np.sqrt(peak)
    v /= np.sqrt(peak)

    parts = {"train": ([], [], []), "test": ([], [], [])}
    for start in range(0, n_users, _CHUNK):
        stop = min(start + _CHUNK, n_users)
        items = np.sort(_distinct_items(rng, stop - start, n_items, k), axis=1)
        values = (u[start:stop] * v[items, 0] if rank == 1
                  else np.einsum("ir,ijr->ij", u[start:stop], v[items]))
        if noise > 0:
            values += rng.normal(0.0, noise, size=values.shape)
        held = rng.random(items.shape) < test_fraction
        for name, mask in (("train", ~held), ("test", held)):
            counts, indices, data = parts[name]
            counts.append(mask.sum(axis=1))
            indices.append(items[mask].astype(np.int32))
            data.append(values[mask])

    def build(name):
        counts, indices, data = parts[name]
        indptr = np.concatenate([[0], np.cumsum(np.concatenate(counts))])
        return sp.csr_matrix((np.concatenate(data), np.concatenate(indices), indptr),
                             shape=(n_users, n_items))

    # ||U V^T||_nuc = ||R_u R_v^T||_nuc with U = Q_u R_u and V = Q_v R_v.
    r_u, r_v = np.linalg.qr(u, mode="r"), np.linalg.qr(v, mode="r")
    nuclear = float(np.linalg.svd(r_u @ r_v.T, compute_uv=False).sum())
    return Bunch(train=build("train"), test=build("test"), user_factors=u, item_factors=v,
                 nuclear_norm=nuclear)
