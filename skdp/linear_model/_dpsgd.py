"""DP-SGD for linear classifiers (Thakkar (2019), Alg. 4; Bassily et al. 2014, Abadi et al. 2016)."""

import math
import sys
from functools import lru_cache

import dp_accounting
import numpy as np
from scipy.special import softmax

from skdp.accounting import calibrate_subsampled_gaussian
from skdp.accounting._subsampled import subsampled_gaussian_event
from skdp.linear_model._losses import get_loss
from skdp.linear_model._private_glm import (
    MULTI_CLASS,
    PrivateGLMClassifier,
    calibrate_before_charge,
    chooses_softmax,
    delta_one_over_n_squared,
    fill_glm_doc,
)
from skdp.mechanisms import gaussian_sigma_analytic
from skdp.utils._clipping import clip_rows_l2, row_norms_l2
from skdp.utils._validation import check_option, check_positive_int, check_real

__all__ = ["DPSGDClassifier", "dpsgd_default_batch_size", "dpsgd_default_learning_rate",
           "dpsgd_noise_multiplier", "dpsgd_schedule", "dpsgd_weight_growth"]

CLIPPINGS = ("gradient", "data")
SCHEDULES = ("constant", "sqrt", "linear")
# Largest factor by which the schedule's weight decay may expand the weights before
# its steps contract them (see dpsgd_weight_growth): beyond it they could overflow.
_MAX_WEIGHT_GROWTH = 1e100
# Largest epsilon the subsampled-Gaussian accountant is asked about: its replace-one
# bracket converts add/remove (epsilon / 2, delta / (1 + e^(epsilon / 2))) by group
# privacy, and e^(epsilon / 2) overflows a float beyond 2 ln(max float) ~ 1419.6.
# Above it the noise multiplier comes from a closed form without amplification by
# subsampling (see dpsgd_noise_multiplier): valid, and already tiny there.
ACCOUNTANT_MAX_EPSILON = 2.0 * math.log(sys.float_info.max)


# The default expected batch size, and the most steps a default run takes (a larger
# table gets a larger batch instead of more steps): chosen on the derive tables of
# the real-data collection (docs/guide/sgd.rst).
DEFAULT_BATCH_SIZE = 64
DEFAULT_MAX_STEPS = 20_000


# Noise-to-signal target of the default batch (noise norm on the mean clipped gradient,
# in units of C) and the constant A of the approximation z ~ A q sqrt(T) / epsilon of the
# replace-one accountant's multiplier (fitted at delta ~ 1 / n^2, q <= 0.1, z >= 1).
DEFAULT_GRADIENT_NOISE = 2.0
_Z_SCALING = 11.0
_MAX_DEFAULT_SAMPLE_RATE = 0.1


def dpsgd_default_batch_size(n_samples, epochs, epsilon=math.inf, n_coef=1):
    """Default expected batch size.

    ``b = min(max(64, ceil(epochs n / 20000), ceil(A^2 epochs d / (epsilon^2 n r^2))),
    max(64, int(n / 10)))`` with ``A = 11``, ``r = 2``.

    * 64 rows per step: small batches give more steps for the same passes,
      which the badly conditioned problems of real rows need;
    * at most about 20,000 steps (larger tables get larger batches, so a fit
      costs about ``epochs n`` row gradients);
    * at small ``epsilon`` (one class problem's share), a batch large enough
      that the noise on the mean clipped gradient, of norm about
      ``z sqrt(d) / b``, stays below ``r C``: with the scaling
      ``z ~ A q sqrt(T) / epsilon`` of the subsampled Gaussian (Abadi et al.
      2016, Thm. 1; ``A`` fitted to the replace-one accountant at
      ``delta ~ 1 / n^2``), that is ``b >= A^2 epochs d / (epsilon^2 n r^2)``;
    * at most a tenth of the rows (beyond, the amplification by
      subsampling fades and the steps get few).

    Public inputs only (``n_samples`` is public under replace-one
    neighbours). The batch size is a hyperparameter of the accounted
    mechanism: the noise is calibrated for it, whatever rule chose it.
    """
    b = max(DEFAULT_BATCH_SIZE, int(math.ceil(epochs * n_samples / DEFAULT_MAX_STEPS)))
    if epsilon < math.inf:
        # (epsilon * epsilon is inf, not an OverflowError, at a huge epsilon.)
        noise_b = (_Z_SCALING ** 2 * epochs * n_coef
                   / (epsilon * epsilon * n_samples * DEFAULT_GRADIENT_NOISE ** 2))
        if noise_b > b:
            b = int(min(math.ceil(min(noise_b, 1e18)),
                        max(b, int(n_samples * _MAX_DEFAULT_SAMPLE_RATE))))
    return b


