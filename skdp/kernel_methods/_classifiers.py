"""Private kernel classifiers: Jain and Thakurta's TDDL and a functional-perturbation SVM."""

import math
import warnings
from fractions import Fraction

import numpy as np
from scipy import linalg, optimize
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.accounting import PrivacyBudget, advanced_composition
from skdp.base import DPEstimatorMixin
from skdp.exceptions import CertificationError
from skdp.kernel_methods._erm import (
    certificate_tolerance,
    check_newton_conditioning,
    erm_sensitivity,
)
from skdp.kernel_methods._functional import (
    CALIBRATIONS,
    check_bounds,
    check_release_scale,
    default_delta,
    functional_noise_sigma,
    public_support,
    sphere_support,
    subspace_features,
    support_factor,
)
from skdp.kernel_methods._kernels import KernelParamsMixin, fill_kernel_doc, resolve_kernel
from skdp.linear_model._losses import get_loss
from skdp.linear_model._objective import GLMObjective
from skdp.linear_model._solvers import minimize_certified
from skdp.linear_model._private_glm import release_on_grid
from skdp.mechanisms._discrete import check_grid_noise_parameter
from skdp.mechanisms._discrete import _check_granularity, _round_up
from skdp.svm._base import svm_noise_granularity
from skdp.utils._multiclass import class_row_weights, fit_one_vs_rest, resolve_classes
from skdp.utils._validation import (
    check_bounded_sample_weight,
    check_option,
    check_positive_int,
    check_real,
)

__all__ = [
    "PrivateKernelClassifier",
    "PrivateKernelSVC",
    "ball_least_squares",
    "check_ball_least_squares_range",
    "tddl_discrete_laplace",
    "tddl_laplace_scale",
    "tddl_query_epsilon",
]

# Noise of the Laplace-noised values of Jain and Thakurta's (2013) learners: "discrete_laplace" releases them
# on a public grid with exact integer noise (floating-point safe).
LAPLACE_MECHANISMS = ("laplace", "discrete_laplace")


def tddl_query_epsilon(n_queries, epsilon, delta):
    """Per-query epsilon ``epsilon_0`` of Jain and Thakurta's (2013) composed Laplace queries (advanced composition).

    The largest ``epsilon_0`` whose ``n_queries``-fold composition is
    ``(epsilon, delta)``-DP under :func:`skdp.accounting.advanced_composition`
    (which already takes the better of basic and advanced composition),
    found by bisection and checked: the returned float itself composes to at
    most ``epsilon``. Needs ``delta > 0`` and ``n_queries > 1`` (otherwise
    basic composition, ``epsilon / n_queries``, is exact).

    Parameters
    ----------
    n_queries : int
        Number of queries, ``> 1``.
    epsilon : float
        Total epsilon, > 0.
    delta : float
        Total delta, in ``(0, 1)``.

    Returns
    -------
    epsilon_0 : float
    """
    def composed(eps0):
        with np.errstate(over="ignore", invalid="ignore"):  # NaN (overflow) counts as too big
            return advanced_composition([PrivacyBudget(eps0)] * n_queries, delta).epsilon

    # composed(e) >= e min(T, sqrt(2 T)) (both logarithms are >= 1), which brackets the root.
    lo, hi = epsilon / n_queries, epsilon / min(n_queries, math.sqrt(2.0 * n_queries))
    while composed(lo) > epsilon:  # the float epsilon / n can round up (an ulp above, summed)
        lo = math.nextafter(lo, 0.0)
    if composed(hi) <= epsilon:
        return hi
    for _ in range(200):  # bisection: keep composed(lo) <= epsilon < composed(hi)
        mid = 0.5 * (lo + hi)
        if composed(mid) <= epsilon:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * lo:
            break
    return lo


def tddl_laplace_scale(sensitivity, n_queries, epsilon, delta):
    """Laplace scale ``nu`` of Jain and Thakurta (2013), Alg. 2 line 1, for ``n_queries`` noisy predictions.

    Each noisy prediction ``<w*, phi(z_t)> + Lap(nu)`` is
    ``(sensitivity / nu)``-DP; Thm. 4 composes them ("follows directly from
    the composition property", Dwork, Rothblum and Vadhan 2010). The paper
    states ``nu`` only up to a constant (``O(L R^2 sqrt(T log(1/delta)) /
    (lambda n epsilon))``, garbled in the extracted text); here the constant
    is exact: ``nu = sensitivity / epsilon_0`` with ``epsilon_0`` the largest
    per-query budget whose ``n_queries``-fold composition is
    ``(epsilon, delta)``-DP (:func:`tddl_query_epsilon`). With ``delta = 0``
    basic composition gives ``epsilon_0 = epsilon / n_queries``.

    Parameters
    ----------
    sensitivity : float
        Sensitivity of one prediction, ``2 L R_phi^2 / (lambda n)``.
    n_queries : int
        Number of noisy predictions released (``T`` per class).
    epsilon : float
        Total epsilon, > 0.
    delta : float
        Total delta, in ``[0, 1)``.

    Returns
    -------
    nu : float
        The Laplace scale.
    """
    if delta == 0.0 or n_queries == 1:
        return sensitivity * n_queries / epsilon
    return sensitivity / tddl_query_epsilon(n_queries, epsilon, delta)


