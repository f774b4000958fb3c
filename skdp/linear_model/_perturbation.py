"""Output and objective perturbation for L2-regularized ERM (Chaudhuri et al. (2011), Alg. 1 and 2).

Chaudhuri, Monteleoni and Sarwate (2011). Both release a linear model of the
regularized empirical risk ``(1/n) sum_i l(y_i <x_i, w>) + (Lambda/2) ||w||^2``
with pure epsilon-DP, using noise vectors whose density is proportional to
``exp(-||b|| / scale)``: a uniformly random direction times a
``Gamma(d, scale)``-distributed norm.

Neither mechanism may rest on a solver stopped early. Both minimize to a
*certified* gradient norm ``tol`` (:func:`~skdp.linear_model._solvers.minimize_certified`);
because the objective is ``Lambda``-strongly convex, ``||grad F(w)|| <= tol``
implies ``||w - w_exact|| <= tol / Lambda``, and that distance is paid for in
the sensitivity of the released vector (see each class' Privacy section).
"""

import math

import numpy as np

from skdp.linear_model._losses import get_loss
from skdp.linear_model._multinomial import MultinomialLoss, MultinomialObjective
from skdp.linear_model._objective import GLMObjective
from skdp.linear_model._private_glm import (
    MULTI_CLASS,
    PrivateGLMClassifier,
    calibrate_before_charge,
    chooses_softmax,
    fill_glm_doc,
    release_on_grid,
)
from skdp.linear_model._solvers import minimize_certified
from skdp.mechanisms._discrete import check_grid_noise_parameter
from skdp.svm._base import (
    class_noise_ratio,
    default_regularization,
    svm_discrete_noise,
    svm_noise_granularity,
    svm_noise_scale,
)
from skdp.utils._clipping import clip_rows_l2
from skdp.utils._validation import (
    check_mechanism_delta,
    check_option,
    check_positive_int,
    check_real,
)

__all__ = [
    "ObjectivePerturbationClassifier",
    "OutputPerturbationClassifier",
    "objective_perturbation_terms",
    "output_perturbation_discrete_noise",
    "output_perturbation_sensitivity",
    "output_perturbation_softmax_sensitivity",
    "sample_l2_laplace",
]


def sample_l2_laplace(n_features, scale, rng, size=None):
    """Draw vectors with density proportional to ``exp(-||b||_2 / scale)``.

    Chaudhuri et al. (2011), Alg. 1 step 1 and Alg. 2 step 2: such a vector is a uniformly
    random unit direction times a norm drawn from ``Gamma(shape=d, scale)``
    (the radial density of ``exp(-r / scale)`` in ``d`` dimensions is
    ``r^(d-1) exp(-r / scale)``). In one dimension it is ``Laplace(scale)``.

    Parameters
    ----------
    n_features : int
        Dimension ``d``.
    scale : float
        ``1 / beta`` in the paper's notation, > 0.
    rng : numpy.random.Generator
        Noise source.
    size : int or None, default=None
        Number of vectors; ``None`` returns one vector of shape ``(d,)``.

    Returns
    -------
    b : ndarray of shape (d,) or (size, d)
    """
    shape = (1 if size is None else size, n_features)
    direction = rng.standard_normal(shape)
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    norms = rng.gamma(shape=n_features, scale=scale, size=(shape[0], 1))
    out = direction * norms
    return out[0] if size is None else out


# The norm of a sample_l2_laplace draw is Gamma(d, scale): above 64 d scale with
# probability below 1e-25 (Chernoff: (64 e^-63)^d).
_NORM_TAIL = 64.0


def _check_l2_laplace_scale(scale, n_coef):
    """``scale``, or ``OverflowError`` if a norm-Gamma draw of it may overflow.

    For :func:`~skdp.linear_model._private_glm.calibrate_before_charge`, which
    also refuses a scale that underflows (zero noise is no privacy).
    """
    if not math.isfinite(_NORM_TAIL * n_coef * scale):
        raise OverflowError(f"a noise norm Gamma({n_coef}, scale={scale:g}) may overflow")
    return scale


def output_perturbation_sensitivity(n_samples, data_norm, alpha, tol):
    """L2 sensitivity of the certified regularized-ERM minimizer (Chaudhuri et al. (2011), Alg. 1, corrected).

    Chaudhuri et al. (2011), Corollary 1: for ``Lambda``-strongly convex regularized ERM
    with a loss whose gradient in ``w`` has norm at most ``R`` (``|l'| <= 1``
    and ``||x|| <= R``), the exact minimizers on replace-one neighbours are
    within ``2 R / (n Lambda)`` (the paper states ``2 / (n Lambda)`` for
    ``R = 1``). The released point is only certified to ``||grad|| <= tol``,
    i.e. within ``tol / Lambda`` of the exact minimizer on each dataset, so
    the triangle inequality adds ``2 tol / Lambda``.

    Returns
    -------
    sensitivity : float
        ``2 R / (n Lambda) + 2 tol / Lambda``.
    """
    return 2.0 * data_norm / (n_samples * alpha) + 2.0 * tol / alpha


