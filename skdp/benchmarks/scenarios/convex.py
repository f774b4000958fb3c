"""Scenario ``convex``: every line of private convex optimization side by side.

The layout of Thakkar (2019), Fig. 4.4, 4.5 (logistic loss) and 4.10 (Huber SVM) on
the package's own generators: Synthetic-L (low-dimensional) and Synthetic-H
(high-dimensional, d >= n, ten informative features), epsilon from 0.01 to 10,
``delta = 1 / n^2`` (the estimators' default; objective and output
perturbation are pure epsilon-DP), 10 noise draws. Columns: the non-private
baseline, AMP (tuned) and hyperparameter-free AMP (untuned), P-SGD (DP-SGD),
P-PSGD and P-SCPSGD (permutation SGD, convex and strongly convex; P-PSGD also
with its default step, untuned), P-FW
(private Frank-Wolfe with Thakkar's (2019) accounting, and with the tighter zCDP
accounting), ObjPert and OutPert (Chaudhuri et al. 2011).

Tuning is **not private**, as in Thakkar (2019) (Sec. 4.4.1): for each epsilon
every point of a small fixed grid is scored on the test set with a few noise
draws, and the best point is reported with all draws (the row's note names
it). H-F AMP and the quick mode use fixed hyperparameters. Rows at epsilon = 0.1
note their difference with the accuracy Thakkar (2019) publishes for the same
column (Fig. 4.4, 4.5 and 4.10).

A last block times P-FW on a sparse CSR matrix (n = d = 50,000, 0.1% density)
and records its peak memory (``tracemalloc``): the data are never densified.
"""

import math
import time
import tracemalloc

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from skdp.benchmarks._harness import (
    Dataset,
    evaluate_baseline,
    make_row,
    progress,
    sparse_classification_problem,
    timed_fit,
    versus,
)
from skdp.benchmarks._registry import register_scenario
from skdp.datasets import make_synthetic_h, make_synthetic_l
from skdp.linear_model import (
    DPLogisticRegressionAMP,
    DPSGDClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    PermutationSGDClassifier,
    PrivateFrankWolfeClassifier,
)
from skdp.linear_model._losses import get_loss

SCENARIO = "convex"
EPSILONS = (0.01, 0.0316, 0.1, 0.316, 1.0, 3.16, 10.0)
# Quick mode: Synthetic-L at the published epsilon (0.1) and at 1; Synthetic-H at 0.1,
# where P-FW should lead the L2-noised methods.
QUICK_EPSILONS = {"Synthetic-L": (0.1, 1.0), "Synthetic-H": (0.1,)}
# Published test accuracy (%) at epsilon = 0.1 (Thakkar (2019), Fig. 4.4 and 4.5 for the
# logistic loss, Fig. 4.10 for the Huber SVM loss), in the order NP baseline, AMP,
# H-F AMP, P-SGD, P-PSGD, P-SCPSGD, P-FW. Thakkar ran Synthetic-H at 2,000 x 2,000
# (Sec. 4.4.6); quick mode's smaller Synthetic-H gets no comparison.
PUBLISHED_COLUMNS = ("NP baseline", "AMP", "H-F AMP", "P-SGD", "P-PSGD", "P-SCPSGD", "P-FW")
PUBLISHED = {
    ("Synthetic-L", "logistic"): ("Fig. 4.4", (94.9, 83.1, 80.6, 81.6, 81.7, 76.4, 81.8)),
    ("Synthetic-H", "logistic"): ("Fig. 4.5", (95.8, 53.2, 51.4, 52.8, 53.5, 52.0, 57.6)),
    ("Synthetic-L", "huber"): ("Fig. 4.10", (94.9, 89.3, 87.8, 85.6, 86.2, 79.4, 86.8)),
    ("Synthetic-H", "huber"): ("Fig. 4.10", (96.5, 55.2, 54.3, 55.0, 56.6, 55.6, 56.0)),
}
PUBLISHED_EPSILON = 0.1


