"""Trees whose splits are chosen privately by the exponential mechanism, on public bins.

Each internal node draws ``max_features`` candidate features at random (public
randomness), every threshold on the public bin edges inside the node's path
range is a candidate, and one (feature, threshold) pair is chosen by the
exponential mechanism (McSherry and Talwar 2007) on a split score of bounded
sensitivity: the Gini score of Friedman and Schuster (2010, Sec. 4.1) for
classification forests; for boosting the norm score ``sum_children ||G_c||``
(sensitivity ``2 c``, :func:`norm_sensitivity`) or the gradient gain of Li et
al. (2020, Thm. 2). All nodes of one depth level hold disjoint rows, so a level costs as
much as one node (parallel composition, see :func:`split_level_rho`).

The mechanism is sampled exactly with the Gumbel-max trick (Durfee and Rogers
2019): thresholds whose score is equal (between two occupied bins) are
grouped into runs weighted by their length, so a level costs ``O(n * max_features)``
whatever the number of bins.
"""

import math

import numpy as np

from skdp.ensemble._random_trees import RandomTree

__all__ = ["GINI_SENSITIVITY", "gradient_sensitivity", "grow_private_tree", "norm_sensitivity",
           "split_level_rho"]

# Replace-one sensitivity of the Gini score sum_c sum_k n_ck^2 / n_c: adding a row to a
# child moves its term by (n (2 n_k + 1) - S) / (n (n + 1)) in (-1, 1] (S = sum_k n_k^2 <= n^2;
# Friedman and Schuster 2010, Sec. 4.1, bound it by 2); removing one by [-1, 1); a
# replacement by less than 2 in absolute value.
GINI_SENSITIVITY = 2.0

# Largest exponential-mechanism coefficient eps0 / (2 Delta) used: a smaller coefficient is
# more private, and this keeps scale * score finite at epsilon = 1e300.
_MAX_SCALE = 1e9


def gradient_sensitivity(grad_norm):
    """Replace-one sensitivity of the gain ``sum_c ||G_c||^2 / (n_c + lam)``, ``lam >= 0``.

    Adding a row with ``||g|| <= g*`` moves a child's term by a value in
    ``[-3 g*^2, g*^2]`` (Li et al. 2020, Thm. 2: ``Delta_G = 3 g*^2``), removing
    one by ``[-g*^2, 3 g*^2]``; a replacement by at most ``4 g*^2``.
    """
    return 4.0 * grad_norm**2


def norm_sensitivity(grad_norm):
    """Replace-one sensitivity of the norm score ``sum_c ||G_c||`` (gradient rows ``||g|| <= g*``).

    Adding or removing a row moves the norm of its child's gradient sum by a
    value in ``[-g*, g*]`` (triangle inequality), the other child's not at
    all; a replacement moves the score by at most ``2 g*``. The score is the
    gradient analogue of the "max" score of Friedman and Schuster (2010,
    Sec. 4.1; sensitivity 1, against 2 for their Gini score): it grows
    linearly, not quadratically, with the gradient sums, so gradients well
    below their bound ``g*`` are not drowned by a sensitivity set for the
    largest ones.
    """
    return 2.0 * grad_norm


def split_level_rho(eps0):
    """zCDP cost of one depth level of exponential-mechanism splits with parameter ``eps0``.

    Each node runs the mechanism ``exp(eps0 u / (2 Delta))`` with ``Delta`` the
    replace-one sensitivity of ``u``. If the replaced and the new row sit in
    the same node, its score changes by at most ``Delta`` and the mechanism is
    ``eps0``-bounded-range (Durfee and Rogers 2019, Sec. 4);
    if they sit in two nodes, each sees one addition or removal, whose score
    changes span at most ``Delta`` (the bounds above), so each is
    ``eps0 / 2``-bounded-range. An ``eps``-bounded-range mechanism is
    ``eps^2 / 8``-zCDP (Cesar and Rogers 2021), so the level is
    ``max(eps0^2 / 8, 2 (eps0 / 2)^2 / 8) = eps0^2 / 8``-zCDP.
    """
    return eps0**2 / 8.0


def _gini(S, C):
    with np.errstate(invalid="ignore", divide="ignore"):
        v = np.einsum("ij,ij->i", S, S) / C
    return np.where(C > 0, v, 0.0)


def _norm(S, C):
    return np.sqrt(np.einsum("ij,ij->i", S, S))


def _gain(S, C, lam):
    return np.einsum("ij,ij->i", S, S) / (C + lam)