def output_perturbation_softmax_sensitivity(n_samples, data_norm, alpha, tol, n_classes):
    """Frobenius sensitivity of the certified softmax minimizer (Chaudhuri et al. (2011), Cor. 1).

    The minimizer ``W`` (``K x d``) of ``(1/n) sum_i l(W; x_i, y_i) +
    (Lambda/2) ||W||_F^2`` with the softmax loss ``l``. Chaudhuri et al.
    (2011), Cor. 1 (its proof, Lemma 7, applied to ``W`` flattened into
    ``K d`` coordinates): the difference of the neighbours' objectives has a
    gradient of norm at most ``2 L / n``, with ``L`` the loss' Lipschitz
    constant in ``W`` (row weights in ``[0, 1]`` do not raise it), and the
    objectives are ``Lambda``-strongly convex, so the exact minimizers are
    within ``2 L / (n Lambda)``. For the softmax loss ``L = sqrt(2) R`` on
    rows of norm ``R`` (``||(p - e_y) x^T||_F <= sqrt(2) ||x||``,
    :class:`~skdp.linear_model._multinomial.MultinomialLoss`). The solver
    certifies ``||grad||_F <= tol``, which adds ``2 tol / Lambda`` as in
    :func:`output_perturbation_sensitivity`.

    Returns
    -------
    sensitivity : float
        ``2 sqrt(2) R / (n Lambda) + 2 tol / Lambda``.
    """
    lipschitz = MultinomialLoss(n_classes).lipschitz(data_norm)
    # Chaudhuri et al. (2011), Cor. 1 with L = sqrt(2) R in place of R, plus the certificate.
    return output_perturbation_sensitivity(n_samples, lipschitz, alpha, tol)


# Noise of OutputPerturbationClassifier; the pure-DP ones spend no delta.
OUTPUT_MECHANISMS = ("l2_laplace", "discrete_laplace", "discrete_gaussian")
PURE_DP_OUTPUT_MECHANISMS = ("l2_laplace", "discrete_laplace")


def output_perturbation_discrete_noise(mechanism, sensitivity, n_coef, epsilon, delta,
                                       weight_bound, n_problems=1):
    """Grid and exact noise of OutputPerturbationClassifier's discrete mechanisms.

    The released weights are ``g (round(w / g) + Z)`` with ``Z`` exact integer
    noise (Canonne, Kamath and Steinke 2020, "CKS") on a public power-of-two
    grid ``g``: the largest power of two at most ``2**-30`` times the
    continuous counterpart's per-coordinate scale (``sqrt(F) Delta_2 /
    epsilon`` Laplace, or the analytic Gaussian's sigma), raised if needed so
    that ``2**52 g`` covers ``weight_bound``
    (:func:`~skdp.svm._base.svm_noise_granularity`); every input is public.

    * ``"discrete_laplace"`` (pure ``epsilon``-DP): the L1 sensitivity of
      the minimizer is at most ``sqrt(F)`` times its L2 sensitivity
      ``Delta_2`` (Chaudhuri et al. (2011), Cor. 1, with the certified-solver correction of
      :func:`output_perturbation_sensitivity`); on the grid it is
      ``ceil(sqrt(F) Delta_2 / g) + F - 1`` steps, and per-coordinate
      discrete Laplace noise of scale ``t`` = that ``/ epsilon`` (CKS Alg. 2,
      the geometric mechanism) is ``epsilon``-DP.
    * ``"discrete_gaussian"`` (``(epsilon, delta)``-DP): ``sigma^2 =
      Delta_g^2 / (2 rho)`` grid steps squared, ``Delta_g^2 <= (Delta_2 / g +
      sqrt(F))^2`` the rounded minimizer's squared L2 shift and ``rho`` the
      zCDP budget of ``(epsilon, delta)`` (CKS, Cor. 13).

    Parameters
    ----------
    mechanism : {"discrete_laplace", "discrete_gaussian"}
        Noise distribution.
    sensitivity : float
        L2 sensitivity ``Delta_2`` of the released weight vector.
    n_coef : int
        Its dimension ``F``.
    epsilon, delta : float
        Budget of the release (``delta`` used by ``"discrete_gaussian"`` only).
    weight_bound : float
        Data-independent bound on the weights' L2 norm.
    n_problems : int, default=1
        ``K`` vectors of this sensitivity released together at ``(epsilon,
        delta)`` (one-vs-rest on the same rows, ``"discrete_gaussian"``
        only): the concatenation's squared grid shift is at most ``K
        Delta_g^2``, so ``sigma^2`` is ``K`` times one vector's.

    Returns
    -------
    granularity : float
        The grid ``g``, a power of two.
    parameter : fractions.Fraction
        Discrete Laplace ``t`` or discrete Gaussian ``sigma^2``, in grid steps.
    scale : float
        ``t g`` or ``sigma g``: the noise scale in the weights' units.

    Raises
    ------
    ValueError
        If ``t`` or ``sigma`` exceeds ``2**52`` grid steps (a vanishing
        ``epsilon``; :func:`~skdp.mechanisms._discrete.check_grid_noise_parameter`).
    """
    if n_problems != 1 and mechanism != "discrete_gaussian":
        raise ValueError("Only the discrete Gaussian releases several vectors jointly.")
    reference = svm_noise_scale(mechanism, math.sqrt(n_problems) * sensitivity, n_coef,
                                epsilon, delta)
    granularity = svm_noise_granularity(reference, weight_bound)
    # Chaudhuri et al. (2011), Alg. 1 (sensitivity corrected, see output_perturbation_sensitivity) with
    # exact integer noise on the grid: discrete Laplace on the L1 bound sqrt(F) Delta_2
    # plus the grid term (CKS Alg. 2), or discrete Gaussian on the grid's L2 bound with
    # CKS zCDP -> (epsilon, delta) by CKS Cor. 13 (svm_discrete_noise).
    parameter = svm_discrete_noise(mechanism, sensitivity, n_coef, epsilon, delta, granularity)
    # K vectors released together (one-vs-rest): squared grid shifts add over the
    # concatenation, K Delta_g^2, and sigma^2 = K Delta_g^2 / (2 rho) (CKS Sec. 2: Renyi
    # divergences of independent coordinates add; an exact rational product).
    parameter = parameter * n_problems
    check_grid_noise_parameter(mechanism, parameter, f"epsilon={epsilon!r}")
    steps = parameter if mechanism == "discrete_laplace" else math.sqrt(parameter)
    return granularity, parameter, float(steps) * granularity


