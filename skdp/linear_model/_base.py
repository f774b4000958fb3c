"""Prediction shared by the private linear classifiers."""

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, softmax
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["PrivateLinearClassifierMixin", "add_intercept_column"]


def add_intercept_column(X, value=1.0):
    """Append a constant column (the intercept feature) to dense or sparse ``X``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Data.
    value : float, default=1.0
        The constant. It counts in each row's norm, so rows are clipped
        *after* it is appended.

    Returns
    -------
    X_aug : {ndarray, CSR matrix} of shape (n_samples, n_features + 1)
    """
    ones = np.full((X.shape[0], 1), float(value))
    if sp.issparse(X):
        return sp.hstack([X, sp.csr_matrix(ones)], format="csr")
    return np.hstack([X, ones])


class PrivateLinearClassifierMixin:
    """``decision_function``, ``predict`` and ``predict_proba`` from ``coef_``/``intercept_``.

    Subclasses set ``coef_`` of shape ``(1, n_features)`` for binary problems
    or ``(n_classes, n_features)``, ``intercept_``, ``classes_`` and
    ``n_features_in_``. Prediction uses only the released model, so it costs
    no privacy. ``predict_proba`` is the logistic link (sigmoid, or softmax
    over classes) of the decision function; it exists only for the logistic
    loss (hinge and Huber SVM scores have no probabilistic meaning).
    """

    def _has_proba_link(self):
        return getattr(self, "loss", "logistic") == "logistic"

    def decision_function(self, X):
        """Signed scores of each class (or of the positive class for binary problems).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, accept_sparse="csr", reset=False)
        scores = X @ self.coef_.T + self.intercept_
        scores = np.asarray(scores)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    @available_if(_has_proba_link)
    def predict_proba(self, X):
        """Class probabilities through the logistic link of the decision function.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        if getattr(self, "multi_class_", "ovr") == "multinomial":
            return softmax(scores, axis=1)
        p = expit(scores)
        return p / p.sum(axis=1, keepdims=True)

    @available_if(_has_proba_link)
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        return np.log(self.predict_proba(X))