def check_noise_scale(scale, sensitivity, budget):
    """Refuse (before the charge) an infinite sensitivity or a scale that is not a normal float > 0.

    A subnormal scale (a huge ``alpha`` with a tiny ``kernel_bound``: 3.95e-322 was
    released) gives noise of a handful of subnormal steps around values whose rounding
    is absolute there, as :func:`skdp.mechanisms._exponential.check_noise_scale` refuses.
    """
    if not (math.isfinite(sensitivity) and np.finfo(float).tiny <= scale < math.inf):
        raise ValueError(
            f"The sensitivity ({sensitivity:g}) or the noise scale ({scale:g}) is not a finite "
            f"positive normal float at (epsilon={budget.epsilon:g}, delta={budget.delta:g}): "
            "alpha or epsilon is too small or too large. Nothing was spent.")


def tddl_discrete_laplace(scale, sensitivity, n_queries, epsilon, delta, value_bound):
    """Grid and exact discrete Laplace noise replacing ``Lap(scale)`` on each noisy value.

    The floating-point-safe version of :func:`tddl_laplace_scale`'s release
    (Canonne, Kamath and Steinke 2020, "CKS"; Mironov 2012): each value is
    rounded to the public power-of-two grid ``g`` (about ``2**-30 scale``,
    coarse enough that ``2**52 g`` covers ``value_bound``:
    :func:`~skdp.svm._base.svm_noise_granularity`) and gets independent
    discrete Laplace noise of scale ``t`` grid steps.

    Rounding half up, ``|round(a / g) - round(b / g)| <= ceil(|a - b| / g)``:
    one value moves by at most ``Delta_g = ceil(sensitivity / g)`` steps,
    which includes the rounding (at most one step more than
    ``sensitivity / g``). Each noisy value is then ``(Delta_g / t)``-DP (the
    geometric mechanism, CKS Alg. 2), so ``t = Delta_g / epsilon_0`` with the
    per-query ``epsilon_0`` of the composition: ``t = n_queries Delta_g /
    epsilon`` (basic, exact in rational arithmetic) when ``delta = 0`` or
    ``n_queries = 1``, else ``Delta_g / epsilon_0`` with
    :func:`tddl_query_epsilon`'s checked float ``epsilon_0``. ``t`` is
    rounded up to 24 significant bits. Every input is public.

    Parameters
    ----------
    scale : float
        The continuous Laplace scale (:func:`tddl_laplace_scale`), which sets the grid.
    sensitivity : float
        Sensitivity of one value.
    n_queries : int
        Number of noisy values composed.
    epsilon, delta : float
        Total budget of the composition.
    value_bound : float
        Data-independent bound on ``|value|``.

    Returns
    -------
    granularity : float
        The grid ``g``, a power of two.
    t : fractions.Fraction
        Discrete Laplace scale in grid steps.
    noise_scale : float
        ``t g``, the scale in the values' units.

    Raises
    ------
    ValueError
        If ``g`` is outside ``[2**-900, 2**900]`` (an extreme scale or
        ``value_bound``) or ``t`` exceeds ``2**52`` grid steps
        (:func:`~skdp.mechanisms._discrete.check_grid_noise_parameter`).
    """
    granularity = svm_noise_granularity(scale, value_bound)
    _check_granularity(granularity)  # within [2**-900, 2**900], refused before the charge
    # Data-independent upward rounding of the float sensitivity (as svm_discrete_noise does),
    # then the grid sensitivity of one rounded value: ceil(Delta / g) steps.
    steps = math.ceil(Fraction(sensitivity * (1.0 + 2.0**-40)) / Fraction(granularity))
    # Jain and Thakurta (2013), Alg. 2 line 1 / Alg. 1 line 5 / Alg. 3 line 6 (Thm. 4, 2, 7: composed
    # Laplace values) with exact discrete Laplace noise on the grid (CKS Alg. 2):
    # t = Delta_g / epsilon_0, epsilon_0 the per-query budget of the composition.
    if delta == 0.0 or n_queries == 1:
        t = _round_up(Fraction(n_queries * steps) / Fraction(epsilon))
    else:
        t = _round_up(Fraction(steps) / Fraction(tddl_query_epsilon(n_queries, epsilon, delta)))
    check_grid_noise_parameter("discrete_laplace", t, f"epsilon={epsilon!r}")
    return granularity, t, float(t) * granularity