# Noise-norm target of the default step, in units of 1 / data_norm (docs/guide/sgd.rst).
DEFAULT_NOISE_NORM = 30.0
# Bound L on the excess loss that the noise alone keeps a run at, eta_0 s^2 / 4 with
# s^2 = z^2 C^2 d / b^2 the expected squared norm of the noise on one step's mean
# gradient (the stationary excess loss of SGD with gradient-noise covariance of trace
# s^2, Mandt, Hoffman and Blei 2017): the default step is at most 4 L b^2 / (z^2 C^2 d).
# L = 0.375, about half the loss ln 2 of the zero model, chosen on the derive tables
# among 0.125, 0.375, 1 and no bound (docs/guide/sgd.rst).
DEFAULT_NOISE_LOSS = 0.375


def dpsgd_default_learning_rate(smoothness, noise_multiplier, batch_size, steps, n_coef,
                                data_norm, noise_norm=None):
    """Default step ``eta_0 = min(2 / beta, nu b / (z C^2 sqrt(d T / 3)), 4 L b^2 / (z^2 C^2 d))``.

    ``2 / beta``, with ``beta`` the smoothness of the loss for rows of norm
    ``C = data_norm`` (``C^2 / 4`` for logistic, ``C^2 / (2 huber_h)`` for
    Huber), is the largest step for which gradient descent on a
    ``beta``-smooth loss does not diverge; it is the step at a very large
    ``epsilon``. The second term caps the noise: with the ``"linear"``
    schedule the injected noise ``eta_t N(0, (z C)^2 I_d) / b`` sums, over
    ``T`` steps, to a vector of expected norm about
    ``eta_0 z C sqrt(d T / 3) / b`` (before the loss' curvature damps it),
    which the cap holds at ``nu / C`` (``nu = DEFAULT_NOISE_NORM = 30``,
    chosen on real tables; see the user guide). The third term bounds the
    excess loss at which the noise alone holds the run: a step ``eta`` with
    gradient noise of expected squared norm ``s^2 = z^2 C^2 d / b^2`` (the
    noise on one step's mean clipped gradient) keeps the loss about
    ``eta s^2 / 4`` above its minimum (Mandt, Hoffman and Blei 2017); the
    cap holds that at ``L = DEFAULT_NOISE_LOSS = 0.375``, about half the
    loss ``ln 2`` of the zero model. It binds only when the noise is large
    (below the second term when ``b sqrt(3 T) / (2 z sqrt(d)) < 30``, e.g.
    ``epsilon`` 0.1 and below on binary tables of a few thousand rows),
    where the model then falls back towards the majority class instead of
    below it.
    ``z`` is the calibrated noise multiplier, ``b`` the expected batch
    size, ``d`` the number of coefficients: all public. The step is a
    post-processing choice: the privacy does not depend on it.
    """
    nu = DEFAULT_NOISE_NORM if noise_norm is None else noise_norm
    with np.errstate(over="ignore", divide="ignore"):
        # (A tiny data_norm makes the terms overflow: the step is then capped at
        # 1e300, whose image on the weights, 1e300 data_norm, is finite.)
        step = np.float64(2.0) / np.float64(smoothness)
        cap = np.float64(nu * batch_size) / (np.float64(noise_multiplier) * data_norm * data_norm
                                            * math.sqrt(n_coef * steps / 3.0))
        ratio = np.float64(batch_size) / (np.float64(noise_multiplier) * data_norm)
        loss_cap = np.float64(4.0 * DEFAULT_NOISE_LOSS) * ratio * ratio / n_coef
    return float(min(step, cap, loss_cap, 1e300))


def dpsgd_schedule(n_samples, batch_size, epochs):
    """Poisson sampling rate and number of steps of a DP-SGD run.

    Parameters
    ----------
    n_samples : int
        Number of training rows (public).
    batch_size : int
        Expected batch size.
    epochs : int
        Expected passes over the data.

    Returns
    -------
    sample_rate : float
        ``q = min(1, batch_size / n_samples)``.
    steps : int
        ``ceil(epochs / q)``: ``epochs`` expected passes.
    """
    sample_rate = min(1.0, batch_size / n_samples)
    return sample_rate, int(math.ceil(epochs / sample_rate - 1e-9))


