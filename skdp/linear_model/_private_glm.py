"""The fit template shared by the private convex-optimization classifiers.

Frank-Wolfe, DP-SGD, permutation SGD, objective and output perturbation all
fit a linear model of a margin loss, one binary problem per class (one-vs-rest;
the classes share one budget, :class:`~skdp.utils._multiclass.OneVsRestBudget`),
or one softmax problem on all classes where the estimator provides it. This module does the parts they share, in the
order the privacy rules require: validate the data and every parameter, then
charge the budget and build the generator, then run the mechanism once per
class, then record what was spent. Each estimator only supplies
``_check_params`` (its own validation), ``_preprocess`` (per-row clipping)
and ``_fit_binary`` (the mechanism).
"""

import math
import re
import textwrap
from fractions import Fraction
from functools import partial

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import validate_data

from skdp.accounting._events import plain_event
from skdp.base import DPEstimatorMixin
from skdp.linear_model._base import PrivateLinearClassifierMixin, add_intercept_column
from skdp.linear_model._losses import get_loss
from skdp.mechanisms import sample_discrete_gaussian, sample_discrete_laplace
from skdp.mechanisms._discrete import _check_granularity, _grid_indices, _grid_release
from skdp.utils._docstrings import fill_doc
from skdp.utils._multiclass import (
    OneVsRestBudget,
    class_row_weights,
    fit_one_vs_rest,
    resolve_classes,
)
from skdp.utils._validation import check_bounded_sample_weight, check_positive_int, check_real

__all__ = [
    "MULTI_CLASS",
    "PrivateGLMClassifier",
    "calibrate_before_charge",
    "check_bool",
    "chooses_softmax",
    "delta_one_over_n_squared",
    "fill_glm_doc",
    "release_on_grid",
]

# Docstring blocks shared by the classifiers of this family (on top of skdp's
# shared parameter blocks): a line holding only ``%(name)s`` is replaced.
_GLM_DOCS = {
    "loss": """\
loss : {"logistic", "huber"}, default="logistic"
    Margin loss: logistic, or the Huber SVM loss (a smoothed hinge, Thakkar (2019)
    Sec. 4.4.6; Chaudhuri et al. (2011), Sec. 3.4.2).
huber_h : float, default=0.1
    Width of the Huber SVM loss.""",
    "delta_n2": """\
delta : float or None, default=None
    In ``(0, 1)``. ``None`` uses ``1 / n_samples^2`` (Thakkar (2019), Sec. 4.4.1),
    stored in ``delta_``.""",
    "ridge": """\
alpha : "auto" or float, default="auto"
    Regularization strength ``Lambda`` > 0. ``"auto"`` sets it from public
    quantities only, before the budget is charged, to
    ``data_norm**2 * max(1/2, m * r) / n_samples`` (stored in ``alpha_``),
    where ``r`` is the noise's per-coordinate scale per unit sensitivity of
    one class problem (see ``alpha_``) and ``m`` a fixed constant: the
    non-private limit ``1/2`` is :class:`~sklearn.linear_model.LogisticRegression`'s
    default ``C=1`` on rows of norm ``data_norm`` (with the intercept
    column inside the norm), and ``m * r`` keeps the noise a fixed fraction
    of the weights' scale. Privacy does not depend on how it was chosen: it
    enters the sensitivity exactly like a given value.
fit_intercept : bool, default=True
    Append a constant feature 1 (before clipping, so it counts in the row
    norm) whose weight is the intercept; it is regularized like the others.""",
    "certified_solver": """\
solver : str, default="newton"
    ``"newton"`` or a :func:`scipy.optimize.minimize` method using gradients.
max_iter : int, default=100
    Iteration limit of the solver.""",
    "label_set_privacy": """\
The label set is public when ``classes`` is given; with ``classes=None`` it
is read from ``y`` (:class:`~skdp.PrivacyLeakWarning`) and not protected.""",
    "linear_attributes": """\
coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    Weights.
intercept_ : ndarray of shape (1,) or (n_classes,)
    Intercepts.
classes_ : ndarray of shape (n_classes,)
    Class labels (sorted ``classes`` when given).
n_features_in_ : int
    Number of features seen in ``fit``.""",
}


def fill_glm_doc(cls):
    """Substitute this family's docstring blocks, then skdp's shared ones (a decorator)."""
    for name, block in _GLM_DOCS.items():
        pattern = re.compile(rf"^([ \t]*)%\({name}\)s[ \t]*$", re.MULTILINE)
        cls.__doc__ = pattern.sub(lambda m, b=block: textwrap.indent(b, m.group(1)), cls.__doc__)
    return fill_doc(cls)


