"""How the default ``eps3`` rule of DPLogisticRegressionAMP was derived (reproducible).

Run ``OMP_NUM_THREADS=1 python -m studies.amp_eps3`` (about 12 minutes on one core;
``--part`` runs one loss so that the parts can run side by side, ``--score``
combines their JSON outputs). It uses only data this package generates with
``make_classification`` (seeds 101-118, 201-208, 301-318, 401-418 and
501-508; never the benchmark's seed 1000, no benchmark or test data), and,
for the fifth version's wide models (``--part wide-logistic``,
``--part wide-huber``, ``--score-wide``), with ``make_classification``
(seeds 601-608) and this module's :func:`sparse_bag_of_words` (seeds
701-704); the sixth version's Huber widths (``--part huber-h0.05``,
``--part huber-h0.5``, ``--score-width``) re-use the binary families with
their seeds moved by 2000 and 3000.

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

Fifth version: wide models (protocol committed before any of its sweeps
ran). Every problem above has ``d <= 101``. The estimator's rule has
no form of its own for ``d > m``, which Thakkar's (2019) strategy has
(:func:`~skdp.linear_model._amp.thesis_eps3_fraction` with
``high_dimensional=True``). This version checks the rule on wide data.

* Families, binary, each for the logistic and the Huber loss (estimator
  defaults otherwise: ``data_norm = 1``, ``fit_intercept = True``,
  ``huber_h = 0.1``; no preprocessing), 80/20 split with the problem's seed:

  - ``wide-dense``: ``make_classification(int(m / 0.8), d,
    n_informative=20, n_redundant=0, class_sep=sep)``, ``m`` in
    ``{500, 2000}``, ``d`` in ``{1000, 4000}``, ``sep`` in ``{1, 2}``
    (8 problems, seeds 601-608 in the order of ``itertools.product``);
  - ``wide-sparse``: :func:`sparse_bag_of_words` (this module's CSR
    generator: Zipf word frequencies, 50-100 words per row, log counts,
    unit-norm rows; labels from a random linear model over 50 informative
    words plus 5% label noise), ``m`` in ``{2000, 8000}``, ``d`` in
    ``{5000, 20000}`` (4 problems, seeds 701-704; ``sep = 0`` in the keys).

  The generator was designed, and its non-private accuracy checked, on
  seed 5 only; the non-private ``LogisticRegression()`` accuracy of every
  problem is printed by the sweep and reported as it comes out.
* ``epsilon`` in ``{0.1, 0.3, 1, 3}``, ``C_GRID``, 3 noise draws per cell,
  :func:`_sweep`; keys ``(loss, m, d + 1, sep, epsilon, family)``; parts
  ``wide-logistic`` and ``wide-huber`` (one JSON each with ``--output``).
  A timing measurement at the largest sizes (seed 5; at most 0.3 s per fit) put
  each part well under 25 minutes on one core, so no size was dropped.
* Scoring (``--score-wide F1 F2 [--fresh G1 G2]``, :func:`score_wide`),
  separately on the cells with ``d > m`` and with ``d <= m`` (``d`` with
  the intercept, ``m`` training rows):

  1. mean and worst regret of the estimator's rule (per-loss ``A``,
     ``Lambda = A k sqrt(d / m) / eps1^1.5``), of Thakkar's (2019)
     high-dimensional rule (``f1 = max(0.97, 1 - 0.99 / eps1)`` on every
     cell, converted to ``c`` by :func:`thesis_high_dimensional_rule`) and
     of the rule before the fourth version,
     ``Lambda = 7 k d / (sqrt(m) eps1^1.5)``;
  2. the candidate: per loss, the ``A_high`` of ``A_GRID`` with the least
     mean regret, in the estimator's form, over the ``d > m`` cells of the
     original tables (seeds as above);
  3. adoption criterion: the same families run with ``--seed-offset 1000``
     (fresh problems). "Use ``A_high`` when ``d > m``" is recommended only
     if, on the fresh ``d > m`` cells, its mean regret averaged over the
     two losses is at least 10% below the estimator's rule's. For
     information only (not a candidate): the best ``kappa = 0`` form
     ``(a, b, p)`` with one ``A`` for both losses over all cells of the
     original wide tables, and over their ``d > m`` cells.

  The result is reported as it comes out; nothing above changes after the
  sweeps have been seen.

Result of the fifth version (run on main at 220e49e; each part about 4.5
minutes on one core): the default rule is unchanged. Non-private
``LogisticRegression()`` test accuracy of the problems: wide-dense 0.72,
0.96, 0.74, 0.91, 0.83, 0.94, 0.67, 0.95 (seeds 601-608) and 0.70, 0.90,
0.70, 0.94, 0.82, 0.97, 0.84, 0.88 (fresh, 1601-1608); wide-sparse 0.79,
0.80, 0.84, 0.84 (701-704) and 0.71, 0.77, 0.84, 0.85 (1701-1704). Private
accuracy is low on these problems (the best ``c`` of a cell reaches 0.49 to
0.96, and in 22 of the 48 logistic and 18 of the 48 Huber cells of the
original tables the whole ``c`` row spans less than 3 points), so the
regrets below are small partly because little can be lost. Mean regret in
points (worst in brackets), ``d > m`` cells (36 per loss) then
``d <= m`` cells (12 per loss):

========================  ==================  ==================
rule                      original            fresh
========================  ==================  ==================
logistic, ``d > m``
estimator (``A = 69``)    0.88 (4.0)          0.85 (5.2)
thesis high-dimensional   1.33 (11.3)         1.09 (8.9)
before version 4          1.88 (11.7)         1.03 (9.7)
``A_high = 41``           0.79 (3.6)          0.81 (4.4)
Huber, ``d > m``
estimator (``A = 85``)    3.06 (17.9)         1.76 (14.9)
thesis high-dimensional   3.17 (23.4)         1.81 (14.9)
before version 4          3.07 (23.6)         1.92 (14.9)
``A_high = 41``           2.87 (16.1)         1.94 (14.4)
logistic, ``d <= m``
estimator                 0.71 (2.0)          0.76 (2.5)
thesis high-dimensional   2.99 (9.1)          3.32 (8.7)
before version 4          1.15 (4.7)          0.59 (2.1)
Huber, ``d <= m``
estimator                 1.62 (9.0)          2.57 (23.3)
thesis high-dimensional   2.84 (20.2)         3.51 (26.0)
before version 4          2.77 (20.2)         4.16 (26.0)
========================  ==================  ==================

``A_high`` is 41.03 (the ``A_GRID`` point) for both losses. On the fresh
``d > m`` cells its mean regret averaged over the losses is 1.38 points
against 1.30 for the estimator's rule: 5.6% *more*, so the criterion (10%
less) is not met and the rule keeps one form for every ``d``. Thakkar's (2019)
high-dimensional rule and the rule before version 4 are no better than the
estimator's on the wide cells, original or fresh. For information only,
the best form on all cells of the original wide tables is
``Lambda = 1.5e5 k / (m eps1)`` (mean regret 1.07 points, against 1.77
for the estimator's rule on the same cells), and on their ``d > m`` cells
``Lambda = 3.6e4 k / (m eps1)`` (1.20, against 1.97): not candidates.

Main's a950180 (the binary objective noise 1-3% smaller) landed while the
sweeps above ran, after the merge made just before them. The four parts
are re-run unchanged on it, as a replication decided before its numbers
were seen: the decision above is the protocol's and stays; the re-run is
reported beside it, whatever it says.

Result of the replication (main at a950180; each part about 2.7 minutes):
the same. ``A_high`` is again 41.03 for both losses; on the fresh
``d > m`` cells it has 1.39 points against 1.34 for the estimator's rule
(3.7% more; logistic 0.88 vs 0.89, Huber 1.91 vs 1.80). Estimator's rule,
original ``d > m``: logistic 0.87 (worst 4.0), Huber 3.05 (18.0); thesis
high-dimensional 1.29 and 3.16; before version 4 1.91 and 3.08. The
non-private accuracies are those above (same problems).

Sixth version: the Huber constant at other widths (protocol committed
before any of its sweeps ran). The rule's ``A = 85`` for the Huber loss was
derived at the estimator's default width ``huber_h = 0.1`` (curvature
``C = beta = 1 / (2 h) = 5``); a user who sets ``huber_h = 0.5``
(``C = 1``, Chaudhuri et al.'s usual width) or ``0.05`` (``C = 10``) gets
the same ``A``. This version checks whether it holds there.

* Parts ``huber-h0.05`` and ``huber-h0.5`` (``--part``): the three binary
  families of :data:`BINARY_FAMILIES`, their sizes, ``BINARY_EPSILONS``,
  ``C_GRID``, 4 noise draws and :func:`_sweep`, fitted with
  ``loss="huber", huber_h=h`` and curvature
  ``get_loss("huber", h).smoothness(1.0)``. Table keys name the width
  (loss ``"huber-0.05"``, ``"huber-0.5"`` in ``key[0]``,
  :func:`huber_width_name`), which :func:`curvature_and_rank` parses; the
  earlier parts and their keys are unchanged. Seeds: the fourth version's
  moved by 2000 (``--seed-offset 2000``: 2101-2118, 2301-2318, 2401-2418)
  for the original tables, by 3000 for the fresh ones. A timing
  measurement before this was committed (``make_classification`` seed 5,
  not a protocol seed, its accuracies discarded unseen; largest size
  ``m = 32000``, ``d = 80``: 47 s for all ``epsilon`` and ``c`` at
  ``h = 0.5``, 39 s at ``h = 0.05``, about 0.3 s per fit) puts each part at
  roughly 11-15 minutes on one core, so the four part-runs, two at a time,
  end well before the deadline: no family is dropped.
* Scoring (``--score-width ORIGINAL_FILES --fresh FRESH_FILES``,
  :func:`score_width`):

  1. mean and worst regret, per width, of the current rule (``A = 85``,
     ``form_rule(85, 0.5, 0.5, 1.5)``);
  2. the candidate ``A(h) = 85 (h / 0.1)^q`` (:func:`width_scale`), one
     ``q`` of ``Q_GRID`` (-2 to 2 in steps of 0.05; ``q = 0`` is the
     current rule) chosen by the least mean regret averaged over the two
     widths' original tables (ties: the least ``|q|``); for information
     only, each width's own best ``A`` of ``A_GRID`` on its original table;
  3. adoption criterion: the candidate is recommended only if, on the fresh
     tables, its mean regret averaged over the two widths is at least 10%
     below the current rule's.

  The result is reported as it comes out; nothing above changes after the
  sweeps have been seen. Commands, from the repository root, with
  ``OMP_NUM_THREADS=1`` and ``S="python -m studies.amp_eps3"``::

      $S --part huber-h0.05 --seed-offset 2000 --output h005.json
      $S --part huber-h0.5 --seed-offset 2000 --output h05.json
      $S --part huber-h0.05 --seed-offset 3000 --output h005-fresh.json
      $S --part huber-h0.5 --seed-offset 3000 --output h05-fresh.json
      $S --score-width h005.json h05.json --fresh h005-fresh.json h05-fresh.json

Result of the sixth version (run on main at ef6f18a, all four parts
complete, none cut; two at a time with other work on the machine: 6.1 and
7.9 minutes for the original ``h = 0.05`` and ``h = 0.5`` parts, 4.0 and
5.2 for the fresh ones): the criterion is met. ``q = -0.35``, i.e.
``A(h) = 85 (h / 0.1)^-0.35``: 108.3 at ``h = 0.05`` and 48.4 at
``h = 0.5`` (85 at the default width by construction). Mean regret in points
(worst in brackets), 270 cells per width:

========================  ==================  ==================
rule                      original            fresh
========================  ==================  ==================
``h = 0.05``
current (``A = 85``)      0.60 (7.4)          0.58 (9.1)
candidate (``A = 108``)   0.54 (6.1)          0.53 (7.6)
``h = 0.5``
current (``A = 85``)      1.14 (24.9)         0.87 (14.6)
candidate (``A = 48``)    0.91 (13.4)         0.68 (6.0)
========================  ==================  ==================

Averaged over the widths, on the fresh tables the candidate has 0.607
points against 0.727 for the current rule: 16.5% less, above the 10% asked
for (on the original tables, 0.724 against 0.869). Most of the gain is at
``h = 0.5`` (22% less on the fresh tables, where the current rule
over-regularizes small ``m`` with large ``d`` at small ``epsilon``, the
nonnegative family above all); at ``h = 0.05`` it is 9% less. For
information only: each width's own best ``A`` on its original table is
158.9 (``h = 0.05``; mean regret 0.49) and 50.5 (``h = 0.5``; 0.91), and
the mean regret over the widths is flat near the chosen ``q`` (original
0.73, 0.72, 0.73 points at ``q = -0.4, -0.35, -0.3``; fresh 0.63, 0.61,
0.60), so ``q`` is not a sharp optimum. In curvature terms
(``C = 1 / (2 h)`` at ``data_norm = 1``) the candidate is
``A = 85 (C / 5)^0.35``; the study ran only at ``data_norm = 1``.
Main's 840d87f and 14d18d0 (AMP's objective-noise delta rounded up) landed
while the sweeps ran; they change ``sigma1``, ``sigma2``, ``Lambda`` and
``eps3`` by at most 1.3e-9 relative on a sample of 64 of the study's
settings, so the sweeps were not re-run.
"""