def objective_perturbation_terms(epsilon, n_samples, alpha, smoothness, data_norm):
    """Privacy terms of objective perturbation (Chaudhuri et al. (2011), Alg. 2, steps 1-3, tightened).

    With ``c`` the smoothness of the loss in ``w`` on rows of norm ``R``
    (``c = R^2/4`` logistic, ``R^2/(2h)`` Huber; the paper's ``c`` is for
    ``R = 1``):

    - if ``log(1 + c/(n Lambda)) < epsilon / 2`` (the paper's condition for
      ``Delta = 0``): ``Delta = 0`` and ``epsilon' = epsilon - log(1 + c/(n Lambda))``;
    - otherwise the paper's ``Delta = c / (n (e^(epsilon/4) - 1)) - Lambda``,
      whose Jacobian term is ``epsilon / 4``, so ``epsilon' = 3 epsilon / 4``;
    - ``b`` has density proportional to ``exp(-beta ||b||)`` with
      ``beta = epsilon' / (2 R)`` (the paper's ``epsilon'/2`` for ``R = 1``: the
      gradient of one example's loss has norm at most ``R``, so ``b`` moves by
      at most ``2 R`` between replace-one neighbours).

    The paper charges ``log(1 + 2c/(n Lambda) + c^2/(n Lambda)^2)``, twice the
    log-determinant term used here; the tighter term is proven in the Notes of
    :class:`ObjectivePerturbationClassifier` and is attained by a
    neighbouring pair, so it cannot be lowered further. The regularization
    ``Lambda + Delta`` is the paper's in every case and ``epsilon'`` is larger
    (at least ``epsilon / 2`` where the paper's can be arbitrarily close to 0,
    ``3 epsilon / 4`` where the paper's is ``epsilon / 2``): less noise, same
    objective. (Taking ``Delta`` from ``e^(epsilon/2)`` instead, for
    ``epsilon' = epsilon / 2``, regularizes less and was measured less
    accurate on Synthetic-L with the Huber loss.)

    Returns
    -------
    epsilon_prime : float
        The part of epsilon spent on the density of ``b``.
    extra_reg : float
        ``Delta``, added to ``Lambda``.
    noise_scale : float
        ``1 / beta = 2 R / epsilon'``.
    """
    # Chaudhuri et al. (2011), Alg. 2 steps 1-3 with the Jacobian ratio |det(I + E)| bounded by
    # 1 + c/(n Lambda) instead of (1 + c/(n Lambda))^2: the neighbours' Hessians
    # are M + A and M + B with A, B PSD rank one and M >= n Lambda I, so by the
    # matrix determinant lemma det(M + A) / det(M + B) <= det(M + A) / det(M)
    # = 1 + a' M^-1 a <= 1 + c / (n Lambda) (Notes of ObjectivePerturbationClassifier).
    log_term = math.log1p(smoothness / (n_samples * alpha))
    extra_reg = 0.0
    if log_term < epsilon / 2.0:  # the paper's branch condition: its epsilon' > 0
        epsilon_prime = epsilon - log_term
    else:
        # The paper's Delta: log(1 + c / (n (Lambda + Delta))) = epsilon / 4 (half of
        # its epsilon / 2), so epsilon' = 3 epsilon / 4 at the paper's regularization.
        extra_reg = smoothness / (n_samples * math.expm1(epsilon / 4.0)) - alpha
        epsilon_prime = 0.75 * epsilon
    return epsilon_prime, extra_reg, 2.0 * data_norm / epsilon_prime


# The certificate's absolute floor from subnormal rounding is about sqrt(d 2**-1074), i.e.
# 2**-537 sqrt(d) (skdp.linear_model._certificate): a smaller tol is never certified.
_MIN_TOL = 2.0**-500


# Default ridge strength alpha="auto" (default_regularization): n alpha / data_norm^2 is
# max(_ALPHA_FLOOR, multiplier * noise_ratio) per class problem. The floor 1/2 is
# LogisticRegression(C=1) on unit-norm rows whose intercept column halves the squared norm
# (clipping [x, 1] to data_norm); the multipliers were fitted on the derive tables (see
# the user guide, SVMs and perturbation methods).
_ALPHA_FLOOR = 0.5
_OBJECTIVE_MULTIPLIER = 0.4
_OUTPUT_MULTIPLIER = 4.0
# OutputPerturbationClassifier's softmax fit (K > 2 classes, one problem of K d coefficients):
# the multiplier is 2 K, fitted on generated data with K = 3..10 and digits (the user guide,
# "Output perturbation: the softmax fit").
_SOFTMAX_MULTIPLIER = 2.0


def _softmax_multiplier(n_classes):
    """Multiplier ``2 K`` of the default ``alpha`` of a softmax fit of ``K = n_classes`` classes."""
    return _SOFTMAX_MULTIPLIER * n_classes


