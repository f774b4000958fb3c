"""Jain and Thakurta's (2013) learners built on iterative dataset construction (Gupta et al. 2011).

Both keep a public model ``w_t = sum_tau a_tau phi(z_tau)`` and move it toward
the private minimizer ``w*`` at points ``z`` where the two disagree:

* Alg. 3 (TDIL), :class:`PrivateKernelNetClassifier`: the learner itself picks
  the points, from a public net of the input domain, with the exponential
  mechanism, and releases the final ``w_B``;
* Alg. 1 (PINP), :class:`InteractiveKernelPredictor`: a user sends test points
  one at a time and gets a private prediction for each.
"""

import math

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_array, check_X_y

from skdp.base import DPEstimatorMixin, refuse_unsafe_pickle
from skdp.kernel_methods._classifiers import (
    LAPLACE_MECHANISMS,
    _KernelERMClassifier,
    _LaplaceValuesMixin,
    check_noise_scale,
    tddl_discrete_laplace,
    tddl_laplace_scale,
)
from skdp.kernel_methods._erm import (
    certificate_tolerance,
    check_newton_conditioning,
    erm_sensitivity,
    fit_kernel_erm,
)
from skdp.kernel_methods._kernels import KernelParamsMixin, fill_kernel_doc
from skdp.linear_model._losses import get_loss
from skdp.linear_model._private_glm import release_on_grid
from skdp.mechanisms import SparseVector, exponential_mechanism, sparse_vector_scales
from skdp.mechanisms._exponential import exponential_mechanism_factor
from skdp.utils._multiclass import resolve_classes
from skdp.utils._validation import check_option, check_positive_int, check_real

__all__ = ["InteractiveKernelPredictor", "PrivateKernelNetClassifier"]


def _check_threshold(threshold):
    if threshold is None:
        return None
    return check_real(threshold, "threshold", low=0.0, low_inclusive=False)


