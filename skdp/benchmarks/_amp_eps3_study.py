"""How the default ``eps3`` rule of DPLogisticRegressionAMP was derived (reproducible).

Run ``python -m skdp.benchmarks._amp_eps3_study [--high-dimensional]``. It uses
only data this package generates with ``make_classification`` (seeds 17 to 23,
never the benchmark's Synthetic-L seed 1000 and no benchmark or test data).

AMP's ``eps3`` only sets the regularization: ``Lambda = C / (eps1 - eps3)``
(``C = r beta``, or the tighter softmax constant). The study therefore sweeps
``Lambda = c / eps1^2`` over ``c`` in ``{1, 3, 10, 30, 100, 300, 1000}`` (the
``1 / eps^2`` shape follows the variance of the objective noise), fits
hyperparameter-free AMP at each ``epsilon`` of the thesis' grid with
``eps3 = eps1 - C eps1^2 / c``, and prints the mean test accuracy over three
noise draws, together with each ``c``'s mean and worst regret (distance to the
best ``c`` of its row; a ``c`` that violates ``eps1 - eps3 < 1`` counts as the
smallest valid one, which is what the rule's clamp does).

Result (2000 to 50000 rows, 10 to 100 features): ``c = 30`` has the smallest
mean regret for the logistic loss (0.2 points, worst 0.7) and for the Huber
loss, whose accuracy collapses to chance for ``c <= 10`` at ``epsilon >= 0.3``.
The thesis' rule corresponds to ``c`` between 0.7 and 5 below ``epsilon = 1``
(under-regularized).
"""

import argparse
import json

import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from skdp.linear_model import DPLogisticRegressionAMP
from skdp.linear_model._losses import get_loss

LOW_DIMENSIONAL = [(2000, 10, 8, 1.0), (2000, 40, 20, 2.0), (10000, 20, 15, 1.0),
                   (10000, 60, 40, 2.0), (50000, 100, 30, 1.5), (50000, 30, 20, 2.0)]
HIGH_DIMENSIONAL = [(800, 1000, 10, 3.0)]
EPSILONS = [0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
C_GRID = [1, 3, 10, 30, 100, 300, 1000]


def study(loss, problems, epsilons=EPSILONS, c_grid=C_GRID, n_draws=3, seed=17):
    """Accuracy of AMP for each ``(problem, epsilon, c)``; ``None`` where ``c`` is invalid."""
    curvature = 2 * get_loss(loss).smoothness(1.0)
    table = {}
    for i, (m, d, informative, sep) in enumerate(problems):
        X, y = make_classification(int(m / 0.8), d, n_informative=informative, n_redundant=0,
                                   class_sep=sep, random_state=seed + i)
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2,
                                                            random_state=seed + i)
        for eps in epsilons:
            eps1, row = 0.99 * eps, []
            for c in c_grid:
                gap = curvature * eps1**2 / c
                if not (gap < 1 and gap < eps1):
                    row.append(None)
                    continue
                clf = DPLogisticRegressionAMP(eps, loss=loss, eps3_fraction=1 - gap / eps1)
                row.append(float(np.mean([
                    clf.set_params(random_state=s).fit(X_train, y_train).score(X_test, y_test)
                    for s in range(n_draws)])))
            table[f"m={m} d={d} eps={eps}"] = row
            print(f"{loss:8s} m={m:6d} d={d:5d} eps={eps:5.2f} "
                  + " ".join("  -  " if a is None else f"{a:.3f}" for a in row), flush=True)
    return table


def regret(table, c_grid=C_GRID):
    """Mean and worst accuracy regret of each ``c``."""
    out = {}
    for j, c in enumerate(c_grid):
        gaps = []
        for row in table.values():
            valid = [a for a in row if a is not None]
            value = row[j] if row[j] is not None else valid[0]
            gaps.append(max(valid) - value)
        out[c] = (float(np.mean(gaps)), float(np.max(gaps)))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--high-dimensional", action="store_true")
    parser.add_argument("--output", default=None, help="JSON file for the tables")
    args = parser.parse_args(argv)
    problems = HIGH_DIMENSIONAL if args.high_dimensional else LOW_DIMENSIONAL
    results = {}
    for loss in ("logistic", "huber"):
        table = study(loss, problems)
        results[loss] = {"table": table, "regret": regret(table)}
        for c, (mean, worst) in results[loss]["regret"].items():
            print(f"{loss:8s} c={c:5d}: mean regret {mean:.4f}, worst {worst:.4f}")
    if args.output:
        with open(args.output, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
