"""Numbers of docs/guide/decomposition_and_bounds.rst on the real collection.

    python -m studies.decomposition_and_bounds pca flights [oja]
    python -m studies.decomposition_and_bounds bounds wa_churn,credit_data 1.0 [0.1] [0.9]
    python -m studies.decomposition_and_bounds features wa_churn,credit_data 1.0 [0.1]

``pca``: captured variance of DPPCA over scikit-learn's PCA (test rows, about the test
mean), k in (2, 5), eps in (0.1, 1, 1e6), seeds 0 and 1, raw features in [0, 1] with the
collection's public ``data_norm``. ``bounds``: DPNormClipper(share * eps) then
DPLogisticRegressionAMP((1 - share) * eps, data_norm=1) against
DPLogisticRegressionAMP(eps, data_norm=<public row bound>), raw features, seeds 0-2,
at most 20k training rows; the non-private LogisticRegression and the majority class.
``features``: DPFeatureClipper(share * eps) then DPLogisticRegressionAMP((1 - share) * eps,
data_norm=sqrt(d)) against the same model at eps with the public bounds [0, 1]
(data_norm=sqrt(d)).
"""

import sys
import time
import warnings

import numpy as np
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from skdp.benchmarks._real import real_splits
from skdp.datasets import load_real_dataset
from skdp.decomposition import DPPCA
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.preprocessing import DPFeatureClipper, DPNormClipper


def captured(components, X, mean):
    Z = (X - mean) @ components.T
    return (Z**2).sum() / ((X - mean) ** 2).sum()


def pca(name, solver="covariance"):
    data = load_real_dataset(name)
    for k in (2, 5):
        for eps in (0.1, 1.0, 1e6):
            ratios = []
            for seed in (0, 1):
                X_train, X_test = train_test_split(data.data, test_size=0.25, random_state=seed)
                X_test = X_test[:20000]
                mean = X_test.mean(axis=0)
                reference = captured(PCA(k).fit(X_train).components_, X_test, mean)
                start = time.time()
                est = DPPCA(k, epsilon=eps, data_norm=data.data_norm, svd_solver=solver,
                            random_state=seed).fit(X_train)
                seconds = time.time() - start
                ratios.append(captured(est.components_, X_test, mean) / reference)
            print(f"{name} n={len(X_train)} d={data.data.shape[1]} k={k} eps={eps:g} {solver}: "
                  f"captured private/non-private {np.mean(ratios):.3f} (min "
                  f"{np.min(ratios):.3f}), fit {seconds:.2f}s", flush=True)


def features(names, eps, share=0.1):
    for name in names.split(","):
        rows = []
        for split in real_splits(name, seeds=(0, 1, 2), max_train=20000):
            kw = dict(classes=split.classes, random_state=0)
            norm = float(np.sqrt(split.X_train.shape[1]))
            models = [
                DPLogisticRegressionAMP(epsilon=eps, data_norm=norm, **kw),
                make_pipeline(DPFeatureClipper(epsilon=share * eps, random_state=0),
                              DPLogisticRegressionAMP(epsilon=(1 - share) * eps,
                                                      data_norm=norm, **kw)),
            ]
            scores = []
            for model in models:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(split.X_train, split.y_train)
                    scores.append(model.score(split.X_test, split.y_test))
            rows.append(scores + [split.trivial_score()])
        r = np.mean(rows, axis=0)
        print(f"{name:13s} eps={eps:g}: public bounds {r[0]:.4f}  private bounds {r[1]:.4f}  "
              f"majority {r[2]:.4f}  (private - public {r[1] - r[0]:+.4f})", flush=True)


def bounds(names, eps, share=0.1, quantile=0.9):
    for name in names.split(","):
        rows = []
        for split in real_splits(name, seeds=(0, 1, 2), max_train=20000):
            kw = dict(classes=split.classes, random_state=0)
            models = [
                DPLogisticRegressionAMP(epsilon=eps, data_norm=split.meta.data_norm, **kw),
                make_pipeline(DPNormClipper(epsilon=share * eps, quantile=quantile,
                                            random_state=0),
                              DPLogisticRegressionAMP(epsilon=(1 - share) * eps, **kw)),
                LogisticRegression(max_iter=1000),
            ]
            scores = []
            for model in models:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(split.X_train, split.y_train)
                    scores.append(model.score(split.X_test, split.y_test))
            rows.append(scores + [split.trivial_score()])
        r = np.mean(rows, axis=0)
        print(f"{name:13s} eps={eps:g}: public bound {r[0]:.4f}  private bound {r[1]:.4f}  "
              f"twin {r[2]:.4f}  majority {r[3]:.4f}  (private - public {r[1] - r[0]:+.4f})",
              flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "pca":
        pca(*sys.argv[2:])
    elif sys.argv[1] == "features":
        features(sys.argv[2], *map(float, sys.argv[3:]))
    else:
        bounds(sys.argv[2], *map(float, sys.argv[3:]))