@fill_kernel_doc
class PrivateKernelNetClassifier(_LaplaceValuesMixin, _KernelERMClassifier):
    """Jain and Thakurta's test-data-independent private kernel learner (TDIL).

    Jain and Thakurta (2013), Alg. 3: no public sample is needed. A public
    net is laid over the input domain and, for ``n_rounds`` rounds, the
    exponential mechanism picks a net point where the public model ``w_t``
    and the private minimizer ``w*`` disagree, and ``w_t`` steps toward a
    Laplace-noised value of ``w*`` there. Meant for a few features (the net
    grows exponentially with the dimension); on real tables it predicts the
    majority class (see :doc:`/guide/kernel_methods`). It never raises after
    the budget is charged.

    Parameters
    ----------
    %(kernel)s
    %(kernel_bound)s
    %(kernel_erm)s
    loss : {"logistic", "huber"}, default="logistic"
        Margin loss, 1-Lipschitz in the margin.
    n_public : int, default=400
        Size of the public net laid over ``bounds`` (a grid when at least 8
        points per axis fit, else a Halton sample).
    n_rounds : int, default=100
        ``B``, the number of rounds; each spends one exponential mechanism
        and one Laplace draw.
    threshold : float or None, default=None
        ``sigma``, the disagreement that triggers an update; ``None`` uses
        three times the Laplace scale ``noise_scale_``.
    mechanism : {"laplace", "discrete_laplace"}, default="laplace"
        Noise of the noisy values (Alg. 3 line 6). ``"discrete_laplace"``:
        exact discrete Laplace noise on a public grid
        (``noise_granularity_``), safe against floating-point attacks
        (Mironov 2012), same guarantee.
    %(classes)s
    %(class_weight)s
    %(epsilon)s
    delta : float or None, default=None
        In ``[0, 1)``; ``0`` gives pure epsilon-DP (basic composition);
        ``None`` uses ``min(1e-5, 1 / n_samples**2)`` (stored in ``delta_``).
    %(random_state)s
    %(accountant)s
    %(n_jobs)s
    %(verbose)s
        With ``verbose >= 1`` the fit prints the noise calibration and the
        solver's iterations (``n_iter_``, not private).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels: the sorted ``classes``, or those of ``y``.
    support_ : ndarray of shape (m, n_features)
        The public net.
    dual_coef_ : ndarray of shape (n_functions, m)
        ``decision_function(x) = k(x, support_) @ dual_coef_.T`` (non-zero
        on the net points where updates happened).
    kappa_ : float
        ``R_phi``, the bound on the feature-map norm.
    certificate_tol_ : float
        Certified bound on the RKHS gradient norm of the minimizer.
    n_iter_ : int
        Newton iterations of the certified solver (the most over classes).
        Not private (see Privacy).
    sensitivity_ : float
        RKHS sensitivity of the certified minimizer.
    noise_scale_ : float
        Laplace scale ``nu`` of the noisy values (or the discrete one, at
        least ``nu``).
    noise_granularity_ : float or None
        The public grid of ``"discrete_laplace"`` (else ``None``).
    delta_ : float
        The delta used.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta_)``.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Privacy
    -------
    ``(epsilon, delta)``-differential privacy (pure for ``delta=0``) for
    replace-one neighbours (Jain and Thakurta (2013), Thm. 7); the features,
    labels and sample weights of every training row are protected. Each
    round's exponential mechanism and Laplace draw see the data only through
    the certified minimizer ``w*``, whose values move by at most
    ``kappa_ * sensitivity_``; the ``2 n_rounds`` mechanisms (per
    one-vs-rest function) compose to the budget, with the paper's garbled
    constants computed exactly. Public inputs: ``classes`` (with
    ``classes=None`` the label set is read from ``y``, with a
    :class:`~skdp.PrivacyLeakWarning`), ``kernel_bound``, ``bounds`` or
    ``data_norm``, and the other hyperparameters. Certification and its
    fallback are those of :class:`PrivateKernelClassifier`. Details:
    :ref:`kernel_privacy`.

    %(kernel_psd)s

    %(non_private_diagnostics)s

    The guarantee assumes exact real-valued noise; floating-point noise can
    leak through its low bits (Mironov 2012), which
    ``mechanism="discrete_laplace"`` avoids.

    See Also
    --------
    PrivateKernelSVC : Functional perturbation on the same kind of public
        support, usually more accurate for the same budget.
    PrivateKernelClassifier : The test-data-dependent learner (Alg. 2).

    Notes
    -----
    Each update moves ``w_t``'s value at the chosen point by at most half the
    threshold, and noisy values are clipped to the public range of
    ``<w*, phi(z)>`` (a post-processing). ``fit`` solves the same kernel ERM
    as :class:`PrivateKernelClassifier`.

    References
    ----------
    Jain and Thakurta, "Differentially private learning with kernels",
    ICML 2013 (Jain and Thakurta (2013)). Gupta, Roth and Ullman, "Iterative constructions
    and private data release", 2011.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skdp.kernel_methods import PrivateKernelNetClassifier
    >>> X, y = make_moons(2000, noise=0.1, random_state=0)
    >>> clf = PrivateKernelNetClassifier(gamma=2.0, alpha=0.5, bounds=(-1.5, 2.5),
    ...                                  classes=[0, 1], epsilon=20.0,
    ...                                  random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    def __init__(self, kernel="rbf", *, gamma=None, degree=3, coef0=1.0, kernel_params=None,
                 kernel_bound=None, alpha=None, loss="logistic", huber_h=0.5, max_iter=100,
                 bounds=None, data_norm=1.0, n_public=400, n_rounds=100, threshold=None,
                 mechanism="laplace", classes=None, class_weight=None, epsilon=1.0, delta=None,
                 random_state=None, accountant=None, n_jobs=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.kernel_bound = kernel_bound
        self.alpha = alpha
        self.loss = loss
        self.huber_h = huber_h
        self.max_iter = max_iter
        self.bounds = bounds
        self.data_norm = data_norm
        self.n_public = n_public
        self.n_rounds = n_rounds
        self.threshold = threshold
        self.mechanism = mechanism
        self.classes = classes
        self.class_weight = class_weight
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.accountant = accountant
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Run Alg. 3 on the private data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private training inputs.
        y : array-like of shape (n_samples,)
            Private labels.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weight of each row's loss in the ERM objective (see
            :meth:`PrivateKernelSVC.fit`): protected, clipped to ``[0, 1]``,
            and averaged over all ``n_samples`` rows.

        Returns
        -------
        self : PrivateKernelNetClassifier
            The fitted classifier.
        """
        return super().fit(X, y, sample_weight=sample_weight)

    def _check_release_params(self):
        check_positive_int(self.n_rounds, "n_rounds")
        _check_threshold(self.threshold)
        super()._check_release_params()

    def _n_queries(self, n_functions, n_points):
        return 2 * self.n_rounds * n_functions  # as _release_scale

    def _release_scale(self, budget, kappa, sensitivity, n_functions, n_points):
        # Jain and Thakurta (2013), Alg. 3 lines 5-6: per round one exponential mechanism and one
        # Laplace draw, all 2 B n_functions of them epsilon_0-DP (Thm. 7).
        return tddl_laplace_scale(kappa * sensitivity, 2 * self.n_rounds * n_functions,
                                  budget.epsilon, budget.delta)

    def _release_grid(self, scale, budget, kappa, sensitivity, radius, n_functions, n_points):
        # Before the charge: the exponential mechanism of _release refuses a scale
        # 2 value_sensitivity / eps0 that is 0, subnormal or infinite (it raised after it).
        value_sensitivity = kappa * sensitivity
        exponential_mechanism_factor(value_sensitivity / scale, value_sensitivity)
        return super()._release_grid(scale, budget, kappa, sensitivity, radius, n_functions,
                                     n_points)

    def _release(self, values, K_uu, scale, context, rng):
        kappa = context["kappa"]
        value_sensitivity = kappa * context["sensitivity"]
        eps0 = value_sensitivity / scale
        threshold = 3.0 * scale if self.threshold is None else self.threshold
        step = threshold / (2.0 * kappa**2)
        limit = kappa * context["radius"]  # |<w*, phi(z)>| <= R_phi ||w*||
        current = np.zeros_like(values)  # w_t on the net
        coef = np.zeros_like(values)
        for _ in range(self.n_rounds):
            # Alg. 3 line 5: the exponential mechanism picks where w_t and w* disagree.
            j = exponential_mechanism(np.abs(values - current), epsilon=eps0,
                                      sensitivity=value_sensitivity, random_state=rng)
            # Line 6: the noisy disagreement at the chosen point (the noisy value is
            # clipped to the public range of <w*, phi(z)>: post-processing).
            if context["grid"] is None:
                noisy = values[j] + rng.laplace(0.0, scale)
            else:  # exact discrete Laplace on the grid (tddl_discrete_laplace)
                granularity, t_steps, _ = context["grid"]
                noisy = release_on_grid(values[j:j + 1], "discrete_laplace", t_steps,
                                        granularity, rng)[0]
            noisy = np.clip(noisy, -limit, limit)
            gap = noisy - current[j]
            if abs(gap) > threshold:  # lines 7-8: move w_t toward w*
                a = step * math.copysign(1.0, gap)
                coef[j] += a
                current += a * K_uu[:, j]
        return coef