def _check_alpha(alpha):
    """``None`` for ``"auto"`` (resolved by :func:`_resolve_alpha` in ``_prepare``)."""
    if isinstance(alpha, str):
        if alpha == "auto":
            return None
        raise ValueError(f"alpha must be 'auto' or a real number > 0, got {alpha!r}.")
    return check_real(alpha, "alpha", low=0.0, low_inclusive=False)


def _resolve_alpha(est, settings, budget, mechanism, multiplier):
    """Fill ``settings["alpha"]`` for ``alpha="auto"`` from public quantities only.

    ``n``, ``data_norm``, the number of coefficients and one class problem's
    ``(epsilon, delta)``: the value is fixed before the budget is charged and
    enters every sensitivity exactly as a user-given ``alpha`` does. A softmax
    fit (``settings["n_classes"]`` set) is one problem of ``K d`` coefficients.
    """
    if settings["alpha"] is None:
        n_classes = settings.get("n_classes")
        n_coef = est._n_coef(settings)
        ratio = class_noise_ratio(mechanism, n_coef, budget)
        if n_classes:
            multiplier = _softmax_multiplier(n_classes)
        settings["alpha"] = default_regularization(settings["n_samples"], settings["data_norm"],
                                                   ratio, multiplier, _ALPHA_FLOOR)
    return settings["alpha"]


def _check_solver_params(est, n_samples):
    alpha = _check_alpha(est.alpha)
    if est.tol is None:
        tol = 1e-5 * float(est.data_norm) / n_samples
    else:
        tol = check_real(est.tol, "tol", low=0.0, low_inclusive=False)
    if not tol >= _MIN_TOL:
        raise ValueError(
            f"tol={tol:g} (1e-5 data_norm / n_samples when tol=None) is below 2**-500, "
            "under the floating-point floor of the solver's certificate: no fit could be "
            "certified. Rescale the features (and data_norm) or pass a larger tol. Nothing "
            "was spent.")
    max_iter = check_positive_int(est.max_iter, "max_iter")
    if not isinstance(est.solver, str):
        raise TypeError(f"solver must be a string, got {est.solver!r}.")
    return {"alpha": alpha, "tol": tol, "max_iter": max_iter, "n_samples": n_samples,
            "data_norm": float(est.data_norm)}


def _certified_minimizer(X, y, loss, reg, b, settings, solver, sample_weight):
    objective = GLMObjective(X, y, loss, reg, b, sample_weight)
    return minimize_certified(objective, np.zeros(X.shape[1]), gamma=settings["tol"],
                              max_iter=settings["max_iter"], solver=solver)


