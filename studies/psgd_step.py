"""How the default step of PermutationSGDClassifier (convex case) was chosen (reproducible).

Run ``OMP_NUM_THREADS=1 python -m studies.psgd_step`` (a few
minutes on one core). The default step is the minimizer of an excess-risk
bound (:func:`skdp.linear_model._permutation_sgd.permutation_sgd_default_step`)
with one free constant, the comparator norm ``D R``. This study chooses it.

Protocol, fixed before the study was run:

* data: ``make_classification`` only (seeds 801-848; never the benchmark's
  seeds, no benchmark or test data), rows scaled to unit L2 norm, 70/30
  split; ``n`` in {1000, 5000}, ``d`` in {5, 20} (``max(3, d // 2)`` informative),
  2 or 3 classes, two data seeds per combination;
* ``epsilon`` in {0.3, 1, 3}, the estimator's defaults otherwise
  (``data_norm=1``, ``batch_size=50``, ``epochs=5``, ``delta = 1 / n^2``,
  logistic loss), three noise draws per fit;
* candidates ``D R`` in {0.5, 1, 2, 4}; the old default ``1 / beta`` is
  scored alongside for the record;
* decision rule: the candidate with the highest mean test accuracy over all
  problems; a candidate within 0.005 of the best and smaller is preferred
  (less noise for the same accuracy).

(The first launch stopped at its first three-class problem, before any
result was scored: ``make_classification`` needs 3 informative features for
3 classes of 2 clusters. ``max(2, d // 2)`` became ``max(3, d // 2)``.)

Result, adopted as it came out (stop 18): mean test accuracy 0.6421, 0.6447,
0.6459 and 0.6474 for ``D R`` = 0.5, 1, 2 and 4, and 0.532 for the old default
``1 / beta``: the rule chose ``D R = 1`` (``DEFAULT_STEP_RADIUS``).
"""

import itertools
import sys

import numpy as np
from sklearn.datasets import make_classification

from skdp.linear_model import PermutationSGDClassifier
from skdp.linear_model._permutation_sgd import permutation_sgd_default_step, permutation_sgd_sigma

RADII = (0.5, 1.0, 2.0, 4.0)
EPSILONS = (0.3, 1.0, 3.0)


def _problems():
    seed = 801
    for n, d, k in itertools.product((1000, 5000), (5, 20), (2, 3)):
        for _ in range(2):
            X, y = make_classification(n, d, n_informative=max(3, d // 2), n_classes=k,
                                       random_state=seed)
            X = X / np.linalg.norm(X, axis=1, keepdims=True)
            cut = int(0.7 * n)
            yield f"n={n} d={d} K={k} seed={seed}", X[:cut], X[cut:], y[:cut], y[cut:], k
            seed += 1


def _steps(n_train, n_features, n_classes, epsilon):
    """Step of each candidate radius (and the old default 4 = 1 / beta) for these settings."""
    n_problems = 1 if n_classes == 2 else n_classes
    delta = 1.0 / n_train ** 2
    c = permutation_sgd_sigma(1.0, epsilon / n_problems, delta / n_problems)
    steps = {f"D={r:g}": permutation_sgd_default_step(n_train, 50, 5, 1.0, n_features + 1, c,
                                                      4.0, radius=r) for r in RADII}
    steps["old 1/beta"] = 4.0
    return steps


def main():
    results = {}
    for name, X_tr, X_te, y_tr, y_te, k in _problems():
        for eps in EPSILONS:
            for label, step in _steps(len(y_tr), X_tr.shape[1], k, eps).items():
                acc = np.mean([
                    PermutationSGDClassifier(epsilon=eps, learning_rate=step,
                                             classes=list(range(k)), random_state=s)
                    .fit(X_tr, y_tr).score(X_te, y_te) for s in range(3)])
                results.setdefault(label, []).append(acc)
            print(name, f"eps={eps}", {lab: round(float(v[-1]), 3) for lab, v in results.items()},
                  flush=True)
    means = {label: float(np.mean(v)) for label, v in results.items()}
    print("mean accuracy:", {lab: round(m, 4) for lab, m in means.items()})
    best = max(means[f"D={r:g}"] for r in RADII)
    chosen = min(r for r in RADII if means[f"D={r:g}"] >= best - 0.005)
    print(f"chosen D R = {chosen:g}")
    return chosen


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
