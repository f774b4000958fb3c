"""How the default ``eps3`` rule of DPLogisticRegressionAMP was derived (reproducible).

Run ``OMP_NUM_THREADS=1 python -m skdp.benchmarks._amp_eps3_study`` (about 12 minutes on one core;
``--part`` runs one loss so that the parts can run side by side, ``--score``
combines their JSON outputs). It uses only data this package generates with
``make_classification`` (seeds 101-118, 201-208, 301-318, 401-418 and
501-508; never the benchmark's seed 1000, no benchmark or test data).

AMP's ``eps3`` only sets the regularization: ``eps1 - eps3`` pays for the
log-determinant bound ``k log(1 + C / (k Lambda))`` (``C = beta`` for the
binary losses, the trace bound ``1 - 1/K`` for the softmax). The study sweeps ``Lambda = c k / eps1^2`` over a grid of ``c``
(``k = 1`` for binary models, ``K - 1`` for the softmax), fits AMP with its
default parameters at each ``epsilon`` with the matching ``eps3``, and records
the mean test accuracy over the noise draws. It then scores rules
``Lambda = A k d^a m^-b / eps1^p`` (``d`` parameters per class including the
intercept's, ``m`` rows) by their mean and worst accuracy regret against the
best ``c`` of each problem (interpolating in ``log c``; ``c`` beyond the
``eps1 - eps3 < 1`` or ``<= eps1 / 2`` clamps counts as the clamped value).
The rule is the form and ``A`` with the least mean regret averaged over the
three losses.

Data families (each binary one for both losses):

* ``informative``: informative features only (seeds 101-118);
* ``sklearn-default``: ``make_classification``'s defaults of 2 redundant
  features and 1% label noise (seeds 301-318);
* ``nonnegative``: as ``sklearn-default``, shifted so that every feature is
  nonnegative, as pixels, counts and frequencies are: the rows then share a
  large common component (seeds 401-418);
* softmax ``centred`` (seeds 201-208) and ``nonnegative`` (seeds 501-508),
  rows scaled to unit norm.

History, for the record. The first version of this study (stop 9) had the
first two binary families and the centred softmax family without an
intercept, and only ``p = 2``; it chose ``Lambda = 1500 k (d / m) / eps1^2``.
That rule over-regularized the benchmark's digits data, whose rows share a
large common component, and Huber at small ``epsilon``. This version adds the
nonnegative families, the estimator's default intercept for the softmax
families, and the exponent ``p``; the families, forms and criterion were fixed
before it was run, and its result was adopted as it came out:
``Lambda = 7 k d / (sqrt(m) eps1^1.5)``, mean regret 0.80 points averaged over
the losses (logistic 0.33, Huber 0.94, softmax 1.1; worst cases 3.8, 13.3 and
7.7), against 1.77 for the previous rule. The runner-up,
``Lambda = 51 k sqrt(d / m) / eps1^1.5``, is within 0.01 points of it. (The
same result came out before and after AMP's ``Lambda`` was tightened to the
logarithmic bound.)

Third version (stop 11), protocol fixed and committed before its tables were
scored. The rules above set ``Lambda`` without the loss's curvature constant
``C``, yet ``eps3 = eps1 - k log(1 + C / (k Lambda))`` is about
``eps1 - C / Lambda``: a rule that suits the logistic loss (``C = 1/4``)
leaves the Huber loss (``C = 5``) a small ``eps3``. A bias-variance balance
makes this precise: with bias growing as ``Lambda`` and the objective noise's
effect on the minimizer as ``1 / (eps3 Lambda) ~ 1 / (eps1 Lambda - C)``,
the best ``Lambda`` is ``C / eps1`` plus a term that does not involve ``C``.
So this version scores the forms
``Lambda = kappa C / eps1 + A k d^a m^-b / eps1^p``, ``kappa`` in
``{0, 0.5, 1, 2}``, the rest as before, on the same generated problems
(re-run with the current estimator), by the same criterion. A form with
``kappa > 0`` replaces the default only if its mean regret is at least 10%
below the best ``kappa = 0`` form's; its result is adopted as it comes out,
whatever the benchmark then says.

Result of the third version: the best form with the curvature term,
``Lambda = C / eps1 + 6.3 k d / (sqrt(m) eps1^1.5)``, has mean regret 0.78
points (logistic 0.33, Huber 0.93, softmax 1.08; worst 3.7, 10.2, 7.0),
against 0.80 for the best ``kappa = 0`` form, which is again
``Lambda = 7 k d / (sqrt(m) eps1^1.5)`` (the re-run reproduces the second
version's tables). That is 2.5% less, below the 10% the protocol asked for,
so the default rule is unchanged: on generated data the Huber loss does not
want more regularization at small ``epsilon`` than the rule gives it.
Run the sweeps with one BLAS
thread per process (``OMP_NUM_THREADS=1``): with two processes on two cores,
OpenBLAS's own threads made them about 20 times slower.

Fourth version (stop 11), protocol committed before its new sweeps ran. The
third version's tables show the grid was cut too short: the best ``c`` was
the grid's smallest (``c = 1``) in 80 of 270 logistic, 33 of 270 Huber and
11 of 64 softmax cells, so the study could not see whether less
regularization does better there, and it pushed the rule up. The grid is
extended down by ``c = 0.1`` and ``0.3`` (same problems, seeds and draws;
each ``c`` is fitted independently, so the other columns are unchanged).
Forms, ``kappa``, criterion and the 10% rule for ``kappa > 0`` are those of
the third version; the result is adopted as it comes out.

Result of the fourth version (the default since then):
``Lambda = 56 k sqrt(d / m) / eps1^1.5``, mean regret 1.05 points averaged
over the losses (logistic 0.51, Huber 1.25, softmax 1.38; worst 10.6, 9.1 and
9.6). The regrets are larger than the third version's because the wider grid
finds better ``Lambda`` in many cells. The previous rule,
``Lambda = 7 k d / (sqrt(m) eps1^1.5)`` (the third version's runner-up form
is the new one), has 1.07, and the rule before it 1.96. The best form with a
curvature term, ``Lambda = C / eps1 + 46 k sqrt(d / m) / eps1^1.5``, has
1.02: 3% less, below the 10% asked for.

Validation of a per-loss constant (stop 11; protocol committed before the
fresh sweeps ran). On the fourth version's tables, the best ``A`` of the
adopted form for each loss alone is 69 (logistic), 85 (Huber) and 41
(softmax), with mean regret 0.94 averaged over the losses against 1.05 for
the shared ``A = 56``. That was found after looking, so it is tested on fresh
problems: the same families and grids with every seed moved by 1000
(``--seed-offset 1000``). The per-loss constants replace the shared one only
if their mean regret on the fresh problems is at least 10% below the shared
``A = 56``'s on the same problems.

Result of the validation (the default since then): on the fresh problems the
per-loss constants have mean regret 0.96 points (logistic 0.45, Huber 1.06,
softmax 1.35; worst 5.6, 9.0, 6.5) against 1.07 for the shared ``A = 56``
(0.47, 1.24, 1.50): 11% less, so they replace it, rounded to
``A = 69, 85, 41``. The rule of the second and third versions has 1.11 on
the same fresh problems, so the fourth version's change also holds out of
sample. To reproduce, run the parts with ``--seed-offset 1000 --output ...``
and ``--score`` their files: the last two lines are this comparison.
"""

