"""Measurements behind DPGaussianNB's and DPKMeans' defaults (user guide: Naive Bayes and k-means).

    python -m studies.nb_kmeans nb [TABLES] [EPSILONS] [MAX_TRAIN]
    python -m studies.nb_kmeans kmeans TABLE [EPSILONS] [KS] [MAX_TRAIN]

``nb``: test accuracy of ``DPGaussianNB(epsilon, bounds, classes, random_state=0)``,
its twin ``GaussianNB()`` and the majority class, mean over the splits of seeds 0, 1, 2
(``real_splits``, ``score_pair(..., normalize=False)``). ``kmeans``: the k-means
objective per held-out row of ``DPKMeans(n_clusters=k, epsilon, bounds,
random_state=seed)`` and of ``KMeans(n_clusters=k, random_state=seed)`` fitted on the
same training rows (splits of seeds 0 and 1, 75% training rows), and their ratio.
"""

import sys
import warnings

import numpy as np

__all__ = ["kmeans_table", "nb_table"]

NB_TABLES = ("wa_churn", "credit_data", "flights", "digits", "mlc_churn", "tv16",
             "diamonds_cut")


def nb_table(tables=NB_TABLES, epsilons=(0.1, 1.0, 10.0, 1e6), max_train=20000):
    """Rows ``(table, epsilon, private, twin, majority)``."""
    from sklearn.naive_bayes import GaussianNB

    from skdp.benchmarks._real import real_splits, score_pair
    from skdp.naive_bayes import DPGaussianNB

    rows = []
    for name in tables:
        splits = list(real_splits(name, seeds=(0, 1, 2), max_train=max_train))
        for eps in epsilons:
            scores = [score_pair(DPGaussianNB(epsilon=eps, bounds=s.meta.bounds,
                                              classes=s.classes, random_state=0),
                                 GaussianNB(), s, normalize=False) for s in splits]
            rows.append((name, eps, float(np.mean([p for p, _ in scores])),
                         float(np.mean([t for _, t in scores])),
                         float(np.mean([s.trivial_score() for s in splits]))))
    return rows


def kmeans_table(table, epsilons=(0.1, 1.0, 10.0, 1e6), ks=(5, 10), max_train=None):
    """Rows ``(k, seed, epsilon, private objective, KMeans objective, ratio)`` per held-out row."""
    from sklearn.cluster import KMeans
    from sklearn.model_selection import train_test_split

    from skdp.cluster import DPKMeans
    from skdp.datasets import load_real_dataset

    data = load_real_dataset(table)
    rows = []
    for k in ks:
        for seed in (0, 1):
            X_train, X_test = train_test_split(data.data, test_size=0.25, random_state=seed)
            X_train = X_train[:max_train]
            ref = -KMeans(n_clusters=k, random_state=seed).fit(X_train).score(X_test) / len(X_test)
            for eps in epsilons:
                km = DPKMeans(n_clusters=k, epsilon=eps, bounds=data.bounds,
                              random_state=seed).fit(X_train)
                obj = -km.score(X_test) / len(X_test)
                rows.append((k, seed, eps, obj, ref, obj / ref))
    return rows


def _floats(text):
    return tuple(float(v) for v in text.split(","))


def main(argv):
    warnings.simplefilter("ignore")
    if argv[0] == "nb":
        tables = tuple(argv[1].split(",")) if len(argv) > 1 else NB_TABLES
        epsilons = _floats(argv[2]) if len(argv) > 2 else (0.1, 1.0, 10.0, 1e6)
        max_train = int(argv[3]) if len(argv) > 3 else 20000
        for name, eps, p, t, m in nb_table(tables, epsilons, max_train):
            print(f"{name:13s} eps={eps:<8g} private={p:.3f} twin={t:.3f} majority={m:.3f}")
    else:
        epsilons = _floats(argv[2]) if len(argv) > 2 else (0.1, 1.0, 10.0, 1e6)
        ks = tuple(int(k) for k in argv[3].split(",")) if len(argv) > 3 else (5, 10)
        max_train = int(argv[4]) if len(argv) > 4 else None
        for k, seed, eps, obj, ref, ratio in kmeans_table(argv[1], epsilons, ks, max_train):
            print(f"{argv[1]} k={k} seed={seed} eps={eps:<8g} private={obj:.4f} "
                  f"KMeans={ref:.4f} ratio={ratio:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