@fill_glm_doc
class OutputPerturbationClassifier(PrivateGLMClassifier):
    """Output perturbation: the regularized ERM minimizer plus norm-Gamma noise.

    Chaudhuri, Monteleoni and Sarwate 2011, Alg. 1: minimize the
    L2-regularized mean loss, then add a noise vector with density
    proportional to ``exp(-||b|| / scale)``, ``scale = sensitivity / epsilon``
    (or, with a ``"discrete_"`` mechanism, exact integer noise on a public
    grid).

    Parameters
    ----------
    %(epsilon)s
    delta : float, default=0.0
        ``0`` for the pure-DP mechanisms (any other value is refused); in
        ``(0, 1)`` for ``"discrete_gaussian"``, well below ``1 / n_samples``.
    %(loss)s
    %(data_norm)s
    %(ridge)s
    multi_class : {"auto", "multinomial", "ovr"}, default="auto"
        With more than two classes: ``"multinomial"`` releases one
        regularized softmax (multinomial logistic) minimizer, the ``K``
        weight vectors together, at the whole budget; ``"ovr"`` releases
        ``K`` one-vs-rest minimizers that share the budget (see Privacy).
        ``"auto"``: ``"multinomial"`` for ``loss="logistic"``, else
        ``"ovr"``. ``"multinomial"`` with the Huber loss is refused before
        the budget is charged.
    mechanism : {"l2_laplace", "discrete_laplace", "discrete_gaussian"}, \
default="l2_laplace"
        Output noise. ``"l2_laplace"`` is Chaudhuri et al.'s (2011)
        floating-point noise of density proportional to ``exp(-epsilon ||b||
        / sensitivity)`` (pure DP). The ``"discrete_"`` variants release the
        weights on a public power-of-two grid (``noise_granularity_``) with
        exact integer noise, safe against floating-point attacks:
        ``"discrete_laplace"`` (pure DP; its noise per coordinate grows like
        ``sqrt(d)``) and ``"discrete_gaussian"`` (needs ``delta > 0``;
        calibrated through zCDP, and with many classes far less noisy, see
        Privacy).
    tol : float or None, default=None
        Certified bound on the gradient norm of the released minimizer.
        ``None`` uses ``1e-5 * data_norm / n_samples`` (adds 0.001% to the
        sensitivity). A solver that cannot certify it raises
        :class:`~skdp.exceptions.CertificationError` (after the charge) and
        releases nothing; a ``tol`` below ``2**-500``, under the certificate's
        floating-point floor, is refused before the charge.
    %(certified_solver)s
    %(classes)s
    %(class_weight)s
    %(n_jobs)s
    %(random_state)s
    %(accountant)s
    %(verbose)s

    Attributes
    ----------
    %(linear_attributes)s
    alpha_ : float
        The regularization strength used: ``alpha``, or for ``"auto"``
        ``data_norm**2 * max(1/2, 4 * r) / n_samples`` with ``r`` the noise
        per coordinate per unit sensitivity of one class problem
        (``sqrt(n_coef) / epsilon_k`` for the pure-DP mechanisms,
        ``epsilon_k`` one class problem's share; the analytic Gaussian's for
        ``"discrete_gaussian"``). A softmax fit is one problem of ``K n_coef``
        coefficients at the whole budget, with the multiplier
        ``2 K`` in place of 4 (the user guide derives it).
    sensitivity_ : float
        L2 sensitivity the noise is calibrated to.
    noise_scale_ : float
        ``sensitivity_ / epsilon`` (per class) for ``"l2_laplace"``; for the
        discrete mechanisms ``t g`` (discrete Laplace scale) or ``sigma g``
        (discrete Gaussian), with ``t`` and ``sigma`` in grid steps.
    noise_granularity_ : float or None
        The public grid ``g`` (a power of two) of the discrete mechanisms:
        ``coef_`` and ``intercept_`` are exact multiples of it. ``None`` for
        ``"l2_laplace"``.
    gradient_norm_ : ndarray of shape (n_problems,)
        Certified gradient norm of each released minimizer. Not private (see
        Privacy).
    n_iter_ : ndarray of shape (n_problems,)
        Solver iterations per problem. Not private (see Privacy).
    multi_class_ : {"binary", "multinomial", "ovr"}
        The fit made.
    delta_ : float
        The delta spent (``delta``).
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta)``.

    Privacy
    -------
    Pure ``epsilon``-DP (``(epsilon, delta)``-DP for ``"discrete_gaussian"``)
    for replace-one neighbours (one row, features, label and weight,
    replaced); ``n_samples``, the parameters and ``classes`` are public,
    rows are clipped to L2 norm ``data_norm`` first. Chaudhuri et al.
    (2011), Thm. 1: the exact minimizer has L2 sensitivity ``2 R / (n
    Lambda)``; the solver certifies ``||grad|| <= tol``, which adds ``2 tol
    / Lambda``. The noise has density proportional to ``exp(-epsilon ||b||
    / sensitivity)``, or is exact discrete Laplace (on the L1 bound
    ``sqrt(d)`` times the sensitivity) or discrete Gaussian (through zCDP)
    on a public grid (Canonne, Kamath and Steinke 2020), whose outputs avoid
    the floating-point leak of ``"l2_laplace"`` (Mironov 2012). Row weights
    are clipped to ``[0, 1]``. A softmax fit (``K > 2``) is one minimizer
    of ``K d`` coefficients, of sensitivity ``2 sqrt(2) R / (n Lambda) + 2
    tol / Lambda`` (the softmax loss is ``sqrt(2) R``-Lipschitz), released
    once at the whole budget.
    One-vs-rest: the pure-DP mechanisms give each problem ``epsilon / K``;
    the discrete Gaussian releases the ``K`` vectors jointly (L2
    sensitivity ``sqrt(K)`` times one problem's, at the whole budget).
    Derivations: :doc:`/guide/svm_and_perturbation`.
    %(label_set_privacy)s
    %(non_private_diagnostics)s
    Whether a fit raises :class:`~skdp.exceptions.CertificationError` (after
    the charge) depends on the data and is not covered: keep a failed fit
    confidential.

    See Also
    --------
    ObjectivePerturbationClassifier : Noise in the objective (usually more accurate).
    skdp.svm.PrivateLinearSVM : The same release for the hinge loss (Rubinstein et al. (2012)).

    References
    ----------
    K. Chaudhuri, C. Monteleoni and A. Sarwate. Differentially private
    empirical risk minimization. JMLR 12, 2011.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skdp.linear_model import OutputPerturbationClassifier
    >>> X, y = make_classification(2000, 5, random_state=0)
    >>> clf = OutputPerturbationClassifier(epsilon=1.0, classes=[0, 1],
    ...                                    random_state=0).fit(X, y)
    >>> clf.privacy_spent_
    PrivacyBudget(epsilon=1.0, delta=0.0)
    """

    _non_private_attributes = ("gradient_norm_", "n_iter_")

    def __init__(self, epsilon=1.0, delta=0.0, *, loss="logistic", huber_h=0.1, data_norm=1.0,
                 alpha="auto", fit_intercept=True, multi_class="auto", mechanism="l2_laplace",
                 tol=None, solver="newton", max_iter=100, classes=None, class_weight=None,
                 n_jobs=None, random_state=None, accountant=None, verbose=0):
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.huber_h = huber_h
        self.data_norm = data_norm
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.multi_class = multi_class
        self.mechanism = mechanism
        self.tol = tol
        self.solver = solver
        self.max_iter = max_iter
        self.classes = classes
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    @property
    def _allow_zero_delta(self):
        return self.mechanism in PURE_DP_OUTPUT_MECHANISMS

    def _check_params(self, n_samples):
        settings = _check_solver_params(self, n_samples)
        settings["mechanism"] = check_option(self.mechanism, "mechanism", OUTPUT_MECHANISMS)
        check_mechanism_delta(self.mechanism, self.delta, PURE_DP_OUTPUT_MECHANISMS)
        settings["multi_class"] = check_option(self.multi_class, "multi_class", MULTI_CLASS)
        settings["n_classes"] = None  # set by _fits_multinomial for a softmax fit
        return settings

    def _fits_multinomial(self, n_classes, settings):
        # Called before the charge: an impossible softmax fit is refused here.
        if not chooses_softmax(settings["multi_class"], self.loss == "logistic",
                               "loss='logistic' (the softmax loss)"):
            return False
        settings["n_classes"] = n_classes
        return True

    def _prepare(self, settings, budget):
        # Every calibration runs before the budget is charged: the discrete one can fail
        # (e.g. at a tiny epsilon), and the l2_laplace scale can overflow (the release
        # was +-inf weights) or underflow to 0 (the bare minimizer).
        _resolve_alpha(self, settings, budget, settings["mechanism"], _OUTPUT_MULTIPLIER)
        if settings["mechanism"] != "l2_laplace":
            settings["discrete"] = self._discrete_noise(settings, budget)
            return
        n_coef = self._n_coef(settings)
        calibrate_before_charge(
            lambda: _check_l2_laplace_scale(self._noise_scale(settings, budget)[1], n_coef),
            "The output noise", budget, {name: settings[name] for name in
                                         ("alpha", "data_norm", "tol")})

    def _clip(self, X, data_norm):
        return clip_rows_l2(X, data_norm)

    def _discrete_noise(self, settings, budget):
        """``(sensitivity, granularity, parameter, scale)`` of a discrete mechanism (test hook)."""
        sensitivity = self._noise_scale(settings, budget)[0]  # the L2 sensitivity
        n_coef = self._n_coef(settings)
        # ||w|| <= (L + tol) / Lambda: the gradient of the mean loss has norm <= L (R for the
        # margin losses, |l'| <= 1; sqrt(2) R for the softmax; weights <= 1) and Lambda w =
        # -that at the exact minimizer; tol is the certificate.
        lipschitz = (settings["data_norm"] if settings["n_classes"] is None else
                     MultinomialLoss(settings["n_classes"]).lipschitz(settings["data_norm"]))
        weight_bound = (lipschitz + settings["tol"]) / settings["alpha"]
        if settings["mechanism"] == "discrete_gaussian":
            # One-vs-rest: the K vectors are one Gaussian release (OneVsRestBudget).
            epsilon, delta, k = budget.accounted()
        else:  # pure epsilon-DP: an even split costs what a joint release would
            epsilon, delta, k = budget.epsilon, budget.delta, 1
        return (sensitivity, *output_perturbation_discrete_noise(
            settings["mechanism"], sensitivity, n_coef, epsilon, delta, weight_bound,
            n_problems=k))

    def _noise_scale(self, settings, budget):
        if settings["n_classes"] is None:
            # Chaudhuri et al. (2011), Alg. 1: beta = n Lambda epsilon / 2 for R = 1; here
            # scale = 1 / beta = sensitivity / epsilon with the corrected sensitivity.
            sensitivity = output_perturbation_sensitivity(
                settings["n_samples"], settings["data_norm"], settings["alpha"], settings["tol"])
        else:
            # Softmax fit: Chaudhuri et al. (2011), Cor. 1 on the K d coefficients of W
            # (Lipschitz constant sqrt(2) R, Frobenius norm), the same certificate term;
            # one problem, so budget.epsilon is the whole epsilon.
            sensitivity = output_perturbation_softmax_sensitivity(
                settings["n_samples"], settings["data_norm"], settings["alpha"], settings["tol"],
                settings["n_classes"])
        # Pure epsilon-DP: K classes split epsilon evenly (a joint release of K vectors
        # has K times the sensitivity, so it would cost the same).
        return sensitivity, sensitivity / budget.epsilon

    def _release(self, result, settings, budget, rng):
        """``(released, sensitivity, scale, granularity)``: the certified point plus the noise."""
        if settings["mechanism"] == "l2_laplace":
            # Chaudhuri et al. (2011), Alg. 1 step 1: density proportional to
            # exp(-||b|| / scale) over all the released coefficients (K d for a softmax fit).
            sensitivity, scale = self._noise_scale(settings, budget)
            w = result.x + sample_l2_laplace(result.x.size, scale, rng)
            return w, sensitivity, scale, None
        sensitivity, granularity, parameter, scale = settings["discrete"]
        w = release_on_grid(result.x, settings["mechanism"], parameter, granularity, rng)
        return w, sensitivity, scale, granularity

    def _fit_binary(self, X, y, rng, *, loss, budget, settings, sample_weight):
        # Weights in [0, 1] keep Thm. 1's bound: a row's weighted loss is convex
        # with gradient norm <= R, so the minimizers move by <= 2 R / (n Lambda).
        result = _certified_minimizer(X, y, loss, settings["alpha"], None, settings, self.solver,
                                      sample_weight)
        w, sensitivity, scale, granularity = self._release(result, settings, budget, rng)
        return w, {"sensitivity": sensitivity, "noise_scale": scale, "granularity": granularity,
                   "grad_norm": result.grad_norm, "n_iter": result.n_iter}

    def _fit_multinomial(self, X, y_index, n_classes, rng, *, budget, settings, sample_weight):
        # One softmax problem on the K d coefficients (Frobenius-regularized, the same
        # certified solve as the binary fit): weights in [0, 1] keep each row's weighted
        # loss convex and sqrt(2) R-Lipschitz, the bound of the softmax sensitivity.
        objective = MultinomialObjective(X, y_index, n_classes, settings["alpha"], None,
                                         sample_weight)
        result = minimize_certified(objective, np.zeros(n_classes * X.shape[1]),
                                    gamma=settings["tol"], max_iter=settings["max_iter"],
                                    solver=self.solver)
        w, sensitivity, scale, granularity = self._release(result, settings, budget, rng)
        return w.reshape(n_classes, X.shape[1]), {
            "sensitivity": sensitivity, "noise_scale": scale, "granularity": granularity,
            "grad_norm": result.grad_norm, "n_iter": result.n_iter}

    def _record(self, infos, settings):
        self.alpha_ = settings["alpha"]
        self.sensitivity_ = infos[0]["sensitivity"]
        self.noise_scale_ = infos[0]["noise_scale"]
        self.noise_granularity_ = infos[0]["granularity"]
        self.gradient_norm_ = np.array([i["grad_norm"] for i in infos])
        self.n_iter_ = np.array([i["n_iter"] for i in infos])
        self.multi_class_ = ("binary" if len(self.classes_) == 2 else
                             "multinomial" if settings["n_classes"] else "ovr")


