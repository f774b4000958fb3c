"""Stable-vote release: distance to instability and the sparse vector (Thakkar 2019, Sec. 5.3-5.4).

The numerics behind :class:`~skdp.ensemble.PrivateQueryAnswerer`: the distance
to instability of a vote (with global sensitivity exactly 1), the threshold
that bounds the probability of releasing an unstable vote, and the stateful
release of a stream of votes through the sparse vector technique.
"""

import functools
import math

import numpy as np
from scipy.optimize import brentq

from skdp.exceptions import SparseVectorExhaustedError
from skdp.mechanisms import SparseVector, sparse_vector_scales
from skdp.mechanisms._base import _LockedState
from skdp.mechanisms._sparse_vector import CALIBRATIONS
from skdp.utils._validation import (
    check_epsilon_delta,
    check_option,
    check_positive_int,
    check_real,
)

__all__ = ["distance_to_instability", "unanimous_vote_teachers"]

ANSWERED, ABSTAINED, REFUSED = 1, 0, -1


def distance_to_instability(counts):
    """Distance to instability of the majority vote, with global sensitivity 1.

    Parameters
    ----------
    counts : array-like of shape (n_queries, n_classes)
        Teacher votes per query and class, ``n_classes >= 2``.

    Returns
    -------
    dist : ndarray of shape (n_queries,)
        ``max(0, floor((g - 1) / 2))`` where ``g`` is the gap between the
        largest and the second largest count.

    Notes
    -----
    Thakkar (2019), Alg. 9 line 6 and Alg. 10 line 7 use ``max(0, g - 1)``. Under
    add/remove neighbours (Sec. 5.1) one record changes the training set of
    one teacher, whose vote can move from the top class to the runner-up: the
    top count drops by 1 and the second rises by 1, so ``g`` moves by 2 and
    ``g - 1`` has sensitivity 2, not the 1 that Alg. 8 needs (its Laplace
    noise ``Lap(2 lambda)`` is calibrated to sensitivity 1). It also breaks
    Lemma 5.3.3: at ``g = 2`` Thakkar (2019) reports distance 1 although one
    record can create a tie that the tie-break resolves the other way.

    From Def. 5.3.1 directly: every record changes at most one vote, and every
    changed vote shrinks the gap between the top class and any other class by
    at most 2, so after ``k`` changes that gap is still ``>= g - 2k``; the
    majority cannot change while ``g - 2k >= 1``. Hence the vote is ``k``-stable
    for every ``k <= (g - 1) / 2``, and ``floor((g - 1) / 2)`` (clipped at 0)
    is a distance to instability. It has the two properties Thm. 5 and Thm. 7
    rely on: (i) global sensitivity exactly 1 (``g`` moves by at most 2, the
    floor of half of it by at most 1; ``g = 3 -> 1`` attains it), and (ii) a
    positive distance on ``D`` implies the same majority on every neighbour
    of ``D``, so when neighbours disagree both distances are 0.

    Examples
    --------
    >>> from skdp.ensemble import distance_to_instability
    >>> distance_to_instability([[10, 0, 0], [6, 4, 0], [5, 5, 0], [1, 7, 2]]).tolist()
    [4, 0, 0, 2]
    """
    counts = np.asarray(counts)
    if counts.ndim != 2 or counts.shape[1] < 2:
        raise ValueError("counts must have shape (n_queries, n_classes) with n_classes >= 2.")
    top_two = np.partition(counts, -2, axis=1)[:, -2:]
    gap = top_two[:, 1] - top_two[:, 0]
    return np.maximum(0, (gap - 1) // 2)


def laplace_difference_sf(x, scale_1, scale_2):
    """``P[A - B > x]`` for independent ``A ~ Lap(scale_1)`` and ``B ~ Lap(scale_2)``.

    Parameters
    ----------
    x : float
        The point.
    scale_1, scale_2 : float
        Laplace scales, > 0.

    Returns
    -------
    p : float
        The survival function of the difference (a symmetric law).
    """
    if x < 0:
        return 1.0 - laplace_difference_sf(-x, scale_1, scale_2)
    a, b = max(scale_1, scale_2), min(scale_1, scale_2)
    if math.isclose(a, b, rel_tol=1e-9):
        # Sum of two Lap(a): density convolution gives (2 + x/a) e^{-x/a} / 4.
        return (2.0 + x / a) * math.exp(-x / a) / 4.0
    # Partial fractions of the characteristic function 1 / ((1 + a^2 t^2)(1 + b^2 t^2)):
    # (a^2 e^{-x/a} - b^2 e^{-x/b}) / (2 (a^2 - b^2)), divided through by a^2 (squaring the
    # scales overflowed from a = 1e154 and underflowed below b = 1e-162).
    r2 = (b / a) ** 2
    return (math.exp(-x / a) - r2 * math.exp(-x / b)) / (2.0 * (1.0 - r2))


def _laplace_difference_isf(p, scale_1, scale_2):
    """The ``x`` with ``laplace_difference_sf(x) = p`` (``0 < p < 1``), rounded up, never down.

    ``laplace_difference_sf(x) <= p`` holds for the returned ``x`` up to the
    closed form's own rounding, which the check allows for: ``x / scale`` is
    rounded before ``exp``, so its relative error is a few units of round-off
    times ``1 + |x| / scale``.
    """
    # Solved in units of the larger scale (the law is a scale family), so that the bracket
    # stays finite at scales near the largest float.
    unit = max(scale_1, scale_2)
    return unit * _standard_laplace_difference_isf(p, scale_1 / unit, scale_2 / unit)


def _standard_laplace_difference_isf(p, scale_1, scale_2):
    """:func:`_laplace_difference_isf` for ``max(scale_1, scale_2) = 1``."""
    big = 1e3 * (scale_1 + scale_2) * (1.0 + abs(math.log(min(p, 1.0 - p))))
    xtol = 1e-12 * big
    x = brentq(lambda x: laplace_difference_sf(x, scale_1, scale_2) - p, -big, big,
               xtol=xtol, rtol=1e-14)
    # brentq stops within its tolerance on either side of the root (below it, the
    # tail was 1 + 1.6e-8 times p at p = 1e-31): step up until the tail is at most p.
    rounding = 16 * np.finfo(float).eps * (1.0 + abs(x) / min(scale_1, scale_2))
    while laplace_difference_sf(x, scale_1, scale_2) > p * (1.0 - rounding):
        x += xtol
    return x


@functools.lru_cache(maxsize=256)  # a pure function of scalars; brentq costs ~1 ms
def release_calibration(epsilon, delta, max_unstable, max_queries, calibration):
    """Noise scales and threshold of the stable-vote release.

    Parameters
    ----------
    epsilon : float
        Total privacy parameter, > 0.
    delta : float
        Total delta, in ``(0, 1)``.
    max_unstable : int
        ``T``, the number of abstentions allowed.
    max_queries : int
        ``m~``, the declared number of queries.
    calibration : {"lyu", "thesis"}
        See :class:`~skdp.ensemble.PrivateQueryAnswerer`.

    Returns
    -------
    sv_delta : float
        The delta given to the sparse vector (``delta / 2`` for Thakkar (2019),
        0 for the pure-DP ``"lyu"``).
    threshold_scale, query_scale : float
        Laplace scales of the threshold and of each distance.
    threshold : float
        ``w``: a vote with distance 0 passes ``0 + Lap(query_scale) > w +
        Lap(threshold_scale)`` with probability at most ``(delta - sv_delta) / m~``.
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
    max_unstable = check_positive_int(max_unstable, "max_unstable")
    max_queries = check_positive_int(max_queries, "max_queries")
    calibration = check_option(calibration, "calibration", CALIBRATIONS)
    if calibration == "thesis":
        # Thakkar (2019), Alg. 8 line 1 (= Alg. 10 lines 1-2): lambda = sqrt(32 T log(2/delta))/eps,
        # i.e. Alg. 6 run at delta/2, and w = 2 lambda log(2 m~ / delta).
        sv_delta = delta / 2.0
        thr_scale, query_scale, _ = sparse_vector_scales(epsilon, sv_delta, max_unstable,
                                                         calibration="thesis")
        # ln(2 m~ / delta) as ln(2 m~) - ln(delta): the quotient overflowed below delta = 1e-305.
        threshold = 2.0 * thr_scale * (math.log(2.0 * max_queries) - math.log(delta))
        return sv_delta, thr_scale, query_scale, threshold
    # Lyu et al.'s sparse vector is pure epsilon-DP, so the whole delta covers the release
    # of unstable votes: P[Lap(query) - Lap(threshold) > w] = delta / m~ (union bound).
    thr_scale, query_scale, _ = sparse_vector_scales(epsilon, 0.0, max_unstable,
                                                     calibration="lyu")
    threshold = _laplace_difference_isf(delta / max_queries, query_scale, thr_scale)
    return 0.0, thr_scale, query_scale, threshold


def unanimous_vote_teachers(epsilon, delta, max_unstable, max_queries, calibration="lyu",
                            probability=0.99):
    """Smallest number of teachers at which a unanimous vote is answered.

    Parameters
    ----------
    epsilon : float
        Total privacy parameter, > 0.
    delta : float
        Total delta, in ``(0, 1)``.
    max_unstable : int
        ``T``, the number of abstentions allowed.
    max_queries : int
        ``m~``, the declared number of queries.
    calibration : {"lyu", "thesis"}, default="lyu"
        See :class:`~skdp.ensemble.PrivateQueryAnswerer`.
    probability : float, default=0.99
        Required probability that one query with a unanimous vote is answered
        (``0.5`` gives the point where the distance reaches the threshold).

    Returns
    -------
    n_teachers : int
        The smallest odd ``b`` whose unanimous vote (distance ``(b - 1) / 2``)
        is answered with at least ``probability``. Votes that are not unanimous
        need more teachers.

    Examples
    --------
    >>> from skdp.ensemble import unanimous_vote_teachers
    >>> unanimous_vote_teachers(1.0, 1e-6, 10, 1000, calibration="lyu")
    1103
    >>> unanimous_vote_teachers(1.0, 1e-6, 10, 1000, calibration="thesis")
    6983
    """
    probability = check_real(probability, "probability", low=0.0, high=1.0,
                             low_inclusive=False, high_inclusive=False)
    _, thr_scale, query_scale, threshold = release_calibration(
        epsilon, delta, max_unstable, max_queries, calibration)
    # Answered iff dist + Lap(query) > w + Lap(threshold), i.e. P = sf(w - dist).
    dist = math.ceil(threshold - _laplace_difference_isf(probability, query_scale, thr_scale))
    return 2 * max(dist, 0) + 1


class StableVoteRelease(_LockedState):
    """Online release of majority votes (Thakkar 2019, Alg. 8 with Alg. 9's distance).

    Each vote is released exactly when the noisy distance to instability
    clears the noisy threshold; otherwise the query is an abstention, charged
    to the sparse vector. After ``max_unstable`` abstentions, or after
    ``max_queries`` queries, every further query is refused.

    Parameters
    ----------
    epsilon, delta, max_unstable, max_queries, calibration
        See :func:`release_calibration`.
    random_state : numpy.random.Generator
        Noise source.
    """

    _sparse_vector_class = SparseVector  # a test hook: the audit swaps in an under-noised copy

    def __init__(self, *, epsilon, delta, max_unstable, max_queries, calibration, random_state):
        sv_delta, _, _, self.threshold = release_calibration(
            epsilon, delta, max_unstable, max_queries, calibration)
        self.max_queries = max_queries
        self.sparse_vector = self._sparse_vector_class(
            epsilon=epsilon, delta=sv_delta, threshold=self.threshold, cutoff=max_unstable,
            calibration=calibration, random_state=random_state,
            # The owner (PrivateQueryAnswerer) refuses pickles and copies unless its own
            # allow_pickle opts in; the release is never handed out on its own.
            allow_pickle=True)
        self.n_queries = 0
        self._init_lock()

    @property
    def exhausted(self):
        """Whether every further query is refused."""
        return self.sparse_vector.exhausted or self.n_queries >= self.max_queries

    def release(self, counts):
        """Release the majority of each vote that is stable enough.

        Parameters
        ----------
        counts : ndarray of shape (n_queries, n_classes)
            Teacher votes, one row per query, in the order they are asked.

        Returns
        -------
        top : ndarray of shape (n_queries,)
            Index of the majority class (ties: the smallest index); meaningful
            only where ``status == 1``.
        status : ndarray of shape (n_queries,)
            1 answered, 0 abstained (charged to the sparse vector), -1 refused.
        """
        top = np.argmax(counts, axis=1)
        dist = distance_to_instability(counts)
        status = np.full(len(counts), REFUSED)
        # One batch at a time: concurrent batches (an online service) each passed the
        # max_queries check before the others counted, overrunning m~ (and the union bound
        # over m~ queries that the threshold w rests on).
        with self._lock:
            if self.exhausted:
                raise SparseVectorExhaustedError(
                    "the answerer has used its declared max_queries queries or its "
                    "max_unstable abstentions and refuses every further query."
                )
            for i, d in enumerate(dist):
                if self.exhausted:
                    break
                self.n_queries += 1
                status[i] = ANSWERED if self.sparse_vector.query(float(d)) else ABSTAINED
        return top, status
