"""The label set of a classifier, one-vs-rest fitting, and its multi-class budget."""

import math
import warnings
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed
from sklearn.utils.multiclass import check_classification_targets

from skdp.exceptions import PrivacyLeakWarning
from skdp.utils._random import spawn_random_states
from skdp.utils._validation import check_real

__all__ = ["OneVsRestBudget", "class_row_weights", "fit_one_vs_rest",
           "one_vs_rest_noise_ratios", "resolve_classes"]

MULTICLASS_ACCOUNTINGS = ("joint", "split")


@dataclass(frozen=True)
class OneVsRestBudget:
    """The budget of ``n_problems`` one-vs-rest problems fitted on the same rows.

    One record is a row of every class problem, so replacing it can move all
    ``K = n_problems`` released weight vectors at once. Two accountings hold:

    * ``"split"``: basic composition (Thakkar (2019), Lemma 2.1.5), each problem
      at ``(epsilon / K, delta / K)`` (``epsilon`` and ``delta`` below). The
      only one for pure ``epsilon``-DP noise (Laplace, the norm-Gamma noise of
      Chaudhuri et al. (2011), objective perturbation's Jacobian term): a
      pure-DP release of ``K`` vectors of L1 sensitivity ``Delta_1`` each has
      joint L1 sensitivity ``K Delta_1``, so a joint release costs exactly as
      much.
    * ``"joint"``: for Gaussian-type noise the ``K`` vectors are one release.
      Concatenated, they have L2 sensitivity ``sqrt(K) Delta_2`` (each moves
      by at most ``Delta_2``), so the Gaussian mechanism calibrated to that
      sensitivity at the whole ``(epsilon, delta)`` is ``(epsilon, delta)``-DP
      (Balle and Wang 2018, Thm. 8); equivalently each problem spends
      ``rho / K`` of the zCDP budget ``rho`` (Bun and Steinke 2016, Lemma 2.3).
      Subsampled-Gaussian runs compose as ``K T`` steps under one accountant.
      The noise per class is about ``sqrt(K)`` times smaller than the split's
      (3.1 times at ``K = 10``, ``epsilon = 1``, ``delta = 1e-8``).

    With ``K = 1`` (a binary problem) both are the plain budget.

    Parameters
    ----------
    total : PrivacyBudget
        The whole budget of the fit.
    n_problems : int
        ``K``, >= 1.
    joint : bool, default=True
        Use the joint accounting for the Gaussian-type releases.
    """

    total: "PrivacyBudget"  # noqa: F821 (skdp.accounting imports this module's package)
    n_problems: int
    joint: bool = True

    @property
    def epsilon(self):
        """One problem's epsilon under basic composition (``epsilon / K``)."""
        return self.total.epsilon / self.n_problems

    @property
    def delta(self):
        """One problem's delta under basic composition (``delta / K``)."""
        return self.total.delta / self.n_problems

    def split(self):
        """``PrivacyBudget(epsilon / K, delta / K)``: one problem's share by basic composition."""
        return self.total.split(self.n_problems)

    def accounted(self):
        """``(epsilon, delta, k)``: ``k`` problems accounted for together at ``(epsilon, delta)``.

        Joint: ``(total epsilon, total delta, K)``; split: ``(epsilon / K,
        delta / K, 1)``, each problem on its own.
        """
        if self.joint:
            return self.total.epsilon, self.total.delta, self.n_problems
        return self.epsilon, self.delta, 1

    def gaussian(self):
        """``(factor, epsilon, delta)`` of one problem's Gaussian-type release.

        Calibrate a Gaussian mechanism (any calibration valid for a given L2
        sensitivity) to ``factor * Delta_2`` at ``(epsilon, delta)`` and draw
        that noise independently for every problem: the ``K`` releases
        together are ``(epsilon, delta)``-DP. Joint: ``(sqrt(K), total
        epsilon, total delta)``; split: ``(1, epsilon / K, delta / K)``.
        """
        epsilon, delta, k = self.accounted()
        return math.sqrt(k), epsilon, delta

    def composed_steps(self, steps):
        """``(epsilon, delta, steps')`` to calibrate runs of ``steps`` composed mechanisms.

        Joint: the ``K`` runs are ``K steps`` mechanisms under one account at
        the whole budget; split: ``steps`` at ``(epsilon / K, delta / K)``.
        """
        epsilon, delta, k = self.accounted()
        return epsilon, delta, k * steps

    def __str__(self):
        how = "joint" if self.joint and self.n_problems > 1 else "split"
        return (f"{self.n_problems} problem(s) at epsilon={self.total.epsilon:g}, "
                f"delta={self.total.delta:g} in all ({how} accounting)")