import argparse
import functools
import itertools
import json

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skdp.linear_model import DPLogisticRegressionAMP, MultinomialLoss
from skdp.linear_model._amp import (
    _REGULARIZATION_SCALES,
    log_determinant_bound,
    regularization_for_gap,
    thesis_eps3_fraction,
)
from skdp.linear_model._losses import get_loss

C_GRID = [0.1, 0.3, 1, 3, 10, 20, 30, 50, 100, 300, 1000]
BINARY_EPSILONS = [0.03, 0.1, 0.3, 1.0, 3.0]
SOFTMAX_EPSILONS = [0.3, 1.0, 3.0, 10.0]
WIDE_EPSILONS = [0.1, 0.3, 1.0, 3.0]
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


def huber_width_name(huber_h):
    """The table keys' loss name of the Huber loss at width ``huber_h`` (sixth version)."""
    return f"huber-{huber_h:g}"


def parse_loss_name(name):
    """``(loss, huber_h)`` of a binary table key's loss name.

    ``"logistic"`` and ``"huber"`` (versions 1-5) have the estimator's default
    width 0.1; ``"huber-0.5"`` (:func:`huber_width_name`) is the Huber loss of
    width 0.5.
    """
    loss, _, width = name.partition("-")
    return loss, float(width) if width else 0.1