def dpsgd_weight_growth(learning_rate, alpha, schedule, steps):
    """How much the L2 weight decay of a schedule's steps can expand the weights.

    Step ``t`` multiplies the weights by ``1 - eta_t alpha`` (before adding
    the noisy gradient), with ``eta_t = learning_rate`` (``"constant"``) or
    ``learning_rate / sqrt(t)`` (``"sqrt"``). A factor below -1 expands them.
    This depends on public parameters only; it bears on the numerics of the
    released weights, not on the privacy (every step is a post-processing of
    clipped and noised gradients, whatever the step size).

    Parameters
    ----------
    learning_rate : float
        ``eta_0 > 0``.
    alpha : float
        L2 regularization ``>= 0``.
    schedule : {"constant", "sqrt"}
    steps : int
        Number of steps of the run.

    Returns
    -------
    growth : float
        ``max_t prod_{s <= t} |1 - eta_s alpha|`` (at least 1; ``inf`` when
        it exceeds ``1e100``, where the loop stops).
    last : float
        ``eta_T alpha`` of the last step ``T = steps``: above 2 the run ends
        while its steps still expand the weights.
    """
    c = learning_rate * alpha
    if not math.isfinite(c):
        return math.inf, math.inf
    if schedule == "constant":
        if c <= 2.0:
            return 1.0, c
        log_growth = steps * math.log(c - 1.0)
        return (math.exp(log_growth) if log_growth <= math.log(_MAX_WEIGHT_GROWTH)
                else math.inf), c
    # Both schedules decrease: eta_t alpha > 2 (a factor below -1) on a first stretch of
    # steps only, and the factors have modulus <= 1 afterwards: the largest prefix
    # product ends there.
    factor = _schedule_factor(schedule, steps)
    log_growth, t = 0.0, 1
    while t <= steps and c * factor(t) > 2.0:
        log_growth += math.log(c * factor(t) - 1.0)
        if log_growth > math.log(_MAX_WEIGHT_GROWTH):
            return math.inf, c * factor(steps)
        t += 1
    return math.exp(log_growth), c * factor(steps)


def _schedule_factor(schedule, steps):
    """``t -> eta_t / eta_0`` for ``t = 1, ..., steps``."""
    if schedule == "sqrt":
        return lambda t: 1.0 / math.sqrt(t)
    if schedule == "linear":
        return lambda t: (steps - t + 1) / steps
    return lambda t: 1.0


@lru_cache(maxsize=256)
def dpsgd_noise_multiplier(epsilon, delta, sample_rate, steps):
    """Noise multiplier of DP-SGD for replace-one neighbours (cached; it depends on no data).

    ``steps`` Poisson-subsampled Gaussian steps (rate ``sample_rate``) with
    noise ``N(0, (z C)^2)`` on a sum of contributions of norm at most ``C``
    are ``(epsilon, delta)``-DP for replace-one neighbours for the returned
    ``z`` (:func:`skdp.accounting.calibrate_subsampled_gaussian` with the
    privacy-loss-distribution accountant of dp-accounting, ``REPLACE_ONE``
    relation; about twice the noise that add/remove neighbours would need).
    This replaces the closed form of
    Thakkar (2019), Alg. 4 line 1 (``sigma^2 = 16 Delta^2 T log(1/delta) / (m^2 epsilon^2)``
    for the averaged gradient, with sampling *with replacement*), which is
    looser and tied to a different sampling scheme.

    For ``epsilon`` above :data:`ACCOUNTANT_MAX_EPSILON` (``2 ln(max
    float)``, about 1419.6, where the accountant's group-privacy bracket
    overflows) the multiplier is instead the one that ignores the
    amplification by subsampling: each step, the differing row sampled or
    not, is at most a Gaussian mechanism of sensitivity ``2 C`` (replace-one)
    and noise ``z C``, i.e. ``(2 / z)``-Gaussian DP; ``T`` adaptive steps are
    ``(2 sqrt(T) / z)``-GDP (Dong, Roth and Su 2022, Cor. 3.3), which is
    ``(epsilon, delta)``-DP exactly when the Gaussian mechanism of
    sensitivity ``2 sqrt(T)`` and deviation ``z`` is (Balle and Wang 2018,
    Thm. 8). That ``z`` (about ``2 sqrt(T / (2 epsilon))``) is larger than the
    accountant's would be, but small enough that the model is, up to a noise
    of relative size about ``z / batch_size``, the non-private one: a very
    large ``epsilon`` never fails.

    Returns
    -------
    noise_multiplier : float
    """
    if epsilon > ACCOUNTANT_MAX_EPSILON:
        # Dong, Roth and Su (2022), Cor. 3.3 (composition of T (2/z)-GDP steps) and
        # Balle and Wang (2018), Thm. 8 (the exact (epsilon, delta) of mu-GDP): z is
        # the analytic Gaussian deviation for sensitivity 2 sqrt(T), noise unit C.
        return gaussian_sigma_analytic(2.0 * math.sqrt(steps), epsilon, delta)
    # (dp-accounting's notes on the Renyi orders it drops are silenced by the calibration.)
    return calibrate_subsampled_gaussian(epsilon, delta, sample_rate, steps,
                                         accountant="pld", neighbours="replace-one")


