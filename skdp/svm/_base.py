"""Shared fitting of the output-perturbed SVMs of Alg. 2 and Alg. 3."""

import math
from fractions import Fraction

import dp_accounting
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import validate_data

from skdp.base import DPEstimatorMixin
from skdp.linear_model._base import PrivateLinearClassifierMixin
from skdp.linear_model._losses import HuberSVMLoss
from skdp.mechanisms import (
    discrete_gaussian_sigma2,
    discrete_laplace_scale,
    gaussian_sigma_analytic,
    laplace_scale,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)
from skdp.mechanisms._discrete import (
    _MAX_GRID_INDEX,
    _check_granularity,
    _grid_indices,
    _grid_release,
    check_grid_noise_parameter,
)
from skdp.svm._solver import _sum_error_factor, solve_svm_certified
from skdp.utils._multiclass import (
    OneVsRestBudget,
    class_row_weights,
    fit_one_vs_rest,
    resolve_classes,
)
from skdp.utils._random import spawn_random_states
from skdp.utils._validation import (
    check_bounded_sample_weight,
    check_mechanism_delta,
    check_option,
    check_positive_int,
    check_real,
)

__all__ = [
    "default_regularization",
    "noise_ratio",
    "svm_discrete_noise",
    "svm_noise_granularity",
    "svm_noise_scale",
    "svm_sensitivity",
]

LOSSES = ("hinge", "huber")
MECHANISMS = ("laplace", "gaussian", "discrete_laplace", "discrete_gaussian")
PURE_DP_MECHANISMS = ("laplace", "discrete_laplace")
# The discrete mechanisms' grid step is about 2**-GRID_BITS times the continuous noise
# scale (see svm_noise_granularity).
GRID_BITS = 30
# Public float range of the certified solve (_check_float_range): the radius stays far
# above the square root of the subnormals (the duality gap's absolute rounding floor is
# about 2**-1074, so sqrt(2 gap) about 2**-537), C kappa and kappa far below overflow.
_MIN_RADIUS = 2.0**-500
_MAX_NORM = 2.0**200


def _check_float_range(C, kappa, n_samples, tol, radius):
    """Refuse, before the charge, a calibration the certified solver cannot honour in floats.

    * ``radius = tol C kappa / n >= 2**-500`` and ``C kappa, kappa <= 2**200``:
      the solver's iterates (``||w|| <= C kappa`` for the all-ones dual point),
      margins (``<= C kappa^2``), squared norms and the certificate's rounding
      bounds stay finite, and the certificate's absolute floor from
      subnormal rounding (a gap of about ``2**-1074``) stays far below the
      radius. Without it, the sensitivity and the radius can be subnormal,
      whose rounding is absolute: with ``C = 1e-323``,
      ``n = 3`` the solver outputs of a neighbouring pair are 2 ulps apart
      while the sensitivity rounds to 1 ulp (half the noise needed). Above,
      ``||w||^2`` overflows and the fit failed after the charge.
    * ``n gamma_m < tol`` with ``gamma_m = m 2**-53 / (1 - m 2**-53)`` and
      ``m = min(n, 1024) + ceil(log2(ceil(n / 1024))) + 2``: the certificate's
      summation bound ``gamma_m C kappa`` (:func:`~skdp.svm._solver._sum_error`:
      sums over blocks of 1024 rows, combined pairwise) is otherwise at least
      the radius, and every fit would spend its budget, then raise
      ``CertificationError``. At the default ``tol = 0.01`` this allows about
      ``8.5e10`` rows (``n (n + 1) 2**-52``, the bound of one unblocked sum,
      stopped at 6.7 million).

    All inputs are public (parameters and ``n``).
    """
    if not (radius >= _MIN_RADIUS and C * kappa <= _MAX_NORM and kappa <= _MAX_NORM):
        raise ValueError(
            f"C={C!r} with the feature-norm bound kappa={kappa!r} and n_samples={n_samples} is "
            f"outside what the certified solver handles in floating point (the radius tol C "
            f"kappa / n must be >= 2**-500, C kappa and kappa <= 2**200); nothing was spent. "
            f"Rescale C or data_norm.")
    floor = n_samples * _sum_error_factor(n_samples)
    if not tol > floor:
        raise ValueError(
            f"tol={tol!r} is below the rounding floor n gamma_m = {floor:.3g} of the "
            f"solver's certificate for n_samples={n_samples}: no fit could be certified; "
            "nothing was spent. Increase tol.")


