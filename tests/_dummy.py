"""A minimal DP estimator used to test the foundation's plumbing (not part of skdp)."""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.base import DPEstimatorMixin
from skdp.utils import clip_rows_l2


class NoisyCentroidClassifier(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Nearest noisy class centroid (class counts are treated as public)."""

    def __init__(self, epsilon=1.0, delta=0.0, *, random_state=None, accountant=None):
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.accountant = accountant

    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        budget, rng = self._start_private_fit(len(X))
        X = clip_rows_l2(X, 1.0)
        sums = np.stack([X[y_idx == k].sum(axis=0) for k in range(len(self.classes_))])
        # Replace-one changes one class sum by at most 2 in L1 per feature block.
        noise = rng.laplace(0.0, 2.0 * np.sqrt(X.shape[1]) / budget.epsilon, size=sums.shape)
        counts = np.bincount(y_idx, minlength=len(self.classes_))[:, None]
        self.centroids_ = (sums + noise) / np.maximum(counts, 1)
        self.privacy_spent_ = budget
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        d = ((X[:, None, :] - self.centroids_[None]) ** 2).sum(axis=2)
        return self.classes_[np.argmin(d, axis=1)]