def _binary_sweeps(loss, problems, epsilons, n_draws):
    """Sweep every ``(family, m, d, sep, seed, data)`` of ``problems`` at every epsilon.

    ``loss`` is also the keys' loss name (:func:`parse_loss_name`).
    """
    name, (loss, huber_h) = loss, parse_loss_name(loss)
    curvature, table = get_loss(loss, huber_h).smoothness(1.0), {}
    for family, m, d, sep, seed, data in problems:
        for eps in epsilons:
            key = (name, m, d + 1, sep, eps, family)  # d + 1: the intercept feature
            table[key] = _sweep(data, eps, curvature, 1, n_draws, loss=loss, huber_h=huber_h)
            print(key, table[key], flush=True)
    return table


def binary_study(loss, n_draws=4, seed_offset=0):
    """``{(loss, m, d, class_sep, eps, family): accuracies over C_GRID}`` on binary data.

    ``loss`` may name a Huber width (:func:`huber_width_name`).
    """
    def problems():
        for family, (start, ms, ds, shape, transform) in BINARY_FAMILIES.items():
            grid = itertools.product(ms, ds, [1.0, 2.0])
            for seed, (m, d, sep) in enumerate(grid, start=start + seed_offset):
                X, y = make_classification(int(m / 0.8), d, class_sep=sep, random_state=seed,
                                           **shape(d))
                if transform is not None:
                    X = transform(X)
                yield family, m, d, sep, seed, train_test_split(X, y, test_size=0.2,
                                                                random_state=seed)
    return _binary_sweeps(loss, problems(), BINARY_EPSILONS, n_draws)


