"""Empirical privacy auditing: a statistical lower bound on a mechanism's epsilon.

Run a mechanism many times on two neighbouring datasets. Any event ``S``
gives ``epsilon >= ln((P[M(D) in S] - delta) / P[M(D') in S])`` for a correct
``(epsilon, delta)``-DP mechanism's *true* epsilon. With Clopper-Pearson
bounds on the two probabilities this becomes a lower bound that holds with a
chosen confidence. A correctly calibrated mechanism must stay below its
claim; an under-noised copy should be caught above it.

The event (a threshold on a scalar statistic of the output) is chosen on a
separate batch of runs, so the held-out bound is not biased by the choice.
"""

import math
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed
from scipy import stats

from skdp.utils._random import check_random_state
from skdp.utils._validation import check_positive_int, check_real

__all__ = ["AuditResult", "audit_epsilon", "clopper_pearson"]


def clopper_pearson(k, n, alpha):
    """One-sided Clopper-Pearson bounds for a binomial proportion.

    Parameters
    ----------
    k : int
        Successes.
    n : int
        Trials.
    alpha : float
        Error probability of *each* one-sided bound.

    Returns
    -------
    lower, upper : float
        ``P[p >= lower] >= 1 - alpha`` and ``P[p <= upper] >= 1 - alpha``.
    """
    lower = 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))
    upper = 1.0 if k == n else float(stats.beta.ppf(1.0 - alpha, k + 1, n - k))
    return lower, upper


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_epsilon`.

    Attributes
    ----------
    epsilon_lower_bound : float
        Lower bound on the mechanism's epsilon, valid with probability at
        least ``confidence`` (``0.0`` when nothing could be shown).
    threshold : float
        Threshold of the chosen event on the statistic.
    event : str
        The event, e.g. ``"stat > t favours dataset_0"``.
    counts : tuple of int
        ``(hits on the favoured dataset, hits on the other, runs per dataset)``
        on the held-out batch.
    confidence : float
        Confidence level of the bound.
    """

    epsilon_lower_bound: float
    threshold: float
    event: str
    counts: tuple
    confidence: float


def _log_ratio(p_num_lo, p_den_hi, delta):
    if p_num_lo - delta <= 0.0 or p_den_hi <= 0.0:
        return 0.0
    return max(0.0, math.log((p_num_lo - delta) / p_den_hi))


def _log_ratio_bound(k_num, k_den, n, delta, alpha):
    p_num_lo, _ = clopper_pearson(k_num, n, alpha)
    _, p_den_hi = clopper_pearson(k_den, n, alpha)
    return _log_ratio(p_num_lo, p_den_hi, delta)


def _clopper_pearson_table(n, alpha):
    """:func:`clopper_pearson` for every ``k`` in ``0..n`` at once (the same values).

    The event search scores hundreds of count pairs; one vectorized quantile
    call per table replaces thousands of scalar ones.
    """
    k = np.arange(n + 1, dtype=float)
    lower = np.zeros(n + 1)
    upper = np.ones(n + 1)
    lower[1:] = stats.beta.ppf(alpha, k[1:], n - k[1:] + 1)
    upper[:-1] = stats.beta.ppf(1.0 - alpha, k[:-1] + 1, n - k[:-1])
    return lower.tolist(), upper.tolist()


def _run_chunk(mechanism, dataset, rng, n, vectorized, statistic):
    if vectorized:
        out = np.asarray(mechanism(dataset, rng, n))
        values = statistic(out) if statistic is not None else out
        values = np.asarray(values, dtype=float).reshape(n, -1)[:, 0]
        return values
    values = np.empty(n)
    for i in range(n):
        out = mechanism(dataset, rng)
        values[i] = float(statistic(out)) if statistic is not None else float(np.ravel(out)[0])
    return values


def _sample(mechanism, dataset, rng, n, vectorized, statistic, n_jobs):
    n_chunks = 1 if (n_jobs in (None, 1)) else 8
    sizes = [len(c) for c in np.array_split(np.arange(n), n_chunks) if len(c)]
    children = rng.spawn(len(sizes))
    parts = Parallel(n_jobs=n_jobs)(
        delayed(_run_chunk)(mechanism, dataset, child, size, vectorized, statistic)
        for child, size in zip(children, sizes)
    )
    return np.concatenate(parts)


def _best_event(s_fav, s_other, delta, alpha, n_candidates=400, table=None):
    """Threshold event maximising the conservative bound on the selection batch.

    ``table`` is :func:`_clopper_pearson_table` ``(len(s_fav), alpha)``, if
    already computed.
    """
    pooled = np.concatenate([s_fav, s_other])
    thresholds = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, n_candidates)))
    n = len(s_fav)
    lower, upper = _clopper_pearson_table(n, alpha) if table is None else table
    above_fav = (n - np.searchsorted(np.sort(s_fav), thresholds, side="right")).tolist()
    above_other = (n - np.searchsorted(np.sort(s_other), thresholds, side="right")).tolist()
    best = (0.0, thresholds[0], ">")
    for t, a_fav, a_other in zip(thresholds, above_fav, above_other):
        for op, k_fav, k_other in ((">", a_fav, a_other), ("<=", n - a_fav, n - a_other)):
            bound = _log_ratio(lower[k_fav], upper[k_other], delta)
            if bound > best[0]:
                best = (bound, t, op)
    return best


def _count(values, threshold, op):
    return int(np.sum(values > threshold)) if op == ">" else int(np.sum(values <= threshold))


def audit_epsilon(mechanism, dataset_0, dataset_1, *, n_runs=20000, n_select=None,
                  delta=0.0, confidence=0.95, statistic=None, vectorized=False,
                  random_state=None, n_jobs=None):
    """Clopper-Pearson lower bound on the epsilon of a randomized mechanism.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(dataset, rng)`` returns one output, drawing all its
        randomness from the :class:`numpy.random.Generator` ``rng``. With
        ``vectorized=True`` it is called as ``mechanism(dataset, rng, n)`` and
        returns ``n`` outputs stacked along the first axis.
    dataset_0, dataset_1 : object
        A pair of neighbouring inputs (ideally the worst-case pair).
    n_runs : int, default=20000
        Held-out runs per dataset used for the bound.
    n_select : int or None, default=None
        Runs per dataset used to choose the event (default ``n_runs // 2``).
    delta : float, default=0.0
        The mechanism's claimed delta (subtracted in the bound).
    confidence : float, default=0.95
        Probability that the returned bound is valid.
    statistic : callable or None, default=None
        Maps one output (or, when vectorized, the stacked outputs) to a
        scalar (per run). Default: the output's first entry.
    vectorized : bool, default=False
        See ``mechanism``.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the audit's own runs.
    n_jobs : int or None, default=None
        Run non-vectorized mechanisms in parallel with joblib.

    Returns
    -------
    result : AuditResult
        The bound, the chosen event and the held-out counts.

    Notes
    -----
    Both directions (an event more likely under ``dataset_0`` and one more
    likely under ``dataset_1``) are tested on the held-out batch; the four
    Clopper-Pearson bounds involved share the error probability
    ``1 - confidence`` (union bound), and the larger bound is returned.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.testing import audit_epsilon
    >>> def laplace(d, rng, n):
    ...     return d + rng.laplace(0.0, 1.0, size=n)
    >>> res = audit_epsilon(laplace, 0.0, 1.0, vectorized=True, random_state=0)
    >>> res.epsilon_lower_bound < 1.0
    True
    """
    n_runs = check_positive_int(n_runs, "n_runs", low=10)
    n_select = n_runs // 2 if n_select is None else check_positive_int(n_select, "n_select", low=10)
    delta = check_real(delta, "delta", low=0.0, high=1.0, high_inclusive=False)
    confidence = check_real(confidence, "confidence", low=0.0, high=1.0,
                            low_inclusive=False, high_inclusive=False)
    rng = check_random_state(random_state)
    rng_0, rng_1 = rng.spawn(2)
    s0 = _sample(mechanism, dataset_0, rng_0, n_select + n_runs, vectorized, statistic, n_jobs)
    s1 = _sample(mechanism, dataset_1, rng_1, n_select + n_runs, vectorized, statistic, n_jobs)
    sel0, test0 = s0[:n_select], s0[n_select:]
    sel1, test1 = s1[:n_select], s1[n_select:]
    alpha = (1.0 - confidence) / 4.0  # four one-sided bounds on the held-out batch

    best = AuditResult(0.0, float("nan"), "none", (0, 0, n_runs), confidence)
    table = _clopper_pearson_table(n_select, alpha)
    for name, sel_fav, sel_other, test_fav, test_other in (
        ("dataset_0", sel0, sel1, test0, test1),
        ("dataset_1", sel1, sel0, test1, test0),
    ):
        _, threshold, op = _best_event(sel_fav, sel_other, delta, alpha, table=table)
        k_fav, k_other = _count(test_fav, threshold, op), _count(test_other, threshold, op)
        bound = _log_ratio_bound(k_fav, k_other, n_runs, delta, alpha)
        if bound > best.epsilon_lower_bound or best.event == "none":
            best = AuditResult(bound, float(threshold), f"stat {op} t favours {name}",
                               (k_fav, k_other, n_runs), confidence)
    return best
