"""Shared fitting of the output-perturbed SVMs of seed 001 (Alg. 2 and Alg. 3)."""

import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import validate_data

from skdp.base import DPEstimatorMixin
from skdp.linear_model._base import PrivateLinearClassifierMixin
from skdp.linear_model._losses import HuberSVMLoss
from skdp.mechanisms import gaussian_sigma_analytic, laplace_scale
from skdp.svm._solver import solve_svm_certified
from skdp.utils._multiclass import class_row_weights, fit_one_vs_rest, resolve_classes
from skdp.utils._validation import (
    check_bounded_sample_weight,
    check_option,
    check_positive_int,
    check_real,
)

__all__ = ["svm_noise_scale", "svm_sensitivity"]

LOSSES = ("hinge", "huber")
MECHANISMS = ("laplace", "gaussian")


def svm_sensitivity(C, n_samples, kappa, lipschitz=1.0):
    """L2 sensitivity of the exact SVM minimizer under replace-one neighbours.

    For ``P_D(w) = ||w||^2 / 2 + (C/n) sum_i s_i loss(y_i <w, phi(x_i)>)`` with
    a convex, ``L``-Lipschitz loss, ``||phi(x)|| <= kappa`` and row weights
    ``s_i`` in ``[0, 1]`` (1 without weights), the minimizers of two datasets
    differing in one row ``(x, y, s)`` satisfy
    ``||w_D - w_D'|| <= 2 L C kappa / n``.

    Seed 001's Lemma 9 states ``4 L C kappa / n``: its proof uses the strong
    convexity of only one of the two objectives. Adding the strong-convexity
    inequalities of both (``P_D(w_D') - P_D(w_D) >= ||w_D - w_D'||^2 / 2`` and
    the same for ``D'``) leaves ``||w_D - w_D'||^2`` on one side and the
    difference of the two changed loss terms, at most
    ``2 (C/n) L kappa ||w_D - w_D'||``, on the other (Chaudhuri, Monteleoni and
    Sarwate 2011, Cor. 8, with regularization ``1/C``).

    Weights in ``[0, 1]`` change nothing in this argument: the replaced row's
    term ``(C/n) s loss(.)`` is convex and ``s L kappa <= L kappa``-Lipschitz
    in ``w``, the other rows' terms stay convex (``s_i >= 0``), and the
    1-strong convexity comes from ``||w||^2 / 2`` alone, which no weight
    touches. ``n`` counts every row, zero-weight ones included.

    Parameters
    ----------
    C : float
        Regularization parameter of the objective above.
    n_samples : int
        Number of rows ``n`` (public under replace-one neighbours).
    kappa : float
        Bound on the feature-vector norm (``sqrt(k(x, x))``).
    lipschitz : float, default=1.0
        Lipschitz constant ``L`` of the loss in the margin (hinge and Huber: 1).

    Returns
    -------
    sensitivity : float
    """
    return 2.0 * lipschitz * C * kappa / n_samples


def svm_noise_scale(mechanism, sensitivity, n_coef, epsilon, delta):
    """Per-coordinate noise scale for releasing the SVM weight vector.

    * ``"laplace"``: Laplace scale ``b = sqrt(F) Delta_2 / epsilon`` (seed 001,
      Thm. 10 and Cor. 12: the L1 sensitivity is at most ``sqrt(F)`` times the
      L2 sensitivity ``Delta_2`` in ``F = n_coef`` dimensions); pure
      ``epsilon``-DP. With ``Delta_2 = 2 C / n`` and ``F = 2 d_hat`` this is
      ``2^1.5 C sqrt(d_hat) / (epsilon n)``, half of Cor. 12's
      ``2^2.5 C sqrt(d_hat) / (epsilon n)`` (see :func:`svm_sensitivity`).
    * ``"gaussian"``: standard deviation of the analytic Gaussian mechanism
      (Balle and Wang 2018) for L2 sensitivity ``Delta_2``; ``(epsilon, delta)``-DP.

    Parameters
    ----------
    mechanism : {"laplace", "gaussian"}
        Noise distribution.
    sensitivity : float
        L2 sensitivity ``Delta_2`` of the released weight vector.
    n_coef : int
        Its dimension ``F``.
    epsilon : float
        Privacy parameter (seed 001's ``beta``).
    delta : float
        Used by ``"gaussian"`` only.

    Returns
    -------
    scale : float
        Laplace scale or Gaussian standard deviation.
    """
    if mechanism == "laplace":
        return laplace_scale(math.sqrt(n_coef) * sensitivity, epsilon)
    return gaussian_sigma_analytic(sensitivity, epsilon, delta)