def sparse_bag_of_words(n_samples, n_features, *, n_informative=50, words_per_row=(50, 100),
                        zipf_exponent=1.1, informative_ranks=(5, 500), label_noise=0.05,
                        random_state=None):
    """A binary bag-of-words problem: CSR rows of log word counts, unit L2 norm.

    Word ``j`` of frequency rank ``r`` is drawn with probability proportional
    to ``r^-zipf_exponent`` (ranks are a random permutation of the words);
    each row draws between ``words_per_row[0]`` and ``words_per_row[1]``
    words, stores ``log(1 + count)`` and is scaled to unit norm. The label
    is whether the row's score under a standard normal weight on
    ``n_informative`` words (drawn among the frequency ranks
    ``informative_ranks``) is above the median (ties, rows without an
    informative word, broken at random), flipped with probability
    ``label_noise``.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), in {0, 1}
    """
    rng = np.random.default_rng(random_state)
    frequencies = np.arange(1, n_features + 1, dtype=float) ** -zipf_exponent
    word_of_rank = rng.permutation(n_features)
    lengths = rng.integers(words_per_row[0], words_per_row[1] + 1, size=n_samples)
    words = word_of_rank[rng.choice(n_features, size=lengths.sum(),
                                    p=frequencies / frequencies.sum())]
    X = sp.csr_matrix((np.ones(len(words)), (np.repeat(np.arange(n_samples), lengths), words)),
                      shape=(n_samples, n_features))  # duplicates are summed into counts
    X.data = np.log1p(X.data)
    X = sp.csr_matrix(sp.diags(1.0 / np.sqrt(X.multiply(X).sum(axis=1)).A1) @ X)
    ranks = np.arange(informative_ranks[0], min(informative_ranks[1], n_features))
    informative = word_of_rank[rng.choice(ranks, n_informative, replace=False)]
    score = X[:, informative] @ rng.standard_normal(n_informative)
    score += 1e-9 * rng.standard_normal(n_samples)  # random order among ties
    y = (score > np.median(score)).astype(int)
    flip = rng.random(n_samples) < label_noise
    y[flip] = 1 - y[flip]
    return X, y


