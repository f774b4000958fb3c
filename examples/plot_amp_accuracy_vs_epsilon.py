"""
Accuracy of hyperparameter-free AMP against epsilon, next to scikit-learn
=========================================================================

``DPLogisticRegressionAMP`` replaces ``LogisticRegression`` without any tuning:
rows are clipped to unit norm, the budget split and regularization follow a
data-independent rule, and the released model's gradient norm is certified
before its output noise is added. On the Synthetic-L problem of Thakkar (2019)
(10,000 x 40) we fit it at several privacy budgets (three noise draws each)
with the logistic and Huber SVM losses, and compare with the non-private
``LogisticRegression`` and with AMP under Thakkar's (2019) own ``eps3`` rule.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression

from skdp.datasets import make_synthetic_l
from skdp.linear_model import DPLogisticRegressionAMP

X_train, X_test, y_train, y_test = make_synthetic_l()
epsilons = np.array([0.03, 0.1, 0.3, 1.0, 10.0])
n_draws = 3

baseline = LogisticRegression().fit(X_train, y_train).score(X_test, y_test)
labels = [0, 1]  # the public label set: reading it from y_train would be a (small) leak
variants = {
    "H-F AMP, logistic": DPLogisticRegressionAMP(classes=labels),
    "H-F AMP, Huber SVM": DPLogisticRegressionAMP(loss="huber", classes=labels),
    "AMP, logistic, thesis eps3 rule": DPLogisticRegressionAMP(eps3_fraction="thesis",
                                                               classes=labels),
}
results = {}
for name, estimator in variants.items():
    scores = np.array([[estimator.set_params(epsilon=eps, random_state=draw)
                        .fit(X_train, y_train).score(X_test, y_test)
                        for draw in range(n_draws)] for eps in epsilons])
    results[name] = scores
    print(f"{name:34s}", " ".join(f"{s:.3f}" for s in scores.mean(axis=1)))
print(f"{'LogisticRegression (non-private)':34s} {baseline:.3f}")

fig, ax = plt.subplots(figsize=(6.5, 4))
for name, scores in results.items():
    ax.errorbar(epsilons, scores.mean(axis=1), yerr=scores.std(axis=1), marker="o",
                capsize=3, label=name)
ax.axhline(baseline, color="black", linestyle="--", label="LogisticRegression (non-private)")
ax.set_xscale("log")
ax.set_xlabel("epsilon (delta = 1 / m^2)")
ax.set_ylabel("test accuracy")
ax.set_title("Synthetic-L: private vs non-private logistic regression")
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()
plt.show()
