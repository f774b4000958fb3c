"""Permutation-based SGD with output perturbation (Thakkar (2019), Alg. 2 and 3; Wu et al. 2017)."""

import math

import numpy as np
from scipy.special import softmax

from skdp.linear_model._losses import get_loss
from skdp.linear_model._multinomial import MultinomialLoss
from skdp.linear_model._perturbation import output_perturbation_discrete_noise
from skdp.linear_model._private_glm import (
    MULTI_CLASS,
    PrivateGLMClassifier,
    calibrate_before_charge,
    check_bool,
    chooses_softmax,
    delta_one_over_n_squared,
    fill_glm_doc,
    release_on_grid,
)
from skdp.mechanisms import gaussian_sigma_analytic
from skdp.utils._clipping import clip_rows_l2
from skdp.utils._validation import check_option, check_positive_int, check_real

__all__ = [
    "PermutationSGDClassifier",
    "permutation_sgd_batches",
    "permutation_sgd_default_epochs",
    "permutation_sgd_default_step",
    "permutation_sgd_noise_step",
    "permutation_sgd_noise_target",
    "permutation_sgd_sensitivity",
    "permutation_sgd_sigma",
    "permutation_sgd_weight_bound",
]

CALIBRATIONS = ("analytic", "thesis")
MECHANISMS = ("gaussian", "discrete_gaussian")
# D R of permutation_sgd_default_step: the comparator norm, in units of 1 / data_norm,
# chosen on generated problems only (studies/psgd_step.py). No longer
# the default (see permutation_sgd_noise_step).
DEFAULT_STEP_RADIUS = 1.0
# Expected norm of the output noise targeted by the default step, in units of
# 1 / data_norm; default batch size, and the most minibatch updates a default run
# takes (chosen on the derive tables of the real-data collection, docs/guide/sgd.rst).
DEFAULT_NOISE_NORM = 4.0
# With K > 2 classes: the deviation of one class score's noise, x . noise for a row of
# norm R, targeted by the default step (chosen on generated K-class data, K = 3 to 10,
# and digits; docs/guide/sgd.rst).
DEFAULT_SCORE_NOISE = 0.3
DEFAULT_BATCH_SIZE = 64
DEFAULT_MAX_UPDATES = 20_000


def permutation_sgd_default_epochs(n_samples, batch_size):
    """Default passes: ``min(50, max(5, ceil(20000 / N)))``, ``N`` minibatches per pass.

    About 20,000 minibatch updates (the convergence of SGD on real rows of
    unit norm needs thousands of steps), at least 5 and at most 50 passes.
    The output noise does not grow with the passes: the default step
    (:func:`permutation_sgd_noise_step`) shrinks as ``1 / epochs``.
    """
    n_batches, _ = permutation_sgd_batches(n_samples, batch_size)
    return int(min(50, max(5, math.ceil(DEFAULT_MAX_UPDATES / n_batches))))


def permutation_sgd_noise_target(n_classes, n_coef):
    """Output-noise norm targeted by the default step, in units of ``1 / data_norm``.

    - Two classes: ``4`` (``DEFAULT_NOISE_NORM``). The noise shifts the one
      decision score, i.e. the threshold.
    - ``K > 2`` classes: ``min(4, 0.3 sqrt(d))`` for ``d`` coefficients per
      class (the intercept's included). The prediction is the argmax of ``K``
      noisy scores: a row ``x`` of norm ``R`` gets the noise ``x . b_k``
      in class ``k``'s score, of deviation ``||b_k|| R / sqrt(d)``; the
      target holds it at ``0.3`` (``DEFAULT_SCORE_NOISE``), below the gaps
      between the classes' log-odds that decide the argmax, and never above the
      binary target.

    Both depend only on public quantities (the number of classes and of
    features). The derivation is in the user guide, :doc:`/guide/sgd`.

    Parameters
    ----------
    n_classes : int
        ``K`` (2 for a binary problem).
    n_coef : int
        ``d``.

    Returns
    -------
    noise_norm : float
    """
    if n_classes <= 2:
        return DEFAULT_NOISE_NORM
    return min(DEFAULT_NOISE_NORM, DEFAULT_SCORE_NOISE * math.sqrt(n_coef))


def permutation_sgd_noise_step(n_samples, batch_size, epochs, data_norm, n_coef,
                               noise_per_sensitivity, max_step, noise_norm=DEFAULT_NOISE_NORM):
    """Default constant step: the largest one whose output noise has norm about ``noise_norm / R``.

    The output noise has per-coordinate deviation ``c Delta`` with
    ``Delta = 2 k eta R / b`` (:func:`permutation_sgd_sensitivity`, ``b``
    the smallest minibatch), so its expected norm is about
    ``2 c k eta R sqrt(d) / b`` for ``d`` coefficients. Setting it to
    ``noise_norm / R`` gives ``eta = noise_norm b / (2 c k R^2 sqrt(d))``,
    clamped to ``max_step`` (``1 / beta``, reached at a very large
    ``epsilon``). Every input is public.

    Returns
    -------
    eta : float
    """
    _, min_batch = permutation_sgd_batches(n_samples, batch_size)
    if noise_per_sensitivity == 0.0:
        return max_step
    step = noise_norm * min_batch / (2.0 * noise_per_sensitivity * epochs * data_norm ** 2
                                     * math.sqrt(n_coef))
    return min(step, max_step)