WIDE_FAMILIES = {
    "wide-dense": (601, [500, 2000], [1000, 4000], [1.0, 2.0],
                   lambda m, d, sep, seed: make_classification(
                       int(m / 0.8), d, n_informative=20, n_redundant=0, class_sep=sep,
                       random_state=seed)),
    "wide-sparse": (701, [2000, 8000], [5000, 20000], [0],
                    lambda m, d, sep, seed: sparse_bag_of_words(int(m / 0.8), d,
                                                                random_state=seed)),
}


def wide_study(loss, n_draws=3, seed_offset=0):
    """As :func:`binary_study` on the fifth version's wide problems.

    Prints each problem's non-private ``LogisticRegression()`` test accuracy.
    """
    def problems():
        for family, (start, ms, ds, seps, make) in WIDE_FAMILIES.items():
            grid = itertools.product(ms, ds, seps)
            for seed, (m, d, sep) in enumerate(grid, start=start + seed_offset):
                data = train_test_split(*make(m, d, sep, seed), test_size=0.2,
                                        random_state=seed)
                X_train, X_test, y_train, y_test = data
                accuracy = LogisticRegression().fit(X_train, y_train).score(X_test, y_test)
                print(f"{family} m={m} d={d} sep={sep} seed={seed}: non-private "
                      f"LogisticRegression accuracy {accuracy:.4f}", flush=True)
                yield family, m, d, sep, seed, data
    return _binary_sweeps(loss, problems(), WIDE_EPSILONS, n_draws)


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
    return get_loss(*parse_loss_name(key[0])).smoothness(1.0), 1


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