def _published(kind, loss, column, n_features):
    """``(accuracy, source)`` that Thakkar (2019) reports for this column, or None."""
    if kind == "Synthetic-H" and n_features != 2000:
        return None
    figure, values = PUBLISHED[(kind, loss)]
    column = "NP baseline" if column.startswith("NP baseline") else column
    if column not in PUBLISHED_COLUMNS:
        return None
    return values[PUBLISHED_COLUMNS.index(column)], f"Thakkar (2019), {figure}"


def _mark_published(rows, kind, loss, n_features):
    for row in rows:
        if math.isinf(row["epsilon"]) or row["epsilon"] == PUBLISHED_EPSILON:
            published = _published(kind, loss, row["method"], n_features)
            if published is not None:
                note = versus(row["mean"], published=published)
                row["note"] = note if row["note"] == "non-private" else f"{note}; {row['note']}"
    return rows


def _grid(**axes):
    """All combinations of the named axes, as a list of parameter dicts."""
    points = [{}]
    for name, values in axes.items():
        points = [{**p, name: v} for p in points for v in values]
    return points


def _methods(loss):
    """``(column, estimator, tuning grid, n_quick)``: quick mode uses ``grid[:n_quick]``."""
    inv_beta = 1.0 / get_loss(loss).smoothness(1.0)  # permutation SGD needs eta <= 2 / beta
    fw_grid = _grid(l1_radius=[10.0, 3.0], max_iter=[30, 1, 100])
    return [
        ("AMP", DPLogisticRegressionAMP(loss=loss), _grid(output_fraction=[0.01, 0.1]), 1),
        ("H-F AMP", DPLogisticRegressionAMP(loss=loss), [{}], 1),
        ("P-SGD", DPSGDClassifier(loss=loss),
         _grid(learning_rate=[1.0, 0.1], data_norm=[1.0, 3.0]), 1),
        ("P-PSGD", PermutationSGDClassifier(loss=loss),
         _grid(learning_rate=[0.1 * inv_beta, inv_beta], batch_size=[50, 300]), 1),
        # The estimator's own default step (no tuning), next to the tuned grid above.
        ("P-PSGD (default)", PermutationSGDClassifier(loss=loss), [{}], 1),
        ("P-SCPSGD", PermutationSGDClassifier(loss=loss, strongly_convex=True),
         _grid(alpha=[1e-2, 1e-3, 1e-1], batch_size=[50]), 1),
        ("P-FW", PrivateFrankWolfeClassifier(loss=loss, accounting="thesis"), fw_grid, 2),
        ("P-FW (zCDP)", PrivateFrankWolfeClassifier(loss=loss, accounting="zcdp"), fw_grid, 2),
        ("ObjPert", ObjectivePerturbationClassifier(loss=loss), _grid(alpha=[1e-2, 1e-3]), 1),
        ("OutPert", OutputPerturbationClassifier(loss=loss), _grid(alpha=[1e-2, 1e-1]), 1),
    ]


def _draws(estimator, data, epsilon, seeds):
    """Test accuracy and fit seconds of one fit per seed."""
    scores, seconds = [], []
    for seed in seeds:
        est = clone(estimator).set_params(epsilon=epsilon, random_state=seed)
        est, sec = timed_fit(est, data.X_train, data.y_train)
        scores.append(est.score(data.X_test, data.y_test))
        seconds.append(sec)
    return scores, seconds


def _tuned_rows(data, column, estimator, grid, epsilons, n_draws, n_tune, seed, baseline_seconds):
    """Best grid point per epsilon (scored on ``n_tune`` draws), reported with ``n_draws`` draws."""
    rows = []
    for eps in epsilons:
        tune_seeds = range(seed, seed + n_tune)
        best = None
        for params in grid:
            scores, seconds = _draws(clone(estimator).set_params(**params), data, eps, tune_seeds)
            if best is None or np.mean(scores) > np.mean(best[1]):
                best = (params, scores, seconds)
        params, scores, seconds = best
        more_scores, more_seconds = _draws(clone(estimator).set_params(**params), data, eps,
                                           range(seed + n_tune, seed + n_draws))
        if len(grid) == 1:
            note = "untuned" if not params else "not tuned (quick mode): " + _fmt(params)
        else:
            note = f"best of {len(grid)} (non-private tuning): {_fmt(params)}"
        rows.append(make_row(SCENARIO, data.name, column, eps, "accuracy", scores + more_scores,
                             fit_seconds=float(np.mean(seconds + more_seconds)),
                             baseline_seconds=baseline_seconds, note=note))
    return rows


