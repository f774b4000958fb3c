"""Scenario ``amp``: hyperparameter-free DPLogisticRegressionAMP against published numbers.

* Synthetic-L (Thakkar (2019), Table 4.1): H-F AMP with the logistic and Huber losses
  against scikit-learn's ``LogisticRegression``; in full mode also the Huber
  loss at epsilon = 0.1 over 100 draws (its expected accuracy) and with
  ``eps3_fraction`` tuned on the test set (the ceiling of the default's one
  free knob). Verdicts: the difference with Thakkar's (2019) published
  accuracy (Fig. 4.4 and 4.10, epsilon = 0.1) and with ``LogisticRegression``.
* load_digits (pixels / 16, rows scaled to unit norm: per-row, privacy-free):
  softmax AMP against one-vs-rest AMP.
* Speed: a dense 100,000 x 100 binary problem, H-F AMP (gradient norm certified
  at its default gamma) against ``LogisticRegression()`` fitted in the same run; in full
  mode also 1,000,000 x 100 with the fit's peak traced memory.
* Wide sparse data: a 50,000 x 50,000 CSR problem (10,000 in quick mode; the
  generator of scenario ``convex``), where the solver avoids the dense Hessian.
"""

import math
import time
import tracemalloc

import numpy as np
from sklearn.datasets import load_digits, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skdp.benchmarks._harness import (
    Dataset,
    evaluate_baseline,
    evaluate_private,
    make_row,
    progress,
    sparse_classification_problem,
    versus,
)
from skdp.benchmarks._registry import register_scenario
from skdp.datasets import make_synthetic_l
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.linear_model._solvers import DENSE_HESSIAN_LIMIT

NAME = "amp"

# (dataset, method, epsilon) -> published accuracy (%) of the same method and data set.
# Thakkar (2019) reports Synthetic-L at epsilon = 0.1 only (Fig. 4.4 logistic loss,
# Fig. 4.10 Huber SVM loss); the other rows compare with the non-private twin.
PUBLISHED = {
    ("Synthetic-L", "H-F AMP logistic", 0.1): (80.6, "Thakkar (2019), Fig. 4.4"),
    ("Synthetic-L", "H-F AMP Huber", 0.1): (87.8, "Thakkar (2019), Fig. 4.10"),
    ("Synthetic-L", "H-F AMP Huber, 100 draws", 0.1): (87.8, "Thakkar (2019), Fig. 4.10"),
}
# Thakkar's (2019) AMP tuned on the test set (not private): Fig. 4.10.
PUBLISHED_TUNED_HUBER = (89.3, "Thakkar (2019), Fig. 4.10, AMP tuned")


def _mark_verdicts(rows):
    """Note each private accuracy row's gap to the published number and the twin."""
    twins = {r["dataset"]: (r["method"], r["mean"]) for r in rows
             if r["note"] == "non-private" and r["metric"] == "accuracy"}
    for row in rows:
        if row["metric"] != "accuracy" or row["dataset"] not in twins or math.isinf(
                row["epsilon"]):
            continue
        verdict = versus(row["mean"], twin=twins[row["dataset"]],
                         published=PUBLISHED.get((row["dataset"], row["method"],
                                                  row["epsilon"])))
        row["note"] = f"{verdict}; {row['note']}" if row["note"] else verdict
    return rows


def _digits(random_state):
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2,
                                                        random_state=random_state)
    return Dataset("digits", X_train, y_train, X_test, y_test)


# eps3 / eps1 values for the oracle row; the rule's own fraction for this problem (0.745)
# lies within their range.
ORACLE_FRACTIONS = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