def svm_sensitivity(C, n_samples, kappa, lipschitz=1.0):
    """L2 sensitivity of the exact SVM minimizer under replace-one neighbours.

    For ``P_D(w) = ||w||^2 / 2 + (C/n) sum_i s_i loss(y_i <w, phi(x_i)>)`` with
    a convex, ``L``-Lipschitz loss, ``||phi(x)|| <= kappa`` and row weights
    ``s_i`` in ``[0, 1]`` (1 without weights), the minimizers of two datasets
    differing in one row ``(x, y, s)`` satisfy
    ``||w_D - w_D'|| <= 2 L C kappa / n``.

    Rubinstein et al. (2012), Lemma 9 states ``4 L C kappa / n``: its proof uses the strong
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

    * ``"laplace"``: Laplace scale ``b = sqrt(F) Delta_2 / epsilon`` (Rubinstein et al. (2012),
      Thm. 10 and Cor. 12: the L1 sensitivity is at most ``sqrt(F)`` times the
      L2 sensitivity ``Delta_2`` in ``F = n_coef`` dimensions); pure
      ``epsilon``-DP. With ``Delta_2 = 2 C / n`` and ``F = 2 d_hat`` this is
      ``2^1.5 C sqrt(d_hat) / (epsilon n)``, half of Cor. 12's
      ``2^2.5 C sqrt(d_hat) / (epsilon n)`` (see :func:`svm_sensitivity`).
    * ``"gaussian"``: standard deviation of the analytic Gaussian mechanism
      (Balle and Wang 2018) for L2 sensitivity ``Delta_2``; ``(epsilon, delta)``-DP.

    Parameters
    ----------
    mechanism : {"laplace", "gaussian", "discrete_laplace", "discrete_gaussian"}
        Noise distribution; a discrete mechanism gets the scale of its
        continuous counterpart (the reference of :func:`svm_noise_granularity`).
    sensitivity : float
        L2 sensitivity ``Delta_2`` of the released weight vector.
    n_coef : int
        Its dimension ``F``.
    epsilon : float
        Privacy parameter (Rubinstein et al.'s (2012) ``beta``).
    delta : float
        Used by ``"gaussian"`` only.

    Returns
    -------
    scale : float
        Laplace scale or Gaussian standard deviation.
    """
    if mechanism in PURE_DP_MECHANISMS:
        return laplace_scale(math.sqrt(n_coef) * sensitivity, epsilon)
    return gaussian_sigma_analytic(sensitivity, epsilon, delta)


def noise_ratio(mechanism, n_coef, epsilon, delta):
    """Per-coordinate noise scale per unit of L2 sensitivity, from public quantities only.

    ``sqrt(F) / epsilon`` for the pure-DP mechanisms (Laplace on the L1 bound
    ``sqrt(F) Delta_2``, and the norm-Gamma noise of Chaudhuri et al. (2011),
    whose per-coordinate spread is about ``sqrt(F) Delta_2 / epsilon`` too);
    the analytic Gaussian's ``sigma / Delta_2`` (Balle and Wang 2018)
    otherwise (the discrete Gaussian adds 20-30% to it, ignored here). It
    drives the default regularization (:func:`default_regularization`) and
    never a noise scale.

    Parameters
    ----------
    mechanism : str
        ``"laplace"``, ``"discrete_laplace"`` or ``"l2_laplace"`` (pure DP);
        ``"gaussian"`` or ``"discrete_gaussian"``.
    n_coef : int
        Number of released coefficients ``F``.
    epsilon, delta : float
        One class problem's budget.

    Returns
    -------
    ratio : float
    """
    if mechanism in PURE_DP_MECHANISMS or mechanism == "l2_laplace":
        return math.sqrt(n_coef) / epsilon
    return gaussian_sigma_analytic(1.0, epsilon, delta)