def grow_private_tree(B, stats, depth, n_bins, max_features, scale, rng, score="gini",
                      lam=1.0):
    """Grow a complete tree of depth ``depth`` with exponential-mechanism splits.

    Parameters
    ----------
    B : ndarray of shape (n, d)
        Binned data (bin indices in ``0 .. n_bins - 1``).
    stats : ndarray of shape (n, k)
        Per-row statistics: one-hot labels (``score="gini"``) or gradient rows
        (``score="gain"``, ``sum_c ||G_c||^2 / (n_c + lam)``, or ``score="norm"``,
        ``sum_c ||G_c||``).
    scale : float
        The mechanism's coefficient ``eps0 / (2 Delta)``: a candidate of score
        ``u`` is drawn with probability proportional to ``exp(scale * u)``.

    Returns
    -------
    tree : RandomTree
    leaf : ndarray of shape (n,)
        The leaf of every row.
    """
    n, d = B.shape
    scale = min(float(scale), _MAX_SCALE)
    n_internal = (1 << depth) - 1
    feature = np.zeros(max(n_internal, 1), dtype=np.intp)
    threshold = np.full(max(n_internal, 1), n_bins, dtype=np.intp)  # n_bins: all rows left
    node = np.zeros(n, dtype=np.intp)
    lo = np.zeros((1, d), dtype=np.intp)
    hi = np.full((1, d), n_bins - 1, dtype=np.intp)
    k = min(max_features, d)
    rows = np.arange(n)
    if score == "gini":
        score_fn = _gini
    elif score == "norm":
        score_fn = _norm
    else:
        def score_fn(S, C):
            return _gain(S, C, lam)
    for level in range(depth):
        m = 1 << level
        # Public: k distinct candidate features per node among those still open.
        draw = rng.random((m, d))
        draw[hi <= lo] = 2.0
        slots = (np.argpartition(draw, k - 1, axis=1)[:, :k] if k < d
                 else np.broadcast_to(np.arange(d), (m, d)))
        valid = np.take_along_axis(draw, slots, 1) < 2.0
        slo = np.take_along_axis(lo, slots, 1)
        shi = np.take_along_axis(hi, slots, 1)
        # Node totals: the score with every row on one side (also the score of empty nodes).
        CT = np.bincount(node, minlength=m).astype(float)
        ST = np.column_stack([np.bincount(node, stats[:, j], minlength=m)
                              for j in range(stats.shape[1])])
        u0 = score_fn(ST, CT)
        # Entries (row, slot) keyed by (node, slot, bin), sorted.
        ok = valid[node]
        bins_rs = B[rows[:, None], slots[node]]
        key = ((node[:, None] * k + np.arange(k)) * n_bins + bins_rs)[ok]
        entry_rows = np.broadcast_to(rows[:, None], ok.shape)[ok]
        n_cells = m * k * n_bins
        if n_cells <= 4 * key.size:
            C = np.bincount(key, minlength=n_cells)
            occ = np.flatnonzero(C)
            C = C[occ].astype(float)
            S = np.column_stack([np.bincount(key, stats[entry_rows, j], minlength=n_cells)[occ]
                                 for j in range(stats.shape[1])])
        else:
            occ, inv = np.unique(key, return_inverse=True)
            C = np.bincount(inv).astype(float)
            S = np.column_stack([np.bincount(inv, stats[entry_rows, j])
                                 for j in range(stats.shape[1])])
        group = occ // n_bins
        b = occ - group * n_bins
        # Left sums at each occupied bin (rows with bin <= b go left at threshold b).
        first = np.r_[True, group[1:] != group[:-1]] if occ.size else np.zeros(0, bool)
        gi = np.cumsum(first) - 1
        starts = np.flatnonzero(first)
        ends = np.r_[starts[1:] - 1, occ.size - 1] if occ.size else starts
        CS, CC = np.cumsum(S, axis=0), np.cumsum(C)
        base_S = np.vstack([np.zeros((1, S.shape[1])), CS[ends[:-1]]])
        base_C = np.r_[0.0, CC[ends[:-1]]]
        SL, CL = CS - base_S[gi], CC - base_C[gi]
        gnode, gslot = group // k, group % k
        u_entry = score_fn(SL, CL) + score_fn(ST[gnode] - SL, CT[gnode] - CL)
        last = np.zeros(occ.size, bool)
        last[ends] = True
        nxt = np.r_[b[1:], 0]
        run_end = np.where(last, shi[gnode, gslot], nxt)  # exclusive end of the run
        len_entry = run_end - b
        # Prefix runs [lo, first occupied bin - 1] of every valid (node, slot); empty: [lo, hi - 1].
        first_bin = shi.copy()
        first_bin[gnode[starts], gslot[starts]] = b[starts]
        pnode, pslot = np.nonzero(valid)
        len_prefix = first_bin[pnode, pslot] - slo[pnode, pslot]
        run_node = np.r_[gnode, pnode]
        run_slot = np.r_[gslot, pslot]
        run_start = np.r_[b, slo[pnode, pslot]]
        run_len = np.r_[len_entry, len_prefix]
        run_u = np.r_[u_entry, u0[pnode]] - u0[run_node]  # shift by a per-node constant
        with np.errstate(divide="ignore"):
            # Exponential mechanism (McSherry and Talwar 2007, Thm. 6) by Gumbel-max, every
            # threshold of a run a candidate of the same score: weight len * exp(scale u).
            value = scale * run_u + np.log(run_len) + rng.gumbel(size=run_len.size)
        best = np.full(m, -np.inf)
        np.maximum.at(best, run_node, value)
        win = np.flatnonzero((value == best[run_node]) & np.isfinite(value))
        if np.bincount(run_node[win], minlength=m).max(initial=0) > 1:  # a tie (probability 0)
            win = win[np.unique(run_node[win], return_index=True)[1]]
        split_nodes, chosen = run_node[win], win
        t = run_start[chosen] + np.floor(rng.random(chosen.size) * run_len[chosen]).astype(np.intp)
        f = slots[split_nodes, run_slot[chosen]]
        feature[m - 1 + split_nodes] = f
        threshold[m - 1 + split_nodes] = t
        # Children's path ranges; rows move down.
        lo = np.repeat(lo, 2, axis=0)
        hi = np.repeat(hi, 2, axis=0)
        hi[2 * split_nodes, f] = t
        lo[2 * split_nodes + 1, f] = t + 1
        feat_l, thr_l = feature[m - 1:2 * m - 1], threshold[m - 1:2 * m - 1]
        right = B[rows, feat_l[node]] > thr_l[node]
        node = 2 * node + right
    return RandomTree(feature, threshold, depth), node


def exp_mech_eps0(rho_level):
    """``eps0`` whose level cost :func:`split_level_rho` is ``rho_level``."""
    return math.sqrt(8.0 * rho_level)
