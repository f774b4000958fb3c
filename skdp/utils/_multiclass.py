"""The label set of a classifier, and one-vs-rest fitting with an evenly split budget."""

import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.utils.multiclass import check_classification_targets

from skdp.exceptions import PrivacyLeakWarning
from skdp.utils._random import spawn_random_states
from skdp.utils._validation import check_real

__all__ = ["class_row_weights", "fit_one_vs_rest", "resolve_classes"]


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

    The caller gives each call ``budget.split(n_classes)`` (basic
    composition, Thakkar (2019), Lemma 2.1.5); this function only organizes the
    calls. With two classes a single problem is solved (positive class =
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
