"""
Private Frank-Wolfe against L2-noised learners on high-dimensional data
=======================================================================

A problem with more features than samples whose labels depend on a handful
of features: the regime of Thakkar (2019), Fig. 4.5 where private Frank-Wolfe
(noise that grows with the number of steps, not with the dimension) beats
methods whose noise is spread over all coordinates. Accuracy against
epsilon, with scikit-learn's non-private ``LogisticRegression`` as reference.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from skdp.datasets import make_synthetic_h
from skdp.linear_model import (
    DPSGDClassifier,
    ObjectivePerturbationClassifier,
    PrivateFrankWolfeClassifier,
)

X_train, X_test, y_train, y_test = make_synthetic_h(1000, 1200)
epsilons = [0.1, 0.3, 1.0, 3.0]
labels = [0, 1]  # the public label set
models = {
    # Entries bounded by 1 (a public bound), rows by sqrt(d) then: the noise follows the
    # entry bound, not the row norm.
    "P-FW (zCDP, 3 steps)": PrivateFrankWolfeClassifier(
        max_iter=3, l1_radius=10.0, entry_bound=1.0, data_norm=np.sqrt(X_train.shape[1]),
        classes=labels),
    "ObjPert": ObjectivePerturbationClassifier(alpha=1e-2, classes=labels),
    "DP-SGD": DPSGDClassifier(classes=labels),
}
baseline = LogisticRegression().fit(X_train, y_train).score(X_test, y_test)

fig, ax = plt.subplots(figsize=(6, 4))
for name, model in models.items():
    means, stds = [], []
    for eps in epsilons:
        scores = [clone(model).set_params(epsilon=eps, random_state=seed)
                  .fit(X_train, y_train).score(X_test, y_test) for seed in range(2)]
        means.append(np.mean(scores))
        stds.append(np.std(scores))
    ax.errorbar(epsilons, means, yerr=stds, marker="o", capsize=3, label=name)
ax.axhline(baseline, color="black", linestyle="--", label="LogisticRegression (non-private)")
ax.set_xscale("log")
ax.set_xlabel("epsilon")
ax.set_ylabel("test accuracy")
ax.set_title(f"Synthetic-H ({X_train.shape[0]} x {X_train.shape[1]}), delta = 1/n^2")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