def _regret_curves(table, a, b, p, kappa, A=A_GRID):
    """Mean and worst regret over a table of the form at every ``A`` of ``A`` (an array).

    The same numbers as :func:`regret` with :func:`form_rule`, vectorized over ``A``.
    """
    rule = form_rule(A, a, b, p, kappa)
    gaps = np.array([max(acc for acc in row if acc is not None)
                     - _accuracy_at(row, rule(key, 0.99 * key[4]))
                     for key, row in table.items()])
    return gaps.mean(axis=0), gaps.max(axis=0)


def score(tables, kappas=KAPPAS):
    """Every form's best ``A`` and its regrets, best (least mean over the losses) first."""
    results = []
    for (a, b, p), kappa in itertools.product(FORMS, kappas):
        curves = {name: _regret_curves(t, a, b, p, kappa) for name, t in tables.items()}
        average = np.mean([mean for mean, _ in curves.values()], axis=0)
        best = int(np.argmin(average))
        per_loss = {name: (float(mean[best]), float(worst[best]))
                    for name, (mean, worst) in curves.items()}
        results.append(dict(a=a, b=b, p=p, kappa=kappa, A=float(A_GRID[best]),
                            mean_regret=float(average[best]), per_loss=per_loss))
    return sorted(results, key=lambda r: r["mean_regret"])


def thesis_high_dimensional_rule(key, eps1):
    """``c`` of Thakkar's (2019) high-dimensional rule, ``f1 = max(0.97, 1 - 0.99 / eps1)``.

    ``eps1 - eps3 = (1 - f1) eps1``, clamped as :func:`_sweep` and the
    estimator's rule clamp it (``<= 0.99`` and ``<= eps1 / 2``), gives
    ``Lambda`` by :func:`regularization_for_gap`, and ``c = Lambda eps1^2 / k``.
    """
    curvature, row_rank = curvature_and_rank(key)
    gap = (1.0 - thesis_eps3_fraction(eps1, high_dimensional=True)) * eps1
    gap = min(gap, 0.99, 0.5 * eps1)
    return regularization_for_gap(gap, curvature, row_rank) * eps1**2 / row_rank


def split_by_width(table):
    """``(cells with d > m, cells with d <= m)`` of a table (``d`` with the intercept)."""
    wide = {key: row for key, row in table.items() if key[2] > key[1]}
    return wide, {key: row for key, row in table.items() if key not in wide}


WIDTHS = ("d > m", "d <= m")


def score_wide(tables, fresh=None):
    """The fifth version's scoring of ``{loss: table}`` (and of fresh tables).

    Returns
    -------
    result : dict
        ``A_high``: per loss, the ``A`` of ``A_GRID`` with the least mean
        regret of ``Lambda = A k sqrt(d / m) / eps1^1.5`` over the ``d > m``
        cells of ``tables``. ``regrets``: ``{(which, loss, width, rule):
        (mean, worst)}`` for ``which`` in ``"original"``, ``"fresh"``,
        ``width`` in :data:`WIDTHS` (absent when there is no such cell) and
        the rules ``"estimator"``, ``"thesis high-dimensional"``,
        ``"before version 4"`` and ``"A_high"``. ``criterion`` (with
        ``fresh``): the ``d > m`` mean regrets of ``A_high`` and of the
        estimator's rule on the fresh tables, averaged over the losses, and
        whether the first is at least 10% below the second.
    """
    a_high = {}
    for loss, table in tables.items():
        mean, _ = _regret_curves(split_by_width(table)[0], 0.5, 0.5, 1.5, 0.0)
        a_high[loss] = float(A_GRID[np.argmin(mean)])
    regrets = {}
    for which, group in [("original", tables), ("fresh", fresh or {})]:
        for loss, table in group.items():
            rules = {"estimator": form_rule(_REGULARIZATION_SCALES[loss], 0.5, 0.5, 1.5),
                     "thesis high-dimensional": thesis_high_dimensional_rule,
                     "before version 4": form_rule(7.0, 1, 0.5, 1.5),
                     "A_high": form_rule(a_high[loss], 0.5, 0.5, 1.5)}
            for width, cells in zip(WIDTHS, split_by_width(table)):
                for name, rule in rules.items():
                    if cells:
                        regrets[which, loss, width, name] = regret(cells, rule)
    result = dict(A_high=a_high, regrets=regrets)
    if fresh:
        candidate, current = (float(np.mean([regrets["fresh", loss, "d > m", name][0]
                                             for loss in fresh]))
                              for name in ("A_high", "estimator"))
        result["criterion"] = dict(A_high=candidate, estimator=current,
                                   met=candidate <= 0.9 * current)
    return result


