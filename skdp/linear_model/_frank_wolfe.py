"""Private Frank-Wolfe over the L1 ball (Thakkar 2019, Alg. 5; Talwar, Thakurta and Zhang 2015)."""

import math

import numpy as np
import scipy.sparse as sp
from scipy import optimize

from skdp.accounting import PrivacyBudget, advanced_composition, zcdp_for_dp
from skdp.linear_model._private_glm import (
    PrivateGLMClassifier,
    calibrate_before_charge,
    delta_one_over_n_squared,
    fill_glm_doc,
)
from skdp.utils._clipping import clip_entries, clip_rows_l2
from skdp.utils._validation import check_option, check_positive_int, check_real

__all__ = [
    "PrivateFrankWolfeClassifier",
    "frank_wolfe_default_radius",
    "frank_wolfe_default_steps",
    "frank_wolfe_noise",
    "frank_wolfe_score_sensitivity",
    "frank_wolfe_step_epsilon",
    "frank_wolfe_thesis_scale",
]

ACCOUNTINGS = ("thesis", "advanced", "zcdp")

# Default rules (derivation: docs/guide/frank_wolfe_and_amp.rst). max_iter=None takes the
# largest T <= _MAX_STEPS whose selection noise, in units of the score range C R, times
# ln(2 p) (the typical largest of 2 p Gumbel draws) stays within _NOISE_TARGET; at least
# _MIN_STEPS. l1_radius=None takes min(max(_RADIUS_PER_ROOT_STEP sqrt(T), 2 T / K),
# _MAX_RADIUS) / R with K the number of classes (2 for a binary problem): for binary
# problems 4.5 sqrt(T) up to T = 20, then T (the larger tables need larger weights); with
# K > 2 classes the linear branch is 2 T / K (each class score's noisy steps move the argmax).
# Chosen on the derive tables (wa_churn, credit_data, flights, digits) and generated data,
# checked on the others.
_NOISE_TARGET = 0.04
_MIN_STEPS = 1
_MAX_STEPS = 1000
_RADIUS_PER_ROOT_STEP = 4.5
_MAX_RADIUS = 200.0


def frank_wolfe_score_sensitivity(n_samples, data_norm, l1_radius):
    """Largest change of one vertex score ``<+-C e_j, grad L(theta; D)>`` between neighbours.

    Replace-one neighbours: coordinate ``j`` of the full-data gradient,
    ``(1/n) sum_i l'(z_i) y_i x_ij``, moves by at most ``2 R / n`` because
    ``|l'| <= 1`` (logistic and Huber) and ``|x_ij| <= R`` after entrywise
    clipping; the score of the vertex ``+-C e_j`` moves by ``C`` times that.

    Parameters
    ----------
    n_samples : int
        Number of training rows ``n`` (public).
    data_norm : float
        Entrywise bound ``R``.
    l1_radius : float
        Radius ``C`` of the L1 ball.

    Returns
    -------
    sensitivity : float
        ``2 C R / n``.
    """
    return 2.0 * l1_radius * data_norm / n_samples


def frank_wolfe_thesis_scale(n_samples, data_norm, l1_radius, epsilon, delta, n_steps):
    """The Laplace scale written in Thakkar (2019), Alg. 5, line 2.

    ``sigma^2 = 32 Delta^2 ||C||_1^2 T log(1/delta) / (m^2 epsilon^2)`` with
    ``Delta = R`` (the L1-Lipschitz constant of the loss under entrywise
    clipping), ``||C||_1 = l1_radius``, ``m = n_samples`` and ``T = n_steps``.

    Returns
    -------
    scale : float
        ``sqrt(32 T ln(1/delta)) R C / (n epsilon)``.
    """
    return (math.sqrt(-32.0 * n_steps * math.log(delta)) * data_norm * l1_radius
            / (n_samples * epsilon))


def _advanced_total(step_epsilon, delta, n_steps):
    # Thakkar (2019), Lemma 2.1.6 for n_steps pure step_epsilon-DP steps with delta' = delta.
    return advanced_composition([PrivacyBudget(step_epsilon)] * n_steps, delta).epsilon