class BasePrivateSVM(DPEstimatorMixin, PrivateLinearClassifierMixin, ClassifierMixin,
                     BaseEstimator):
    """Validation, budget, one-vs-rest, certified solve and output noise.

    Subclasses implement ``_check_feature_params()`` and
    ``_features(X, rng) -> (features, kappa, fitted)`` and turn the fitted
    weight vectors (and ``fitted``, anything the feature step must keep) into
    attributes in ``_set_model(W, fitted)``. ``classes_`` and the model
    attributes are only set once every parameter is valid and every class
    problem is certified, so a failed fit or refit leaves no model of its own
    behind (a previous fit's model stays whole; ``validate_data`` still
    records the new ``n_features_in_``, as in scikit-learn).
    """

    def _check_svm_params(self):
        C = check_real(self.C, "C", low=0.0, low_inclusive=False)
        check_option(self.loss, "loss", LOSSES)
        huber_h = HuberSVMLoss(self.huber_h).h
        check_option(self.mechanism, "mechanism", MECHANISMS)
        tol = check_real(self.tol, "tol", low=0.0, low_inclusive=False)
        max_iter = check_positive_int(self.max_iter, "max_iter")
        if self.mechanism == "laplace" and self.delta not in (0, 0.0):
            raise ValueError("mechanism='laplace' is pure epsilon-DP and spends no delta; "
                             f"set delta=0 (got delta={self.delta!r}) or use "
                             "mechanism='gaussian'.")
        return C, huber_h, tol, max_iter

    def fit(self, X, y, sample_weight=None):
        """Fit the SVM and release its noisy weights.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels, all in ``classes`` when it is given (some of its
            labels may have no row); otherwise at least two distinct labels.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weight ``s_i`` of each row's loss: the objective becomes
            ``||w||^2 / 2 + (C/n) sum_i s_i loss_i``. A record is
            ``(x, y, s)`` and its weight is protected like its features.
            Weights above 1 are clipped to 1 (with a warning), because the
            guarantee bounds one row's influence by a weight of 1; weights in
            ``[0, 1]`` cost no privacy. ``n`` still counts every row,
            zero-weight ones included (the sum of the weights is not public),
            so weights below 1 also shrink the data term against the
            regularization and the noise. Every one-vs-rest problem uses the
            same weights (times ``class_weight``).

        Returns
        -------
        self : object
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        # The label set is a public bound (``classes``), or read from y with a warning.
        # Kept local until the end: a refit that fails must not pair new classes with old weights.
        classes, y_index = resolve_classes(self.classes, y, type(self).__name__)
        n_classes = len(classes)
        # Row weights in [0, 1] (clipped per row, like the rows themselves; None when all
        # are 1, so unit weights run the unweighted computation), refused before any spend.
        sample_weight = check_bounded_sample_weight(
            class_row_weights(self.class_weight, classes, y_index,
                              check_bounded_sample_weight(sample_weight, X.shape[0])),
            X.shape[0])
        C, huber_h, tol, max_iter = self._check_svm_params()
        self._check_feature_params()
        verbose = check_positive_int(self.verbose, "verbose", low=0)
        budget, rng = self._start_private_fit(
            X.shape[0], allow_zero_delta=self.mechanism == "laplace")
        # Separate streams: the released feature map must not reveal the noise.
        map_rng, noise_rng = rng.spawn(2)
        features, kappa, fitted = self._features(X, map_rng)
        n_samples, n_coef = features.shape

        # Weights in [0, 1] keep this bound: the replaced row's weighted loss is still
        # L kappa-Lipschitz in w and the regularizer's strong convexity does not depend on
        # the weights (see svm_sensitivity). n_samples counts zero-weight rows too.
        exact = svm_sensitivity(C, n_samples, kappa)
        # A certified solver lands within `radius` of the exact minimizer on
        # every dataset, so released points differ by at most exact + 2 radius.
        radius = 0.5 * tol * exact
        sensitivity = exact + 2.0 * radius
        part = budget.split(1 if n_classes == 2 else n_classes)
        scale = svm_noise_scale(self.mechanism, sensitivity, n_coef, part.epsilon, part.delta)
        name = type(self).__name__
        targets = classes[1:] if n_classes == 2 else classes
        if verbose:
            print(f"[{name}] {len(targets)} class problem(s) on {n_samples} rows and {n_coef} "
                  f"coefficients, each at epsilon={part.epsilon:g}, delta={part.delta:g}: "
                  f"sensitivity {sensitivity:.4g}, {self.mechanism} noise scale {scale:.4g}")

        def fit_binary(F, y_pm1, child_rng):
            sol = solve_svm_certified(F, y_pm1, C, loss=self.loss, huber_h=huber_h,
                                      radius=radius, max_iter=max_iter,
                                      sample_weight=sample_weight)
            if self.mechanism == "laplace":
                noise = child_rng.laplace(0.0, scale, size=n_coef)
            else:
                noise = child_rng.normal(0.0, scale, size=n_coef)
            return sol.coef + self._noise_multiplier * noise, sol

        results = fit_one_vs_rest(fit_binary, features, y_index, n_classes, noise_rng,
                                  n_jobs=self.n_jobs)
        if verbose:  # printed here, not by the (possibly parallel) workers
            for k, (label, (_, sol)) in enumerate(zip(targets, results), start=1):
                print(f"[{name}] problem {k}/{len(targets)} (class {label} vs rest): "
                      f"certified within {sol.distance_bound:.3g} of the exact minimizer "
                      f"in {sol.n_iter} Newton steps")
        self.classes_ = classes
        self._set_model(np.vstack([w for w, _ in results]), fitted)
        self.sensitivity_, self.noise_scale_ = sensitivity, scale
        self.certified_distance_ = max(sol.distance_bound for _, sol in results)
        self.n_iter_ = max(sol.n_iter for _, sol in results)
        self.privacy_spent_ = budget
        return self

    # Test hook: the audit's deliberately under-noised copy sets this below 1.
    _noise_multiplier = 1.0
    _non_private_attributes = ("certified_distance_", "n_iter_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