def _oracle_fraction_row(data, seed, baseline_seconds):
    """Huber at eps = 0.1 with eps3_fraction picked by mean *test* accuracy (information only).

    Thakkar's (2019) tuned "AMP" column (Fig. 4.10: 89.3 on Synthetic-L) picks its
    hyperparameters this way. With the rest of the default fixed, ``eps3_fraction``
    (equivalently ``Lambda``) is the one free knob of H-F AMP, so the best grid value
    bounds what any data-independent rule for it can reach on this problem. Not
    private (it reads the test labels) and not a default: a ceiling, printed as
    information next to the 10-draw row. Same 10 seeds as that row.
    """
    best = None
    for fraction in ORACLE_FRACTIONS:
        row = evaluate_private(NAME, data, "H-F AMP Huber", DPLogisticRegressionAMP(
            loss="huber", eps3_fraction=fraction), [0.1], 10, seed=seed,
            baseline_seconds=baseline_seconds)[0]
        if best is None or row["mean"] > best[1]["mean"]:
            best = fraction, row
    fraction, row = best
    row["method"] = "Huber, eps3_fraction tuned on test"
    row["note"] = (f"best of eps3_fraction in {ORACLE_FRACTIONS}: {fraction}; not private, "
                   f"information only (the ceiling of the default's one free knob); "
                   + versus(row["mean"], published=PUBLISHED_TUNED_HUBER))
    return row