import argparse
import functools
import itertools
import json

import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from skdp.linear_model import DPLogisticRegressionAMP, MultinomialLoss
from skdp.linear_model._amp import _REGULARIZATION_SCALES, log_determinant_bound
from skdp.linear_model._losses import get_loss

C_GRID = [0.1, 0.3, 1, 3, 10, 20, 30, 50, 100, 300, 1000]
BINARY_EPSILONS = [0.03, 0.1, 0.3, 1.0, 3.0]
SOFTMAX_EPSILONS = [0.3, 1.0, 3.0, 10.0]
FORMS = list(itertools.product([0, 0.5, 1, 1.5, 2], [0, 0.5, 1], [1, 1.5, 2]))
KAPPAS = [0, 0.5, 1, 2]


def _nonnegative(X):
    return X - X.min(axis=0)


def _unit_rows(X):
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _sweep(data, eps, curvature, row_rank, n_draws, c_grid=C_GRID, **params):
    """Mean accuracy for each ``c`` of ``c_grid`` (``None`` where the split is invalid)."""
    X_train, X_test, y_train, y_test = data
    eps1, row = 0.99 * eps, []
    for c in c_grid:
        gap = log_determinant_bound(c * row_rank / eps1**2, curvature, row_rank)
        if not (gap < 1 and gap <= 0.5 * eps1):
            row.append(None)
            continue
        clf = DPLogisticRegressionAMP(eps, eps3_fraction=1 - gap / eps1,
                                      classes=np.unique(y_train), **params)
        row.append(float(np.mean([
            clf.set_params(random_state=s).fit(X_train, y_train).score(X_test, y_test)
            for s in range(n_draws)])))
    return row


