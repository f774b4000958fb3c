"""Private hyperparameter selection on disjoint splits (Chaudhuri, Monteleoni and Sarwate 2011)."""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.accounting import PrivacyBudget
from skdp.base import DPEstimatorMixin
from skdp.mechanisms import exponential_mechanism
from skdp.utils._docstrings import fill_doc
from skdp.utils._random import check_random_state, spawn_random_states

__all__ = ["PrivateParameterSelector"]


def _has(attr):
    def check(self):
        return hasattr(getattr(self, "best_estimator_", self.estimator), attr)
    return check


@fill_doc
class PrivateParameterSelector(DPEstimatorMixin, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Choose among candidate hyperparameters privately, holdout included.

    Seed 002 (Chaudhuri, Monteleoni and Sarwate 2011), Sec. 6 and Alg. 3: the
    data is cut into ``k + 1`` disjoint parts for ``k`` candidates. Candidate
    ``i`` is trained, by its own private algorithm, on part ``i`` only; each
    model's correct predictions on the last part are counted, and one model is
    released by the exponential mechanism on those counts.

    Parameters
    ----------
    estimator : estimator
        An skdp classifier (it must have an ``epsilon`` parameter, and
        ``random_state``); cloned for every candidate.
    param_grid : dict or list of dict
        Candidate settings, as for :class:`sklearn.model_selection.GridSearchCV`.
        They may include ``epsilon``.
    epsilon : float, default=1.0
        Budget of the selection step (exponential mechanism on the holdout,
        pure DP).
    %(random_state)s
    %(accountant)s
    %(n_jobs)s

    Attributes
    ----------
    best_estimator_ : estimator
        The released model (trained on its own part only).
    best_params_ : dict
        Its parameters.
    best_index_ : int
        Its position in ``ParameterGrid(param_grid)``.
    candidate_params_ : list of dict
        The candidates, in order.
    classes_ : ndarray
        Class labels.
    n_features_in_ : int
        Number of features seen in ``fit``.
    privacy_spent_ : PrivacyBudget
        ``(max(epsilon, max candidate epsilon), max candidate delta)``.

    Privacy
    -------
    Replace-one neighbours (seed 002's setting). Features and labels of every
    row, holdout included, are protected. A changed record lies in exactly
    one part: in a training part it changes one candidate, which is
    ``(epsilon_i, delta_i)``-DP; in the holdout it changes every count by at
    most 1, and the exponential mechanism with sensitivity 1 is
    ``epsilon``-DP (McSherry and Talwar 2007). So the whole procedure is
    ``(max(epsilon, max_i epsilon_i), max_i delta_i)``-DP (parallel
    composition; seed 002, Thm. 18 for ``epsilon_i = epsilon``). The split
    into parts is drawn from ``random_state``, independently of the data.
    Counts of correct predictions can move in opposite directions between
    candidates, so the factor 2 of the exponential mechanism is kept.

    Notes
    -----
    Each candidate sees only ``1 / (k + 1)`` of the data, so keep the grid
    small; seed 002 notes the method needs much more data in practice.

    """

    def __init__(self, estimator, param_grid, *, epsilon=1.0, random_state=None,
                 accountant=None, n_jobs=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.random_state = random_state
        self.accountant = accountant
        self.n_jobs = n_jobs

    def _candidate_budgets(self, candidates):
        base = self.estimator.get_params()
        if "epsilon" not in base:
            raise TypeError(
                f"estimator must be a private estimator with an 'epsilon' parameter; "
                f"got {type(self.estimator).__name__}."
            )
        budgets = []
        for params in candidates:
            eps = params.get("epsilon", base["epsilon"])
            delta = params.get("delta", base.get("delta", 0.0))
            if delta is None and self.accountant is not None:
                raise ValueError(
                    "with an accountant, candidates need an explicit delta (not None) so "
                    "that the total is charged before any data is touched."
                )
            budgets.append(PrivacyBudget(eps, 0.0 if delta is None else delta))
        return budgets

    def fit(self, X, y):
        """Train every candidate on its own part and privately select one.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Labels.

        Returns
        -------
        self : PrivateParameterSelector
            The fitted selector.
        """
        X, y = validate_data(self, X, y, accept_sparse="csr")
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        candidates = list(ParameterGrid(self.param_grid))
        if not candidates:
            raise ValueError("param_grid has no candidate.")
        k = len(candidates)
        if X.shape[0] < 2 * (k + 1):
            raise ValueError(
                f"{k} candidates need {k + 1} disjoint parts of at least 2 rows; "
                f"got n_samples={X.shape[0]}."
            )
        budgets = self._candidate_budgets(candidates)
        selection = self._resolve_budget()
        total = PrivacyBudget(max(selection.epsilon, *(b.epsilon for b in budgets)),
                              max(selection.delta, *(b.delta for b in budgets)))
        rng = check_random_state(self.random_state)
        self._charge_accountant(total)
        # A data-independent random split into k + 1 parts (seed 002, Alg. 3 step 1).
        parts = np.array_split(rng.permutation(X.shape[0]), k + 1)
        holdout = parts[-1]
        children = spawn_random_states(rng, k)
        models = []
        for params, part, child in zip(candidates, parts[:-1], children):
            est = clone(self.estimator).set_params(**params)
            overrides = {"random_state": child}
            if "accountant" in est.get_params():
                overrides["accountant"] = None  # the selector charges the total once
            if "n_jobs" in est.get_params() and self.n_jobs is not None:
                overrides["n_jobs"] = self.n_jobs
            est.set_params(**overrides)
            models.append(est.fit(X[part], y[part]))
        # Seed 002, Alg. 3 step 3: counts of correct holdout predictions,
        # selected with probability proportional to exp(epsilon * count / 2).
        correct = np.array([np.sum(m.predict(X[holdout]) == y[holdout]) for m in models],
                           dtype=float)
        self.best_index_ = exponential_mechanism(correct, epsilon=selection.epsilon,
                                                 sensitivity=1.0, random_state=rng)
        self.best_estimator_ = models[self.best_index_]
        self.best_params_ = candidates[self.best_index_]
        self.candidate_params_ = candidates
        # Data-size dependent default deltas (delta=None) are known only now.
        spent = [getattr(m, "privacy_spent_", None) for m in models]
        self.privacy_spent_ = PrivacyBudget(
            total.epsilon, max([total.delta] + [b.delta for b in spent if b is not None]))
        return self

    def predict(self, X):
        """Predict with the selected model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    @available_if(_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the selected model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    @available_if(_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the selected model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray
        """
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)