def one_vs_rest_noise_ratios(n_classes, n_samples=10_000, epsilon=1.0, delta=None, *,
                             n_features=10, epochs=20, batch_size=64, max_iter=100):
    """Noise of the split (basic composition) over the joint multi-class release.

    The reference scenario of the joint accounting: every value is the noise
    one class problem gets under the even split of ``(epsilon, delta)``
    divided by the noise it gets when the ``K`` problems are accounted for as
    one release (:class:`OneVsRestBudget`); all are data-independent.

    Parameters
    ----------
    n_classes : int
        ``K`` >= 2.
    n_samples : int, default=10_000
        ``n`` (sets ``delta`` when it is None, DP-SGD's sampling rate and
        Frank-Wolfe's score sensitivity).
    epsilon : float, default=1.0
    delta : float or None, default=None
        ``None``: ``1 / n^2``.
    n_features : int, default=10
        Coefficients of the discrete Gaussian release (its grid term).
    epochs, batch_size : int, default=20, 64
        DP-SGD's run: ``T = ceil(epochs n / batch_size)`` steps at rate
        ``batch_size / n``.
    max_iter : int, default=100
        Frank-Wolfe's steps (zCDP accounting).

    Returns
    -------
    ratios : dict
        ``{"gaussian": (split sigma, joint sigma), "discrete_gaussian": ...,
        "dpsgd": (split z, joint z), "frank_wolfe": (split scale, joint
        scale)}``: pairs of noise scales per unit sensitivity; divide them for
        the ratio.
    """
    from skdp.accounting import PrivacyBudget
    from skdp.linear_model._dpsgd import dpsgd_noise_multiplier, dpsgd_schedule
    from skdp.linear_model._frank_wolfe import frank_wolfe_noise
    from skdp.mechanisms import discrete_gaussian_sigma2, gaussian_sigma_analytic

    delta = 1.0 / float(n_samples) ** 2 if delta is None else delta
    total = PrivacyBudget(epsilon, delta)
    shares = [OneVsRestBudget(total, n_classes, joint=False),
              OneVsRestBudget(total, n_classes, joint=True)]
    q, steps = dpsgd_schedule(n_samples, batch_size, epochs)
    out = {"gaussian": [], "discrete_gaussian": [], "dpsgd": [], "frank_wolfe": []}
    for share in shares:
        factor, eps, dlt = share.gaussian()
        out["gaussian"].append(gaussian_sigma_analytic(factor, eps, dlt))
        # Grid 2**-20 per unit sensitivity: sigma^2 in grid steps times factor^2 (joint).
        g = 2.0**-20
        sigma2 = float(discrete_gaussian_sigma2(1.0, eps, dlt, g, n_features))
        out["discrete_gaussian"].append(factor * math.sqrt(sigma2) * g)
        eps_s, dlt_s, steps_s = share.composed_steps(steps)
        out["dpsgd"].append(dpsgd_noise_multiplier(eps_s, dlt_s, q, steps_s))
        eps_j, dlt_j, k = share.accounted()
        out["frank_wolfe"].append(frank_wolfe_noise(n_samples, 1.0, 1.0, eps_j, dlt_j, max_iter,
                                                    "zcdp", n_problems=k)[0])
    return {name: tuple(pair) for name, pair in out.items()}


def class_row_weights(class_weight, classes, y_index, sample_weight=None):
    """Each row's weight from public class weights, times ``sample_weight``.

    Class weights above 1 are clipped to 1 here, with a warning that does not
    depend on the labels. The result still goes through
    :func:`~skdp.utils._validation.check_bounded_sample_weight`; this only
    validates ``class_weight`` itself.

    Parameters
    ----------
    class_weight : dict or None
        ``{label: weight}`` (labels of ``classes``; others weigh 1), or
        ``None``. ``"balanced"`` is refused: it would read the class counts
        from the private labels.
    classes : ndarray of shape (n_classes,)
        The model's label set.
    y_index : ndarray of shape (n_samples,)
        Index of each row's label in ``classes``.
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Row weights to multiply (validated later).

    Returns
    -------
    weights : ndarray of shape (n_samples,) or None
        ``sample_weight`` unchanged when ``class_weight`` is ``None``.
    """
    if class_weight is None:
        return sample_weight
    if isinstance(class_weight, str):
        if class_weight == "balanced":
            raise ValueError(
                "class_weight='balanced' reads the class counts from the private labels, "
                "which no noise protects. Pass a dict {label: weight} computed from public "
                "class shares instead, with the largest weight 1 (for shares p_k, "
                "{k: min(p) / p_k}). Nothing was spent.")
        raise ValueError(f"class_weight must be a dict or None, got {class_weight!r}.")
    if not isinstance(class_weight, dict):
        raise TypeError(f"class_weight must be a dict or None, got {class_weight!r}.")
    per_class = np.ones(len(classes))
    for label, weight in class_weight.items():
        # A tuple key would be compared with the classes element by element.
        matches = np.flatnonzero(classes == label if np.ndim(label) == 0 else False)
        if matches.size == 0:
            raise ValueError(f"class_weight has a label that is not a class: {label!r} "
                             f"(classes are {list(classes)}).")
        per_class[matches[0]] = check_real(weight, f"class_weight[{label!r}]", low=0.0)
    if np.any(per_class > 1):
        # Clipped here, whatever the labels: the later per-row clip (and its warning)
        # would happen only if some row holds such a class.
        warnings.warn(
            f"Class weights above 1 were clipped to 1 (got {class_weight!r}): the privacy "
            "guarantee bounds one row's influence by a weight of 1. Scale the class weights "
            "so that the largest is 1.", UserWarning, stacklevel=3)
        per_class = np.minimum(per_class, 1.0)
    weights = per_class[y_index]
    return weights if sample_weight is None else weights * np.asarray(sample_weight,
                                                                          dtype=float)