def class_noise_ratio(mechanism, n_coef, budget):
    """:func:`noise_ratio` of one class problem of a one-vs-rest fit.

    ``budget`` is the classes' :class:`~skdp.utils._multiclass.OneVsRestBudget`:
    the Gaussian-type mechanisms get the joint release's noise per unit of
    one problem's sensitivity (``sqrt(K)`` times the Gaussian ratio at the
    whole budget), the pure-DP ones the even split's. With one problem this is
    ``noise_ratio`` at the budget.
    """
    if mechanism in ("gaussian", "discrete_gaussian"):
        factor, epsilon, delta = budget.gaussian()
        return factor * noise_ratio(mechanism, n_coef, epsilon, delta)
    return noise_ratio(mechanism, n_coef, budget.epsilon, budget.delta)


# Cap of n Lambda / kappa^2 in default_regularization: beyond it the model is the mean of
# y x shrunk to nothing anyway, and a larger Lambda only pushes the minimizer (about
# 1 / Lambda) towards the subnormal range, where no certificate holds.
_MAX_SCALED_REGULARIZATION = 1e12


def default_regularization(n_samples, kappa, ratio, multiplier, floor):
    """Default ridge strength ``Lambda = kappa^2 min(1e12, max(floor, multiplier ratio)) / n``.

    The strength of ``(Lambda / 2) ||w||^2`` next to the mean loss (``1 / C``
    in the SVMs' parametrization ``||w||^2 / 2 + (C / n) sum loss``). Every
    input is public (``n``, the row-norm bound ``kappa``, the budget through
    ``ratio``, :func:`noise_ratio`), so the value is a hyperparameter: it
    enters the sensitivity exactly as a user-given one would. ``n Lambda /
    kappa^2`` is scale-free (rows and weights rescaled together leave every
    margin unchanged); ``floor`` is its non-private limit (the value that
    reproduces scikit-learn's default ``C = 1`` on rows of norm ``kappa``)
    and ``multiplier ratio`` keeps the output noise of the released weights
    a fixed fraction of their scale. The constants are derived in the user
    guide (SVMs and perturbation methods). The cap ``1e12`` only binds at an
    epsilon below about ``1e-11`` (a useless model), where a larger value
    would push the minimizer into the subnormal range.

    Returns
    -------
    Lambda : float
    """
    scaled = min(_MAX_SCALED_REGULARIZATION, max(floor, multiplier * ratio))
    return kappa * kappa * scaled / n_samples


def svm_noise_granularity(scale, weight_bound):
    """Public power-of-two grid ``g`` of the weights released by the discrete mechanisms.

    ``g`` is the largest power of two at most ``scale * 2**-30`` (``scale``:
    the continuous mechanism's noise scale), raised if needed to ``2**(e - 52)``
    where ``2**(e-1) <= weight_bound < 2**e`` (so ``2**52 g > weight_bound``). Both inputs are
    data-independent (``C``, ``n``, ``kappa``, ``tol``, the budget, the loss),
    so ``g`` is public.

    * Rounding term. On the grid the noise is calibrated to
      ``ceil(Delta_1 / g) + F - 1`` steps (L1) or about ``Delta_2 / g +
      sqrt(F)`` (L2) (:func:`~skdp.mechanisms.discrete_laplace_scale`,
      :func:`~skdp.mechanisms.discrete_gaussian_sigma2`), where
      ``Delta / g >= 2**30 epsilon`` (Laplace) or ``~ 2**30 / sqrt(2 ln(1.25/delta))``
      times ``epsilon`` (Gaussian). The extra noise is a relative ``F / (epsilon
      2**30)`` for the Laplace mechanism (``1e-5`` at ``F = 10**4``, ``epsilon = 0.001``)
      and ``~ 5 sqrt(F) / (epsilon 2**30)`` for the Gaussian: negligible.
      (``2**-20`` would cost ``F / (epsilon 2**20)``, 10% at ``F = 10**4``,
      ``epsilon = 0.1``, the budget of each of 10 classes at ``epsilon = 1``.)
    * Fast sampler. The noise is then about ``2**30`` grid steps (discrete
      Laplace scale ``2**30 + F / epsilon``; discrete Gaussian sigma about
      ``2**30``), inside the vectorized exact samplers' range (``t <= 2**62``,
      ``sigma < 2**62``): millions of draws per second.
    * Clamping never binds. Grid indices are clamped to ``+-2**52``
      (:class:`~skdp.mechanisms.DiscreteLaplaceMechanism`); ``weight_bound``
      bounds every certified solution's norm, so the clamp never changes a
      weight before the noise.

    Parameters
    ----------
    scale : float
        Continuous noise scale (:func:`svm_noise_scale`), ``> 0``.
    weight_bound : float
        Data-independent bound on the norm of the weight vector, ``> 0``.

    Returns
    -------
    granularity : float
        A power of two.
    """
    _, exponent = math.frexp(scale)  # scale in [2**(exponent - 1), 2**exponent)
    granularity = math.ldexp(1.0, exponent - 1 - GRID_BITS)
    _, exponent = math.frexp(weight_bound)  # weight_bound <= 2**exponent
    return max(granularity, math.ldexp(1.0, exponent - _MAX_GRID_INDEX.bit_length() + 1))


