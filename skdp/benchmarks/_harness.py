"""Helpers that scenarios share: result rows, timing, repeated private fits."""

import math
import sys
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.metrics import accuracy_score

__all__ = ["Dataset", "evaluate_baseline", "evaluate_private", "make_row", "progress", "timed_fit",
           "versus"]

ROW_FIELDS = ("scenario", "dataset", "method", "epsilon", "metric", "mean", "std",
              "n_draws", "fit_seconds", "time_ratio", "note")


def make_row(scenario, dataset, method, epsilon, metric, values, *, fit_seconds=float("nan"),
             baseline_seconds=None, note=""):
    """Build one result row.

    Parameters
    ----------
    scenario, dataset, method : str
        What was measured.
    epsilon : float
        Privacy budget; ``math.inf`` marks a non-private baseline.
    metric : str
        Metric name, e.g. ``"accuracy"``.
    values : float or sequence of float
        One value per noise draw.
    fit_seconds : float, default=nan
        Mean fit time.
    baseline_seconds : float or None, default=None
        Fit time of the non-private reference measured in the same run; gives
        ``time_ratio = fit_seconds / baseline_seconds``.
    note : str, default=""
        Free text.

    Returns
    -------
    row : dict
    """
    values = np.atleast_1d(np.asarray(values, dtype=float))
    ratio = (fit_seconds / baseline_seconds
             if baseline_seconds and np.isfinite(fit_seconds) else float("nan"))
    return {
        "scenario": scenario, "dataset": dataset, "method": method,
        "epsilon": float(epsilon), "metric": metric,
        "mean": float(np.mean(values)), "std": float(np.std(values)),
        "n_draws": int(values.size), "fit_seconds": float(fit_seconds),
        "time_ratio": float(ratio), "note": note,
    }


def versus(mean, *, published=None, twin=None):
    """A row's verdict: its difference with a published number and/or a non-private twin.

    Parameters
    ----------
    mean : float
        The row's mean accuracy, as a fraction.
    published : (float, str) or None, default=None
        A published accuracy in percent and its source, e.g.
        ``(87.8, "Thakkar (2019), Fig. 4.10")``.
    twin : (str, float) or None, default=None
        The non-private twin's name and accuracy (a fraction), fitted in the same run.

    Returns
    -------
    note : str
        E.g. ``"vs published 87.8 (Thakkar (2019), Fig. 4.10): +1.1; vs
        LogisticRegression: -6.6 points"``.

    Examples
    --------
    >>> versus(0.889, published=(87.8, "Thakkar (2019), Fig. 4.10"))
    'vs published 87.8 (Thakkar (2019), Fig. 4.10): +1.1'
    >>> versus(0.889, twin=("LogisticRegression", 0.955))
    'vs LogisticRegression: -6.6 points'
    """
    parts = []
    if published is not None:
        value, source = published
        parts.append(f"vs published {value:.1f} ({source}): {100 * mean - value:+.1f}")
    if twin is not None:
        name, value = twin
        parts.append(f"vs {name}: {100 * (mean - value):+.1f} points")
    return "; ".join(parts)


@dataclass
class Dataset:
    """A train/test split with a name."""

    name: str
    X_train: object
    y_train: object
    X_test: object
    y_test: object


def timed_fit(estimator, X, y, **fit_params):
    """Fit ``estimator`` and return ``(estimator, seconds)``."""
    start = time.perf_counter()
    estimator.fit(X, y, **fit_params)
    return estimator, time.perf_counter() - start


_DEPTH = [0]  # nesting level of the running progress loops (indents the fallback lines)


def _step_name(item):
    """A short printable name for a loop item (numbers and strings only)."""
    if isinstance(item, (str, int, float, np.integer, np.floating)):
        return f"{item:g}" if isinstance(item, (float, np.floating)) else str(item)
    if isinstance(item, tuple) and item and isinstance(item[0], str):
        return item[0]  # (name, ...) pairs, e.g. dict items or method tuples
    name = getattr(item, "name", "")
    return name if isinstance(name, str) else ""


