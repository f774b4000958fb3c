"""Scoring estimators on the real-data collection, next to their non-private twins.

One protocol for the ``real`` scenario, the no-noise-limit tests and the studies
that derive defaults: a stratified train/test split per seed, the training rows
optionally capped, the same per-row preprocessing for the private model and its
twin (``Normalizer``: every row scaled to unit L2 norm, a privacy-free step).
"""

import warnings

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer

from skdp.datasets._real import load_real_dataset

__all__ = ["RealSplit", "real_splits", "score_pair"]

_CACHE = {}


class RealSplit:
    """One train/test split of a real table (arrays only; no estimator state)."""

    def __init__(self, name, task, X_train, y_train, X_test, y_test, meta):
        self.name, self.task = name, task
        self.X_train, self.y_train, self.X_test, self.y_test = X_train, y_train, X_test, y_test
        self.meta = meta

    @property
    def classes(self):
        return np.unique(np.concatenate([self.y_train, self.y_test]))

    def trivial_score(self):
        """Majority-class accuracy (classification) or 0 (R^2 of the training mean)."""
        if self.task == "regression":
            return 0.0
        values, counts = np.unique(self.y_train, return_counts=True)
        return float(np.mean(self.y_test == values[np.argmax(counts)]))


def _load(name):
    if name not in _CACHE:
        _CACHE[name] = load_real_dataset(name)
    return _CACHE[name]


def real_splits(name, seeds=(0,), max_train=None, max_test=20_000, test_size=0.25):
    """Yield one :class:`RealSplit` per seed (stratified for classification).

    ``max_train`` caps the training rows (a random subset, the same for every
    estimator at a given seed); ``max_test`` caps the test rows.
    """
    data = _load(name)
    X, y = data.data, data.target
    stratify = None if data.task == "regression" else y
    for seed in seeds:
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=test_size, random_state=seed, stratify=stratify)
        X_tr, y_tr = X_tr[:max_train], y_tr[:max_train]
        X_te, y_te = X_te[:max_test], y_te[:max_test]
        yield RealSplit(name, data.task, X_tr, y_tr, X_te, y_te, data)


def score_pair(estimator, twin, split, normalize=True):
    """Fit ``estimator`` and its non-private ``twin`` on one split; return both test scores.

    With ``normalize`` both are preceded by ``Normalizer()`` (unit-norm rows).
    Warnings raised while fitting are suppressed (they are asserted elsewhere).
    """
    scores = []
    for model in (estimator, twin):
        model = clone(model)
        if normalize:
            model = make_pipeline(Normalizer(), model)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(split.X_train, split.y_train)
            scores.append(float(model.score(split.X_test, split.y_test)))
    return tuple(scores)