def _advanced_step_epsilon(epsilon, delta, n_steps):
    """Largest per-step epsilon whose advanced composition stays within epsilon."""
    if _advanced_total(epsilon, delta, n_steps) <= epsilon:  # T = 1: nothing to compose
        return epsilon
    basic = epsilon / n_steps
    if _advanced_total(basic, delta, n_steps) >= epsilon:  # advanced no better than basic
        return basic
    root = optimize.brentq(lambda e: _advanced_total(e, delta, n_steps) - epsilon,
                           basic, epsilon, xtol=1e-15, rtol=1e-13)
    while _advanced_total(root, delta, n_steps) > epsilon:  # never round up
        root *= 1.0 - 1e-12
    return root


def frank_wolfe_step_epsilon(epsilon, delta, n_steps, accounting="zcdp", n_problems=1):
    """Per-step epsilon of a vertex selection so that ``n_steps`` of them are ``(epsilon, delta)``-DP.

    Parameters
    ----------
    epsilon : float
        Total epsilon of the run (of the ``n_problems`` runs together).
    delta : float
        Total delta; ``0`` uses basic composition (``epsilon / n_steps`` per step).
    n_steps : int
        Number of selections ``T`` of one run.
    accounting : {"thesis", "advanced", "zcdp"}, default="zcdp"
        ``"thesis"`` and ``"advanced"``: the largest ``epsilon_0`` whose
        advanced composition (Thakkar (2019), Lemma 2.1.6, with ``delta' = delta``)
        is at most ``epsilon`` (for few steps that is basic composition,
        ``epsilon / T``). ``"zcdp"``: each exponential-mechanism step is
        ``epsilon_0``-bounded-range, hence ``epsilon_0^2 / 8``-zCDP (Cesar and
        Rogers 2021); ``T`` steps compose to ``T epsilon_0^2 / 8``, set equal
        to the largest ``rho`` whose conversion (Canonne, Kamath and Steinke 2020, Cor. 13) stays
        within ``(epsilon, delta)``; the larger of this and the
        ``"advanced"`` value is returned (both analyses are valid, zCDP wins
        for many steps).
    n_problems : int, default=1
        ``K`` runs on the same rows (one-vs-rest) accounted for together:
        their ``K T`` selections compose under one account (``"advanced"``:
        advanced composition of ``K T`` steps; ``"zcdp"``: each run spends
        ``rho / K``). ``"thesis"`` keeps Thakkar's (2019) even split of
        ``(epsilon, delta)``.

    Returns
    -------
    step_epsilon : float
        ``epsilon_0``.
    """
    check_option(accounting, "accounting", ACCOUNTINGS)
    if accounting == "thesis" and n_problems > 1:
        # The paper's calibration: basic composition over the K problems.
        return frank_wolfe_step_epsilon(epsilon / n_problems, delta / n_problems, n_steps,
                                        accounting)
    total_steps = n_problems * n_steps
    if delta == 0.0:
        return epsilon / total_steps
    advanced = _advanced_step_epsilon(epsilon, delta, total_steps)
    if accounting != "zcdp":
        return advanced
    # Bounded-range zCDP: K T eps0^2 / 8 = rho (Cesar and Rogers 2021; zCDP adds up,
    # Bun and Steinke 2016, Lemma 2.3). Both analyses hold for the exponential
    # mechanism, so the larger per-step epsilon is valid.
    rho = zcdp_for_dp(epsilon, delta)
    return max(math.sqrt(8.0 * rho / total_steps), advanced)