BINARY_FAMILIES = {
    "informative": (101, [2000, 8000, 32000], [10, 30, 100],
                    lambda d: dict(n_informative=max(2, int(0.7 * d)), n_redundant=0), None),
    "sklearn-default": (301, [2000, 8000, 32000], [20, 40, 80],
                        lambda d: dict(n_informative=int(0.6 * d)), None),
    "nonnegative": (401, [2000, 8000, 32000], [20, 40, 80],
                    lambda d: dict(n_informative=int(0.6 * d)), _nonnegative),
}


def binary_study(loss, n_draws=4, seed_offset=0):
    """``{(loss, m, d, class_sep, eps, family): accuracies over C_GRID}`` on binary data."""
    curvature, table = get_loss(loss).smoothness(1.0), {}
    for family, (start, ms, ds, shape, transform) in BINARY_FAMILIES.items():
        problems = itertools.product(ms, ds, [1.0, 2.0])
        for seed, (m, d, sep) in enumerate(problems, start=start + seed_offset):
            X, y = make_classification(int(m / 0.8), d, class_sep=sep, random_state=seed,
                                       **shape(d))
            if transform is not None:
                X = transform(X)
            data = train_test_split(X, y, test_size=0.2, random_state=seed)
            for eps in BINARY_EPSILONS:
                key = (loss, m, d + 1, sep, eps, family)  # d + 1: the intercept feature
                table[key] = _sweep(data, eps, curvature, 1, n_draws, loss=loss)
                print(key, table[key], flush=True)
    return table


def softmax_study(n_draws=2, seed_offset=0):
    """As :func:`binary_study` for softmax problems (unit-norm rows, default intercept)."""
    table = {}
    for family, start, transform in [("centred", 201, None), ("nonnegative", 501, _nonnegative)]:
        problems = itertools.product([1500, 5000], [30, 64], [5, 10])
        for seed, (m, d, n_classes) in enumerate(problems, start=start + seed_offset):
            X, y = make_classification(int(m / 0.8), d, n_informative=d // 2, n_redundant=0,
                                       n_classes=n_classes, n_clusters_per_class=1,
                                       class_sep=2.0, random_state=seed)
            if transform is not None:
                X = transform(X)
            data = train_test_split(_unit_rows(X), y, test_size=0.2, random_state=seed)
            curvature = MultinomialLoss(n_classes).hessian_trace_bound(1.0)
            for eps in SOFTMAX_EPSILONS:
                key = ("softmax", m, d + 1, n_classes, eps, family)
                table[key] = _sweep(data, eps, curvature, n_classes - 1, n_draws)
                print(key, table[key], flush=True)
    return table


def _accuracy_at(row, c):
    valid = [(ci, a) for ci, a in zip(C_GRID, row) if a is not None]
    return np.interp(np.log(c), np.log([v[0] for v in valid]), [v[1] for v in valid])


@functools.lru_cache(maxsize=None)
def curvature_and_rank(key):
    """``(C, k)`` of a table key's loss at ``data_norm = 1``."""
    if key[0] == "softmax":
        return MultinomialLoss(key[3]).hessian_trace_bound(1.0), key[3] - 1
    return get_loss(key[0]).smoothness(1.0), 1


def regret(table, rule):
    """Mean and worst accuracy regret of ``rule(key, eps1) -> c`` over a table."""
    gaps = [max(a for a in row if a is not None)
            - _accuracy_at(row, rule(key, 0.99 * key[4]))
            for key, row in table.items()]
    return float(np.mean(gaps)), float(np.max(gaps))