def svm_discrete_noise(mechanism, sensitivity, n_coef, epsilon, delta, granularity):
    """Exact noise parameter, in grid steps, of a discrete mechanism on the weight vector.

    Parameters
    ----------
    mechanism : {"discrete_laplace", "discrete_gaussian"}
        Noise distribution.
    sensitivity : float
        L2 sensitivity ``Delta_2`` of the weight vector.
    n_coef : int
        Its dimension ``F``.
    epsilon, delta : float
        Budget of the release (``delta`` used by ``"discrete_gaussian"`` only).
    granularity : float
        The grid ``g`` (:func:`svm_noise_granularity`).

    Returns
    -------
    parameter : fractions.Fraction
        Discrete Laplace scale ``t`` or discrete Gaussian ``sigma^2``, in grid steps.

    Notes
    -----
    ``sensitivity`` is first raised by a relative ``2**-40`` (fixed, so
    data-independent): it and ``sqrt(F)`` times it are float results, each a
    few round-offs of ``2**-53`` below the exact bound at worst, and the
    grid's ``ceil`` would otherwise lose a step when the exact bound lies just
    above an integer number of steps.
    """
    # Data-independent upward rounding of the float Delta_2 and sqrt(F) Delta_2 (Notes).
    sensitivity *= 1.0 + 2.0**-40
    if mechanism == "discrete_laplace":
        # Rubinstein et al. (2012), Thm. 10: L1 sensitivity <= sqrt(F) Delta_2; on the grid it becomes
        # ceil(sqrt(F) Delta_2 / g) + F - 1 steps, and the discrete Laplace (CKS Alg. 2,
        # the geometric mechanism) of scale t = that / epsilon is epsilon-DP.
        return discrete_laplace_scale(math.sqrt(n_coef) * sensitivity, epsilon, granularity,
                                      n_coef)
    # CKS Sec. 2 (discrete Gaussian, rho = Delta^2 / (2 sigma^2)-zCDP, added over the F
    # coordinates) with the grid L2 bound of Delta_2 (Rubinstein et al. (2012), Lemma 9, tightened) and
    # zCDP -> (epsilon, delta) by CKS Cor. 13 (zcdp_for_dp).
    return discrete_gaussian_sigma2(sensitivity, epsilon, delta, granularity, n_coef)