def frank_wolfe_noise(n_samples, data_norm, l1_radius, epsilon, delta, n_steps,
                      accounting="zcdp", n_problems=1):
    """Noise of each private Frank-Wolfe selection.

    Selection with noise of scale ``b`` on scores of sensitivity ``s`` that may
    move in opposite directions is ``(2 s / b)``-DP both for report-noisy-max
    with Laplace noise and for the exponential mechanism (Gumbel noise, McSherry
    and Talwar 2007), so ``b = 2 s / epsilon_0``.

    - ``"thesis"``: Laplace report-noisy-max with the scale of Thakkar (2019),
      Alg. 5, line 2 (:func:`frank_wolfe_thesis_scale`). That closed form
      equals ``epsilon_0 = epsilon / sqrt(2 T ln(1/delta))`` and drops the
      second-order term ``T epsilon_0 (e^epsilon_0 - 1)`` of advanced
      composition, so for large epsilon it overspends (by about
      ``epsilon^2 / (4 ln(1/delta))``). Correction: the scale is raised to
      ``2 s / epsilon_0`` with ``epsilon_0`` the exact advanced-composition
      root whenever that is larger.
    - ``"advanced"``: exponential mechanism with the exact advanced-composition
      root (slightly tighter than Thakkar (2019) at small epsilon).
    - ``"zcdp"``: exponential mechanism with bounded-range zCDP composition
      (about half the noise of ``"advanced"`` for many steps, never more).

    ``epsilon`` and ``delta`` are the budget of ``n_problems`` runs accounted
    for together (:func:`frank_wolfe_step_epsilon`).

    Returns
    -------
    scale : float
        Laplace (``"thesis"``) or Gumbel scale added to every vertex score.
    step_epsilon : float
        The per-step epsilon ``2 s / scale`` actually spent.
    mechanism : {"laplace", "gumbel"}
        The noise distribution.
    """
    s = frank_wolfe_score_sensitivity(n_samples, data_norm, l1_radius)
    step_epsilon = frank_wolfe_step_epsilon(epsilon, delta, n_steps, accounting, n_problems)
    if accounting == "thesis":
        epsilon, delta = epsilon / n_problems, delta / n_problems  # the paper's even split
        if delta > 0.0:
            thesis = frank_wolfe_thesis_scale(n_samples, data_norm, l1_radius, epsilon, delta,
                                              n_steps)
            step_epsilon = min(step_epsilon, 2.0 * s / thesis)
        return 2.0 * s / step_epsilon, step_epsilon, "laplace"
    return 2.0 * s / step_epsilon, step_epsilon, "gumbel"


def _noise_level(n_samples, n_params, epsilon, delta, n_steps, accounting, n_problems=1):
    """Selection noise scale over the score range ``C R``, times ``ln(2 p)``."""
    scale = frank_wolfe_noise(n_samples, 1.0, 1.0, epsilon, delta, n_steps, accounting,
                              n_problems)[0]
    return scale * math.log(2.0 * n_params)


def frank_wolfe_default_steps(n_samples, n_params, epsilon, delta, accounting="zcdp",
                              n_problems=1):
    """The default ``max_iter``: the most steps whose selection noise stays small.

    The noise of each selection is ``b = 2 s / epsilon_0(T)`` with
    ``s = 2 C R / n`` (:func:`frank_wolfe_noise`), and the largest of ``2 p``
    Gumbel or Laplace draws is about ``b ln(2 p)``. The rule takes the
    largest ``T`` in ``[1, 1000]`` with ``b ln(2 p) <= 0.04 C R`` (a noise
    of 4% of the score range: a vertex that improves the mean loss by more
    than that is picked reliably), and ``T = 1`` if none qualifies. The
    ratio ``b / (C R)`` depends on ``n``, ``epsilon``, ``delta``, ``T`` and the
    accounting only, so the rule uses public quantities only. With the zCDP
    accounting and many steps it is about
    ``T = 0.04^2 n^2 rho / (2 ln^2(2 p))``, ``rho`` the zCDP budget of
    ``(epsilon, delta)``.

    Parameters
    ----------
    n_samples : int
        ``n``.
    n_params : int
        ``p``: features plus one for the intercept.
    epsilon, delta : float
        Budget of the ``n_problems`` class problems together.
    accounting : {"thesis", "advanced", "zcdp"}, default="zcdp"
        The composition the fit uses.
    n_problems : int, default=1
        Class problems accounted for together (:func:`frank_wolfe_step_epsilon`).

    Returns
    -------
    max_iter : int
    """
    def small(t):
        return (_noise_level(n_samples, n_params, epsilon, delta, t, accounting, n_problems)
                <= _NOISE_TARGET)

    if not small(_MIN_STEPS):
        return _MIN_STEPS
    if small(_MAX_STEPS):
        return _MAX_STEPS
    low, high = _MIN_STEPS, _MAX_STEPS  # small(low) holds, small(high) does not
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if small(mid) else (low, mid)
    return low