def form_rule(A, a, b, p, kappa=0.0):
    """``c`` of ``Lambda = kappa C / eps1 + A k d^a m^-b / eps1^p`` in ``Lambda = c k / eps1^2``."""
    def rule(key, eps1):
        m, d = key[1], key[2]
        curvature, row_rank = curvature_and_rank(key)
        return kappa * curvature * eps1 / row_rank + A * d**a / m**b * eps1 ** (2 - p)
    return rule


A_GRID = np.geomspace(1e-3, 1e6, 200)


def _regret_curves(table, a, b, p, kappa):
    """Mean and worst regret over a table of the form at every ``A`` of ``A_GRID``.

    The same numbers as :func:`regret` with :func:`form_rule`, vectorized over ``A``.
    """
    rule = form_rule(A_GRID, a, b, p, kappa)
    gaps = np.array([max(acc for acc in row if acc is not None)
                     - _accuracy_at(row, rule(key, 0.99 * key[4]))
                     for key, row in table.items()])
    return gaps.mean(axis=0), gaps.max(axis=0)


def score(tables):
    """Every form's best ``A`` and its regrets, best (least mean over the losses) first."""
    results = []
    for (a, b, p), kappa in itertools.product(FORMS, KAPPAS):
        curves = {name: _regret_curves(t, a, b, p, kappa) for name, t in tables.items()}
        average = np.mean([mean for mean, _ in curves.values()], axis=0)
        best = int(np.argmin(average))
        per_loss = {name: (float(mean[best]), float(worst[best]))
                    for name, (mean, worst) in curves.items()}
        results.append(dict(a=a, b=b, p=p, kappa=kappa, A=float(A_GRID[best]),
                            mean_regret=float(average[best]), per_loss=per_loss))
    return sorted(results, key=lambda r: r["mean_regret"])


def _load(path):
    with open(path) as fh:
        return {tuple(json.loads(k)): v for k, v in json.load(fh).items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["logistic", "huber", "softmax"], action="append",
                        help="run only these losses (default: all)")
    parser.add_argument("--output", default=None, help="JSON file for the tables")
    parser.add_argument("--seed-offset", type=int, default=0,
                        help="add this to every problem's seed (fresh problems for validation)")
    parser.add_argument("--score", nargs="*", default=None,
                        help="score tables saved by earlier --output runs instead of running")
    args = parser.parse_args(argv)
    if args.score is not None:
        tables = {}
        for path in args.score:
            for key, row in _load(path).items():
                tables.setdefault(key[0], {})[key] = row
    else:
        offset = args.seed_offset
        studies = {"logistic": lambda: binary_study("logistic", seed_offset=offset),
                   "huber": lambda: binary_study("huber", seed_offset=offset),
                   "softmax": lambda: softmax_study(seed_offset=offset)}
        tables = {name: studies[name]() for name in (args.part or studies)}
        if args.output:
            with open(args.output, "w") as fh:
                json.dump({json.dumps(k): v for t in tables.values() for k, v in t.items()}, fh)
    if set(tables) != {"logistic", "huber", "softmax"}:
        return
    results = score(tables)
    best_without_curvature = next(r for r in results if r["kappa"] == 0)
    for r in results[:8] + [best_without_curvature]:
        losses = ", ".join(f"{n} {m:.4f} (worst {w:.4f})" for n, (m, w) in r["per_loss"].items())
        print(f"Lambda = {r['kappa']:g} C / eps1 + {r['A']:.4g} k d^{r['a']} m^-{r['b']} / "
              f"eps1^{r['p']}: mean regret {r['mean_regret']:.4f}; {losses}")
    # The validation step: the estimator's per-loss constants against one shared A,
    # in the adopted form (run on tables with --seed-offset 1000 to reproduce it).
    for label, scales in [("shared A = 56", dict.fromkeys(tables, 56.0)),
                          ("estimator's per-loss A", {
                              name: _REGULARIZATION_SCALES["multinomial" if name == "softmax"
                                                           else name] for name in tables})]:
        per_loss = {name: regret(t, form_rule(scales[name], 0.5, 0.5, 1.5))
                    for name, t in tables.items()}
        losses = ", ".join(f"{n} {m:.4f} (worst {w:.4f})" for n, (m, w) in per_loss.items())
        print(f"{label}, Lambda = A k sqrt(d / m) / eps1^1.5: mean regret "
              f"{np.mean([m for m, _ in per_loss.values()]):.4f}; {losses}")


if __name__ == "__main__":
    main()
