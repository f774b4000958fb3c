"""The real-data numbers of the private tree ensembles (user guide, "Private tree ensembles").

Run ``OMP_NUM_THREADS=1 python -m studies.trees [TABLES] [MAX_TRAIN] [EPSILONS]
[MODELS]`` (defaults: every classification table of the collection, 20000, ``0.1,1,10,1e6``,
``hgb,rf,amp``; about 20 minutes on one core). For each table and model it prints the
mean test accuracy over the stratified splits of seeds 0, 1, 2 of
:func:`skdp.benchmarks._real.real_splits`, the non-private twin's and the majority
class's. ``hgb`` is :class:`~skdp.ensemble.DPHistGradientBoostingClassifier` and ``rf``
:class:`~skdp.ensemble.DPRandomForestClassifier`, with their defaults and the table's
public ``bounds``, fitted without normalization (twins: scikit-learn's
``HistGradientBoostingClassifier()`` and ``RandomForestClassifier()``); ``amp`` is
``DPLogisticRegressionAMP()`` on unit-norm rows (``score_pair(..., normalize=True)``;
twin ``LogisticRegression()``). Private models use ``random_state=0``.
"""

import sys

import numpy as np
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from skdp.benchmarks._real import real_splits, score_pair

TABLES = ("wa_churn", "credit_data", "flights", "digits", "mlc_churn", "tv16", "diamonds_cut")


def _private(kind, split, epsilon):
    from skdp.ensemble import DPHistGradientBoostingClassifier, DPRandomForestClassifier
    from skdp.linear_model import DPLogisticRegressionAMP

    kw = dict(epsilon=epsilon, classes=split.classes, random_state=0)
    if kind == "amp":
        return DPLogisticRegressionAMP(**kw), LogisticRegression(), True
    cls, twin = ((DPHistGradientBoostingClassifier, HistGradientBoostingClassifier())
                 if kind == "hgb" else (DPRandomForestClassifier,
                                        RandomForestClassifier(n_jobs=1)))
    return cls(bounds=split.meta.bounds, **kw), twin, False


def run(tables=TABLES, max_train=20000, epsilons=(0.1, 1.0, 10.0, 1e6),
        models=("hgb", "rf", "amp"), seeds=(0, 1, 2), out=print):
    """Print one line per table and model: accuracy per epsilon, twin, majority class."""
    dummy = DummyClassifier()
    for name in tables:
        splits = list(real_splits(name, seeds=seeds, max_train=max_train))
        for kind in models:
            scores = {eps: [] for eps in epsilons}
            twins = []
            for split in splits:
                for i, eps in enumerate(epsilons):
                    est, twin, normalize = _private(kind, split, eps)
                    if i == 0:
                        twins.append(score_pair(twin, dummy, split, normalize=normalize)[0])
                    scores[eps].append(score_pair(est, dummy, split, normalize=normalize)[0])
            majority = np.mean([s.trivial_score() for s in splits])
            out(f"{name:13s} n={len(splits[0].y_train):5d} {kind:3s} "
                + " ".join(f"e{eps:g}={np.mean(scores[eps]):.3f}" for eps in epsilons)
                + f" twin={np.mean(twins):.3f} majority={majority:.3f}")


if __name__ == "__main__":
    argv = sys.argv[1:]
    run(tables=argv[0].split(",") if len(argv) > 0 else TABLES,
        max_train=int(argv[1]) if len(argv) > 1 else 20000,
        epsilons=tuple(float(e) for e in argv[2].split(",")) if len(argv) > 2
        else (0.1, 1.0, 10.0, 1e6),
        models=tuple(argv[3].split(",")) if len(argv) > 3 else ("hgb", "rf", "amp"))
