"""
Private learning with any classifier: teachers, stable votes and a student
==========================================================================

``ModelAgnosticPrivateClassifier`` (Thakkar (2019), Ch. 5) splits the private data
among many teachers, lets them vote on unlabeled public points, releases a
label only when the vote is stable (one record cannot flip it), and trains a
student on the released labels. Left: how many teachers a unanimous vote
needs before it is answered, for Thakkar's (2019) sparse-vector calibration and
for Lyu, Su and Li's (2017) pure-DP one. Right: with 250 teachers, the share of
public points answered and the student's accuracy against the non-private
model trained on all the data.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression

from skdp.datasets import make_margin_classification
from skdp.ensemble import ModelAgnosticPrivateClassifier, unanimous_vote_teachers
from skdp.exceptions import FallbackModelWarning

X, y = make_margin_classification(100_000, random_state=0)
X_public, _ = make_margin_classification(500, random_state=1)
X_test, y_test = make_margin_classification(10_000, random_state=2)
baseline = LogisticRegression().fit(X, y).score(X_test, y_test)

cutoffs = np.array([1, 2, 5, 10, 20, 50, 100])
needed = {cal: [unanimous_vote_teachers(1.0, 1e-6, int(t), 1000, calibration=cal)
                for t in cutoffs] for cal in ("lyu", "thesis")}

# Thakkar's (2019) calibration answers nothing with 250 teachers even at epsilon = 10 (its
# unanimous vote needs thousands of teachers, left panel): one run shows it.
runs = {"lyu": [1.0, 2.0, 3.0, 10.0], "thesis": [10.0]}
answered, accuracy = {}, {}
for cal, epsilons in runs.items():
    answered[cal], accuracy[cal] = [], []
    for eps in epsilons:
        clf = ModelAgnosticPrivateClassifier(LogisticRegression(), n_teachers=250,
                                             max_unstable=5, epsilon=eps, calibration=cal,
                                             classes=[0, 1], random_state=0)
        with warnings.catch_warnings():  # too few labels: a constant fallback model, warned
            warnings.simplefilter("ignore", FallbackModelWarning)
            clf.fit(X, y, X_public=X_public)
        answered[cal].append(clf.n_answered_ / clf.n_public_)
        # No student without two released classes: the constant fallback_ is not plotted.
        accuracy[cal].append(clf.score(X_test, y_test) if clf.fallback_ is None else np.nan)
    print(cal, "answered", np.round(answered[cal], 3), "accuracy", np.round(accuracy[cal], 3))

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
styles = {"lyu": dict(marker="o", color="C0"), "thesis": dict(marker="s", color="C1")}
for cal in ("lyu", "thesis"):
    left.plot(cutoffs, needed[cal], label=cal, **styles[cal])
left.set_xscale("log")
left.set_yscale("log")
left.set_xlabel("abstentions allowed T")
left.set_ylabel("teachers for a unanimous answer (p = 0.99)")
left.set_title("epsilon = 1, delta = 1e-6, 1000 queries")
left.legend()
for cal in ("lyu", "thesis"):
    right.plot(runs[cal], answered[cal], label=f"answered ({cal})", **styles[cal])
    if not np.all(np.isnan(accuracy[cal])):  # no student at all: nothing to draw
        right.plot(runs[cal], accuracy[cal], linestyle="--",
                   label=f"student accuracy ({cal})", **styles[cal])
right.annotate("thesis: nothing answered,\nno student", (runs["thesis"][-1], 0.0),
               xytext=(-10, 25), textcoords="offset points", ha="right", fontsize=8)
right.axhline(baseline, color="black", linestyle=":", label="non-private, all data")
right.set_xscale("log")
right.set_xlabel("epsilon")
right.set_ylim(-0.02, 1.02)
right.set_title("250 teachers, T = 5, 500 public points")
right.legend(fontsize=8)
fig.tight_layout()
plt.show()