class BasePrivateSVM(DPEstimatorMixin, PrivateLinearClassifierMixin, ClassifierMixin,
                     BaseEstimator):
    """Validation, budget, one-vs-rest, certified solve and output noise.

    Subclasses implement ``_check_feature_params()``,
    ``_public_shape(X, part) -> (n_coef, kappa)`` (the coefficient count and the
    feature-norm bound, from the parameters, ``X``'s shape and one class
    problem's budget ``part`` only),
    ``_features(X, rng) -> (features, fitted)`` and turn the fitted
    weight vectors (and ``fitted``, anything the feature step must keep) into
    attributes in ``_set_model(W, fitted)``. ``classes_`` and the model
    attributes are only set once every parameter is valid and every class
    problem is certified, so a failed fit or refit leaves no model of its own
    behind (a previous fit's model stays whole; ``validate_data`` still
    records the new ``n_features_in_``, as in scikit-learn).
    """

    def _check_svm_params(self):
        if isinstance(self.C, str):
            if self.C != "auto":
                raise ValueError(f"C must be 'auto' or a real number > 0, got {self.C!r}.")
            C = None  # resolved in fit from public quantities (_default_C)
        else:
            C = check_real(self.C, "C", low=0.0, low_inclusive=False)
        check_option(self.loss, "loss", LOSSES)
        huber_h = HuberSVMLoss(self.huber_h).h
        check_option(self.mechanism, "mechanism", MECHANISMS)
        tol = check_real(self.tol, "tol", low=0.0, low_inclusive=False)
        max_iter = check_positive_int(self.max_iter, "max_iter")
        check_mechanism_delta(self.mechanism, self.delta, PURE_DP_MECHANISMS)
        return C, huber_h, tol, max_iter

    # C="auto" (_default_C): n / (C kappa^2) = max(_C_FLOOR, m_K * noise_ratio) with
    # m_K = _C_MULTIPLIER for binary problems (derived on the real-data derive tables) and
    # _C_MULTICLASS_MULTIPLIER * K^2 for K > 2 classes (generated K-class data and digits);
    # user guide, SVMs and perturbation methods.
    _C_MULTIPLIER = 4.0
    _C_MULTICLASS_MULTIPLIER = 4.0
    _C_FLOOR = 1.0

    def _C_multiplier(self, n_classes):
        """``m_K`` of ``C="auto"``: ``4`` for two classes, ``c K^2`` for ``K > 2`` (public ``K``)."""
        if n_classes <= 2:
            return self._C_MULTIPLIER
        return self._C_MULTICLASS_MULTIPLIER * n_classes * n_classes

    def _default_C(self, n_samples, n_coef, kappa, part, n_classes=2):
        """``C="auto"``: ``1 / default_regularization(...)``, from public quantities only.

        ``n``, the coefficient count, the feature-norm bound ``kappa``, one
        class problem's budget ``part`` and the number of classes ``K``: the
        value is fixed before the charge and enters the sensitivity
        ``2 C kappa / n`` exactly as a given ``C``.
        """
        ratio = class_noise_ratio(self.mechanism, n_coef, part)
        return 1.0 / default_regularization(n_samples, kappa, ratio,
                                            self._C_multiplier(n_classes), self._C_FLOOR)

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
            Weights above 1 are clipped to 1 (silently), because the
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
        allow_zero_delta = self.mechanism in PURE_DP_MECHANISMS
        n_samples = X.shape[0]
        # The whole calibration reads public quantities only (the budget, n, the
        # coefficient count and kernel bound fixed by the parameters), so it runs before
        # the charge: a noise that cannot be calibrated fails with nothing spent.
        budget = self._resolve_budget(n_samples, allow_zero_delta=allow_zero_delta)
        # One-vs-rest: the Gaussian-type noise of the K weight vectors is one release of L2
        # sensitivity sqrt(K) Delta_2 at the whole budget; pure-DP noise splits it evenly
        # (OneVsRestBudget; the joint L1 sensitivity K Delta_1 would cost the same).
        part = OneVsRestBudget(budget, 1 if n_classes == 2 else n_classes,
                               self._multiclass_accounting == "joint")
        gaussian = self.mechanism in ("gaussian", "discrete_gaussian")
        n_joint = part.accounted()[2] if gaussian else 1
        factor, epsilon, delta = (part.gaussian() if gaussian
                                  else (1.0, part.epsilon, part.delta))
        n_coef, kappa = self._public_shape(X, part)
        if C is None:
            C = self._default_C(n_samples, n_coef, kappa, part, n_classes)

        # Weights in [0, 1] keep this bound: the replaced row's weighted loss is still
        # L kappa-Lipschitz in w and the regularizer's strong convexity does not depend on
        # the weights (see svm_sensitivity). n_samples counts zero-weight rows too.
        exact = svm_sensitivity(C, n_samples, kappa)
        # A certified solver lands within `radius` of the exact minimizer on
        # every dataset, so released points differ by at most exact + 2 radius.
        radius = 0.5 * tol * exact
        try:
            _check_float_range(C, kappa, n_samples, tol, radius)
        except ValueError as error:
            if self.C != "auto":
                raise
            raise ValueError(
                f"{error} (C='auto' gave C={C!r} for epsilon={part.epsilon!r} per class "
                "problem: use a larger epsilon or pass C.)") from None
        sensitivity = exact + 2.0 * radius
        scale = svm_noise_scale(self.mechanism, factor * sensitivity, n_coef, epsilon, delta)
        if not math.isfinite(scale):  # would release coef_ = +-inf (or nan)
            raise ValueError(
                f"epsilon={epsilon!r} per release is too small for the output noise "
                f"of sensitivity {sensitivity:.3g}: its scale overflows; nothing was spent. "
                "Use a larger epsilon or a smaller C.")
        discrete = self.mechanism.startswith("discrete_")
        granularity = parameter = None
        if discrete:
            # ||w*||^2 / 2 <= P(w*) <= P(0) <= C loss(0) (weights <= 1), plus the certificate.
            loss_at_0 = 1.0 if self.loss == "hinge" else float(HuberSVMLoss(huber_h).value(0.0))
            granularity = svm_noise_granularity(scale, math.sqrt(2.0 * C * loss_at_0) + radius)
            grid = _check_granularity(granularity)
            parameter = check_grid_noise_parameter(
                self.mechanism,
                # K vectors on the grid together: squared shifts add, sigma^2 is K times
                # one vector's (CKS Sec. 2); n_joint = 1 for the pure-DP Laplace.
                svm_discrete_noise(self.mechanism, sensitivity, n_coef, epsilon, delta,
                                   granularity) * n_joint,
                f"epsilon={epsilon!r} per release")
            # In value units: the discrete Laplace scale t g or the discrete Gaussian's sigma g.
            steps = parameter if self.mechanism == "discrete_laplace" else math.sqrt(parameter)
            scale = float(steps) * granularity

        event = None
        if self.mechanism == "gaussian":
            # K Gaussian releases of L2 sensitivity `sensitivity`, std `scale` each: jointly
            # one release of sensitivity sqrt(K) sensitivity, the same event
            # (skdp.accounting._events conventions).
            event = dp_accounting.SelfComposedDpEvent(
                dp_accounting.GaussianDpEvent(self._noise_multiplier * scale / sensitivity),
                part.n_problems)
        budget, rng = self._start_private_fit(n_samples, allow_zero_delta=allow_zero_delta,
                                              event=event)
        # Separate streams: the released feature map must not reveal the noise.
        # (spawn_random_states, not rng.spawn: a Generator without a SeedSequence cannot spawn.)
        map_rng, noise_rng = spawn_random_states(rng, 2)
        features, fitted = self._features(X, map_rng)
        assert features.shape[1] == n_coef, "_public_shape disagrees with _features"
        name = type(self).__name__
        targets = classes[1:] if n_classes == 2 else classes
        if verbose:
            print(f"[{name}] {len(targets)} class problem(s) on {n_samples} rows and {n_coef} "
                  f"coefficients, {part}: "
                  f"sensitivity {sensitivity:.4g}, {self.mechanism} noise scale {scale:.4g}"
                  + (f" on the grid {granularity:.4g} * Z" if discrete else ""))

        def fit_binary(F, y_pm1, child_rng):
            sol = solve_svm_certified(F, y_pm1, C, loss=self.loss, huber_h=huber_h,
                                      radius=radius, max_iter=max_iter,
                                      sample_weight=sample_weight, norm_bound=kappa)
            if discrete:
                # Exact integer noise on the public grid g Z (CKS Algorithms 2 and 3):
                # g * (round(w / g) + Z), safe against floating-point attacks.
                multiplier = Fraction(self._noise_multiplier)
                if self.mechanism == "discrete_laplace":
                    noise = sample_discrete_laplace(parameter * multiplier, n_coef, child_rng)
                else:
                    noise = sample_discrete_gaussian(parameter * multiplier**2, n_coef,
                                                     child_rng)
                return _grid_release(_grid_indices(sol.coef, grid), noise, grid), sol
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
        self.C_ = C
        self.sensitivity_, self.noise_scale_ = sensitivity, scale
        self.noise_granularity_ = granularity
        self.certified_distance_ = max(sol.distance_bound for _, sol in results)
        self.n_iter_ = max(sol.n_iter for _, sol in results)
        self.privacy_spent_ = budget
        return self

    # Test hook: the audit's deliberately under-noised copy sets this below 1.
    _noise_multiplier = 1.0
    # "joint": the Gaussian-type noise of the K one-vs-rest vectors is one release
    # (OneVsRestBudget); "split": basic composition, (epsilon / K, delta / K) each.
    _multiclass_accounting = "joint"
    _non_private_attributes = ("certified_distance_", "n_iter_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