def _print_criterion(label, criterion, candidate, current):
    """Print an adoption criterion: the two rules' mean regrets and the 10% test."""
    new, old = criterion[candidate], criterion[current]
    print(f"criterion ({label}): {candidate} {new:.4f} vs {current} {old:.4f}: "
          f"{new / old - 1:+.1%}, {'met' if criterion['met'] else 'not met'} "
          f"(needs -10% or less)")


def _print_wide(tables, fresh):
    result = score_wide(tables, fresh)
    print("A_high (least mean regret over the original d > m cells): "
          + ", ".join(f"{loss} {a:.4g}" for loss, a in result["A_high"].items()))
    for (which, loss, width, name), (mean, worst) in result["regrets"].items():
        print(f"{which} {loss} {width}: {name}: mean regret {mean:.4f} (worst {worst:.4f})")
    if "criterion" in result:
        _print_criterion("fresh d > m, mean over the losses", result["criterion"],
                         "A_high", "estimator")
    # For information only, not a candidate.
    for label, cells in [("all cells", tables),
                         ("d > m cells", {n: split_by_width(t)[0] for n, t in tables.items()})]:
        r = score(cells, kappas=[0])[0]
        print(f"information only, best form on the original wide tables' {label}: "
              f"Lambda = {r['A']:.4g} k d^{r['a']} m^-{r['b']} / eps1^{r['p']}, mean regret "
              f"{r['mean_regret']:.4f}")


HUBER_WIDTHS = (0.05, 0.5)
Q_GRID = np.round(np.linspace(-2.0, 2.0, 81), 2)


def width_scale(huber_h, q):
    """The sixth version's candidate ``A(h) = 85 (h / 0.1)^q`` (``q = 0``: the estimator's)."""
    return _REGULARIZATION_SCALES["huber"] * (huber_h / 0.1) ** q


def score_width(tables, fresh=None):
    """The sixth version's scoring of ``{loss name: table}`` (and of fresh tables).

    The loss names are :func:`huber_width_name`'s (one table per width).

    Returns
    -------
    result : dict
        ``q``: the exponent of ``Q_GRID`` whose :func:`width_scale` has the
        least mean regret of ``Lambda = A(h) k sqrt(d / m) / eps1^1.5``
        averaged over the widths' ``tables`` (ties: the least ``|q|``).
        ``A``: per width, that ``A(h)``. ``own_A`` (information only): per
        width, the ``A`` of ``A_GRID`` with the least mean regret on its own
        original table. ``regrets``: ``{(which, name, rule): (mean, worst)}``
        for ``which`` in ``"original"``, ``"fresh"`` and the rules
        ``"current"`` (``A = 85``), ``"candidate"`` (``A(h)``) and
        ``"own A"``. ``criterion`` (with ``fresh``): the fresh mean regrets
        of the candidate and of the current rule, averaged over the widths,
        and whether the first is at least 10% below the second.
    """
    widths = {name: parse_loss_name(name)[1] for name in tables}
    average = np.mean([_regret_curves(t, 0.5, 0.5, 1.5, 0.0, width_scale(widths[name], Q_GRID))[0]
                       for name, t in tables.items()], axis=0)
    order = np.argsort(np.abs(Q_GRID), kind="stable")
    q = float(Q_GRID[order[np.argmin(average[order])]])
    own = {name: float(A_GRID[np.argmin(_regret_curves(t, 0.5, 0.5, 1.5, 0.0)[0])])
           for name, t in tables.items()}
    scales = {"current": dict.fromkeys(tables, _REGULARIZATION_SCALES["huber"]),
              "candidate": {name: width_scale(h, q) for name, h in widths.items()},
              "own A": own}
    regrets = {(which, name, rule): regret(table, form_rule(scales[rule][name], 0.5, 0.5, 1.5))
               for which, group in [("original", tables), ("fresh", fresh or {})]
               for name, table in group.items() for rule in scales}
    result = dict(q=q, A=scales["candidate"], own_A=own, regrets=regrets)
    if fresh:
        candidate, current = (float(np.mean([regrets["fresh", name, rule][0] for name in fresh]))
                              for rule in ("candidate", "current"))
        result["criterion"] = dict(candidate=candidate, current=current,
                                   met=candidate <= 0.9 * current and candidate < current)
    return result


