"""
Private matrix completion: test RMSE against epsilon
====================================================

Complete a generated users x items ratings matrix (a rank-one matrix with
entries in [-1, 1], 20 ratings per user, 1% of them held out, as in Thakkar (2019),
Sec. 6.4, but smaller) with :class:`skdp.matrix_completion.DPMatrixCompleter`
under user-level joint differential privacy, and plot the held-out RMSE
against epsilon for private Frank-Wolfe, private SVD, private rank-one
pursuit and private projected gradient descent, next to the per-user mean
rating.
"""

import matplotlib.pyplot as plt
import numpy as np

from skdp.datasets import make_low_rank_ratings
from skdp.matrix_completion import DPMatrixCompleter

# 20,000 users keep the gallery build quick (a few seconds per method); with more
# users the noise per user matters less and the private methods get more accurate.
data = make_low_rank_ratings(20_000, 100, n_ratings=20, random_state=0)
test = data.test.tocoo()


def rmse(completed):
    return np.sqrt(np.mean((completed[test.row, test.col] - test.data) ** 2))


# Public choices (made without looking at the ratings): bounds on each user's
# centred ratings (for PGD, on her whole completed row of 100 items), and the
# nuclear-norm constraint of Frank-Wolfe and PGD.
methods = {
    "private Frank-Wolfe (Alg. 13)": dict(method="frank_wolfe", nuclear_norm=data.nuclear_norm,
                                          max_iter=5, row_norm_bound=2.0),
    "private SVD (Alg. 15)": dict(method="svd", rank=2, row_norm_bound=0.8),
    "private rank-one pursuit": dict(method="pursuit", rank=2, row_norm_bound=0.8),
    "private PGD (Alg. 16)": dict(method="pgd", nuclear_norm=data.nuclear_norm, max_iter=10,
                                  row_norm_bound=4.0),
}
epsilons = [0.1, 0.5, 1.0, 2.0, 5.0]
fig, ax = plt.subplots(figsize=(6, 4))
for name, params in methods.items():
    scores = []
    for eps in epsilons:
        model = DPMatrixCompleter(epsilon=eps, delta=1e-6, random_state=0, **params)
        # In a deployment, row i of the completion is delivered to user i only.
        scores.append(rmse(model.fit(data.train).transform(data.train)))
    ax.plot(epsilons, scores, marker="o", label=name)
    print(f"{name:32s}", " ".join(f"{s:.3f}" for s in scores))

means = np.asarray(data.train.sum(axis=1)).ravel() / np.maximum(data.train.getnnz(axis=1), 1)
baseline = np.sqrt(np.mean((means[test.row] - test.data) ** 2))
ax.axhline(baseline, color="black", linestyle="--", label="per-user mean (non-private)")
ax.set_xscale("log")
ax.set_xlabel("epsilon (user-level joint DP, delta = 1e-6)")
ax.set_ylabel("held-out RMSE")
ax.set_title(f"Private matrix completion, {data.train.shape[0]:,} users x "
             f"{data.train.shape[1]} items")
ax.legend(fontsize=8, loc="center right")
fig.tight_layout()
plt.show()