def frank_wolfe_default_radius(n_steps, data_norm=1.0, n_classes=2):
    """The default ``l1_radius``: ``min(max(4.5 sqrt(T), 2 T / K), 200) / B``.

    Frank-Wolfe's optimization error grows as ``C^2 / T``, so for few steps
    the radius grows as ``4.5 sqrt(T)``; for a binary problem (``K = 2``),
    beyond ``T = 20`` (reached on larger tables, whose good models have
    larger weights) it grows as ``T``, up to the cap 200 (``T = 200``).
    With ``K > 2`` classes the linear branch is ``2 T / K``: the noisy
    steps of each one-vs-rest problem move its class score by about
    ``C / (T + 1)`` each, and with ``K`` scores these moves decide the
    argmax, where a binary problem only sees its threshold move; the
    ``sqrt(T)`` branch takes over up to ``T = 5.06 K^2``. Dividing by the
    entry bound ``B`` (``data_norm``, or ``entry_bound`` when smaller) makes
    the fit invariant to scaling the rows and the bounds together (the
    scores ``<w, x>`` and the noise relative to them are unchanged).

    Parameters
    ----------
    n_steps : int
        ``T``.
    data_norm : float, default=1.0
        ``B``, the bound on every entry.
    n_classes : int, default=2
        ``K``, the number of classes (public); ``2`` for a binary problem.

    Returns
    -------
    l1_radius : float
    """
    linear = 2.0 * n_steps / max(int(n_classes), 2)
    radius = max(_RADIUS_PER_ROOT_STEP * math.sqrt(n_steps), linear)
    return min(radius, _MAX_RADIUS) / float(data_norm)


def _frank_wolfe_path(X, X_columns, y, loss, l1_radius, n_steps, scale, mechanism, rng,
                      sample_weight=None):
    """Run ``n_steps`` noisy Frank-Wolfe steps from 0 (Thakkar (2019), Alg. 5, lines 1-7)."""
    n, d = X.shape
    # Weighted rows: w_i y_i (weights in [0, 1] keep |w_i l'(z_i) x_ij| <= R,
    # the bound the vertex-score sensitivity uses); the divisor stays n.
    y_weighted = y if sample_weight is None else sample_weight * y
    w = np.zeros(d)
    margins = np.zeros(n)  # X @ w, updated incrementally (one column per step)
    for t in range(1, n_steps + 1):
        # Line 4: the FULL-data gradient (a minibatch gradient would break the
        # sensitivity bound the noise is calibrated to).
        dz = loss.derivative(y * margins) * y_weighted / n
        grad = np.asarray(X.T @ dz).ravel()
        # Scores <s, grad> of the 2d vertices s = +C e_j (first d) and -C e_j.
        scores = np.concatenate([l1_radius * grad, -l1_radius * grad])
        if mechanism == "laplace":
            noisy = scores + rng.laplace(0.0, scale, size=scores.shape)
        else:  # exponential mechanism via the Gumbel-max trick, on utilities -scores
            noisy = scores - rng.gumbel(0.0, scale, size=scores.shape)
        k = int(np.argmin(noisy))  # line 5
        j, sign = (k, 1.0) if k < d else (k - d, -1.0)
        eta = 1.0 / (t + 1.0)  # line 6
        w *= 1.0 - eta
        w[j] += eta * sign * l1_radius
        margins *= 1.0 - eta
        if X_columns is None:
            margins += (eta * sign * l1_radius) * X[:, j]
        else:
            lo, hi = X_columns.indptr[j], X_columns.indptr[j + 1]
            margins[X_columns.indices[lo:hi]] += (eta * sign * l1_radius) * X_columns.data[lo:hi]
    return w


