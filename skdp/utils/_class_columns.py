"""Columns of a released classifier's outputs, one per class of a public label set.

A private classifier may release a model that never saw some labels of its
public label set ``classes`` (no released or sampled row had them). Giving
that label a column of its own, with probability 0, is post-processing of the
released model (it reads nothing else), and it is what scikit-learn's
meta-estimators and metrics expect: one column per class of ``classes_``.
"""

import numpy as np

__all__ = ["LOWEST_SCORE", "expand_class_columns", "expand_decision_function"]

# Decision value of a class the released model never saw: finite (metrics
# reject infinities) and below every real score.
LOWEST_SCORE = np.finfo(np.float64).min


def expand_class_columns(values, seen, classes, fill):
    """Put the columns of a model that knows ``seen`` at their place in ``classes``.

    Parameters
    ----------
    values : ndarray of shape (n_samples, len(seen))
        One column per class of ``seen`` (``predict_proba`` and the like).
    seen : ndarray of shape (n_seen,)
        Sorted labels the model knows, a subset of ``classes``.
    classes : ndarray of shape (n_classes,)
        Sorted public label set.
    fill : float
        Value of the columns of the classes missing from ``seen``: 0 for
        probabilities, ``-inf`` for log-probabilities.

    Returns
    -------
    expanded : ndarray of shape (n_samples, n_classes)
        ``values`` itself when ``seen`` is all of ``classes``.
    """
    if len(seen) == len(classes):
        return values
    out = np.full((values.shape[0], len(classes)), fill, dtype=float)
    out[:, np.searchsorted(classes, seen)] = values
    return out


def expand_decision_function(scores, seen, classes):
    """:func:`expand_class_columns` for decision functions.

    A binary model's score ``s`` of its second class becomes ``(-s, s)`` for
    its two classes before the expansion; missing classes get
    :data:`LOWEST_SCORE`.

    Parameters
    ----------
    scores : ndarray of shape (n_samples,) or (n_samples, len(seen))
        The model's decision function.
    seen, classes
        See :func:`expand_class_columns`.

    Returns
    -------
    scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        ``scores`` itself when ``seen`` is all of ``classes``.
    """
    if len(seen) == len(classes):
        return scores
    if scores.ndim == 1:  # a binary model scores its second class
        scores = np.column_stack([-scores, scores])
    return expand_class_columns(scores, seen, classes, LOWEST_SCORE)