def _accuracy_rows(quick, seed):
    rows = []
    X_train, X_test, y_train, y_test = make_synthetic_l()
    data = Dataset("Synthetic-L", X_train, y_train, X_test, y_test)
    base_row, base_sec = evaluate_baseline(NAME, data, "LogisticRegression",
                                           LogisticRegression(max_iter=1000))
    rows.append(base_row)
    eps_grid = [0.1, 1.0] if quick else [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
    n_draws = 3 if quick else 10
    rows += evaluate_private(NAME, data, "H-F AMP logistic", DPLogisticRegressionAMP(),
                             eps_grid, n_draws, seed=seed, baseline_seconds=base_sec)
    rows += evaluate_private(NAME, data, "H-F AMP Huber", DPLogisticRegressionAMP(loss="huber"),
                             [0.1] if quick else eps_grid, n_draws, seed=seed,
                             baseline_seconds=base_sec)
    if not quick:
        # The 10-draw mean above has a standard error of about 0.3 points, so full mode
        # also reports the Huber loss's expected accuracy at eps = 0.1 from 100 draws
        # (seeds seed, ..., seed + 99), the precise comparison with the published number.
        precise = evaluate_private(NAME, data, "H-F AMP Huber, 100 draws",
                                   DPLogisticRegressionAMP(loss="huber"), [0.1], 100,
                                   seed=seed, baseline_seconds=base_sec)
        for row in precise:
            # std has ddof=0: std / sqrt(n - 1) is the usual standard error of the mean.
            row["note"] = f"standard error {100 * row['std'] / np.sqrt(99):.2f} points"
        rows += precise
        rows.append(_oracle_fraction_row(data, seed, base_sec))

    digits = _digits(0)
    base_row, base_sec = evaluate_baseline(NAME, digits, "LogisticRegression",
                                           LogisticRegression(max_iter=1000))
    rows.append(base_row)
    n_draws = 2 if quick else 10
    # Rows are unit-norm already; an appended intercept feature would take half of
    # the norm budget, so the digit models have no intercept.
    rows += evaluate_private(NAME, digits, "H-F AMP multinomial",
                             DPLogisticRegressionAMP(fit_intercept=False), [1.0, 3.0, 10.0],
                             n_draws, seed=seed, baseline_seconds=base_sec)
    rows += evaluate_private(NAME, digits, "H-F AMP one-vs-rest",
                             DPLogisticRegressionAMP(fit_intercept=False, multi_class="ovr"),
                             [1.0, 3.0], n_draws, seed=seed, baseline_seconds=base_sec)
    by_key = {(r["method"], r["epsilon"]): r["mean"] for r in rows}
    for eps in (1.0, 3.0):
        gap = by_key[("H-F AMP multinomial", eps)] - by_key[("H-F AMP one-vs-rest", eps)]
        rows.append(make_row(NAME, "digits", "multinomial minus one-vs-rest", eps,
                             "accuracy gap", [gap], note=f"{100 * gap:+.1f} points"))
    return rows


def _speed_rows(n_samples, repeats, seed, measure_memory):
    X, y = make_classification(n_samples=n_samples, n_features=100, n_informative=50,
                               random_state=seed)
    amp_times, lr_times = [], []
    for rep in progress(range(repeats), desc=f"speed m={n_samples}"):
        start = time.perf_counter()
        LogisticRegression().fit(X, y)
        lr_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        amp = DPLogisticRegressionAMP(epsilon=1.0, random_state=seed + rep).fit(X, y)
        amp_times.append(time.perf_counter() - start)
        gamma = amp.calibration_.gamma
        if not amp.gradient_norm_[0] <= gamma:  # the fit would have raised; kept as a check
            raise AssertionError("uncertified AMP fit")
    best_amp, best_lr = min(amp_times), min(lr_times)
    dataset = f"dense {n_samples:,} x 100"
    note = (f"best of {repeats}; ||grad|| = {amp.gradient_norm_[0]:.2g} <= gamma = {gamma:.2g} "
            f"in {amp.n_iter_[0]} iterations")
    rows = [
        make_row(NAME, dataset, "LogisticRegression()", float("inf"), "fit seconds", [best_lr],
                 fit_seconds=best_lr, baseline_seconds=best_lr, note="non-private"),
        make_row(NAME, dataset, "H-F AMP logistic", 1.0, "fit seconds", [best_amp],
                 fit_seconds=best_amp, baseline_seconds=best_lr,
                 note=f"{note}; {best_amp / best_lr:.2f}x the time of LogisticRegression()"),
    ]
    if measure_memory:
        tracemalloc.start()
        DPLogisticRegressionAMP(epsilon=1.0, random_state=seed).fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rows.append(make_row(NAME, dataset, "H-F AMP logistic", 1.0, "peak fit memory (MB)",
                             [peak / 2**20],
                             note=f"input X itself is {X.nbytes / 2**20:.0f} MB (tracemalloc)"))
    return rows


def _wide_sparse_rows(n, seed):
    """AMP on an n x n CSR problem (0.1% density): the matrix-free Newton path."""
    rng = np.random.default_rng(seed)
    X, y = sparse_classification_problem(n + n // 5, n, 1e-3, rng)
    data = Dataset(f"sparse CSR {n:,} x {n:,}", X[:n], y[:n], X[n:], y[n:])
    base, base_sec = evaluate_baseline(NAME, data, "LogisticRegression", LogisticRegression(
        max_iter=200))
    tracemalloc.start()
    start = time.perf_counter()
    amp = DPLogisticRegressionAMP(epsilon=1.0, random_state=seed).fit(data.X_train, data.y_train)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    note = (f"matrix-free Newton (n_params > {DENSE_HESSIAN_LIMIT}); ||grad|| = "
            f"{amp.gradient_norm_[0]:.2g} <= {amp.calibration_.gamma:.2g} in "
            f"{amp.n_iter_[0]} iterations; peak traced memory {peak / 2**20:.0f} MB (a dense "
            f"Hessian would be {(n + 1) ** 2 * 8 / 2**30:.0f} GiB)")
    return [base, make_row(NAME, data.name, "H-F AMP logistic", 1.0, "accuracy",
                           [amp.score(data.X_test, data.y_test)], fit_seconds=seconds,
                           baseline_seconds=base_sec, note=note)]


@register_scenario(NAME, "hyperparameter-free AMP: Synthetic-L, digits softmax vs OvR, speed "
                   "vs LogisticRegression(), wide sparse data")
def run(quick, random_state):
    rows = _accuracy_rows(quick, random_state)
    rows += _speed_rows(100_000, 1 if quick else 3, random_state, measure_memory=False)
    rows += _wide_sparse_rows(10_000 if quick else 50_000, random_state)
    if not quick:
        rows += _speed_rows(1_000_000, 1, random_state, measure_memory=True)
    return _mark_verdicts(rows)