def _fmt(params):
    return ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in params.items())


def _datasets(quick):
    """``(name, Dataset)`` for Synthetic-L and Synthetic-H (smaller in quick mode)."""
    parts_l = make_synthetic_l()
    parts_h = make_synthetic_h(1200, 1200) if quick else make_synthetic_h()
    out = []
    for name, (X_tr, X_te, y_tr, y_te) in (("Synthetic-L", parts_l), ("Synthetic-H", parts_h)):
        label = f"{name} {X_tr.shape[0]}x{X_tr.shape[1]}"
        out.append((name, Dataset(label, X_tr, y_tr, X_te, y_te)))
    return out


def _sparse_rows(seed):
    """P-FW on a 50,000 x 50,000 CSR matrix (0.1% density): time and peak memory."""
    rng = np.random.default_rng(seed)
    n, d = 50_000, 50_000
    X, y = sparse_classification_problem(n + 10_000, d, 1e-3, rng)
    data = Dataset(f"sparse CSR {n}x{d}, density {X.nnz / ((n + 10_000) * d):.2%}",
                   X[:n], y[:n], X[n:], y[n:])
    base, base_sec = evaluate_baseline(SCENARIO, data, "NP baseline (sklearn)",
                                       LogisticRegression(max_iter=200))
    est = PrivateFrankWolfeClassifier(epsilon=1.0, l1_radius=10.0, max_iter=100,
                                      accounting="zcdp", random_state=seed)
    tracemalloc.start()
    start = time.perf_counter()
    est.fit(data.X_train, data.y_train)
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    X_mb = (data.X_train.data.nbytes + data.X_train.indices.nbytes
            + data.X_train.indptr.nbytes) / 2**20
    dense_mb = n * d * 8 / 2**20
    note = (f"peak traced memory {peak / 2**20:.0f} MB during fit (CSR input {X_mb:.0f} MB; "
            f"a dense copy would be {dense_mb:,.0f} MB); nnz(coef) = "
            f"{est.sparse_coef_.nnz} <= max_iter = 100")
    acc = est.score(data.X_test, data.y_test)
    return [base, make_row(SCENARIO, data.name, "P-FW (zCDP)", 1.0, "accuracy", [acc],
                           fit_seconds=seconds, baseline_seconds=base_sec, note=note)]


@register_scenario(SCENARIO, "Thakkar (2019), Fig. 4.4/4.5/4.10: AMP, P-SGD, P-PSGD, P-SCPSGD, P-FW, "
                   "ObjPert, OutPert on Synthetic-L/H, and P-FW on 50k x 50k sparse data")
def run(quick, random_state):
    n_draws, n_tune = (2, 1) if quick else (10, 2)
    losses = ("logistic",) if quick else ("logistic", "huber")
    rows = []
    for kind, data in _datasets(quick):
        epsilons = QUICK_EPSILONS[kind] if quick else EPSILONS
        for loss in losses:
            name = Dataset(f"{data.name}, {loss}", data.X_train, data.y_train, data.X_test,
                           data.y_test)
            np_est = LogisticRegression(max_iter=1000) if loss == "logistic" else LinearSVC()
            base, _ = evaluate_baseline(SCENARIO, name, f"NP baseline ({type(np_est).__name__})",
                                        np_est)
            _, sk_seconds = timed_fit(LogisticRegression(), data.X_train, data.y_train)
            block = [base]
            for column, est, grid, n_quick in progress(_methods(loss), desc=name.name):
                grid = grid[:n_quick] if quick else grid
                block += _tuned_rows(name, column, est, grid, epsilons, n_draws, n_tune,
                                     random_state, sk_seconds)
            rows += _mark_published(block, kind, loss, data.X_train.shape[1])
    rows += _sparse_rows(random_state)
    return rows
