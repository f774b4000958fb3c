"""How the default ``eps3`` rule of DPLogisticRegressionAMP was derived (reproducible).

Run ``python -m skdp.benchmarks._amp_eps3_study`` (about 25 minutes on one
core). It uses only data this package generates with ``make_classification``
(seeds 101-118, 201-208 and 301-318, never the benchmark's seed 1000, no
benchmark or test data).

AMP's ``eps3`` only sets the regularization: ``Lambda = C / (eps1 - eps3)``
(``C = beta`` for the binary losses, the trace bound ``1 - 1/K`` for the
softmax). The study sweeps ``Lambda = c k / eps1^2`` over a grid of ``c``
(``k = 1`` for binary models, ``K - 1`` for the softmax), fits AMP at each
``epsilon`` with the matching ``eps3``, and records the mean test accuracy over
the noise draws. It then scores rules ``Lambda = A k d^a m^-b / eps1^2``
(``d`` parameters per class, ``m`` rows) by their mean and worst accuracy
regret against the best ``c`` of each problem (interpolating in ``log c``;
``c`` beyond the ``eps1 - eps3 < 1`` or ``<= eps1 / 2`` clamps counts as the
clamped value).

Result (the defaults of this script): ``a = b = 1`` is among the best forms for
all three losses. Averaged over the losses, ``A = 1500`` has the least mean
regret (0.32 points; logistic 0.32, Huber 0.48, softmax 0.15; worst cases 2.7,
8.4 and 0.5). The best constant ``c`` does worse (e.g. ``c = 30``: worst
cases 6.5, 7.8 and 0.8 points on the first binary family alone).
``a = 1.5`` is about as good but has no reason behind it; ``d / m`` is the
shape of the ridge penalty that balances noise of variance ``~ 1 / (m eps)^2``
spread over ``k d`` directions. The rule uses ``A = 1500``.
"""

import argparse
import itertools
import json

import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from skdp.linear_model import DPLogisticRegressionAMP, MultinomialLoss
from skdp.linear_model._losses import get_loss

C_GRID = [1, 3, 10, 20, 30, 50, 100, 300, 1000]
BINARY_EPSILONS = [0.03, 0.1, 0.3, 1.0, 3.0]
SOFTMAX_EPSILONS = [0.3, 1.0, 3.0, 10.0]


def _sweep(data, eps, curvature, row_rank, n_draws, **params):
    """Mean accuracy for each ``c`` of ``C_GRID`` (``None`` where the split is invalid)."""
    X_train, X_test, y_train, y_test = data
    eps1, row = 0.99 * eps, []
    for c in C_GRID:
        gap = curvature * eps1**2 / (c * row_rank)
        if not (gap < 1 and gap <= 0.5 * eps1):
            row.append(None)
            continue
        clf = DPLogisticRegressionAMP(eps, eps3_fraction=1 - gap / eps1, **params)
        row.append(float(np.mean([
            clf.set_params(random_state=s).fit(X_train, y_train).score(X_test, y_test)
            for s in range(n_draws)])))
    return row


def binary_study(loss, n_draws=4):
    """``{(loss, m, d, class_sep, eps): accuracies over C_GRID}`` on generated binary data.

    Two families: informative features only (seeds 101-118), and
    ``make_classification``'s defaults of 2 redundant features and 1% label
    noise (seeds 301-318).
    """
    curvature, table = get_loss(loss).smoothness(1.0), {}
    families = [
        (101, itertools.product([2000, 8000, 32000], [10, 30, 100], [1.0, 2.0]),
         lambda d: dict(n_informative=max(2, int(0.7 * d)), n_redundant=0)),
        (301, itertools.product([2000, 8000, 32000], [20, 40, 80], [1.0, 2.0]),
         lambda d: dict(n_informative=int(0.6 * d))),
    ]
    for start, problems, shape in families:
        for seed, (m, d, sep) in enumerate(problems, start=start):
            X, y = make_classification(int(m / 0.8), d, class_sep=sep, random_state=seed,
                                       **shape(d))
            data = train_test_split(X, y, test_size=0.2, random_state=seed)
            for eps in BINARY_EPSILONS:
                key = (loss, m, d + 1, sep, eps, start)  # d + 1: the intercept feature
                table[key] = _sweep(data, eps, curvature, 1, n_draws, loss=loss)
                print(key, table[key], flush=True)
    return table


def softmax_study(n_draws=2):
    """As :func:`binary_study` for softmax problems (unit-norm rows, no intercept)."""
    table = {}
    problems = itertools.product([1500, 5000], [30, 64], [5, 10])
    for seed, (m, d, n_classes) in enumerate(problems, start=201):
        X, y = make_classification(int(m / 0.8), d, n_informative=d // 2, n_redundant=0,
                                   n_classes=n_classes, n_clusters_per_class=1,
                                   class_sep=2.0, random_state=seed)
        X = X / np.linalg.norm(X, axis=1, keepdims=True)
        data = train_test_split(X, y, test_size=0.2, random_state=seed)
        curvature = MultinomialLoss(n_classes).hessian_trace_bound(1.0)
        for eps in SOFTMAX_EPSILONS:
            key = ("softmax", m, d, n_classes, eps)
            table[key] = _sweep(data, eps, curvature, n_classes - 1, n_draws,
                                fit_intercept=False)
            print(key, table[key], flush=True)
    return table


def _accuracy_at(row, c):
    valid = [(ci, a) for ci, a in zip(C_GRID, row) if a is not None]
    return float(np.interp(np.log(c), np.log([v[0] for v in valid]), [v[1] for v in valid]))


def regret(table, rule):
    """Mean and worst accuracy regret of ``rule(m, d) -> c`` over a table."""
    gaps = [max(a for a in row if a is not None) - _accuracy_at(row, rule(key[1], key[2]))
            for key, row in table.items()]
    return float(np.mean(gaps)), float(np.max(gaps))


def best_forms(table, exponents=(0, 0.5, 1, 1.5, 2), m_exponents=(0, 0.5, 1)):
    """For each ``(a, b)``, the ``A`` of ``c = A d^a / m^b`` with the least mean regret."""
    results = []
    for a, b in itertools.product(exponents, m_exponents):
        scores = [(regret(table, lambda m, d: A * d**a / m**b), A)
                  for A in np.geomspace(1e-4, 1e5, 160)]
        (mean, worst), A = min(scores)
        results.append(dict(a=a, b=b, A=float(A), mean_regret=mean, worst_regret=worst))
    return sorted(results, key=lambda r: r["mean_regret"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=None, help="JSON file for the tables and scores")
    args = parser.parse_args(argv)
    tables = {"logistic": binary_study("logistic"), "huber": binary_study("huber"),
              "softmax": softmax_study()}
    results = {}
    for name, table in tables.items():
        forms = best_forms(table)
        chosen = regret(table, lambda m, d: 1500.0 * d / m)
        results[name] = dict(forms=forms, chosen=chosen,
                             table={json.dumps(k): v for k, v in table.items()})
        for r in forms[:5]:
            print(f"{name:8s} c = {r['A']:.4g} d^{r['a']} / m^{r['b']}: mean regret "
                  f"{r['mean_regret']:.4f}, worst {r['worst_regret']:.4f}")
        print(f"{name:8s} chosen c = 1500 d / m: mean regret {chosen[0]:.4f}, "
              f"worst {chosen[1]:.4f}")
    if args.output:
        with open(args.output, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