def _progress_lines(iterable, desc, total, stream):
    """Print one line per step to ``stream`` (the fallback when it is not a terminal)."""
    if total is None:
        try:
            total = len(iterable)
        except TypeError:
            total = None
    indent = "  " * (_DEPTH[0] + 1)
    start = time.perf_counter()
    _DEPTH[0] += 1
    try:
        for i, item in enumerate(iterable, 1):
            count = f"{i}/{total}" if total else f"{i}"
            name = _step_name(item)
            line = f"{indent}[{count}] {desc}{': ' + name if name else ''}"
            elapsed = time.perf_counter() - start
            print(f"{line[:86]} ({elapsed:.0f} s)", file=stream, flush=True)
            yield item
    finally:
        _DEPTH[0] -= 1


def progress(iterable, desc="", total=None):
    """Report the steps of a loop: a tqdm bar on a terminal, a line per step otherwise.

    On a terminal (and with tqdm installed) the loop gets a progress bar on
    stderr. When stderr is redirected, or tqdm is missing, each step prints one
    line to stderr instead (``[3/7] P-SGD on Synthetic-L: 0.1 (41 s)``, the
    seconds since the loop began), so a log written to a file still shows
    where a long run is.

    Parameters
    ----------
    iterable : iterable
        The steps.
    desc : str, default=""
        What the loop does.
    total : int or None, default=None
        Number of steps, if ``len(iterable)`` does not give it.

    Returns
    -------
    iterable
    """
    stream = sys.stderr
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        try:
            from tqdm.auto import tqdm
        except ImportError:  # progress bars are an optional extra
            pass
        else:
            return tqdm(iterable, desc=desc, total=total, leave=False, file=stream)
    return _progress_lines(iterable, desc, total, stream)


def evaluate_private(scenario, data, method, estimator, epsilons, n_draws, *, seed=0,
                     baseline_seconds=None, metric=accuracy_score, metric_name="accuracy"):
    """Fit ``estimator`` at each epsilon over ``n_draws`` noise draws and score it.

    Parameters
    ----------
    scenario : str
        Scenario name.
    data : Dataset
        The split to fit and score on.
    method : str
        Column name of the estimator.
    estimator : estimator
        An skdp estimator with ``epsilon`` and ``random_state`` parameters.
    epsilons : sequence of float
        Budgets to sweep.
    n_draws : int
        Noise draws per budget (seeds ``seed``, ``seed + 1``, ...).
    seed : int, default=0
        First seed (benchmarks are reproducible; real releases use ``None``).
    baseline_seconds : float or None
        Non-private fit time measured in the same run.
    metric : callable, default=accuracy_score
        ``metric(y_true, y_pred)``.
    metric_name : str, default="accuracy"
        Its name in the table.

    Returns
    -------
    rows : list of dict
    """
    rows = []
    for eps in progress(epsilons, desc=f"{method} on {data.name}"):
        scores, seconds = [], []
        for draw in range(n_draws):
            est = clone(estimator).set_params(epsilon=eps, random_state=seed + draw)
            est, sec = timed_fit(est, data.X_train, data.y_train)
            scores.append(metric(data.y_test, est.predict(data.X_test)))
            seconds.append(sec)
        rows.append(make_row(scenario, data.name, method, eps, metric_name, scores,
                             fit_seconds=float(np.mean(seconds)),
                             baseline_seconds=baseline_seconds))
    return rows


def evaluate_baseline(scenario, data, method, estimator, *, metric=accuracy_score,
                      metric_name="accuracy"):
    """Fit a non-private reference once; return ``(row, fit_seconds)``."""
    est, sec = timed_fit(clone(estimator), data.X_train, data.y_train)
    score = metric(data.y_test, est.predict(data.X_test))
    row = make_row(scenario, data.name, method, math.inf, metric_name, [score],
                   fit_seconds=sec, baseline_seconds=sec, note="non-private")
    return row, sec


def sparse_classification_problem(n, d, density, rng, n_informative=20, informative_density=0.2):
    """CSR data of the given density whose labels follow ``n_informative`` features."""
    informative = rng.choice(d, n_informative, replace=False)
    per_row = max(1, int(round(density * d - n_informative * informative_density)))
    cols = rng.integers(0, d, size=(n, per_row))
    mask = rng.random((n, n_informative)) < informative_density
    rows_inf, which = np.nonzero(mask)
    rows = np.concatenate([np.repeat(np.arange(n), per_row), rows_inf])
    cols = np.concatenate([cols.ravel(), informative[which]])
    vals = rng.standard_normal(rows.size)
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    w = np.zeros(d)
    w[informative] = rng.choice([-1.0, 1.0], n_informative)
    y = (X @ w + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y