def resolve_classes(classes, y, estimator_name, *, min_classes=2):
    """The label set of a private classifier, and each row's class index.

    The label set is a bound the privacy proofs take as public (DESIGN:
    bounds are parameters): which labels the model knows must not depend on
    the private rows. With ``classes`` given, it is the model's label set
    even when some label has no row, and the labels of ``y`` are only
    checked against it (bad input, refused before any budget is spent).
    With ``classes=None`` the set is read from ``y``, which reveals every
    label present (a label only one record has, for instance); this emits a
    :class:`~skdp.PrivacyLeakWarning`.

    Parameters
    ----------
    classes : array-like of shape (n_classes,) or None
        The public list of possible labels.
    y : ndarray of shape (n_samples,)
        Training labels.
    estimator_name : str
        For messages.
    min_classes : int, default=2
        Least number of classes.

    Returns
    -------
    classes : ndarray of shape (n_classes,)
        Sorted labels.
    y_index : ndarray of shape (n_samples,)
        Index of each row's label in ``classes``.

    Raises
    ------
    ValueError
        If ``classes`` has duplicates or fewer than ``min_classes`` labels,
        or ``y`` holds a label outside it; with ``classes=None``, if ``y``
        holds fewer than ``min_classes`` labels.
    """
    if classes is None:
        check_classification_targets(y)
        warnings.warn(
            f"classes=None in {estimator_name}: the label set was read from the training "
            "labels, which reveals every label present (e.g. one that a single record has). "
            "Pass classes=<the public list of possible labels> to avoid this. The differential "
            "privacy guarantee does not cover the label set for this fit.",
            PrivacyLeakWarning, stacklevel=3)
        found, y_index = np.unique(y, return_inverse=True)
        if found.size < min_classes:
            raise ValueError(f"{estimator_name} needs samples of at least {min_classes} classes; "
                             f"got {found.size} class ({found[0]!r}).")
        return found, y_index
    labels = np.asarray(classes)
    if labels.ndim != 1:
        raise ValueError(f"classes must be a 1-D list of labels; got shape {labels.shape}.")
    # The declared labels, not y: whether a fit is refused must not depend on which of
    # them the private rows hold (classes=[0.0, 0.5] failed only when a row had 0.5).
    check_classification_targets(labels)
    sorted_labels = np.unique(labels)
    if sorted_labels.size != labels.size:
        raise ValueError(f"classes has duplicate labels: {classes!r}.")
    if sorted_labels.size < min_classes:
        raise ValueError(f"{estimator_name} needs at least {min_classes} classes; got "
                         f"classes={classes!r}.")
    known = np.isin(y, sorted_labels)
    if not known.all():
        raise ValueError(f"y holds labels that are not in classes={classes!r}, e.g. "
                         f"{y[~known][0]!r}. Nothing was spent.")
    return sorted_labels, np.searchsorted(sorted_labels, y)


def fit_one_vs_rest(fit_binary, X, y_index, n_classes, rng, *, n_jobs=None):
    """Run a private binary learner once per class, in parallel.

    The caller calibrates each call's noise to the classes' shared budget
    (:class:`OneVsRestBudget`); this function only organizes the calls. With two classes a single problem is solved (positive class =
    index 1), as scikit-learn's binary linear models do.

    Parameters
    ----------
    fit_binary : callable
        ``fit_binary(X, y_pm1, rng)`` with ``y_pm1`` in ``{-1, +1}``; returns
        any result (for linear models, typically a weight vector).
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Training data.
    y_index : ndarray of shape (n_samples,)
        Class indices in ``range(n_classes)``.
    n_classes : int
        Number of classes, >= 2.
    rng : numpy.random.Generator
        Parent generator; each call gets an independent child.
    n_jobs : int or None, default=None
        joblib parallelism across classes.

    Returns
    -------
    results : list
        One result for binary problems, otherwise one per class in order.
    """
    targets = [1] if n_classes == 2 else list(range(n_classes))
    rngs = spawn_random_states(rng, len(targets))
    if len(targets) == 1:  # a binary problem: skip joblib's dispatch overhead
        return [fit_binary(X, np.where(y_index == 1, 1.0, -1.0), rngs[0])]
    return Parallel(n_jobs=n_jobs)(
        delayed(fit_binary)(X, np.where(y_index == k, 1.0, -1.0), child)
        for k, child in zip(targets, rngs)
    )