@fill_glm_doc
class ObjectivePerturbationClassifier(PrivateGLMClassifier):
    """Objective perturbation: minimize the regularized loss plus a random linear term.

    Chaudhuri, Monteleoni and Sarwate 2011, Alg. 2: draw ``b``
    with density proportional to ``exp(-beta ||b||)`` and release the
    minimizer of ``(1/n) sum l + ((Lambda + Delta)/2) ||w||^2 + <b, w>/n``,
    where ``epsilon'`` and the extra regularization ``Delta`` follow the
    paper's rule (:func:`objective_perturbation_terms`).

    Parameters
    ----------
    %(epsilon)s
    %(loss)s
    %(data_norm)s
    %(ridge)s
    tol : float or None, default=None
        Certified bound on the gradient norm of the minimizer. ``None`` uses
        ``1e-5 * data_norm / n_samples``. Refused before the charge below
        ``2**-500`` (the certificate's floating-point floor) or below about
        ``2**-52 d noise_scale_ / n_samples`` (``d`` coefficients), the float
        resolution of the gradient's noise term ``b / n`` (epsilon below
        about ``1e-10`` with the default ``tol``).
    certification_fraction : float, default=0.01
        Fraction of epsilon spent on the small output noise that covers the
        certified solver's distance to the exact minimizer (see Privacy), in
        ``(0, 1)``.
    %(certified_solver)s
    %(classes)s
    %(class_weight)s
    %(n_jobs)s
    %(random_state)s
    %(accountant)s
    %(verbose)s

    Attributes
    ----------
    %(linear_attributes)s
    alpha_ : float
        The regularization strength ``Lambda`` used (before ``Delta``):
        ``alpha``, or for ``"auto"`` ``data_norm**2 * max(1/2, 0.4 *
        sqrt(n_coef) / epsilon_k) / n_samples`` (``n_coef`` counts the
        intercept, ``epsilon_k`` is one class problem's share).
    epsilon_prime_ : float
        Epsilon spent on the density of ``b`` (per class).
    extra_regularization_ : float
        ``Delta`` of Alg. 2 (0 when not needed).
    noise_scale_ : float
        ``1 / beta`` of the objective noise.
    output_noise_scale_ : float
        Scale of the certification noise.
    gradient_norm_ : ndarray of shape (n_problems,)
        Certified gradient norm of each minimizer. Not private (see Privacy).
    n_iter_ : ndarray of shape (n_problems,)
        Solver iterations per binary problem. Not private (see Privacy).
    privacy_spent_ : PrivacyBudget
        ``(epsilon, 0)``.

    Privacy
    -------
    Pure ``epsilon``-DP for replace-one neighbours (one row, features, label
    and weight, replaced); ``n_samples``, the parameters and ``classes`` are
    public, rows are clipped to L2 norm ``data_norm`` first. The budget is
    split into ``epsilon_1 = (1 - certification_fraction) epsilon`` for
    objective perturbation (Chaudhuri et al. (2011), Thm. 2, constants
    rescaled to rows of norm ``R``) and ``epsilon_2`` for the output noise
    that covers the certified solver's distance ``tol / (Lambda + Delta)``
    to the exact minimizer (which Thm. 2 needs). The Jacobian term is charged
    ``log(1 + c / (n (Lambda + Delta)))``, half the paper's, by the matrix
    determinant lemma. Row weights are clipped to ``[0, 1]``. With ``K > 2``
    classes each one-vs-rest problem gets ``epsilon / K``: the noise is pure
    DP and the Jacobian term costs a fixed epsilon per problem, so no joint
    accounting saves anything. Derivations: :doc:`/guide/svm_and_perturbation`.
    %(label_set_privacy)s

    %(non_private_diagnostics)s
    Whether a fit raises :class:`~skdp.exceptions.CertificationError` (after
    the charge) depends on the data and is not covered: keep a failed fit
    confidential. The floating-point noise can leak through its low-order
    bits (Mironov 2012).

    See Also
    --------
    OutputPerturbationClassifier : Noise on the minimizer.

    References
    ----------
    K. Chaudhuri, C. Monteleoni and A. Sarwate. Differentially private
    empirical risk minimization. JMLR 12, 2011.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skdp.linear_model import ObjectivePerturbationClassifier
    >>> X, y = make_classification(2000, 5, random_state=0)
    >>> clf = ObjectivePerturbationClassifier(epsilon=1.0, classes=[0, 1],
    ...                                       random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.6
    True
    """

    _non_private_attributes = ("gradient_norm_", "n_iter_")

    def __init__(self, epsilon=1.0, *, loss="logistic", huber_h=0.1, data_norm=1.0, alpha="auto",
                 fit_intercept=True, tol=None, certification_fraction=0.01, solver="newton",
                 max_iter=100, classes=None, class_weight=None, n_jobs=None, random_state=None,
                 accountant=None, verbose=0):
        self.epsilon = epsilon
        self.loss = loss
        self.huber_h = huber_h
        self.data_norm = data_norm
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.certification_fraction = certification_fraction
        self.solver = solver
        self.max_iter = max_iter
        self.classes = classes
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def _check_params(self, n_samples):
        settings = _check_solver_params(self, n_samples)
        settings["certification_fraction"] = check_real(
            self.certification_fraction, "certification_fraction", low=0.0, high=1.0,
            low_inclusive=False, high_inclusive=False)
        return settings

    def _clip(self, X, data_norm):
        return clip_rows_l2(X, data_norm)

    def _prepare(self, settings, budget):
        # The noise terms depend on no data but can fail (ZeroDivisionError at a
        # vanishing epsilon, OverflowError for data_norm^2), overflow (+-inf weights)
        # or underflow to 0: refuse all of that before the budget is charged.
        _resolve_alpha(self, settings, budget, "l2_laplace", _OBJECTIVE_MULTIPLIER)
        loss = get_loss(self.loss, self.huber_h)
        n_coef = self.n_features_in_ + int(self.fit_intercept)
        parameters = {name: settings[name] for name in
                      ("alpha", "data_norm", "tol", "certification_fraction")}
        terms = []

        def objective_scale():
            terms[:] = self._noise_terms(settings, budget, loss)
            return _check_l2_laplace_scale(terms[2], n_coef)

        calibrate_before_charge(objective_scale, "The objective noise", budget, parameters)
        calibrate_before_charge(lambda: _check_l2_laplace_scale(terms[3], n_coef),
                                "The certification noise", budget, parameters)
        # The gradient holds b / n, of norm about n_coef scale / n (the mean of the
        # norm-Gamma); at the minimizer (Lambda + Delta) theta cancels it, and one ulp of
        # theta moves the gradient by about 2**-52 of that. Above tol no float point can
        # be certified (every fit would spend, then raise CertificationError).
        resolution = n_coef * terms[2] * 2.0**-52 / settings["n_samples"]
        if not resolution < settings["tol"]:
            raise ValueError(
                f"The objective noise (scale {terms[2]:g} for epsilon={budget.epsilon:g} per "
                f"class problem) is too large for the solver to certify tol={settings['tol']:g}"
                f" in floating point (about {resolution:g} is reachable): use a larger "
                "epsilon or tol. Nothing was spent.")

    def _noise_terms(self, settings, budget, loss):
        """``(epsilon', Delta, objective scale, certification scale)``; tests shrink the scales."""
        # Pure epsilon-DP (norm-Gamma noise, and the Jacobian term of Chaudhuri et al.
        # (2011), Thm. 9, which costs a fixed epsilon per problem whatever the noise):
        # K classes split epsilon evenly; no joint accounting applies.
        epsilon_2 = settings["certification_fraction"] * budget.epsilon
        epsilon_1 = budget.epsilon - epsilon_2
        epsilon_prime, extra_reg, scale = objective_perturbation_terms(
            epsilon_1, settings["n_samples"], settings["alpha"],
            loss.smoothness(settings["data_norm"]), settings["data_norm"])
        # Certification noise: the certified point is within tol / (Lambda + Delta)
        # of the exact minimizer, so its sensitivity given that minimizer is twice that.
        cert_sensitivity = 2.0 * settings["tol"] / (settings["alpha"] + extra_reg)
        return epsilon_prime, extra_reg, scale, cert_sensitivity / epsilon_2

    def _fit_binary(self, X, y, rng, *, loss, budget, settings, sample_weight):
        n, d = X.shape
        epsilon_prime, extra_reg, scale, cert_scale = self._noise_terms(settings, budget, loss)
        b = sample_l2_laplace(d, scale, rng)
        # Chaudhuri et al. (2011), Alg. 2 step 4: argmin (1/n) sum l + (Lambda+Delta)/2 ||w||^2 + b.w / n,
        # with weighted losses (1/n) sum w_i l_i: weights in [0, 1] keep a row's
        # gradient norm <= R (the 2R change of b) and its second derivative
        # w_i l'' ||x_i||^2 <= c (the Jacobian term), and the data term convex.
        result = _certified_minimizer(X, y, loss, settings["alpha"] + extra_reg, b / n, settings,
                                      self.solver, sample_weight)
        w = result.x + sample_l2_laplace(d, cert_scale, rng)
        return w, {"epsilon_prime": epsilon_prime, "extra_reg": extra_reg, "noise_scale": scale,
                   "cert_scale": cert_scale, "grad_norm": result.grad_norm,
                   "n_iter": result.n_iter}

    def _record(self, infos, settings):
        self.alpha_ = settings["alpha"]
        self.epsilon_prime_ = infos[0]["epsilon_prime"]
        self.extra_regularization_ = infos[0]["extra_reg"]
        self.noise_scale_ = infos[0]["noise_scale"]
        self.output_noise_scale_ = infos[0]["cert_scale"]
        self.gradient_norm_ = np.array([i["grad_norm"] for i in infos])
        self.n_iter_ = np.array([i["n_iter"] for i in infos])