def permutation_sgd_batches(n_samples, batch_size):
    """Number of minibatches per pass and the smallest minibatch size.

    A pass splits a random permutation into ``max(1, n // batch_size)``
    consecutive minibatches of sizes differing by at most one, so every
    minibatch has at least ``batch_size`` rows (or all ``n`` rows when
    ``n < batch_size``).

    Returns
    -------
    n_batches : int
    min_batch : int
        ``n // n_batches``.
    """
    n_batches = max(1, n_samples // batch_size)
    return n_batches, n_samples // n_batches


def permutation_sgd_sensitivity(n_samples, batch_size, epochs, data_norm, *,
                                learning_rate=None, alpha=None, strongly_convex=False):
    """L2 sensitivity of the (noiseless) permutation-SGD output (Wu et al. 2017).

    Replace-one neighbours run on the same permutation; the differing row
    enters one minibatch per pass, where the two gradient steps differ by at
    most ``2 eta R / b`` (``R = data_norm`` bounds the gradient norm of one
    example's loss; the L2 regularizer is common to both runs and cancels).
    All other steps are non-expansive (``eta <= 2 / beta``) or, with
    ``alpha``-strong convexity and ``eta_t <= 1 / beta``,
    ``(1 - eta_t alpha)``-contractive.

    - Convex, constant step ``eta`` (Thakkar (2019), Alg. 2; Wu et al. Thm. 3 with
      minibatches): ``2 k eta R / b`` for ``k`` passes.
    - Strongly convex, ``eta_t = min(1/beta, 1/(alpha t))`` with ``t`` the
      global update counter (Wu et al., strongly convex case): with ``N``
      minibatches per pass, ``t delta_t <= (t - 1) delta_(t-1) + 2R/(alpha b)``
      at the differing step (and without the last term elsewhere), giving
      ``2 R / (alpha b N)``, which is Wu et al.'s ``2 R / (alpha n)`` when
      ``b`` divides ``n``. While ``eta_t = 1 / beta`` (``t <= beta / alpha``)
      the recurrence is replaced by non-expansiveness: ``delta_t <= c_t 2 R /
      (beta b) <= c_t 2 R / (alpha b t)`` with ``c_t`` the differing steps so
      far, i.e. ``t delta_t <= c_t 2 R / (alpha b)``, which is what the
      recurrence carries on from; so the bound holds from the first step.

    Parameters
    ----------
    n_samples, batch_size, epochs : int
        ``n``, requested minibatch size and number of passes ``k``.
    data_norm : float
        ``R``.
    learning_rate : float or None
        ``eta`` (convex case).
    alpha : float or None
        Strong convexity (strongly convex case).
    strongly_convex : bool, default=False
        Which case.

    Returns
    -------
    sensitivity : float
    """
    n_batches, min_batch = permutation_sgd_batches(n_samples, batch_size)
    if strongly_convex:
        return 2.0 * data_norm / (alpha * min_batch * n_batches)
    return 2.0 * epochs * learning_rate * data_norm / min_batch


def permutation_sgd_default_step(n_samples, batch_size, epochs, data_norm, n_coef,
                                 noise_per_sensitivity, max_step, radius=DEFAULT_STEP_RADIUS):
    """Default constant step of the convex case: the minimizer of an excess-risk bound.

    With constant step ``eta`` for ``k`` passes of ``N`` minibatches
    (``T = k N`` updates), rows of norm ``R`` (so per-example gradients of
    norm at most ``R``) and a comparator of norm ``D``, SGD's expected excess
    risk is at most ``D^2 / (2 eta T) + eta R^2 / 2`` (the averaged-iterate
    bound for convex Lipschitz losses). The output noise ``b`` has per-
    coordinate deviation ``sigma = c Delta`` with ``Delta = 2 k eta R / b``
    (the sensitivity of :func:`permutation_sgd_sensitivity`; ``c`` the noise
    per unit sensitivity of the calibration) and costs at most
    ``R E||b|| <= R sigma sqrt(d)`` for ``d`` coefficients. The sum

        ``D^2 / (2 eta k N) + (eta R^2 / 2) (1 + 4 c sqrt(d) k / b)``

    is minimized by ``eta* = D / (R sqrt(k N (1 + 4 c sqrt(d) k / b)))``,
    clamped to ``max_step``. Every input is public (the budget enters through
    ``c``, the data only through ``n_samples``); ``D = radius / R`` is a
    constant fixed in advance (see :class:`PermutationSGDClassifier`, Notes).

    Parameters
    ----------
    n_samples, batch_size, epochs : int
        ``n``, requested minibatch size and passes ``k``.
    data_norm : float
        ``R``.
    n_coef : int
        ``d``, coefficients per class problem (the intercept's included).
    noise_per_sensitivity : float
        ``c``: the output noise's deviation for sensitivity 1 (one class
        problem's budget).
    max_step : float
        Upper clamp (``1 / beta``).
    radius : float, default=DEFAULT_STEP_RADIUS
        ``D R``, the comparator norm in units of ``1 / R``.

    Returns
    -------
    eta : float
    """
    n_batches, min_batch = permutation_sgd_batches(n_samples, batch_size)
    noise_factor = 1.0 + 4.0 * noise_per_sensitivity * math.sqrt(n_coef) * epochs / min_batch
    step = radius / (data_norm ** 2 * math.sqrt(epochs * n_batches * noise_factor))
    return min(step, max_step)


def permutation_sgd_weight_bound(n_updates, data_norm, *, learning_rate=None, alpha=None,
                                 strongly_convex=False):
    """Data-independent bound on the norm of the (noiseless) permutation-SGD output.

    Only sets the public grid of ``mechanism="discrete_gaussian"`` (so that
    the grid's index range ``+-2**52`` covers every output); privacy does not
    rest on it (the clamp of the grid indices is non-expansive).

    Every step is ``w <- (1 - eta alpha) w - eta g`` with ``||g|| <= R`` (one
    row's loss derivative is at most 1 in absolute value, rows have norm at
    most ``R``, weights at most 1).

    - Convex, constant ``eta <= 2 / beta`` and ``beta >= alpha``:
      ``|1 - eta alpha| <= 1``, so each of the ``T`` updates adds at most
      ``eta R``: ``T eta R``.
    - Strongly convex, ``eta_t alpha <= 1``: ``||w|| <= R / alpha`` is kept by
      every step (``(1 - eta_t alpha) R / alpha + eta_t R = R / alpha``) and
      holds at ``w = 0``: ``R / alpha``.

    Parameters
    ----------
    n_updates : int
        ``T``, the minibatch updates.
    data_norm : float
        ``R``.
    learning_rate, alpha : float or None
        ``eta`` (convex case), ``alpha`` (strongly convex case).
    strongly_convex : bool, default=False
        Which case.

    Returns
    -------
    bound : float
    """
    if strongly_convex:
        return data_norm / alpha
    return n_updates * learning_rate * data_norm


def permutation_sgd_sigma(sensitivity, epsilon, delta, calibration="analytic"):
    """Standard deviation of the output Gaussian noise.

    - ``"analytic"``: the exact Gaussian calibration of Balle and Wang (2018).
    - ``"thesis"``: Thakkar (2019), Alg. 2 line 7 and Alg. 3 line 8,
      ``sigma = sqrt(2 ln(2/delta)) Delta_2 / epsilon`` (both lines are this
      formula with ``Delta_2 = 2 T Delta eta / k`` and ``2 Delta / (xi m)``).
      It rests on the classic Gaussian bound, proved only for
      ``epsilon < 1``. *Correction:* the larger of it and the analytic sigma
      is used, so the claim holds for every epsilon.

    Returns
    -------
    sigma : float
    """
    check_option(calibration, "calibration", CALIBRATIONS)
    analytic = gaussian_sigma_analytic(sensitivity, epsilon, delta)
    if calibration == "analytic":
        return analytic
    thesis = math.sqrt(2.0 * math.log(2.0 / delta)) * sensitivity / epsilon
    return max(thesis, analytic)


def _permutation_sgd_path(X, y, loss, settings, rng, sample_weight=None):
    """Noiseless permutation SGD from 0 (Thakkar (2019), Alg. 2 lines 1-6 / Alg. 3 lines 1-7)."""
    n, d = X.shape
    batches = np.array_split(rng.permutation(n), settings["n_batches"])
    alpha, beta = settings["alpha"], settings["beta"]
    w = np.zeros(d)
    t = 0
    for _ in range(settings["epochs"]):
        for batch in batches:  # the same permutation on every pass, as in Wu et al.
            t += 1
            if settings["strongly_convex"]:
                eta = min(1.0 / beta, 1.0 / (alpha * t))
            else:
                eta = settings["learning_rate"]
            Xb, yb = X[batch], y[batch]
            dz = loss.derivative(yb * np.asarray(Xb @ w).ravel()) * yb
            if sample_weight is not None:  # divisor stays the public len(batch)
                dz = dz * sample_weight[batch]
            grad = np.asarray(Xb.T @ dz).ravel() / len(batch) + alpha * w
            w -= eta * grad
    return w


def _permutation_sgd_softmax_path(X, y_index, n_classes, settings, rng, sample_weight=None):
    """Noiseless permutation SGD of the softmax loss on ``W`` (``K x d``) from 0.

    The same passes over one permutation as :func:`_permutation_sgd_path`; a
    minibatch's gradient is ``(1/b) sum_i w_i (p_i - e_(y_i)) x_i^T + alpha W``
    with ``p_i = softmax(W x_i)``.
    """
    n, d = X.shape
    batches = np.array_split(rng.permutation(n), settings["n_batches"])
    alpha, beta = settings["alpha"], settings["beta"]
    W = np.zeros((n_classes, d))
    t = 0
    for _ in range(settings["epochs"]):
        for batch in batches:
            t += 1
            if settings["strongly_convex"]:
                eta = min(1.0 / beta, 1.0 / (alpha * t))
            else:
                eta = settings["learning_rate"]
            Xb = X[batch]
            residual = softmax(np.asarray(Xb @ W.T), axis=1)
            residual[np.arange(len(batch)), y_index[batch]] -= 1.0
            if sample_weight is not None:  # divisor stays the public len(batch)
                residual *= sample_weight[batch][:, None]
            grad = np.asarray(Xb.T @ residual).T / len(batch) + alpha * W
            W -= eta * grad
    return W


@fill_glm_doc
class PermutationSGDClassifier(PrivateGLMClassifier):
    """Permutation-based SGD with Gaussian output perturbation (Wu et al. 2017, "bolt-on" DP).

    Runs ordinary minibatch SGD over a random permutation of the rows for
    ``epochs`` passes and adds Gaussian noise to the final weights, calibrated
    to the L2 sensitivity of the SGD output (Thakkar (2019), Alg. 2 for convex
    losses with a constant step, Alg. 3 for the ``alpha``-regularized,
    strongly convex loss with step ``min(1/beta, 1/(alpha t))``).

    Parameters
    ----------
    %(epsilon)s
    %(delta_n2)s
    %(loss)s
    %(data_norm)s
    strongly_convex : bool, default=False
        ``False``: Alg. 2 (P-PSGD), constant ``learning_rate``. ``True``:
        Alg. 3 (P-SCPSGD), needs ``alpha > 0``.
    alpha : float, default=0.0
        L2 regularization ``xi`` (>= 0; > 0 when ``strongly_convex``).
    learning_rate : float or None, default=None
        Constant step of Alg. 2, in ``(0, 2 / beta]`` where ``beta`` is the
        smoothness of the regularized loss (``data_norm^2 / 4 + alpha`` for
        logistic, ``data_norm^2 / (2 h) + alpha`` for Huber); a larger step
        breaks the sensitivity bound and is refused. ``None`` uses the
        largest step whose output noise has expected norm about
        ``4 / data_norm`` for two classes and ``min(4, 0.3 sqrt(d)) /
        data_norm`` for more (``d`` coefficients per class; a class score's
        noise then has deviation 0.3) (:func:`permutation_sgd_noise_step`,
        :func:`permutation_sgd_noise_target`; see Notes), at most ``1 /
        beta`` (reached at a very large ``epsilon``): it depends on the
        budget, the number of classes and of coefficients, ``batch_size``
        and ``epochs``, and is stored in ``learning_rate_``. Ignored when
        ``strongly_convex``.
    batch_size : int, default=64
        Minibatch size ``b``.
    epochs : int or None, default=None
        Passes ``k`` over the permutation. ``None``: about 20,000 minibatch
        updates, ``min(50, max(5, ceil(20000 / N)))`` with ``N =
        max(1, n // batch_size)`` minibatches per pass
        (:func:`permutation_sgd_default_epochs`), stored in ``epochs_``.
    calibration : {"analytic", "thesis"}, default="analytic"
        Gaussian calibration of the output noise of ``mechanism="gaussian"``
        (see Privacy). ``"thesis"`` is refused with ``"discrete_gaussian"``,
        whose calibration is through zCDP.
    mechanism : {"gaussian", "discrete_gaussian"}, default="gaussian"
        Output noise. ``"gaussian"`` adds floating-point Gaussian noise.
        ``"discrete_gaussian"`` releases the weights on a public power-of-two
        grid (``noise_granularity_``) with exact discrete Gaussian noise,
        safe against floating-point attacks; calibrated through zCDP, about
        20% to 25% more noise.
    fit_intercept : bool, default=True
        Append a constant feature 1 (before clipping) whose weight is the intercept.
    multi_class : {"auto", "multinomial", "ovr"}, default="auto"
        With more than two classes: ``"multinomial"`` runs SGD once on the
        softmax (multinomial logistic) loss of the ``K`` weight vectors and
        releases them together at the whole budget; ``"ovr"`` runs ``K``
        one-vs-rest problems released jointly (see Privacy). ``"auto"``:
        ``"multinomial"`` for ``loss="logistic"``, else ``"ovr"``. The
        softmax loss has ``beta = data_norm^2 / 2 + alpha``, so its steps are
        at most ``2 / beta`` of that ``beta``. ``"multinomial"`` with the
        Huber loss is refused before the budget is charged.
    %(classes)s
    %(class_weight)s
    %(n_jobs)s
    %(random_state)s
    %(accountant)s
    %(verbose)s

    Attributes
    ----------
    %(linear_attributes)s
    sensitivity_ : float
        L2 sensitivity of the SGD output.
    noise_std_ : float
        Standard deviation of the output noise (per class); for
        ``"discrete_gaussian"`` the discrete Gaussian's ``sigma g`` (``sigma``
        in grid steps).
    noise_granularity_ : float or None
        The public grid ``g`` (a power of two) of ``"discrete_gaussian"``:
        ``coef_`` and ``intercept_`` are exact multiples of it. ``None`` for
        ``"gaussian"``.
    learning_rate_ : float or None
        Constant step used (``None`` in the strongly convex case).
    epochs_ : int
        Passes used.
    n_iter_ : int
        Minibatch updates per run (per class problem for ``"ovr"``).
    multi_class_ : {"binary", "multinomial", "ovr"}
        The fit made.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta_)``.
    delta_ : float
        The delta used.

    Privacy
    -------
    ``(epsilon, delta)``-DP for replace-one neighbours (one row, features,
    label and weight, replaced); ``n_samples``, the parameters and
    ``classes`` are public, rows are clipped to L2 norm ``data_norm`` and
    row weights to ``[0, 1]``. The SGD output has L2 sensitivity ``2 k eta R
    / b`` (convex, Wu et al. 2017, Thm. 3) or ``2 R / (alpha b N)`` with
    ``N`` minibatches per pass (strongly convex) and is released with the
    analytic Gaussian mechanism (Balle and Wang 2018; ``calibration="thesis"``
    takes the larger of it and Thakkar's (2019) ``sqrt(2 ln(2/delta))``
    form, proved for ``epsilon < 1`` only). The float noise can leak through
    its low-order bits (Mironov 2012); ``mechanism="discrete_gaussian"``
    adds exact discrete Gaussian noise on a public grid through zCDP
    (Canonne, Kamath and Steinke 2020) instead.
    A softmax fit (``K > 2``) is one release of ``K d`` coefficients whose
    sensitivity is the above with ``sqrt(2) R`` (the softmax loss's
    Lipschitz constant) in place of ``R``. One-vs-rest: the ``K`` vectors
    are one Gaussian release of sensitivity ``sqrt(K)`` times one
    problem's, at the whole budget. Corrections to Thakkar (2019), Alg. 2 and 3 (the step index
    of Alg. 3, the pass count of Alg. 2) and the derivations are in the user
    guide, :doc:`/guide/sgd`.
    %(label_set_privacy)s

    See Also
    --------
    DPSGDClassifier : Noise in every step instead of at the output.

    Notes
    -----
    *Default step (convex case).* The output noise grows with the step
    (:func:`permutation_sgd_noise_step`): the default sets its expected norm
    to ``4 / R`` for two classes, at most the step ``1 / beta`` reached at a
    very large ``epsilon``. With ``K > 2`` classes the prediction is the
    argmax of ``K`` noisy scores and the default holds each score's noise
    deviation at 0.3 instead, a norm of ``min(4, 0.3 sqrt(d)) / R``
    (:func:`permutation_sgd_noise_target`; the softmax fit applies it per
    class); on a 5-class table of 40,000 rows at ``epsilon = 1`` either fit
    beats the majority class by about a point only
    (:class:`DPSGDClassifier`'s softmax fit: 58% against 40%). The
    constants and the update count were chosen on the derive tables and on
    generated data (user guide, :doc:`/guide/sgd`). The earlier excess-risk step remains available as
    :func:`permutation_sgd_default_step`.

    References
    ----------
    X. Wu, F. Li, A. Kumar, K. Chaudhuri, S. Jha and J. Naughton. Bolt-on
    differential privacy for scalable stochastic gradient descent-based
    analytics. SIGMOD 2017.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skdp.linear_model import PermutationSGDClassifier
    >>> X, y = make_classification(2000, 5, random_state=0)
    >>> clf = PermutationSGDClassifier(epsilon=1.0, delta=1e-6, classes=[0, 1],
    ...                                random_state=0).fit(X, y)
    >>> round(clf.learning_rate_, 4)  # the default step (see Notes)
    0.2474
    >>> clf.epochs_, clf.sensitivity_ / clf.learning_rate_  # 2 k R / b = 2 * 50 * 1 / 64
    (50, 1.5625)
    """

    _default_delta = staticmethod(delta_one_over_n_squared)
    _allow_zero_delta = False

    def __init__(self, epsilon=1.0, delta=None, *, loss="logistic", huber_h=0.1, data_norm=1.0,
                 strongly_convex=False, alpha=0.0, learning_rate=None, batch_size=64,
                 epochs=None,
                 calibration="analytic", mechanism="gaussian", fit_intercept=True,
                 multi_class="auto", classes=None, class_weight=None, n_jobs=None,
                 random_state=None, accountant=None, verbose=0):
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.huber_h = huber_h
        self.data_norm = data_norm
        self.strongly_convex = strongly_convex
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.epochs = epochs
        self.calibration = calibration
        self.mechanism = mechanism
        self.fit_intercept = fit_intercept
        self.multi_class = multi_class
        self.classes = classes
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def _check_params(self, n_samples):
        strongly_convex = check_bool(self.strongly_convex, "strongly_convex")
        alpha = check_real(self.alpha, "alpha", low=0.0)
        if strongly_convex and alpha == 0.0:
            raise ValueError("strongly_convex=True needs alpha > 0 (the strong convexity).")
        data_norm = float(self.data_norm)  # validated by fit
        try:
            beta = get_loss(self.loss, self.huber_h).smoothness(data_norm) + alpha
        except OverflowError:  # data_norm ** 2 of a Python float
            beta = math.inf
        if not math.isfinite(beta):
            raise ValueError(
                f"data_norm={data_norm:g} is too large: the smoothness beta of the loss "
                f"(data_norm^2 / 4 for logistic, data_norm^2 / (2 huber_h) for Huber) "
                "overflows, and with it the step bounds 1 / beta and 2 / beta. Rescale the "
                "features by a constant fixed in advance. Nothing was spent.")
        learning_rate = None
        if not strongly_convex:
            # 1 / beta and 2 / beta are inf when beta underflows (tiny data_norm, alpha = 0).
            if self.learning_rate is None:
                # Resolved in _prepare (it depends on the budget), within 1 / beta.
                if not (beta > 0.0 and math.isfinite(1.0 / beta)):
                    raise ValueError(
                        f"The default learning_rate (at most 1 / beta) may be infinite: the "
                        f"smoothness beta of the loss underflows to {beta:g} for data_norm="
                        f"{data_norm:g}. Pass learning_rate (every step is within 2 / beta "
                        "here) or alpha > 0. Nothing was spent.")
            else:
                learning_rate = check_real(self.learning_rate, "learning_rate", low=0.0,
                                           low_inclusive=False)
                max_step = 2.0 / beta if beta > 0.0 else math.inf
                if learning_rate > max_step:
                    raise ValueError(
                        f"learning_rate={learning_rate:g} exceeds 2 / beta = {max_step:g}, "
                        "the largest step for which the SGD output's sensitivity bound holds "
                        f"(beta = {beta:g} is the smoothness of the loss for data_norm="
                        f"{data_norm:g})."
                    )
        batch_size = check_positive_int(self.batch_size, "batch_size")
        epochs = (permutation_sgd_default_epochs(n_samples, batch_size) if self.epochs is None
                  else check_positive_int(self.epochs, "epochs"))
        calibration = check_option(self.calibration, "calibration", CALIBRATIONS)
        mechanism = check_option(self.mechanism, "mechanism", MECHANISMS)
        if mechanism == "discrete_gaussian" and calibration != "analytic":
            raise ValueError(
                f"calibration={calibration!r} applies to mechanism='gaussian' only; "
                "mechanism='discrete_gaussian' is calibrated through zCDP. Leave "
                "calibration='analytic'.")
        settings = {
            "strongly_convex": strongly_convex,
            "alpha": alpha,
            "beta": beta,
            "learning_rate": learning_rate,
            "default_step": not strongly_convex and learning_rate is None,
            "epochs": epochs,
            "batch_size": batch_size,
            "data_norm": data_norm,
            "n_samples": n_samples,
            "n_batches": permutation_sgd_batches(n_samples, batch_size)[0],
            "calibration": calibration,
            "mechanism": mechanism,
            "multi_class": check_option(self.multi_class, "multi_class", MULTI_CLASS),
            "n_classes": None,  # set by _fits_multinomial for a softmax fit
            # The Lipschitz constant of one example's loss in the weights: R for the
            # margin losses (|l'| <= 1), sqrt(2) R for the softmax (_fits_multinomial).
            "lipschitz": data_norm,
        }
        return settings

    def _fits_multinomial(self, n_classes, settings):
        # Called before the charge: an impossible softmax fit is refused here.
        if not chooses_softmax(settings["multi_class"], self.loss == "logistic",
                               "loss='logistic' (the softmax loss)"):
            return False
        # Wu et al. (2017), Thm. 3 (and its strongly convex case; Thakkar (2019), Alg. 2 and
        # 3) hold for any convex, L-Lipschitz, beta-smooth loss with steps <= 2 / beta: on
        # W flattened into K d coordinates the softmax loss has L = sqrt(2) R and beta =
        # R^2 / 2 (MultinomialLoss), plus alpha from the regularizer.
        softmax_loss = MultinomialLoss(n_classes)
        data_norm, alpha = settings["data_norm"], settings["alpha"]
        beta = softmax_loss.smoothness(data_norm) + alpha
        learning_rate = settings["learning_rate"]
        if learning_rate is not None and learning_rate > 2.0 / beta:
            raise ValueError(
                f"learning_rate={learning_rate:g} exceeds 2 / beta = {2.0 / beta:g} of the "
                f"softmax loss (beta = data_norm^2 / 2 + alpha = {beta:g}), the largest step "
                "for which the SGD output's sensitivity bound holds. Use a smaller "
                "learning_rate, or multi_class='ovr'. Nothing was spent.")
        settings.update(n_classes=n_classes, beta=beta,
                        lipschitz=softmax_loss.lipschitz(data_norm))
        return True

    def _set_sensitivity(self, settings):
        """Store the output's sensitivity and weight bound, once the step is known."""
        # Wu et al. (2017), Thm. 3: 2 k eta L / b (convex) or 2 L / (alpha b N) (strongly
        # convex), L = R for the margin losses and sqrt(2) R for the softmax fit.
        sensitivity = permutation_sgd_sensitivity(
            settings["n_samples"], settings["batch_size"], settings["epochs"],
            settings["lipschitz"], learning_rate=settings["learning_rate"],
            alpha=settings["alpha"], strongly_convex=settings["strongly_convex"])
        if not 0.0 < sensitivity < math.inf:
            how = "overflows" if sensitivity else "underflows to 0"
            learning_rate = settings["learning_rate"]
            raise ValueError(
                f"The sensitivity of the SGD output {how} "
                f"(data_norm={settings['data_norm']:g}, alpha={settings['alpha']:g}, "
                f"learning_rate={learning_rate if learning_rate is not None else 'None'}, "
                f"batch_size={settings['batch_size']}, epochs={settings['epochs']}): no "
                "Gaussian noise can be calibrated to it. Rescale these parameters. "
                "Nothing was spent.")
        settings["sensitivity"] = sensitivity
        # Each step adds at most eta L (the gradient of one example's loss).
        settings["weight_bound"] = permutation_sgd_weight_bound(
            settings["epochs"] * settings["n_batches"], settings["lipschitz"],
            learning_rate=settings["learning_rate"], alpha=settings["alpha"],
            strongly_convex=settings["strongly_convex"])

    def _default_step(self, settings, budget):
        """The default constant step for one class problem's budget (convex case)."""
        # c: the output noise per unit sensitivity, for this budget (the analytic
        # Gaussian's also for "discrete_gaussian", whose noise is ~20% larger).
        factor, epsilon, delta = budget.gaussian()  # one-vs-rest: OneVsRestBudget
        c = calibrate_before_charge(
            lambda: permutation_sgd_sigma(factor, epsilon, delta, settings["calibration"]),
            "The output noise (for the default learning_rate)", budget,
            {"data_norm": settings["data_norm"]})
        n_coef = self.n_features_in_ + int(self.fit_intercept)
        if settings["n_classes"]:
            # Softmax fit: one release of K d coefficients (budget.gaussian()'s factor is 1)
            # of sensitivity 2 k eta sqrt(2) R / b: per unit of 2 k eta R / b the noise is
            # sqrt(2) c. The target holds each class score's noise x . b_k (b_k: the d
            # coordinates of class k) at the one-vs-rest fit's deviation.
            n_classes = settings["n_classes"]
            c = c * MultinomialLoss(n_classes).lipschitz(1.0)
        else:
            # budget.n_problems: 1 for two classes, K otherwise (public: ``classes``).
            n_classes = 2 if budget.n_problems == 1 else budget.n_problems
        return permutation_sgd_noise_step(
            settings["n_samples"], settings["batch_size"], settings["epochs"],
            settings["data_norm"], n_coef, c, 1.0 / settings["beta"],
            noise_norm=permutation_sgd_noise_target(n_classes, n_coef))

    def _clip(self, X, data_norm):
        return clip_rows_l2(X, data_norm)

    def _noise_std(self, settings, budget):
        """Output noise sigma; a test subclass shrinks it to build an under-noised copy."""
        # One-vs-rest: one record moves all K weight vectors, each by at most the
        # sensitivity Delta: they are one Gaussian release of L2 sensitivity sqrt(K) Delta
        # at the whole (epsilon, delta) (OneVsRestBudget.gaussian; Balle and Wang 2018).
        # Softmax fit: one problem (factor 1), Delta = Wu et al.'s bound with L = sqrt(2) R
        # on the K d coefficients (Frobenius norm), at the whole (epsilon, delta).
        factor, epsilon, delta = budget.gaussian()
        return permutation_sgd_sigma(factor * settings["sensitivity"], epsilon, delta,
                                     settings["calibration"])

    def _discrete_noise(self, settings, budget):
        """``(granularity, sigma^2 in grid steps, sigma g)`` of the discrete Gaussian (test hook)."""
        # d coefficients per release; K d for a softmax fit (one release, k = 1 below).
        n_coef = self._n_coef(settings)
        # Thakkar (2019), Alg. 2/3 (L2 sensitivity of the SGD output, Wu et al. 2017) released with
        # exact discrete Gaussian noise on the grid (CKS): sigma^2 = Delta_g^2 / (2 rho) with
        # Delta_g the rounded output's L2 shift incl. the grid term, rho from CKS
        # Cor. 13 (output_perturbation_discrete_noise -> svm_discrete_noise).
        # One-vs-rest: the K vectors are one release (OneVsRestBudget).
        epsilon, delta, k = budget.accounted()
        return output_perturbation_discrete_noise(
            "discrete_gaussian", settings["sensitivity"], n_coef, epsilon, delta,
            settings["weight_bound"], n_problems=k)

    def _prepare(self, settings, budget):
        if settings["default_step"]:
            settings["learning_rate"] = self._default_step(settings, budget)
        # After _fits_multinomial (the softmax's Lipschitz constant), before the charge.
        self._set_sensitivity(settings)
        # The calibration is data-independent but can fail (e.g. at epsilon = 1e300, or a
        # discrete noise beyond 2**52 grid steps): fail before the budget is charged.
        # The result travels to the class problems in ``settings`` (computed once, not
        # again in every joblib worker).
        if settings["mechanism"] == "discrete_gaussian":
            settings["discrete"] = self._discrete_noise(settings, budget)
            return
        settings["sigma"] = calibrate_before_charge(
            lambda: self._noise_std(settings, budget), "The output noise", budget,
            {name: settings[name] for name in ("sensitivity", "data_norm", "learning_rate",
                                               "alpha", "batch_size", "epochs")
             if settings[name] is not None})

    def _fit_binary(self, X, y, rng, *, loss, budget, settings, sample_weight):
        # Weights in [0, 1] keep the minibatch loss convex and at most beta-smooth
        # (the steps from beta stay non-expansive) and the differing row's
        # gradient norm <= R: the sensitivity above holds as computed.
        w = _permutation_sgd_path(X, y, loss, settings, rng, sample_weight)
        if settings["mechanism"] == "discrete_gaussian":
            granularity, sigma2_steps, sigma = settings["discrete"]
            released = release_on_grid(w, "discrete_gaussian", sigma2_steps, granularity, rng)
            return released, {"sigma": sigma, "granularity": granularity}
        sigma = settings["sigma"]
        return w + rng.normal(0.0, sigma, size=w.shape), {"sigma": sigma, "granularity": None}

    def _fit_multinomial(self, X, y_index, n_classes, rng, *, budget, settings, sample_weight):
        # One softmax run on the K d coefficients: weights in [0, 1] keep the minibatch loss
        # convex and (R^2 / 2 + alpha)-smooth and the differing row's gradient norm <=
        # sqrt(2) R, so Wu et al.'s (2017) bound with L = sqrt(2) R holds (_set_sensitivity).
        W = _permutation_sgd_softmax_path(X, y_index, n_classes, settings, rng, sample_weight)
        if settings["mechanism"] == "discrete_gaussian":
            granularity, sigma2_steps, sigma = settings["discrete"]
            released = release_on_grid(W.ravel(), "discrete_gaussian", sigma2_steps,
                                       granularity, rng).reshape(W.shape)
            return released, {"sigma": sigma, "granularity": granularity}
        sigma = settings["sigma"]
        # The analytic Gaussian on all K d coordinates at once (Balle and Wang 2018).
        return W + rng.normal(0.0, sigma, size=W.shape), {"sigma": sigma, "granularity": None}

    def _record(self, infos, settings):
        self.sensitivity_ = settings["sensitivity"]
        self.noise_std_ = infos[0]["sigma"]
        self.noise_granularity_ = infos[0]["granularity"]
        self.learning_rate_ = settings["learning_rate"]
        self.epochs_ = settings["epochs"]
        self.n_iter_ = settings["epochs"] * settings["n_batches"]
        self.multi_class_ = ("binary" if len(self.classes_) == 2 else
                             "multinomial" if settings["n_classes"] else "ovr")
