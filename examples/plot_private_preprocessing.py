"""
Scaling features before a private model, without leaking them
=============================================================

``DPLogisticRegressionAMP`` clips every row to norm 1, so on raw features a
few large-scale columns (areas in the thousands next to ratios near 0.1)
decide everything, and on ``load_breast_cancer`` it predicts the majority
class. ``make_pipeline(StandardScaler(), ...)`` fixes the accuracy but stores
the private data's exact means and standard deviations in the released
pipeline: that pipeline is not differentially private.

The private alternatives need per-feature bounds chosen without the private
data. Here they come from a disjoint *public* sample of 100 rows (its minimum
and maximum widened by a quarter of the range, and at least 0, since every
feature is a non-negative measurement), standing in for published reference
ranges; cross-validation runs on the other 469 rows only. Generic bounds that
use no knowledge of the features (log10 of every value in ``[-3, 4]``) are
shown too: they do not help. We compare, at total budgets 1 and 2:

* :class:`~skdp.preprocessing.PublicBoundsScaler`: maps the bounds to
  ``[-1, 1]``, costs nothing;
* :class:`~skdp.preprocessing.DPStandardScaler`: private mean and standard
  deviation, paid from the budget (scaler and model each spend their own
  epsilon; the pipeline's cost is the sum);
* ``StandardScaler`` (not private), for reference.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from skdp.linear_model import DPLogisticRegressionAMP
from skdp.preprocessing import DPStandardScaler, PublicBoundsScaler

X_all, y_all = load_breast_cancer(return_X_y=True)


def amp(epsilon, seed):
    return DPLogisticRegressionAMP(epsilon=epsilon, classes=[0, 1], random_state=seed)


def log10(X):
    return np.log10(np.maximum(X, 1e-3))


def variants(bounds):
    """name -> (total epsilon or None if not private, factory of the pipeline)."""
    return {
        "raw features": (1, lambda s: amp(1.0, s)),
        "log10, generic bounds [-3, 4]": (1, lambda s: make_pipeline(
            FunctionTransformer(log10), PublicBoundsScaler(bounds=(-3.0, 4.0)), amp(1.0, s))),
        "PublicBoundsScaler": (1, lambda s: make_pipeline(
            PublicBoundsScaler(bounds=bounds), amp(1.0, s))),
        "DPStandardScaler(0.5) + AMP(0.5)": (1, lambda s: make_pipeline(
            DPStandardScaler(0.5, bounds=bounds, random_state=1000 + s), amp(0.5, s))),
        "PublicBoundsScaler + AMP(2)": (2, lambda s: make_pipeline(
            PublicBoundsScaler(bounds=bounds), amp(2.0, s))),
        "DPStandardScaler(1) + AMP(1)": (2, lambda s: make_pipeline(
            DPStandardScaler(1.0, bounds=bounds, random_state=1000 + s), amp(1.0, s))),
        "StandardScaler (NOT private)": (None, lambda s: make_pipeline(
            StandardScaler(), amp(1.0, s))),
    }


scores = {}
for split in range(3):
    X, X_public, y, _ = train_test_split(X_all, y_all, test_size=100, stratify=y_all,
                                         random_state=split)
    low, high = X_public.min(axis=0), X_public.max(axis=0)
    margin = 0.25 * (high - low)
    bounds = np.column_stack([np.maximum(low - margin, 0.0), high + margin])
    for name, (total, make) in variants(bounds).items():
        scores.setdefault(name, (total, []))[1].extend(
            cross_val_score(make(seed), X, y, cv=5).mean() for seed in range(2))

for name, (total, values) in scores.items():
    budget = "not private" if total is None else f"total epsilon {total}"
    print(f"{name:34s} {budget:16s} accuracy {np.mean(values):.3f} (sd {np.std(values):.3f})")

fig, ax = plt.subplots(figsize=(7, 4))
names = list(scores)
colours = {1: "tab:blue", 2: "tab:orange", None: "tab:gray"}
for i, name in enumerate(names):
    total, values = scores[name]
    ax.barh(i, np.mean(values), xerr=np.std(values), color=colours[total], capsize=3)
ax.set_yticks(range(len(names)), names, fontsize=8)
ax.invert_yaxis()
ax.set_xlim(0.5, 1.0)
ax.set_xlabel("5-fold cross-validated accuracy (AMP, delta = 1 / m^2 per step)")
ax.set_title("load_breast_cancer: total epsilon 1 (blue), 2 (orange), not private (gray)",
             fontsize=9)
fig.tight_layout()
plt.show()