@fill_kernel_doc
class InteractiveKernelPredictor(KernelParamsMixin, DPEstimatorMixin):
    """Jain and Thakurta's private interactive kernel predictor (PINP), a stateful service.

    Jain and Thakurta (2013), Alg. 1: the learner keeps the private minimizer ``w*`` of the
    kernel ERM (eq. 2) and a public model ``w_t = sum a_tau phi(z_tau)`` built
    from earlier queries. For each test point ``z`` it answers with
    ``<w_t, phi(z)>`` when that is close to ``<w*, phi(z)>``, a test run by
    the sparse vector technique; otherwise it answers with a Laplace-noised
    ``<w*, phi(z)>`` and moves ``w_t`` toward it. Only the updates cost
    privacy, so many queries can be answered; after ``max_updates`` updates
    the model freezes and answers with ``w_B``.

    A stateful session object, not a scikit-learn estimator: ``fit`` spends the
    whole budget and opens one interaction, each query changes the state,
    and the object keeps the private training data. It cannot be cloned nor
    used in a Pipeline, ``GridSearchCV`` or ``cross_val_score``; host it as
    a service and never ship it (pickling raises unless
    ``allow_pickle=True``). See :ref:`kernel_privacy`.

    Parameters
    ----------
    %(kernel)s
    %(kernel_bound)s
    alpha : float, default=0.1
        Regularization ``lambda`` of Jain and Thakurta (2013), eq. (2).
    loss : {"logistic", "huber"}, default="logistic"
        Margin loss, 1-Lipschitz in the margin.
    huber_h : float, default=0.5
        Width of the Huber SVM loss.
    max_iter : int, default=100
        Newton iterations of the certified solver.
    max_updates : int, default=50
        ``B``, the number of updates (paid answers) of the whole interaction.
    threshold : float or None, default=None
        ``sigma``, the disagreement that triggers an update; ``None`` uses
        four times the threshold noise scale of the sparse vector.
    mechanism : {"laplace", "discrete_laplace"}, default="laplace"
        Noise of the paid answers (Alg. 1 line 9). ``"discrete_laplace"``:
        exact discrete Laplace noise on a public grid
        (``noise_granularity_``), safe against floating-point attacks
        (Mironov 2012), same guarantee.
    %(classes)s
        Binary problems only: two labels.
    %(epsilon)s
    delta : float, default=1e-6
        In ``(0, 1)`` (the sparse vector technique needs ``delta > 0``).
    %(random_state)s
    %(accountant)s
    %(verbose)s
        With ``verbose >= 1`` the fit prints the noise calibration, and
        each paid answer (update) is announced as it happens, with its
        query's position (as ``n_queries_`` and ``n_updates_`` show).
    allow_pickle : bool, default=False
        Whether a fitted session may be pickled (``pickle``, ``joblib.dump``,
        ``copy.deepcopy``). A pickle holds the raw training data and the
        session state; see Notes. May be set on the object at any time
        (``service.allow_pickle = True``); an unfitted object always pickles.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        Class labels (binary problems only): the sorted ``classes``, or
        those of ``y``.
    sensitivity_ : float
        Sensitivity of one value ``<w*, phi(z)>`` (``R_phi`` times the
        minimizer's RKHS sensitivity).
    noise_scale_ : float
        Laplace scale of the paid answers (or the discrete one).
    noise_granularity_ : float or None
        The public grid of ``"discrete_laplace"`` (else ``None``).
    threshold_ : float
        The threshold used.
    n_queries_ : int
        Queries answered so far.
    n_updates_ : int
        Paid answers (updates) so far.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta)`` for the whole interaction, charged once in ``fit``.

    Privacy
    -------
    ``(epsilon, delta)``-differential privacy of the whole, adaptively chosen
    sequence of answers, for replace-one neighbours (Jain and Thakurta
    (2013), Thm. 2); the features and labels of every training row are
    protected, the query points are public. Half the budget runs the sparse
    vector technique (:class:`skdp.mechanisms.SparseVector`) on the
    disagreements ``|<w* - w_t, phi(z)>|``, replacing Alg. 1's test against
    a fixed threshold, which is not private in general (Lyu, Su and Li
    2017); the other half pays the ``max_updates`` Laplace answers. Public
    inputs: ``classes`` (with ``classes=None`` the label set is read from
    ``y``, with a :class:`~skdp.PrivacyLeakWarning`), ``kernel_bound`` and
    the other hyperparameters. Settings the certified solver cannot handle
    are refused before the charge; a fit that raises
    :class:`~skdp.exceptions.CertificationError` is not covered and must
    stay confidential. Details: :ref:`kernel_privacy`.

    %(kernel_psd)s

    The guarantee assumes exact real-valued noise; floating-point noise can
    leak through its low bits (Mironov 2012), which
    ``mechanism="discrete_laplace"`` avoids.

    See Also
    --------
    PrivateKernelClassifier : Releases a model instead of answering queries.

    Notes
    -----
    The sparse vector's noise grows like ``sqrt(max_updates)``, so the
    predictor is accurate only when the minimizer's sensitivity
    ``2 R_phi^2 / (lambda n)`` is small: large ``n`` or strong
    regularization.

    A pickle of a fitted session holds the raw training data, unprotected,
    and its state: loading it twice forks the session, and the two copies
    together can spend up to twice the budget. With ``allow_pickle=True``,
    keep it in storage as private as the training data and resume it from
    one copy only.

    References
    ----------
    Jain and Thakurta, "Differentially private learning with kernels",
    ICML 2013 (Jain and Thakurta (2013)). Lyu, Su and Li, "Understanding the sparse vector
    technique for differential privacy", PVLDB 10(6), 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.kernel_methods import InteractiveKernelPredictor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> service = InteractiveKernelPredictor(gamma=0.5, alpha=1.0, classes=[0, 1],
    ...                                      epsilon=10.0, random_state=0).fit(X, y)
    >>> answers = service.predict(rng.normal(size=(200, 2)))
    >>> service.n_queries_, service.n_updates_ <= 50
    (200, True)
    """

    def __init__(self, kernel="rbf", *, gamma=None, degree=3, coef0=1.0, kernel_params=None,
                 kernel_bound=None, alpha=0.1, loss="logistic", huber_h=0.5, max_iter=100,
                 max_updates=50, threshold=None, mechanism="laplace", classes=None, epsilon=1.0,
                 delta=1e-6, random_state=None, accountant=None, verbose=0, allow_pickle=False):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.kernel_bound = kernel_bound
        self.alpha = alpha
        self.loss = loss
        self.huber_h = huber_h
        self.max_iter = max_iter
        self.max_updates = max_updates
        self.threshold = threshold
        self.mechanism = mechanism
        self.classes = classes
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose
        self.allow_pickle = allow_pickle

    def __repr__(self):
        return f"{type(self).__name__}(epsilon={self.epsilon!r}, delta={self.delta!r})"

    def __sklearn_clone__(self):
        raise TypeError(
            f"{type(self).__name__} is a stateful query session, not a scikit-learn estimator: "
            "it cannot be cloned, nor used in Pipeline, GridSearchCV or cross_val_score. To "
            "open another session with the same settings, call the constructor with the same "
            "arguments (fitting it spends the budget again)."
        )

    def __getstate__(self):
        # Also reached by joblib.dump and copy.deepcopy (and pickle.dumps of any object
        # holding this one).
        if hasattr(self, "_X"):
            refuse_unsafe_pickle(self, "the raw training data (the private inputs, and dual "
                                       "coefficients computed from the private labels)")
        return self.__dict__.copy()

    def fit(self, X, y):
        """Train the private minimizer and open the interaction (spends the whole budget).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private training inputs (kept by the object).
        y : array-like of shape (n_samples,)
            Private binary labels.

        Returns
        -------
        self : InteractiveKernelPredictor
            The predictor, ready for queries.
        """
        X, y = check_X_y(X, y, dtype=np.float64)
        if not isinstance(self.allow_pickle, (bool, np.bool_)):
            raise TypeError(f"allow_pickle must be a bool; got {self.allow_pickle!r}.")
        classes, y_index = resolve_classes(self.classes, y, type(self).__name__)
        if len(classes) != 2:
            raise ValueError(f"InteractiveKernelPredictor handles binary problems; got "
                             f"{len(classes)} classes.")
        n, d = X.shape
        kernel = self._get_kernel(d)
        alpha = check_real(self.alpha, "alpha", low=0.0, low_inclusive=False)
        loss = get_loss(self.loss, self.huber_h)
        max_iter = check_positive_int(self.max_iter, "max_iter")
        max_updates = check_positive_int(self.max_updates, "max_updates")
        threshold = _check_threshold(self.threshold)
        mechanism = check_option(self.mechanism, "mechanism", LAPLACE_MECHANISMS)
        verbose = check_positive_int(self.verbose, "verbose", low=0)
        kappa = math.sqrt(kernel.bound)
        tol = certificate_tolerance(kappa, n)
        sensitivity = kappa * erm_sensitivity(kappa, alpha, n, tol)
        # Public: a kernel not PSD by construction must be PSD on a fixed probe set (the
        # sensitivity below needs a reproducing kernel); refused before the charge.
        kernel.check_public_psd(type(self).__name__, d)
        K = kernel(X)  # before the charge: it may refuse an input (chi2 on a negative feature)
        half = self._resolve_budget(n, allow_zero_delta=False).split(2)
        try:  # the sparse vector's calibration may refuse these settings: before the charge
            threshold_scale = sparse_vector_scales(half.epsilon, half.delta, max_updates,
                                                   sensitivity, calibration="thesis")[0]
        except ValueError:
            raise ValueError(
                f"{type(self).__name__}: the sparse vector test, run with half the budget "
                f"(epsilon={half.epsilon:g}, delta={half.delta:g}) and cutoff "
                f"max_updates={max_updates}, is not proved private at these settings (seed "
                "004, Thm. 3 needs max_updates <= 8 ln(1/delta) or a moderate epsilon; see "
                "skdp.mechanisms.SparseVector). Use a smaller epsilon or max_updates."
            ) from None
        limit = kappa * (kappa + tol) / alpha  # |<w*, phi(z)>| <= R_phi ||w*||
        scale = tddl_laplace_scale(sensitivity, max_updates, half.epsilon, half.delta)
        check_noise_scale(scale, sensitivity, half)  # public: refused before the charge
        check_noise_scale(threshold_scale, sensitivity, half)
        grid = None
        if mechanism == "discrete_laplace":  # the calibration can refuse: before the charge
            grid = tddl_discrete_laplace(
                scale, sensitivity, max_updates, half.epsilon, half.delta, limit)
        # Public (loss, kappa, alpha): an alpha the Newton solver cannot handle in floats
        # failed after the charge; refused before it.
        check_newton_conditioning(loss, kappa, alpha, type(self).__name__)
        budget, rng = self._start_private_fit(n, allow_zero_delta=False)
        half = budget.split(2)
        # Jain and Thakurta (2013), Alg. 1 line 5: paid answers <w*, phi(z)> + Lap, composed over B updates.
        noise_scale = tddl_laplace_scale(sensitivity, max_updates, half.epsilon, half.delta)
        threshold = 4.0 * threshold_scale if threshold is None else threshold
        if verbose:
            print(f"[{type(self).__name__}] kernel ERM on {n} rows, then up to {max_updates} "
                  f"paid answers at epsilon={budget.epsilon:g}, delta={budget.delta:g}: "
                  f"sensitivity {sensitivity:.4g}, Laplace scale {noise_scale:.4g}, "
                  f"threshold {threshold:.4g}")
        beta, _, _ = fit_kernel_erm(K, np.where(y_index == 1, 1.0, -1.0), loss, alpha,
                                    tol, max_iter=max_iter)
        self.noise_scale_ = noise_scale if grid is None else grid[2]
        self.noise_granularity_ = None if grid is None else grid[0]
        self._grid = grid
        self.threshold_ = threshold
        # "Below threshold" (the paid answer) means -|w*(z) - w_t(z)| <= -sigma.
        self._sparse_vector = SparseVector(epsilon=half.epsilon, delta=half.delta,
                                           threshold=-self.threshold_, cutoff=max_updates,
                                           sensitivity=sensitivity, calibration="thesis",
                                           random_state=rng,
                                           # This session refuses pickles and copies itself
                                           # unless its allow_pickle opts in.
                                           allow_pickle=True)
        self._rng = rng
        # The answers' kernel is fixed with the calibration: a parameter changed after fit
        # must not change the function the noise was calibrated for.
        self._kernel = kernel
        self._X = X
        self._beta = beta
        self._points = np.empty((0, d))
        self._coef = np.empty(0)
        self._step = self.threshold_ / (2.0 * kappa**2)
        self._limit = limit
        self.classes_ = classes
        self.sensitivity_ = sensitivity
        self.n_features_in_ = d
        self.n_queries_ = 0
        self.n_updates_ = 0
        self.privacy_spent_ = budget
        return self

    @property
    def exhausted(self):
        """Whether all ``max_updates`` paid answers are used (the model is frozen)."""
        return self._sparse_vector.exhausted

    def decision_function(self, X):
        """Answer the queries in ``X`` one after the other (changes the state).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Public query points.

        Returns
        -------
        values : ndarray of shape (n_queries,)
            Private estimates of ``<w*, phi(z)>`` (score of ``classes_[1]``).
        """
        if not hasattr(self, "privacy_spent_"):
            raise NotFittedError("call fit before asking for predictions.")
        # Read at each call (the session's verbosity may be changed between calls); a
        # session pickled before it had one is silent.
        verbose = check_positive_int(getattr(self, "verbose", 0), "verbose", low=0)
        X = check_array(X, dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features; the predictor was fitted with "
                             f"{self.n_features_in_}.")
        kernel = self._fitted_kernel(X.shape[1])
        private = kernel(X, self._X) @ self._beta  # <w*, phi(z)>, never released as is
        out = np.empty(X.shape[0])
        for t in range(X.shape[0]):
            z = X[t:t + 1]
            public = float((kernel(z, self._points) @ self._coef)[0]) if self._coef.size else 0.0
            self.n_queries_ += 1
            if self.exhausted or self._sparse_vector.query(-abs(private[t] - public)):
                out[t] = public  # Alg. 1 line 12: w_t is accurate here (free)
                continue
            if getattr(self, "_grid", None) is None:  # a session pickled before it had one
                noisy = private[t] + self._rng.laplace(0.0, self.noise_scale_)
            else:  # exact discrete Laplace on the grid (tddl_discrete_laplace)
                granularity, t_steps, _ = self._grid
                noisy = release_on_grid(private[t:t + 1], "discrete_laplace", t_steps,
                                        granularity, self._rng)[0]
            # Line 9: the paid answer, clipped to the public range of <w*, phi(z)>.
            noisy = float(np.clip(noisy, -self._limit, self._limit))
            out[t] = noisy
            self._points = np.vstack([self._points, z])
            self._coef = np.append(self._coef, math.copysign(self._step, noisy - public))
            self.n_updates_ += 1
            if verbose:  # n_queries_ and n_updates_ are public (the sparse vector's output)
                cutoff = self._sparse_vector.cutoff
                print(f"[{type(self).__name__}] query {self.n_queries_}: paid answer "
                      f"{self.n_updates_}/{cutoff}"
                      + ("; the model is now frozen" if self.exhausted else ""))
        return out

    def predict(self, X):
        """Private class predictions (changes the state, as :meth:`decision_function`).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Public query points.

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
        """
        values = self.decision_function(X)
        return self.classes_[(values > 0).astype(int)]
