"""Helpers that scenarios share: result rows, timing, repeated private fits."""

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.metrics import accuracy_score

__all__ = ["Dataset", "evaluate_baseline", "evaluate_private", "make_row", "progress", "timed_fit"]

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


def progress(iterable, desc="", total=None):
    """Wrap ``iterable`` in a tqdm progress bar when tqdm is installed.

    The bar is shown only when the output is a terminal (``disable=None``): a
    log redirected to a file gets no bar redraws.
    """
    try:
        from tqdm.auto import tqdm
    except ImportError:  # progress bars are an optional extra
        return iterable
    return tqdm(iterable, desc=desc, total=total, leave=False, disable=None)


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