def check_ball_least_squares_range(value_bound, scale, radius, K, owner):
    """Refuse, before the charge, a :func:`ball_least_squares` release whose floats could overflow.

    A public bound: each noisy value is at most ``v = value_bound + 40 scale``
    (a numpy Laplace draw is below ``37 scale``; discrete Laplace draws
    beyond ``40 scale`` have probability below ``e^-40``), so the ``T``
    noisy values have ``||target||^2 <= T v^2``. The kept eigenvalues are at
    least ``1e-12 lambda_max >= 1e-12 k`` (``k = max_t K_tt <= lambda_max``),
    so ``sum u^2 / lam <= 1e12 T v^2 / k`` and the coefficients' squared
    norm is at most ``1e24 T v^2 / k^2``; ``max(1, k)`` times the latter
    (``quadratic``) bounds both. An evaluation at a point with
    ``k(x, x) <= k`` is at most ``sqrt(T) k`` times the coefficients' norm,
    and ``radius^2`` is formed too.
    Without this check a huge ``kernel_bound`` (or a tiny ``alpha``) raised
    ``OverflowError`` after the budget was charged.

    Parameters
    ----------
    value_bound : float
        Public bound on ``|<w*, phi(z_t)>|``.
    scale : float
        Laplace scale.
    radius : float
        Radius of the ball.
    K : ndarray of shape (T, T)
        Kernel matrix of the public points.
    owner : str
        Name of the estimator, for the error message.
    """
    T = K.shape[0]
    k = max(float(np.max(np.diag(K))), np.finfo(float).tiny)
    v = value_bound + 40.0 * scale
    quadratic = T * v * v * 1e24 / k / k * max(1.0, k)  # k * k may underflow to 0
    evaluation = T * k * math.sqrt(quadratic)
    if not max(quadratic, evaluation, radius * radius) < np.finfo(float).max:
        raise ValueError(
            f"{owner}: the release would overflow the float range (noise scale {scale:g}, "
            f"values up to {value_bound:g}). Use a smaller kernel_bound or a larger alpha or "
            "epsilon, fixed in advance. Nothing was spent.")


def ball_least_squares(K, target, radius):
    """Jain and Thakurta (2013), Alg. 2 line 2: the least-squares fit of noisy predictions over a ball.

    Solves ``min_w sum_t (<w, phi(z_t)> - target_t)^2`` over
    ``||w||_H <= radius``. The minimizer lies in ``span{phi(z_t)}``,
    ``w = sum_t a_t phi(z_t)``: the minimum-norm interpolant ``K^+ target``
    when it fits in the ball, otherwise ``(K + mu I)^{-1} target`` with
    ``mu > 0`` chosen so that ``||w||_H = radius`` (the KKT conditions).

    Parameters
    ----------
    K : ndarray of shape (T, T)
        Kernel matrix of the public points.
    target : ndarray of shape (T,)
        Noisy predictions.
    radius : float
        Radius of the convex set ``C``.

    Returns
    -------
    coef : ndarray of shape (T,)
        ``a``.
    """
    evals, evecs = linalg.eigh(K, check_finite=False)
    keep = evals > 1e-12 * max(evals[-1], np.finfo(float).tiny)
    lam, u = evals[keep], evecs[:, keep].T @ target
    if np.sum(u**2 / lam) <= radius**2:
        return evecs[:, keep] @ (u / lam)

    def excess(mu):
        return float(np.sum(lam * u**2 / (lam + mu) ** 2)) - radius**2

    if not excess(0.0) > 0.0:
        # sum u^2 / lam > radius^2, yet lam u^2 / lam^2 rounds or underflows to at most
        # radius^2 (kernel values near 1e-150): the interpolant is in the ball up to rounding.
        # brentq raised ValueError here, after the charge (any output is post-processing).
        return evecs[:, keep] @ (u / lam)
    hi = 1.0
    while excess(hi) > 0:
        hi *= 10.0
    mu = optimize.brentq(excess, 0.0, hi, xtol=1e-14, rtol=1e-12)
    return evecs[:, keep] @ (u / (lam + mu))