def _clipped_gradient_sum(X_batch, y_batch, norms, w, loss, clip_norm, clip_gradients,
                          sample_weight=None):
    """Sum over the batch of per-example gradients, each of norm <= clip_norm.

    With ``sample_weight`` (in ``[0, 1]``) each clipped gradient is then
    multiplied by its row's weight: the contribution keeps norm <= clip_norm,
    and the clipping cannot erase a weight (clipping ``w_i g_i`` instead would
    give a row of weight 0.1 and a large gradient the influence of a row of
    weight 1).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        z = y_batch * np.asarray(X_batch @ w).ravel()
        coef = loss.derivative(z) * y_batch  # per-example gradient = coef_i * x_i
        if clip_gradients:
            grad_norms = np.abs(coef) * norms
            scale = np.minimum(1.0, clip_norm / np.maximum(grad_norms, 1e-300))
            coef = coef * scale
            # A finite row whose norm overflows to inf gives 0 * inf = NaN when l'(z) = 0
            # (and a margin can be inf - inf): that NaN would reach every weight and
            # single the row out. Such a contribution is dropped (zero is in the ball).
            coef[~np.isfinite(coef)] = 0.0
    if sample_weight is not None:
        coef = coef * sample_weight
    return np.asarray(X_batch.T @ coef).ravel()


def _clipped_softmax_gradient_sum(X_batch, y_batch, norms, W, clip_norm, sample_weight=None):
    """Sum over the batch of the softmax per-example gradients, each clipped to norm clip_norm.

    A row's gradient of the softmax loss in ``W`` (shape ``(K, d)``) is the
    outer product ``(p - e_y) x^T``, of Frobenius norm ``||p - e_y|| ||x||``
    (``y_batch`` holds the class indices ``y``); it is scaled to norm at
    most ``clip_norm``, then multiplied by the row's weight in ``[0, 1]``.
    Returns the ``(K, d)`` sum.
    """
    # No floating-point event may raise here (e.g. under np.seterr(all="raise"), the
    # underflow of exp in the softmax): it would depend on one row, after the charge.
    with np.errstate(all="ignore"):
        residual = softmax(np.asarray(X_batch @ W.T), axis=1)
        residual[np.arange(len(y_batch)), y_batch] -= 1.0
        grad_norms = np.linalg.norm(residual, axis=1) * norms
        residual *= np.minimum(1.0, clip_norm / np.maximum(grad_norms, 1e-300))[:, None]
        # As in the binary case: a non-finite contribution is dropped (zero is in the ball).
        residual[~np.isfinite(residual).all(axis=1)] = 0.0
        if sample_weight is not None:
            residual *= sample_weight[:, None]
        return np.asarray(X_batch.T @ residual).T


def _dpsgd_path(X, y, loss, settings, noise_std, rng, sample_weight=None, n_classes=None):
    """Noisy minibatch gradient descent from 0 (Thakkar (2019), Alg. 4, lines 2-7, Poisson batches).

    ``n_classes=None``: one margin-loss problem on labels ``y`` in {-1, +1}.
    Otherwise one softmax problem on the class indices ``y``, whose weights
    are a ``(n_classes, d)`` matrix with noise on every entry.
    """
    n, d = X.shape
    q, steps = settings["sample_rate"], settings["steps"]
    clip_gradients = settings["clipping"] == "gradient"
    norms = row_norms_l2(X) if clip_gradients else None
    expected_batch = settings["expected_batch"]  # public divisor (never the realized batch size)
    factor = _schedule_factor(settings["schedule"], steps)
    if n_classes is None:
        w = np.zeros(d)
    else:  # the softmax gradient is clipped per example: clipping == "gradient"
        w = np.zeros((n_classes, d))
    for t in range(1, steps + 1):
        if q < 1.0:
            # Poisson sampling (each row independently with probability q): a
            # Binomial(n, q) number of rows, chosen uniformly without replacement.
            batch = np.sort(rng.choice(n, size=rng.binomial(n, q), replace=False))
        else:
            batch = slice(None)
        weights = None if sample_weight is None else sample_weight[batch]
        if n_classes is None:
            g = _clipped_gradient_sum(X[batch], y[batch], None if norms is None else norms[batch],
                                      w, loss, settings["data_norm"], clip_gradients, weights)
        else:
            g = _clipped_softmax_gradient_sum(X[batch], y[batch], norms[batch], w,
                                              settings["data_norm"], weights)
        g += rng.normal(0.0, noise_std, size=w.shape)
        eta = settings["learning_rate"] * factor(t)
        w -= eta * (g / expected_batch + settings["alpha"] * w)
    return w


@fill_glm_doc
class DPSGDClassifier(PrivateGLMClassifier):
    """Differentially private minibatch SGD for a linear classifier (DP-SGD).

    Every step samples each row independently with probability
    ``q = batch_size / n_samples`` (Poisson sampling), sums the per-example
    gradients clipped to norm ``data_norm``, adds Gaussian noise
    ``N(0, (z data_norm)^2)`` and takes a gradient step (Thakkar (2019), Alg. 4;
    Bassily, Smith and Thakurta 2014; Abadi et al. 2016). The noise multiplier
    ``z`` comes from the privacy-loss-distribution accountant of
    dp-accounting (replace-one neighbours) for the requested
    ``(epsilon, delta)``, not from a closed form.

    Parameters
    ----------
    %(epsilon)s
    %(delta_n2)s
    %(loss)s
    data_norm : float, default=1.0
        Bound ``C`` on each example's contribution: with
        ``clipping="gradient"`` every per-example gradient is clipped to L2
        norm ``C``; with ``clipping="data"`` every (augmented) row is clipped
        to L2 norm ``C``, which bounds the gradient norms by ``C``
        (``|l'| <= 1``). Choose it without looking at the private data.
    clipping : {"gradient", "data"}, default="gradient"
        Per-example gradient clipping (Abadi et al.) or row clipping (seed
        004, Sec. 4.4.1 "Sample clipping").
    batch_size : int or None, default=None
        Expected minibatch size ``k`` (the sampling rate is ``k / n``).
        ``None``: 64 rows, more when the run would take more than 20,000
        steps or when a small ``epsilon`` needs a larger batch to keep the
        noise on the mean gradient below about ``2 data_norm``, at most
        ``n / 10`` (:func:`dpsgd_default_batch_size`; stored in
        ``batch_size_``).
    epochs : int, default=20
        Expected passes over the data; the run takes ``ceil(epochs n / k)`` steps.
    learning_rate : float or None, default=None
        Step size ``eta_0`` > 0. ``None``: ``2 / beta`` with ``beta`` the
        smoothness of the loss for rows of norm ``data_norm``
        (``8 / data_norm^2`` for the logistic loss, ``4 huber_h /
        data_norm^2`` for Huber), lowered at small ``epsilon`` so that the
        summed noise of the steps, and the excess loss the noise holds the
        run at, stay bounded (:func:`dpsgd_default_learning_rate`); stored
        in ``learning_rate_``. The softmax fit uses the logistic loss's
        ``beta`` too (see the user guide, "Multi-class DP-SGD").
    learning_rate_schedule : {"linear", "constant", "sqrt"}, default="linear"
        ``eta_t = eta_0 (T - t + 1) / T`` (decreasing to ``eta_0 / T`` at the
        last step ``T``), ``eta_0`` or ``eta_0 / sqrt(t)``. The defaults of
        ``batch_size``, ``epochs``, ``learning_rate`` and the schedule were
        chosen on real tables with rows of unit norm (see the user guide,
        "Defaults of the SGD classifiers"): the model at a very large
        ``epsilon`` is then close to scikit-learn's ``LogisticRegression()``.
    alpha : float, default=0.0
        L2 regularization (its gradient is data-independent and added after
        the noise), >= 0. A step multiplies the weights by
        ``1 - eta_t alpha``, and a factor below -1 expands them: the fit
        refuses (before spending) a schedule whose last step still has
        ``eta_t alpha > 2`` (for the constant schedule: ``learning_rate *
        alpha > 2``) or whose first steps would expand the weights by more
        than ``1e100`` in all (:func:`dpsgd_weight_growth`). The ``"sqrt"``
        schedule may start with ``eta_0 alpha > 2`` when its steps shrink
        below ``2 / alpha`` before the run ends. This is about the numerics
        of the weights only: the privacy does not depend on the step size.
    fit_intercept : bool, default=True
        Append a constant feature 1 whose weight is the intercept (it counts
        in the clipped norm).
    multi_class : {"auto", "multinomial", "ovr"}, default="auto"
        With more than two classes: ``"multinomial"`` fits one softmax model
        (one run on all ``K`` weight vectors; per-example gradients
        ``(p - e_y) x^T`` clipped to norm ``data_norm``), ``"ovr"`` fits ``K``
        one-vs-rest runs whose steps share the budget. ``"auto"``:
        ``"multinomial"`` for ``loss="logistic"`` with ``clipping="gradient"``,
        else ``"ovr"``. The softmax fit needs about ``sqrt(K)`` times less
        noise (see the user guide, "Multi-class DP-SGD"); being one run, it
        does not use ``n_jobs``.
    %(classes)s
    %(class_weight)s
    %(n_jobs)s
    %(random_state)s
    %(accountant)s
    %(verbose)s

    Attributes
    ----------
    %(linear_attributes)s
    noise_multiplier_ : float
        ``z``: noise standard deviation divided by ``data_norm``.
    batch_size_ : int
        Expected minibatch size used.
    learning_rate_ : float
        ``eta_0`` used.
    sample_rate_ : float
        Poisson sampling probability ``q``.
    n_iter_ : int
        Number of noisy steps (of each run).
    multi_class_ : {"binary", "multinomial", "ovr"}
        The fit made.
    privacy_event_ : dp_accounting.DpEvent
        What was released: the ``T`` Poisson-sampled Gaussian steps (``K T``
        for ``K`` one-vs-rest runs), for a tight
        :class:`~skdp.BudgetAccountant` (``composition="pld"``).
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta_)``.
    delta_ : float
        The delta used.

    Privacy
    -------
    ``(epsilon, delta)``-DP for replace-one neighbours (one row, features,
    label and weight, replaced by another); ``n_samples`` (which sets the
    sampling rate, the steps and the divisor ``q n``), the parameters and
    ``classes`` are public. Each step is the Poisson-subsampled Gaussian
    mechanism on a sum of contributions of norm at most ``data_norm`` (row
    weights clipped to ``[0, 1]`` multiply the clipped gradients; a
    non-finite contribution is replaced by zero); the steps are accounted
    for with privacy loss distributions (dp-accounting's ``PLDAccountant``,
    ``REPLACE_ONE``; Doroshenko et al. 2022) instead of the closed form of
    Thakkar (2019), Alg. 4, whose sampling with replacement is replaced by
    the Poisson sampling the accountant analyses. A softmax fit is one run
    (its per-example gradients on the ``K`` weight vectors have norm at most
    ``data_norm`` together); the ``K n_iter_`` steps of one-vs-rest runs
    compose under one account at the whole ``(epsilon, delta)``. *Correction:* earlier versions calibrated
    for add/remove neighbours (worth about ``1.8 epsilon`` for replace-one).
    Details: :doc:`/guide/sgd`.
    %(label_set_privacy)s

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    PermutationSGDClassifier : SGD with output perturbation (Wu et al. 2017).

    References
    ----------
    R. Bassily, A. Smith and A. Thakurta. Private empirical risk minimization:
    efficient algorithms and tight error bounds. FOCS 2014.

    M. Abadi et al. Deep learning with differential privacy. CCS 2016.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skdp.linear_model import DPSGDClassifier
    >>> X, y = make_classification(1000, 5, random_state=0)
    >>> clf = DPSGDClassifier(epsilon=1.0, delta=1e-5, epochs=2, classes=[0, 1],
    ...                       random_state=0).fit(X, y)
    >>> clf.batch_size_, clf.n_iter_, clf.learning_rate_
    (64, 32, 8.0)
    """

    _default_delta = staticmethod(delta_one_over_n_squared)
    _allow_zero_delta = False

    def __init__(self, epsilon=1.0, delta=None, *, loss="logistic", huber_h=0.1, data_norm=1.0,
                 clipping="gradient", batch_size=None, epochs=20, learning_rate=None,
                 learning_rate_schedule="linear", alpha=0.0, fit_intercept=True,
                 multi_class="auto", classes=None, class_weight=None, n_jobs=None,
                 random_state=None, accountant=None, verbose=0):
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.huber_h = huber_h
        self.data_norm = data_norm
        self.clipping = clipping
        self.batch_size = batch_size
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.learning_rate_schedule = learning_rate_schedule
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.multi_class = multi_class
        self.classes = classes
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def _check_params(self, n_samples):
        epochs = check_positive_int(self.epochs, "epochs")
        batch_size = (dpsgd_default_batch_size(n_samples, epochs) if self.batch_size is None
                      else check_positive_int(self.batch_size, "batch_size"))
        sample_rate, steps = dpsgd_schedule(n_samples, batch_size, epochs)
        data_norm = float(self.data_norm)  # validated by fit
        alpha = check_real(self.alpha, "alpha", low=0.0)
        schedule = check_option(self.learning_rate_schedule, "learning_rate_schedule", SCHEDULES)
        settings = {
            "default_batch": self.batch_size is None,
            "n_samples": n_samples,
            "epochs": epochs,
            "batch_size": batch_size,
            "clipping": check_option(self.clipping, "clipping", CLIPPINGS),
            "schedule": schedule,
            "alpha": alpha,
            "sample_rate": sample_rate,
            "steps": steps,
            "expected_batch": sample_rate * n_samples,  # public divisor q n
            "data_norm": data_norm,
            "default_step": self.learning_rate is None,
            "multi_class": check_option(self.multi_class, "multi_class", MULTI_CLASS),
            "n_classes": None,  # set by _fits_multinomial for a softmax fit
        }
        if self.learning_rate is None:
            try:
                beta = get_loss(self.loss, self.huber_h).smoothness(data_norm)
            except OverflowError:  # data_norm ** 2 of a Python float
                beta = math.inf
            if not beta < math.inf:
                raise ValueError(
                    f"The default learning_rate (2 / beta) underflows to 0 for data_norm="
                    f"{data_norm:g}: beta, the smoothness of the loss, overflows. Pass "
                    "learning_rate, or rescale the features. Nothing was spent.")
            settings["beta"] = beta  # the step is resolved in _prepare (it needs z)
            return settings
        settings["learning_rate"] = check_real(self.learning_rate, "learning_rate", low=0.0,
                                               low_inclusive=False)
        self._check_step(settings)
        return settings

    def _check_step(self, settings):
        learning_rate, alpha = settings["learning_rate"], settings["alpha"]
        schedule, steps, data_norm = settings["schedule"], settings["steps"], settings["data_norm"]
        # Numerics, not privacy: the privacy rests on clipping, noise and the
        # subsampled accounting, whatever the step size. A step multiplies the weights
        # by 1 - eta_t alpha; factors below -1 expand them. A run that ends while
        # expanding (always, for a constant step) or whose transient expansion could
        # overflow would release diverged or NaN weights after the budget is spent.
        growth, last = dpsgd_weight_growth(learning_rate, alpha, schedule, steps)
        if last > 2.0 or growth > _MAX_WEIGHT_GROWTH:
            where = ("every step" if schedule == "constant" else
                     f"the last of the {steps} steps" if last > 2.0 else
                     f"the first steps (by more than {_MAX_WEIGHT_GROWTH:g} in all)")
            raise ValueError(
                f"learning_rate={learning_rate:g} and alpha={alpha:g} with "
                f"learning_rate_schedule={schedule!r}: {where} multiplies the weights by "
                "1 - eta_t * alpha < -1, so they diverge. Use a smaller learning_rate or "
                "alpha (or more epochs with the 'sqrt' schedule, whose steps shrink). "
                "Nothing was spent.")
        if not math.isfinite(learning_rate * data_norm):
            raise ValueError(
                f"learning_rate * data_norm overflows (learning_rate={learning_rate:g}, "
                f"data_norm={data_norm:g}): the gradient steps would be infinite. Use a "
                "smaller learning_rate or rescale the features. Nothing was spent.")

    def _fits_multinomial(self, n_classes, settings):
        # The softmax gradient (p - e_y) x^T has norm up to sqrt(2) ||x||: it is clipped
        # per example, and it is the logistic loss's.
        if not chooses_softmax(
                settings["multi_class"],
                self.loss == "logistic" and settings["clipping"] == "gradient",
                "loss='logistic' and clipping='gradient' (the softmax loss, with its "
                "per-example gradients clipped)"):
            return False
        # The default step stays the logistic loss's 2 / beta = 8 / C^2, twice the 2 / beta of
        # the softmax's worst-case smoothness C^2 / 2: the clipped steps stay bounded, and
        # the smaller step leaves 20 epochs short of LogisticRegression() (docs/guide/sgd.rst).
        settings["n_classes"] = n_classes
        return True

    def _clip(self, X, data_norm):
        return clip_rows_l2(X, data_norm) if self.clipping == "data" else X

    def _noise_multiplier(self, settings, budget):
        """``z``; a test subclass shrinks it to build an under-noised copy."""
        # One-vs-rest: the K runs' K T subsampled-Gaussian steps compose under one
        # privacy-loss-distribution account at the whole (epsilon, delta)
        # (OneVsRestBudget.composed_steps; T steps at (epsilon, delta) when K = 1).
        epsilon, delta, steps = budget.composed_steps(settings["steps"])
        return dpsgd_noise_multiplier(epsilon, delta, settings["sample_rate"], steps)

    def _release_event(self, settings, budget):
        # The K T steps at the calibrated z, as they were accounted in
        # dpsgd_noise_multiplier (replace-one neighbours; skdp.accounting._events).
        # (K runs of T steps each, whether accounted jointly or split evenly.)
        steps = budget.n_problems * settings["steps"]
        z = settings["noise_multiplier"]
        if budget.composed_steps(settings["steps"])[0] > ACCOUNTANT_MAX_EPSILON:
            # Not amplified: each step is a Gaussian of sensitivity 2 C, noise z C.
            return dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(z / 2.0), steps)
        return subsampled_gaussian_event(z, settings["sample_rate"], steps)

    def _prepare(self, settings, budget):
        if settings["default_batch"]:
            # The budget enters the default batch (public): with K runs accounted for
            # together, z grows as sqrt(K T) / epsilon, the z of one run at epsilon / sqrt(K).
            epsilon, _, k = budget.accounted()
            n = settings["n_samples"]
            batch_size = dpsgd_default_batch_size(
                n, settings["epochs"], epsilon / math.sqrt(k), self._n_coef(settings))
            q, steps = dpsgd_schedule(n, batch_size, settings["epochs"])
            settings.update(batch_size=batch_size, sample_rate=q, steps=steps,
                            expected_batch=q * n)
        # The calibration (cached) is data-independent but can fail, e.g. overflow
        # at epsilon = 1e4, or dp-accounting's own errors (no bracketing interval at
        # epsilon = 1e300): fail before the budget is charged. Checked: the noise
        # z data_norm on the gradient sum, and (if larger) its image
        # learning_rate z data_norm / (q n) on the weights. ``z`` travels to the class
        # problems in ``settings``: a joblib worker would recompute it with a cold cache
        # (seconds of PLD accounting per worker).
        def calibrate():
            settings["noise_multiplier"] = self._noise_multiplier(settings, budget)
            if settings["default_step"]:
                settings["learning_rate"] = dpsgd_default_learning_rate(
                    settings["beta"], settings["noise_multiplier"], settings["expected_batch"],
                    settings["steps"], self._n_coef(settings), settings["data_norm"])
            return (settings["noise_multiplier"] * settings["data_norm"]
                    * max(1.0, settings["learning_rate"] / settings["expected_batch"]))

        calibrate_before_charge(
            calibrate, "DP-SGD's noise", budget,
            {"data_norm": settings["data_norm"], "sample_rate": settings["sample_rate"],
             "steps": settings["steps"]}, errors=(Exception,))
        if settings["default_step"] or settings["default_batch"]:
            self._check_step(settings)  # the resolved defaults, still before the charge

    @staticmethod
    def _noise_std(settings):
        """Deviation ``z C`` of the noise on each step's sum of clipped gradients."""
        return settings["noise_multiplier"] * settings["data_norm"]

    def _fit_binary(self, X, y, rng, *, loss, budget, settings, sample_weight):
        z = settings["noise_multiplier"]  # calibrated once, in _prepare
        # Weighting after clipping keeps each contribution's norm <= w C <= C,
        # the sensitivity the subsampled-Gaussian accounting is calibrated to.
        w = _dpsgd_path(X, y, loss, settings, self._noise_std(settings), rng, sample_weight)
        return w, {"noise_multiplier": z}

    def _fit_multinomial(self, X, y_index, n_classes, rng, *, budget, settings, sample_weight):
        z = settings["noise_multiplier"]
        # One run on the K d coefficients: each example's softmax gradient is clipped to
        # Frobenius norm C and weighted, so the steps are the same subsampled Gaussian
        # mechanism (noise z C on every coefficient), accounted for once.
        W = _dpsgd_path(X, y_index, None, settings, self._noise_std(settings), rng,
                        sample_weight, n_classes=n_classes)
        return W, {"noise_multiplier": z}

    def _record(self, infos, settings):
        self.batch_size_ = settings["batch_size"]
        self.learning_rate_ = settings["learning_rate"]
        self.noise_multiplier_ = infos[0]["noise_multiplier"]
        self.sample_rate_ = settings["sample_rate"]
        self.n_iter_ = settings["steps"]
        self.multi_class_ = ("binary" if len(self.classes_) == 2 else
                             "multinomial" if settings["n_classes"] else "ovr")