def _print_width(tables, fresh):
    result = score_width(tables, fresh)
    print(f"q = {result['q']:g} (least mean regret over the original tables' widths): "
          + ", ".join(f"{name}: A(h) = {a:.4g}" for name, a in result["A"].items()))
    print("information only, each width's own best A on its original table: "
          + ", ".join(f"{name} {a:.4g}" for name, a in result["own_A"].items()))
    for (which, name, rule), (mean, worst) in result["regrets"].items():
        print(f"{which} {name}: {rule}: mean regret {mean:.4f} (worst {worst:.4f})")
    if "criterion" in result:
        _print_criterion("fresh, mean over the widths", result["criterion"],
                         "candidate", "current")


def _load(path):
    with open(path) as fh:
        return {tuple(json.loads(k)): v for k, v in json.load(fh).items()}


def _load_tables(paths):
    """``{loss: table}`` from JSON files saved by ``--output``."""
    tables = {}
    for path in paths:
        for key, row in _load(path).items():
            tables.setdefault(key[0], {})[key] = row
    return tables


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", action="append",
                        choices=["logistic", "huber", "softmax", "wide-logistic", "wide-huber",
                                 *(f"huber-h{h:g}" for h in HUBER_WIDTHS)],
                        help="run only these parts (default: logistic, huber and softmax)")
    parser.add_argument("--output", default=None, help="JSON file for the tables")
    parser.add_argument("--seed-offset", type=int, default=0,
                        help="add this to every problem's seed (fresh problems for validation)")
    parser.add_argument("--score", nargs="*", default=None,
                        help="score tables saved by earlier --output runs instead of running")
    parser.add_argument("--score-wide", nargs="+", default=None, metavar="FILE",
                        help="score the wide parts' tables (fifth version) instead of running")
    parser.add_argument("--score-width", nargs="+", default=None, metavar="FILE",
                        help="score the huber-h* parts' tables (sixth version) instead of running")
    parser.add_argument("--fresh", nargs="+", default=None, metavar="FILE",
                        help="with --score-wide: the wide parts run with --seed-offset 1000; "
                             "with --score-width: the huber-h* parts run with --seed-offset 3000")
    args = parser.parse_args(argv)
    if args.score_width is not None:
        _print_width(_load_tables(args.score_width),
                     _load_tables(args.fresh) if args.fresh else None)
        return
    if args.score_wide is not None:
        _print_wide(_load_tables(args.score_wide),
                    _load_tables(args.fresh) if args.fresh else None)
        return
    if args.score is not None:
        tables = _load_tables(args.score)
    else:
        offset = args.seed_offset
        studies = {"logistic": lambda: binary_study("logistic", seed_offset=offset),
                   "huber": lambda: binary_study("huber", seed_offset=offset),
                   "softmax": lambda: softmax_study(seed_offset=offset),
                   "wide-logistic": lambda: wide_study("logistic", seed_offset=offset),
                   "wide-huber": lambda: wide_study("huber", seed_offset=offset)}
        for h in HUBER_WIDTHS:
            studies[f"huber-h{h:g}"] = functools.partial(binary_study, huber_width_name(h),
                                                         seed_offset=offset)
        tables = {name: studies[name]()
                  for name in (args.part or ["logistic", "huber", "softmax"])}
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