class _KernelERMClassifier(KernelParamsMixin, DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Shared fit/predict: certified kernel ERM per class, then a private release on public points."""

    _allow_zero_delta = True
    _non_private_attributes = ("n_iter_",)

    # Target standard deviation of the privacy noise on one released decision value, used by
    # the alpha=None rule (_resolve_alpha): the margin scale of the 1-Lipschitz losses.
    _VALUE_NOISE_TARGET = 1.0 / 3.0

    def _get_kernel(self, n_features, require_bound=True):
        """The kernel, with ``gamma=None`` resolved from the public domain (:meth:`_public_gamma`)."""
        gamma = self.gamma
        if gamma is None and isinstance(self.kernel, str):
            gamma = self._public_gamma(n_features)
        return resolve_kernel(self.kernel, gamma=gamma, degree=self.degree, coef0=self.coef0,
                              kernel_params=self.kernel_params, kernel_bound=self.kernel_bound,
                              n_features=n_features, require_bound=require_bound)

    def _public_gamma(self, n_features):
        """``gamma=None``: ``1 / (2 d v)``, ``v`` a public bound on the mean squared feature.

        scikit-learn's ``gamma="scale"`` is ``1 / (d Var(X))``, read from the
        data; here the variance is replaced by its public bound ``v`` and the
        result halved (measured better on every table it was derived on):
        rows in the ball of radius ``data_norm`` have
        ``mean_j x_j^2 <= data_norm^2 / d`` (``gamma = 1 / (2 data_norm^2)``),
        rows in the box ``bounds`` have per-feature variance at most
        ``(high_j - low_j)^2 / 4`` (``gamma = 2 / sum_j (high_j - low_j)^2``).
        """
        if self.bounds is None:
            data_norm = check_real(self.data_norm, "data_norm", low=0.0, low_inclusive=False)
            return 0.5 / (data_norm * data_norm)
        box = check_bounds(self.bounds, n_features)
        width2 = float(np.sum((box[:, 1] - box[:, 0]) ** 2))
        return 2.0 / width2 if width2 > 0 else 1.0 / n_features

    def _value_noise(self, scale, kappa):
        """Standard deviation (bound) of the noise on one released decision value."""
        return math.sqrt(2.0) * scale  # Laplace(scale) on each value

    def _resolve_alpha(self, budget, kappa, tol, n, n_functions, n_points):
        """``alpha=None``: ``max(1, noise_1) / n``, from public quantities only.

        ``1 / n`` is scikit-learn's ``SVC(C=1)``; ``noise_1`` is the standard
        deviation of the privacy noise on one decision value at ``alpha = 1 / n``.
        The noise scales as ``1 / alpha``, so the rule keeps it at most
        ``_VALUE_NOISE_TARGET`` (a third of the margin; divided by
        ``sqrt(2 log K)`` for ``K >= 3`` one-vs-rest functions, the typical
        largest of ``K`` noises): at a large epsilon it is ``SVC``'s
        regularization, at a small one just enough to keep the released
        function above the noise.
        """
        if self.alpha is not None:
            return float(self.alpha)
        reference = erm_sensitivity(kappa, 1.0 / n, n, tol)
        with np.errstate(all="ignore"):
            noise = self._value_noise(
                self._release_scale(budget, kappa, reference, n_functions, n_points), kappa)
        if not math.isfinite(noise):
            return 1.0 / n
        # One-vs-rest predicts the argmax of n_functions noisy scores, whose largest noise
        # is about sqrt(2 log K) standard deviations: the target shrinks by that factor.
        spread = max(1.0, math.sqrt(2.0 * math.log(n_functions)))
        return max(1.0, spread * noise / self._VALUE_NOISE_TARGET) / n

    def _release_theta(self, theta, K_uu, scale, context, rng):
        """Coefficients of one released function from the certified ERM coordinates ``theta``.

        The default releases noisy values at the public points
        (``<w*, phi(u_t)> = <z(u_t), theta>``) through :meth:`_release`.
        """
        return self._release(context["Z_uu"] @ theta, K_uu, scale, context, rng)

    def _check_release_params(self):
        """Validate the release-specific parameters (before any noise)."""

    def _release_scale(self, budget, kappa, sensitivity, n_functions, n_points):
        """Noise scale of the release for ``n_functions`` one-vs-rest functions."""
        raise NotImplementedError

    def _release_grid(self, scale, budget, kappa, sensitivity, radius, n_functions, n_points):
        """``(granularity, t, t g)`` of an exact discrete release, or ``None`` (the default)."""

    def _check_release_range(self, scale, kappa, radius, K_uu):
        """Refuse, before the charge, a release whose floats could overflow (default: none)."""

    def _release(self, values, K_uu, scale, context, rng):
        """Coefficients on the public points of one released function.

        ``context`` holds ``kappa``, ``sensitivity`` (of the minimizer),
        ``radius`` (a bound on the RKHS norm of every certified minimizer),
        ``support`` (the support's Cholesky factor), ``Z_uu`` and ``grid``
        (what :meth:`_release_grid` returned).
        """
        raise NotImplementedError

    def fit(self, X, y, X_public=None, sample_weight=None):
        """Train the kernel ERM on the private data and release it privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private training inputs.
        y : array-like of shape (n_samples,)
            Private labels.
        X_public : array-like of shape (n_public, n_features) or None, default=None
            Public, unlabeled points (e.g. a sample of the test data); the
            released model is accurate where they lie. They are not protected
            and are stored in ``support_``. ``None`` lays ``n_public`` points
            over the public box ``bounds``.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weight of each row's loss in the ERM objective, as in
            :class:`~sklearn.svm.SVC`. A record is ``(x, y, w)`` and its
            weight is protected like its features. Weights above 1 are
            clipped to 1 (silently), because the guarantee bounds one
            row's influence by a weight of 1; weights in ``[0, 1]`` cost no
            privacy. The loss is still averaged over all ``n_samples`` rows,
            zero-weight ones included (the sum of the weights is not public),
            so weights below 1 also shrink the data term relative to the
            regularization ``alpha``. Every one-vs-rest function uses the
            same weights.

        Returns
        -------
        self : estimator
            The fitted classifier.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        classes, y_index = resolve_classes(self.classes, y, type(self).__name__)
        n, d = X.shape
        # Weights in [0, 1] (clipped per row, like a row's feature-map norm): the
        # replaced row's weighted loss stays L-Lipschitz, so erm_sensitivity holds.
        sample_weight = check_bounded_sample_weight(
            class_row_weights(self.class_weight, classes, y_index,
                              check_bounded_sample_weight(sample_weight, n)), n)
        data_norm = check_real(self.data_norm, "data_norm", low=0.0, low_inclusive=False)
        kernel = self._get_kernel(d)
        if self.alpha is not None:
            check_real(self.alpha, "alpha", low=0.0, low_inclusive=False)
        loss = get_loss(self.loss, self.huber_h)
        max_iter = check_positive_int(self.max_iter, "max_iter")
        if X_public is not None:
            support = validate_data(self, X_public, dtype=np.float64, reset=False)
        elif self.bounds is None:
            support = sphere_support(self.n_public, d, data_norm)
        else:
            support = public_support(self.bounds, self.n_public, d)
        self._check_release_params()
        verbose = check_positive_int(self.verbose, "verbose", low=0)
        # Public: a kernel not PSD by construction must be PSD on the support and a fixed
        # probe set (the proofs below need a reproducing kernel); refused before the charge,
        # and before the private rows are read.
        K_uu = kernel(support)
        kernel.check_public_psd(type(self).__name__, d, support, K_uu)
        kappa = math.sqrt(kernel.bound)
        # The ERM is solved over span{phi(u)}, u in the public support, in the orthonormal
        # coordinates z(x) = L^{-1} k(U, x) (L L^T = K_uu + tau I, public), clipped to
        # ||z(x)|| <= kappa: a public per-record feature map, so the RKHS argument below
        # holds verbatim in R^m. Deterministic and free of noise, but able to refuse an
        # input (chi2 on a negative feature, a kernel that overflows): evaluated before the
        # budget is charged. Cost O(n m^2) instead of O(n^3).
        factor = support_factor(K_uu)
        Z = subspace_features(kernel, factor, support, X, kappa)
        Z_uu = subspace_features(kernel, factor, support, support, kappa)
        tol = certificate_tolerance(kappa, n)
        n_functions = 1 if len(classes) == 2 else len(classes)
        budget = self._resolve_budget(n, default_delta, allow_zero_delta=self._allow_zero_delta)
        alpha = self._resolve_alpha(budget, kappa, tol, n, n_functions, support.shape[0])
        # 2 L kappa / (lambda n) + 2 tol / lambda, with n the number of rows (zero-weight
        # ones included; the weight sum is private). Valid for weights in [0, 1]: the
        # replaced row's weighted loss is still L kappa-Lipschitz in f and the
        # regularizer's strong convexity does not depend on the weights (derivation in
        # erm_sensitivity). It holds for the minimizer over any closed subspace of the
        # RKHS (here span{phi(u)}), as the strong-convexity argument does not change.
        sensitivity = erm_sensitivity(kappa, alpha, n, tol)
        # lambda ||w*|| <= (1/n) sum_i w_i L R_phi <= L R_phi at the optimum (weights <= 1);
        # certified points lie within tol / lambda.
        radius = (kappa + tol) / alpha
        scale = self._release_scale(budget, kappa, sensitivity, n_functions, support.shape[0])
        check_noise_scale(scale, sensitivity, budget)
        self._check_release_range(scale, kappa, radius, K_uu)
        # The discrete calibration can refuse a budget: also before the charge.
        grid = self._release_grid(scale, budget, kappa, sensitivity, radius, n_functions,
                                  support.shape[0])
        # Public (loss, kappa, alpha): an alpha the Newton solver cannot handle in floats
        # failed after the charge; refused before it.
        check_newton_conditioning(loss, kappa, alpha, type(self).__name__)
        budget, rng = self._start_private_fit(n, default_delta=default_delta,
                                              allow_zero_delta=self._allow_zero_delta)
        context = {"kappa": kappa, "sensitivity": sensitivity, "radius": radius,
                   "support": factor, "grid": grid, "Z_uu": Z_uu}
        name = type(self).__name__
        targets = classes[1:] if n_functions == 1 else classes
        if verbose:
            print(f"[{name}] {n_functions} class problem(s) on {n} rows, released on "
                  f"{support.shape[0]} public points at epsilon={budget.epsilon:g}, "
                  f"delta={budget.delta:g}: alpha {alpha:.4g}, RKHS sensitivity "
                  f"{sensitivity:.4g}, noise scale {scale:.4g}")

        def fit_binary(Z, y_pm1, child_rng):
            objective = GLMObjective(Z, y_pm1, loss, alpha, sample_weight=sample_weight)
            try:
                result = minimize_certified(objective, np.zeros(Z.shape[1]), gamma=tol,
                                            max_iter=max_iter)
                theta, n_iter = result.x, result.n_iter
            except CertificationError:
                # After the charge: release the noise around the data-independent
                # theta = 0 (a usable, if uninformative, model) instead of raising.
                warnings.warn(
                    f"{name}: the ERM minimizer could not be certified within max_iter="
                    f"{max_iter} Newton iterations; the released model is noise around 0. "
                    "Increase max_iter.", RuntimeWarning, stacklevel=3)
                theta, n_iter = np.zeros(Z.shape[1]), max_iter
            return self._release_theta(theta, K_uu, scale, context, child_rng), n_iter

        results = fit_one_vs_rest(fit_binary, Z, y_index, len(classes), rng,
                                  n_jobs=self.n_jobs)
        if verbose:  # printed here, not by the (possibly parallel) workers
            for k, (label, (_, n_iter)) in enumerate(zip(targets, results), start=1):
                print(f"[{name}] problem {k}/{n_functions} (class {label} vs rest): minimizer "
                      f"certified in {n_iter} Newton iterations")
        # Fitted attributes only now: a refit that fails leaves the previous model whole.
        self.classes_ = classes
        self.alpha_ = alpha
        self.gamma_ = kernel.params.get("gamma")
        self.kappa_ = kappa
        self.certificate_tol_ = tol
        self.sensitivity_ = sensitivity
        self.support_ = support
        self.dual_coef_ = np.vstack([coef for coef, _ in results])
        # The kernel of the release, as scikit-learn keeps its fitted gamma: set_params
        # after fit must not change what predict computes until the next fit.
        self._kernel = kernel
        self.n_iter_ = max(n_iter for _, n_iter in results)
        self.noise_scale_ = scale if grid is None else grid[2]
        if "mechanism" in self.get_params():
            self.noise_granularity_ = None if grid is None else grid[0]
        self.delta_ = budget.delta
        self.privacy_spent_ = budget
        return self

    def decision_function(self, X):
        """Released decision function at ``X``.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query points.

        Returns
        -------
        scores : ndarray of shape (n_queries,) or (n_queries, n_classes)
            Scores for ``classes_[1]`` (binary) or one column per class.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores = self._fitted_kernel(X.shape[1])(X, self.support_) @ self.dual_coef_.T
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query points.

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
        """
        scores = self.decision_function(X)
        index = (scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)
        return self.classes_[index]


class _LaplaceValuesMixin:
    """The ``mechanism`` option of Jain and Thakurta's (2013) learners releasing Laplace-noised values.

    Subclasses define ``_n_queries(n_functions, n_points)``, the number of
    ``epsilon_0``-DP mechanisms composed, which their ``_release_scale``
    (the continuous Laplace scale) composes too.
    """

    def _check_release_params(self):
        check_option(self.mechanism, "mechanism", LAPLACE_MECHANISMS)

    def _release_grid(self, scale, budget, kappa, sensitivity, radius, n_functions, n_points):
        if self.mechanism != "discrete_laplace":
            return None
        # |<w*, phi(z)>| <= R_phi ||w*|| <= R_phi radius bounds every value (public).
        return tddl_discrete_laplace(scale, kappa * sensitivity,
                                     self._n_queries(n_functions, n_points), budget.epsilon,
                                     budget.delta, kappa * radius)


@fill_kernel_doc
class PrivateKernelClassifier(_LaplaceValuesMixin, _KernelERMClassifier):
    """Jain and Thakurta's test-data-dependent private kernel learner (TDDL).

    Jain and Thakurta (2013), Alg. 2: solve the kernel ERM on the private
    data, release its predictions on a public, unlabeled sample ``Z`` (e.g.
    a sample of the test set) with Laplace noise, and fit to them a model in
    the span of ``Z``, accurate on the distribution of ``Z`` (Thm. 5). The
    maths and the defaults: :doc:`/guide/kernel_methods`.

    Parameters
    ----------
    %(kernel)s
    %(kernel_bound)s
    %(kernel_erm)s
    loss : {"logistic", "huber"}, default="logistic"
        Margin loss, 1-Lipschitz in the margin: logistic, or the Huber
        (smoothed hinge) SVM loss of width ``huber_h``.
    n_public : int, default=100
        Number of public points (on the sphere of radius ``data_norm``, or
        over ``bounds``) when ``fit`` gets no ``X_public``. The noise per
        point grows with their number (about ``sqrt(T)``).
    mechanism : {"laplace", "discrete_laplace"}, default="laplace"
        Noise of the released predictions. ``"discrete_laplace"``: exact
        discrete Laplace noise on a public grid (``noise_granularity_``),
        safe against floating-point attacks (Mironov 2012), same guarantee.
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
    support_ : ndarray of shape (T, n_features)
        The public points (``X_public`` or the generated ones).
    dual_coef_ : ndarray of shape (n_functions, T)
        Released coefficients: ``decision_function(x) = k(x, support_) @ dual_coef_.T``
        (one row for binary problems, one per class otherwise).
    kappa_ : float
        ``R_phi``, the bound on the feature-map norm.
    certificate_tol_ : float
        Certified bound on the RKHS gradient norm of the released minimizer.
    n_iter_ : int
        Newton iterations of the certified solver (the most over classes).
        Not private (see Privacy).
    sensitivity_ : float
        RKHS sensitivity of the certified ERM minimizer,
        ``2 R_phi / (lambda n)`` plus the certificate term.
    prediction_sensitivity_ : float
        Sensitivity of one prediction, ``R_phi * sensitivity_``.
    noise_scale_ : float
        The Laplace scale ``nu`` of Alg. 2 line 1 (or the discrete one).
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
    replace-one neighbours (Jain and Thakurta (2013), Thm. 4); the features,
    labels and sample weights of every training row are protected, the
    public points ``X_public`` are not. Each prediction of the certified
    minimizer moves by at most ``prediction_sensitivity_`` and the noisy
    predictions compose to the budget (:func:`tddl_laplace_scale`). Public
    inputs: ``classes`` (with ``classes=None`` the label set is read from
    ``y``, with a :class:`~skdp.PrivacyLeakWarning`), ``kernel_bound``,
    ``bounds`` or ``data_norm``, and the other hyperparameters. A fit that
    does not certify releases noise around 0 with a ``RuntimeWarning`` (one
    bit not covered). Details: :ref:`kernel_privacy`.

    %(kernel_psd)s

    %(non_private_diagnostics)s

    The guarantee assumes exact real-valued noise; floating-point noise can
    leak through its low bits (Mironov 2012), which
    ``mechanism="discrete_laplace"`` avoids.

    See Also
    --------
    PrivateKernelSVC : Functional perturbation of the same minimizer, with
        Gaussian-process noise whose scale does not grow with ``T``.

    Notes
    -----
    Multi-class problems are one-vs-rest, every class spending its share of
    the budget. A regularized intercept can be had by adding a constant to
    the kernel. The released model is a least-squares fit to ``T`` noisy
    values, so it has at most ``T`` degrees of freedom and its noise grows
    as ``sqrt(T)``: prefer :class:`PrivateKernelSVC` for accuracy. At
    ``epsilon = 1`` on the real tables of the guide (5,000-10,000 rows) it
    predicts the majority class: the noise of the ``T`` values forces a
    strong regularization (measured in :doc:`/guide/kernel_methods`).

    %(kernel_erm_cost)s

    References
    ----------
    Jain and Thakurta, "Differentially private learning with kernels",
    ICML 2013 (Jain and Thakurta (2013)).

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skdp.kernel_methods import PrivateKernelClassifier
    >>> X, y = make_moons(2000, noise=0.1, random_state=0)
    >>> Z, _ = make_moons(100, noise=0.1, random_state=1)
    >>> clf = PrivateKernelClassifier(gamma=2.0, alpha=0.1, classes=[0, 1], epsilon=10.0,
    ...                               random_state=0)
    >>> clf = clf.fit(X, y, X_public=Z)
    >>> bool(clf.score(X, y) > 0.85)
    True
    """

    def __init__(self, kernel="rbf", *, gamma=None, degree=3, coef0=1.0, kernel_params=None,
                 kernel_bound=None, alpha=None, loss="logistic", huber_h=0.5, max_iter=100,
                 bounds=None, data_norm=1.0, n_public=100, mechanism="laplace", classes=None,
                 class_weight=None, epsilon=1.0, delta=None, random_state=None, accountant=None,
                 n_jobs=None, verbose=0):
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
        self.mechanism = mechanism
        self.classes = classes
        self.class_weight = class_weight
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.accountant = accountant
        self.n_jobs = n_jobs
        self.verbose = verbose

    @property
    def prediction_sensitivity_(self):
        """Sensitivity of one released prediction, ``R_phi * sensitivity_``."""
        return self.kappa_ * self.sensitivity_

    def _n_queries(self, n_functions, n_points):
        return n_functions * n_points  # Alg. 2 line 1: every released prediction

    def _release_scale(self, budget, kappa, sensitivity, n_functions, n_points):
        # Jain and Thakurta (2013), Alg. 2 line 1: b_t ~ Lap(nu), composed over every released
        # prediction; one prediction moves by at most R_phi ||w*(D) - w*(D')||.
        return tddl_laplace_scale(kappa * sensitivity, n_functions * n_points,
                                  budget.epsilon, budget.delta)

    def _check_release_range(self, scale, kappa, radius, K_uu):
        check_ball_least_squares_range(kappa * radius, scale, radius, K_uu,
                                       type(self).__name__)

    def _release(self, values, K_uu, scale, context, rng):
        if context["grid"] is None:
            noisy = values + rng.laplace(0.0, scale, size=values.shape)
        else:  # exact discrete Laplace on the grid (tddl_discrete_laplace)
            granularity, t_steps, _ = context["grid"]
            noisy = release_on_grid(values, "discrete_laplace", t_steps, granularity, rng)
        # Jain and Thakurta (2013), Alg. 2 line 2: least squares over the ball C (post-processing).
        return ball_least_squares(K_uu, noisy, context["radius"])


@fill_kernel_doc
class PrivateKernelSVC(_KernelERMClassifier):
    """Kernel SVM released by functional perturbation (Dandekar et al. (2019); Hall et al. 2013).

    Solve the kernel ERM (a smoothed-hinge SVM by default) on the private
    data and release the decision function plus a Gaussian-process sample
    path scaled to its RKHS sensitivity. The release is pinned to public
    support points (``X_public``, or points laid over ``bounds``): it answers
    any number of queries from one noise draw, and the noise scale does not
    grow with the number of support points.

    Parameters
    ----------
    %(kernel)s
    %(kernel_bound)s
    %(kernel_erm)s
    loss : {"logistic", "huber"}, default="huber"
        Margin loss, 1-Lipschitz in the margin: logistic, or the Huber
        (smoothed hinge) SVM loss of width ``huber_h``.
    n_public : int, default=500
        Number of support points (on the sphere of radius ``data_norm``, or
        over ``bounds``) when ``fit`` gets no ``X_public``.
    %(classes)s
    %(class_weight)s
    %(epsilon)s
    delta : float or None, default=None
        In ``(0, 1)``; ``None`` uses ``min(1e-5, 1 / n_samples**2)`` (stored in ``delta_``).
    calibration : {"analytic", "hall"}, default="analytic"
        Noise calibration (see :class:`PrivateKernelDensity`).
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
        Public support points of the release.
    dual_coef_ : ndarray of shape (n_functions, m)
        ``decision_function(x) = k(x, support_) @ dual_coef_.T``.
    kappa_ : float
        Bound on the feature-map norm.
    certificate_tol_ : float
        Certified bound on the RKHS gradient norm of the released minimizer.
    n_iter_ : int
        Newton iterations of the certified solver (the most over classes).
        Not private (see Privacy).
    sensitivity_ : float
        RKHS sensitivity of one certified minimizer.
    noise_scale_ : float
        Multiplier of the Gaussian-process sample path (per function).
    delta_ : float
        The delta used.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta_)``.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Privacy
    -------
    ``(epsilon, delta)``-differential privacy for replace-one neighbours;
    the features, labels and sample weights of every training row are
    protected (``X_public`` is not). Functional perturbation (Hall, Rinaldo
    and Wasserman (2013); Dandekar et al. (2019), Definition 2) with the RKHS
    sensitivity ``2 kappa / (lambda n)`` of the certified minimizer,
    correcting the sensitivity of Dandekar et al. (2019), Sec. 3.3; the
    one-vs-rest functions are released jointly as one Gaussian mechanism.
    Public inputs: ``classes`` (with ``classes=None`` the label set is read
    from ``y``, with a :class:`~skdp.PrivacyLeakWarning`), ``kernel_bound``,
    ``bounds`` or ``data_norm``, and the other hyperparameters. The
    certification, the settings refused before the charge and the fallback
    of a fit that does not certify are those of
    :class:`PrivateKernelClassifier`. Details: :ref:`kernel_privacy`.

    %(kernel_psd)s

    %(non_private_diagnostics)s

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    PrivateKernelClassifier : Jain and Thakurta's (2013) test-data-dependent learner.

    Notes
    -----
    The release is pinned to the support: away from it the decision function
    decays to 0. The default support (500 points on the sphere of radius
    ``data_norm``) serves unit-norm rows
    (``make_pipeline(Normalizer(), PrivateKernelSVC())``); public unlabeled
    rows from the data's distribution (``X_public``) serve better. The noise
    grows as ``sqrt(n_classes)``; measured accuracy against ``SVC()`` is in
    :doc:`/guide/kernel_methods`.

    %(kernel_erm_cost)s

    References
    ----------
    Hall, Rinaldo and Wasserman, "Differential privacy for functions and
    functional data", JMLR 14, 2013. Dandekar, Basu and Bressan (2019), Dandekar et al. (2019).

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skdp.kernel_methods import PrivateKernelSVC
    >>> X, y = make_moons(2000, noise=0.1, random_state=0)
    >>> clf = PrivateKernelSVC(gamma=2.0, classes=[0, 1], epsilon=1.0,
    ...                        random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.85)
    True
    """

    _allow_zero_delta = False

    def __init__(self, kernel="rbf", *, gamma=None, degree=3, coef0=1.0, kernel_params=None,
                 kernel_bound=None, alpha=None, loss="huber", huber_h=0.5, max_iter=100,
                 bounds=None, data_norm=1.0, n_public=500, classes=None, class_weight=None, epsilon=1.0,
                 delta=None, calibration="analytic", random_state=None, accountant=None,
                 n_jobs=None, verbose=0):
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
        self.classes = classes
        self.class_weight = class_weight
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.random_state = random_state
        self.accountant = accountant
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _check_release_params(self):
        check_option(self.calibration, "calibration", CALIBRATIONS)

    def _release_scale(self, budget, kappa, sensitivity, n_functions, n_points):
        # Dandekar et al. (2019), eq. (1): f + (Delta c(delta) / epsilon) G, with the direct sum of the
        # one-vs-rest functions having sensitivity sqrt(n_functions) Delta.
        return functional_noise_sigma(math.sqrt(n_functions) * sensitivity,
                                      budget.epsilon, budget.delta, self.calibration)

    def _value_noise(self, scale, kappa):
        # The sample path adds sigma <z(x), xi>, xi ~ N(0, I): variance <= sigma^2 kappa^2.
        return kappa * scale

    def _check_release_range(self, scale, kappa, radius, K_uu):
        # |f(u)| <= ||f||_H sqrt(k(u, u)) <= radius kappa for every certified minimizer, and
        # the margins K_ux beta (|beta_i| <= 1 / (lambda n) at the optimum) stay below it.
        check_release_scale(kappa * radius, scale, K_uu, type(self).__name__)

    def _release_theta(self, theta, K_uu, scale, context, rng):
        # Dandekar et al. (2019), eq. (1) / Hall et al. (2013): f + sigma G projected on span{phi(u)}. In
        # the orthonormal coordinates z of that span (subspace_features), f is theta and
        # the projected sample path is N(0, I): the Gaussian mechanism on theta with
        # L2 sensitivity sqrt(n_functions) Delta (the direct sum), sigma from
        # functional_noise_sigma. The coefficients a = L^{-T} (theta + sigma xi) give
        # f(x) = k(x, U) a (post-processing).
        noisy = theta + scale * rng.standard_normal(theta.shape)
        return linalg.solve_triangular(context["support"][0], noisy, lower=True, trans="T",
                                       check_finite=False)