def delta_one_over_n_squared(n_samples):
    """Thakkar's (2019) default ``delta = 1 / n^2`` (Thakkar (2019), Sec. 4.4.1, after Wu et al. 2017)."""
    return 1.0 / float(n_samples) ** 2


def release_on_grid(weights, mechanism, parameter, granularity, rng):
    """Release ``g * (round(w / g) + Z)`` with exact integer noise ``Z`` (CKS Alg. 2 or 3).

    The floating-point-safe output stage shared by the linear models (the
    SVMs of :mod:`skdp.svm` do the same inline and could use it):
    ``weights`` are snapped to the public power-of-two grid ``g`` (exact
    indices, clamped to ``+-2**52``, a non-expansive map that keeps every
    grid sensitivity) and each coordinate gets independent exact discrete
    noise, drawn with integer arithmetic only (Canonne, Kamath and Steinke
    2020), so the output's low-order bits carry nothing the ideal mechanism
    does not (Mironov 2012).

    Parameters
    ----------
    weights : ndarray of shape (n_coef,)
        The exact (noiseless) vector to release.
    mechanism : {"discrete_laplace", "discrete_gaussian"}
        Noise distribution.
    parameter : fractions.Fraction
        Discrete Laplace scale ``t`` or discrete Gaussian ``sigma^2``, in grid
        steps (:func:`skdp.svm._base.svm_discrete_noise`).
    granularity : float
        The grid ``g``, a power of two.
    rng : numpy.random.Generator
        Source of the uniform integers.

    Returns
    -------
    released : ndarray of shape (n_coef,)
        Exact multiples of ``g``.
    """
    grid = _check_granularity(granularity)
    parameter = Fraction(parameter)
    if mechanism == "discrete_laplace":
        noise = sample_discrete_laplace(parameter, weights.size, rng)
    else:
        noise = sample_discrete_gaussian(parameter, weights.size, rng)
    return _grid_release(_grid_indices(weights, grid), noise, grid)


def calibrate_before_charge(calibrate, what, budget, parameters, errors=(ArithmeticError,
                                                                         ValueError)):
    """Run a data-independent noise calibration in ``_prepare``, before the charge.

    Parameters
    ----------
    calibrate : callable
        ``calibrate() -> scale``, the noise scale the fit will use (a float).
    what : str
        The noise, for the message (e.g. ``"DP-SGD's noise"``).
    budget : PrivacyBudget or OneVsRestBudget
        The classes' budget (its ``epsilon`` and ``delta``: one class
        problem's share under an even split).
    parameters : dict
        The other public values the scale depends on, named as the user
        sets them (never a value derived from the data).
    errors : tuple of exception types, default=(ArithmeticError, ValueError)
        The failures of ``calibrate`` to report as a refusal.

    Returns
    -------
    scale : float
        A normal positive float.

    Raises
    ------
    ValueError
        If ``calibrate`` fails, or the scale over- or underflows (infinite
        noise would release inf / NaN weights, zero noise no privacy), with
        a message that names ``epsilon``, ``delta`` and ``parameters``.
    """
    where = (f"(epsilon={budget.epsilon:g}, delta={budget.delta:g}) per class problem and "
             + ", ".join(f"{name}={value:g}" for name, value in parameters.items()))
    try:
        scale = float(calibrate())
    except errors as error:
        raise ValueError(f"{what} could not be calibrated for {where} ({error}). Change "
                         "these parameters. Nothing was spent.") from error
    if not np.finfo(float).tiny <= scale < math.inf:  # (NaN fails too)
        how, epsilon = (("overflows", "larger") if scale > 1.0 else
                        ("underflows below the smallest normal float", "smaller"))
        raise ValueError(
            f"{what} {how} for {where}: use a {epsilon} epsilon or rescale "
            f"{', '.join(parameters)} (by a constant fixed in advance). Nothing was spent.")
    return scale


MULTI_CLASS = ("auto", "ovr", "multinomial")


def chooses_softmax(multi_class, softmax_ok, requirement):
    """Whether a ``K > 2`` fit is one softmax problem (for ``_fits_multinomial``; before the charge).

    ``multi_class`` is the validated option; ``softmax_ok`` says whether the
    estimator's settings admit a softmax fit, ``requirement`` what they
    need. ``"multinomial"`` without them is refused; ``"auto"`` takes the
    softmax when they hold.
    """
    if multi_class == "multinomial" and not softmax_ok:
        raise ValueError(f"multi_class='multinomial' needs {requirement}; use "
                         "multi_class='ovr' otherwise. Nothing was spent.")
    return multi_class != "ovr" and softmax_ok