@fill_glm_doc
class PrivateFrankWolfeClassifier(PrivateGLMClassifier):
    """Private Frank-Wolfe: a sparse linear classifier in an L1 ball.

    Each of ``max_iter`` steps computes the full-data gradient of the mean
    loss, scores every vertex ``+-C e_j`` of the L1 ball of radius
    ``C = l1_radius``, picks the (noisily) best vertex and moves toward it
    with step ``1 / (t + 1)`` (Thakkar (2019), Alg. 5; Talwar, Thakurta and
    Zhang 2015). The model therefore has at most ``max_iter`` non-zero
    weights, and the noise grows with ``max_iter`` and with the bound on the
    rows' entries, not with the number of features: it is the method of
    choice for high-dimensional data with a sparse good model. Sparse (CSR)
    input is used as is and never densified. With the defaults, ``max_iter``
    and ``l1_radius`` follow rules of ``n``, the number of features, the
    number of classes, ``data_norm``, ``epsilon`` and ``delta`` (see the
    user guide, "Private Frank-Wolfe and AMP: default rules"); scale rows
    to unit norm first (for instance with
    :class:`~sklearn.preprocessing.Normalizer`).

    Parameters
    ----------
    %(epsilon)s
    delta : float or None, default=None
        Failure probability of the composition over the ``max_iter`` steps, in
        ``[0, 1)``. ``None`` uses ``1 / n_samples^2`` (Thakkar (2019), Sec. 4.4.1),
        stored in ``delta_``. ``0`` gives pure epsilon-DP by basic composition.
    %(loss)s
    data_norm : float, default=1.0
        Bound ``R`` on the L2 norm of each row, as for the other estimators:
        rows longer than ``R`` are scaled down to it (per row, no privacy
        cost). The algorithm needs a bound on every entry (Thakkar (2019),
        Sec. 4.4.1), and ``|x_j| <= ||x|| <= R`` gives it. Choose it without
        looking at the private data; ``1.0`` is right after a
        :class:`~sklearn.preprocessing.Normalizer`.
    entry_bound : float or None, default=None
        An optional, tighter bound ``B`` on the absolute value of every
        entry: entries are clipped to ``[-B, B]`` (before the rows are
        clipped to ``data_norm``) and the noise is
        calibrated to ``min(B, data_norm)``. Useful for many features of
        bounded size (rows of ``d`` entries in ``[-B, B]`` have norms up to
        ``sqrt(d) B``); then pass ``data_norm=np.sqrt(n_features) * B`` as
        well so that no row is scaled down.
    l1_radius : float or None, default=None
        Radius ``C`` of the L1 ball the weights (and intercept) live in, > 0.
        ``None`` uses ``min(max(4.5 sqrt(T), 2 T / K), 200) / B`` with ``T`` the number
        of steps, ``K`` the number of classes (2 for a binary problem) and ``B``
        the entry bound (``data_norm`` or ``entry_bound``)
        (:func:`~skdp.linear_model._frank_wolfe.frank_wolfe_default_radius`);
        the value used is stored in ``l1_radius_``.
    max_iter : int or None, default=None
        Number of noisy steps ``T`` (and the largest number of non-zeros).
        ``None`` uses the largest ``T`` up to 1000 whose selection noise is at
        most 4% of the score range, at least 1
        (:func:`~skdp.linear_model._frank_wolfe.frank_wolfe_default_steps`);
        it grows with ``n`` and ``epsilon`` (for example about 20 at
        ``n = 5000``, ``epsilon = 1`` and 40 features, and 1000 at very
        large ``epsilon``). The value used is stored in ``n_iter_``.
    accounting : {"zcdp", "advanced", "thesis"}, default="zcdp"
        How the ``T`` selections are composed; see Privacy. ``"thesis"``
        (Thakkar (2019), Alg. 5) adds about twice the noise of ``"zcdp"``
        for many steps.
    fit_intercept : bool, default=True
        Append a constant feature whose weight is the intercept. Its value is
        ``R / sqrt(n_features)`` (at most ``entry_bound``), the size of a
        typical entry of a row of norm ``R``, so that the intercept moves by steps comparable to the
        features' (with the value ``R``, Frank-Wolfe zig-zags on the
        intercept of an imbalanced problem).
    %(classes)s
    %(class_weight)s
    %(n_jobs)s
    %(random_state)s
    %(accountant)s
    %(verbose)s

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Weights; each row has at most ``max_iter`` non-zeros.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts.
    sparse_coef_ : scipy.sparse.csr_matrix
        ``coef_`` as a sparse matrix.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_iter_ : int
        Steps run (``max_iter``, or its default rule's value).
    l1_radius_ : float
        The L1 radius used.
    noise_scale_ : float
        Scale of the Laplace or Gumbel noise added to each vertex score.
    step_epsilon_ : float
        Epsilon spent by each selection.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta_)`` spent by this fit.
    delta_ : float
        The delta used.

    Privacy
    -------
    ``(epsilon, delta)``-DP for replace-one neighbours (one row, features,
    label and weight, replaced by any other); ``n_samples``, the parameters
    and ``classes`` are public. Entries are bounded by ``R' = min(R, B)``
    (rows clipped to ``R``, entries to ``B``), row weights clipped to ``[0,
    1]``, so each vertex score of the full-data gradient moves by at most
    ``s = 2 C R' / n`` and one selection with noise scale ``b`` is ``2 s /
    b``-DP. The ``T`` selections compose adaptively:

    - ``"thesis"``: Laplace report-noisy-max with the scale of Thakkar
      (2019), Alg. 5 line 2 (raised where its closed form would overspend)
      and advanced composition.
    - ``"advanced"``: exponential mechanism, exact advanced composition.
    - ``"zcdp"`` (default): exponential mechanism, ``epsilon_0``-bounded-range
      hence ``epsilon_0^2 / 8``-zCDP (Cesar and Rogers 2021), converted by
      Canonne, Kamath and Steinke (2020), Cor. 13 (or the advanced
      composition's step when larger). About half the noise of the others.

    ``delta=0`` uses basic composition. With ``K > 2`` classes the ``K T``
    selections of the one-vs-rest problems compose under one account (each
    problem spends ``rho / K``; ``"thesis"`` splits ``(epsilon, delta)``
    evenly). Only the index of each noisy argmax is released, so the
    floating-point noise cannot be read off the output (Mironov 2012; see
    :doc:`/guide/frank_wolfe_and_amp`).
    %(label_set_privacy)s

    See Also
    --------
    DPSGDClassifier : Private minibatch SGD (L2 geometry).
    ObjectivePerturbationClassifier : Objective perturbation (L2 geometry).

    Notes
    -----
    Each step costs one pass over the non-zeros of ``X`` (the gradient).
    Sparse input is never densified. Frank-Wolfe suits sparse models on
    many features; on a dense 5-class table of 40,000 rows at
    ``epsilon = 1`` it scores about the majority class, where
    :class:`DPSGDClassifier`'s softmax fit is within 2 points of the
    non-private model (:doc:`/guide/frank_wolfe_and_amp`).

    References
    ----------
    K. Talwar, A. Thakurta and L. Zhang. Nearly optimal private LASSO. NeurIPS 2015.

    M. Cesar and R. Rogers. Bounding, concentrating, and truncating: unifying
    privacy loss composition for data analytics. ALT 2021.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skdp.linear_model import PrivateFrankWolfeClassifier
    >>> X, y = make_classification(2000, 50, n_informative=3, random_state=0)
    >>> clf = PrivateFrankWolfeClassifier(epsilon=1.0, l1_radius=20.0, max_iter=20,
    ...                                   classes=[0, 1], random_state=0).fit(X, y)
    >>> int((clf.coef_ != 0).sum()) <= 20
    True
    """

    _default_delta = staticmethod(delta_one_over_n_squared)
    _allow_zero_delta = True

    def __init__(self, epsilon=1.0, delta=None, *, loss="logistic", huber_h=0.1, data_norm=1.0,
                 entry_bound=None, l1_radius=None, max_iter=None, accounting="zcdp", fit_intercept=True,
                 classes=None, class_weight=None, n_jobs=None, random_state=None, accountant=None,
                 verbose=0):
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.huber_h = huber_h
        self.data_norm = data_norm
        self.entry_bound = entry_bound
        self.l1_radius = l1_radius
        self.max_iter = max_iter
        self.accounting = accounting
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def _check_params(self, n_samples):
        l1_radius = (None if self.l1_radius is None else
                     check_real(self.l1_radius, "l1_radius", low=0.0, low_inclusive=False))
        data_norm = float(self.data_norm)  # validated by fit
        bound = self._entry_bound(data_norm)
        if l1_radius is not None:
            self._check_sensitivity(n_samples, bound, l1_radius)
        return {
            "l1_radius": l1_radius,
            "max_iter": (None if self.max_iter is None else
                         check_positive_int(self.max_iter, "max_iter")),
            "accounting": check_option(self.accounting, "accounting", ACCOUNTINGS),
            "n_samples": n_samples,
            "data_norm": data_norm,
            "bound": bound,
            "n_params": self.n_features_in_ + int(bool(self.fit_intercept)),
        }

    def _entry_bound(self, data_norm):
        """``min(data_norm, entry_bound)``: the bound on every entry after clipping."""
        if self.entry_bound is None:
            return data_norm
        return min(data_norm, check_real(self.entry_bound, "entry_bound", low=0.0,
                                         low_inclusive=False))

    def _check_sensitivity(self, n_samples, bound, l1_radius):
        sensitivity = frank_wolfe_score_sensitivity(n_samples, bound, l1_radius)
        if not 0.0 < sensitivity < math.inf:
            how = "overflows" if sensitivity else "underflows to 0"
            entry = "" if self.entry_bound is None else f"entry_bound={self.entry_bound:g}, "
            raise ValueError(
                f"The vertex scores' sensitivity 2 l1_radius data_norm / n_samples {how} "
                f"(l1_radius={l1_radius:g}, data_norm={self.data_norm:g}, {entry}"
                f"n_samples={n_samples}): "
                "no noise can be calibrated to it. Rescale the features (or the L1 ball) by a "
                "constant fixed in advance. Nothing was spent.")

    def _intercept_value(self, data_norm):
        # A typical entry of a row of L2 norm R, at most the entry bound.
        return min(data_norm / math.sqrt(max(self.n_features_in_, 1)),
                   self._entry_bound(data_norm))

    def _clip(self, X, data_norm):
        # Entries to [-B, B] first (the intercept is within), then rows to L2 norm R:
        # scaling a row down keeps its entries within B, and rows of d entries in
        # [-B, B] are left alone when R >= sqrt(d) B.
        if self.entry_bound is not None:
            X = clip_entries(X, self._entry_bound(data_norm))
        return self._clip_rows(X, data_norm)

    def _clip_rows(self, X, data_norm):
        # Rows to L2 norm R; the intercept column (already at most R) is left as is.
        if sp.issparse(X):
            if not self.fit_intercept:
                return clip_rows_l2(X, data_norm)
            return sp.hstack([clip_rows_l2(X[:, :-1], data_norm), X[:, -1:]], format="csr")
        # Dense: column-major, so that each step's gradient X^T dz and the margin update
        # from one column read contiguous memory (about 3 times faster).
        n_features = X.shape[1] - int(bool(self.fit_intercept))
        out = np.empty(X.shape, order="F")
        out[:, :n_features] = clip_rows_l2(X[:, :n_features], data_norm)
        out[:, n_features:] = X[:, n_features:]
        return out

    def _noise(self, settings, budget):
        """``(scale, step_epsilon, mechanism)``; a test subclass shrinks the scale."""
        # The K one-vs-rest runs' K T selections are accounted for together (budget: a
        # OneVsRestBudget; the zCDP budget rho is split evenly, rho / K per class).
        epsilon, delta, k = budget.accounted()
        return frank_wolfe_noise(settings["n_samples"], settings["bound"],
                                 settings["l1_radius"], epsilon, delta,
                                 settings["max_iter"], settings["accounting"], n_problems=k)

    def _prepare(self, settings, budget):
        # The default rules read public quantities only (n, p, R and the classes' budget).
        if settings["max_iter"] is None:
            epsilon, delta, k = budget.accounted()
            try:
                settings["max_iter"] = frank_wolfe_default_steps(
                    settings["n_samples"], settings["n_params"], epsilon, delta,
                    settings["accounting"], n_problems=k)
            except (ArithmeticError, ValueError):  # calibration fails for every T: say so below
                settings["max_iter"] = _MIN_STEPS
        if settings["l1_radius"] is None:
            # K is public (the label set); a binary fit is one problem, K = 2.
            settings["l1_radius"] = frank_wolfe_default_radius(
                settings["max_iter"], settings["bound"], n_classes=max(budget.n_problems, 2))
            self._check_sensitivity(settings["n_samples"], settings["bound"],
                                    settings["l1_radius"])
        # The noise depends on no data but its calibration can fail at extreme settings
        # (a per-step epsilon that rounds to 0, a scale out of float range): fail before
        # the budget is charged.
        calibrate_before_charge(
            lambda: self._noise(settings, budget)[0], "The selection noise", budget,
            {"max_iter": settings["max_iter"], "l1_radius": settings["l1_radius"],
             "data_norm": settings["data_norm"],
             **({} if self.entry_bound is None else {"entry_bound": settings["bound"]})})

    def _fit_binary(self, X, y, rng, *, loss, budget, settings, sample_weight):
        scale, step_epsilon, mechanism = self._noise(settings, budget)
        X_columns = X.tocsc() if sp.issparse(X) else None
        w = _frank_wolfe_path(X, X_columns, y, loss, settings["l1_radius"],
                              settings["max_iter"], scale, mechanism, rng, sample_weight)
        return w, {"noise_scale": scale, "step_epsilon": step_epsilon}

    def _record(self, infos, settings):
        self.n_iter_ = settings["max_iter"]
        self.l1_radius_ = settings["l1_radius"]
        self.noise_scale_ = infos[0]["noise_scale"]
        self.step_epsilon_ = infos[0]["step_epsilon"]

    @property
    def sparse_coef_(self):
        """``coef_`` as a :class:`scipy.sparse.csr_matrix` (at most ``max_iter`` non-zeros per row)."""
        return sp.csr_matrix(self.coef_)