def check_bool(value, name):
    """Return ``value`` if it is a bool, else raise a clear ``TypeError``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


class PrivateGLMClassifier(DPEstimatorMixin, PrivateLinearClassifierMixin, ClassifierMixin,
                           BaseEstimator):
    """Template of a private one-vs-rest linear classifier of a margin loss.

    Subclasses have the parameters ``epsilon``, ``loss``, ``huber_h``,
    ``data_norm``, ``fit_intercept``, ``classes``, ``class_weight``, ``n_jobs``,
    ``random_state`` and ``accountant`` (and ``delta`` when the mechanism uses
    one), and define:

    - ``_check_params(n_samples)`` -> dict of validated settings;
    - ``_clip(X, data_norm)`` -> the clipped copy of the (augmented) data;
    - ``_fit_binary(X, y_pm1, rng, *, loss, budget, settings, sample_weight)``
      -> ``(w, info)`` with ``w`` the weights on the augmented features and
      ``info`` a dict of per-class diagnostics (lists of them become fitted
      attributes via ``_record``). ``sample_weight`` is ``None`` (every row
      weighs 1) or the row weights, already validated and clipped to
      ``[0, 1]``; the mechanism multiplies each row's (clipped) loss or
      gradient by its weight and keeps ``n_samples`` (never the weight sum)
      as the divisor, so one record ``(x, y, w)`` moves the computation by no
      more than an unweighted row would.

    Class attributes ``_default_delta`` (callable of ``n_samples`` or None)
    and ``_allow_zero_delta`` configure the budget. ``budget`` in the hooks is
    a :class:`~skdp.utils._multiclass.OneVsRestBudget`: its ``epsilon`` and
    ``delta`` are one class problem's even share (basic composition, for
    pure-DP noise), and its ``gaussian()``, ``composed_steps()`` and
    ``accounted()`` give the joint calibration of Gaussian-type noise
    (``_multiclass_accounting = "joint"``; ``"split"`` makes them the even
    share too, the accounting of earlier versions).

    Fitted attributes (``classes_`` included) are set only after every
    parameter is valid and every class problem is solved, so a failed refit
    keeps the previous model whole.
    """

    _default_delta = None
    _allow_zero_delta = True
    # "joint": Gaussian-type noise of the K one-vs-rest problems is calibrated as one
    # release (OneVsRestBudget); "split": basic composition, (epsilon / K, delta / K) each.
    _multiclass_accounting = "joint"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # --- hooks -------------------------------------------------------------
    def _check_params(self, n_samples):
        return {}

    def _clip(self, X, data_norm):
        raise NotImplementedError

    def _fit_binary(self, X, y, rng, *, loss, budget, settings, sample_weight):
        raise NotImplementedError

    def _fits_multinomial(self, n_classes, settings):
        """Whether ``n_classes > 2`` classes are fitted as one softmax problem (hook).

        ``False`` (the default): ``K`` one-vs-rest problems. A subclass that
        returns ``True`` defines ``_fit_multinomial`` and is budgeted as one
        problem. Called before the charge; it may refuse parameters.
        """
        return False

    def _n_coef(self, settings):
        """Noisy coefficients of one release: ``d`` (with the intercept), ``K d`` for a softmax fit."""
        return (self.n_features_in_ + int(self.fit_intercept)) * (settings.get("n_classes") or 1)

    def _fit_multinomial(self, X, y_index, n_classes, rng, *, budget, settings, sample_weight):
        """``(W, info)``: ``W`` of shape ``(n_classes, X.shape[1])``, ``X`` with the intercept column (hook)."""
        raise NotImplementedError

    def _release_event(self, settings, budget):
        """The privacy event of the whole fit (all class problems), before the charge.

        ``settings`` are the resolved parameters of :meth:`_prepare` and
        ``budget`` the :class:`~skdp.utils._multiclass.OneVsRestBudget`. The
        default is the plain ``(epsilon, delta)`` event; a mechanism whose
        release has a finer public description overrides it.
        """
        return plain_event(budget.total)

    def _prepare(self, settings, budget):
        """Data-independent set-up that may fail, run before the budget is charged (hook).

        ``budget`` is the classes' :class:`OneVsRestBudget`. A calibration that cannot be
        computed must fail here, not after the accountant has been charged.
        """

    def _record(self, infos, settings):
        """Store per-class diagnostics as fitted attributes (optional hook)."""

    def _intercept_value(self, data_norm):
        """Value of the constant feature appended for the intercept (before clipping)."""
        return 1.0

    # --- template ------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Fit the private model (with more than two classes: one-vs-rest, or one softmax fit).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data. Sparse input is converted to CSR.
        y : array-like of shape (n_samples,)
            Class labels, all in ``classes`` when it is given (some of its
            labels may have no row); otherwise at least two distinct labels.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weight of each row's loss (of its clipped gradient for
            :class:`DPSGDClassifier`). A record is ``(x, y, w)`` and its
            weight is protected like its features. Weights above 1 are
            clipped to 1 (silently), because the guarantee bounds one
            row's influence by a weight of 1; weights in ``[0, 1]`` cost no
            privacy. The loss is still averaged over all ``n_samples`` rows,
            zero-weight ones included (the sum of the weights is not public),
            so weights below 1 also shrink the data term relative to the
            regularization and the noise. Every class problem uses the same
            weights.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        # The label set is a public bound (``classes``), or read from y with a warning.
        # Kept local until the end: a refit that fails must not pair new classes with old weights.
        classes, y_index = resolve_classes(self.classes, y, type(self).__name__)
        n_classes = len(classes)
        n_samples = X.shape[0]
        # Weights in [0, 1] (clipped per row, like the rows themselves): a row's
        # weighted loss keeps every bound the mechanisms are calibrated to.
        sample_weight = check_bounded_sample_weight(
            class_row_weights(self.class_weight, classes, y_index,
                              check_bounded_sample_weight(sample_weight, n_samples)), n_samples)
        loss = get_loss(self.loss, self.huber_h)
        data_norm = check_real(self.data_norm, "data_norm", low=0.0, low_inclusive=False)
        fit_intercept = check_bool(self.fit_intercept, "fit_intercept")
        settings = self._check_params(n_samples)
        verbose = check_positive_int(self.verbose, "verbose", low=0)
        # One-vs-rest: K problems on the same data. Pure-DP noise splits (epsilon, delta)
        # evenly (basic composition, Thakkar (2019), Lemma 2.1.5); Gaussian-type noise is
        # calibrated to the K vectors as one release (OneVsRestBudget). A softmax fit
        # (_fits_multinomial) is one problem on all K classes.
        multinomial = n_classes > 2 and self._fits_multinomial(n_classes, settings)
        n_problems = 1 if n_classes == 2 or multinomial else n_classes
        joint = self._multiclass_accounting == "joint"
        self._prepare(settings, OneVsRestBudget(self._resolve_budget(
            n_samples, self._default_delta, self._allow_zero_delta), n_problems, joint))

        # Everything is validated: now spend the budget (nothing before this line
        # draws noise or charges the accountant).
        budget, rng = self._start_private_fit(
            n_samples, default_delta=self._default_delta, allow_zero_delta=self._allow_zero_delta,
            event=lambda total: self._release_event(
                settings, OneVsRestBudget(total, n_problems, joint)))
        intercept_value = self._intercept_value(data_norm)
        X_aug = add_intercept_column(X, intercept_value) if fit_intercept else X
        X_aug = self._clip(X_aug, data_norm)
        part = OneVsRestBudget(budget, n_problems, joint)
        if verbose:
            print(f"[{type(self).__name__}] {part} on {n_samples} rows")
        # An underflow (e.g. exp in a softmax) is harmless, but under a global
        # np.seterr(all="raise") it would raise here, after the charge, depending on the rows.
        with np.errstate(under="ignore"):
            if multinomial:
                results = [self._fit_multinomial(X_aug, y_index, n_classes, rng, budget=part,
                                                 settings=settings,
                                                 sample_weight=sample_weight)]
            else:
                fit_binary = partial(self._fit_binary, loss=loss, budget=part,
                                     settings=settings, sample_weight=sample_weight)
                results = fit_one_vs_rest(fit_binary, X_aug, y_index, n_classes, rng,
                                          n_jobs=self.n_jobs)

        W = np.vstack([w for w, _ in results])
        self.classes_ = classes
        if fit_intercept:
            self.coef_, self.intercept_ = W[:, :-1].copy(), W[:, -1] * intercept_value
        else:
            self.coef_, self.intercept_ = W, np.zeros(W.shape[0])
        self._record([info for _, info in results], settings)
        self.privacy_spent_ = budget
        if verbose:
            print(f"[{type(self).__name__}] released; spent {budget}")
        if hasattr(self, "delta"):
            self.delta_ = budget.delta
        return self
