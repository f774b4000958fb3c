"""A large two-class problem with a margin, for subsample-and-aggregate (Thakkar (2019), Ch. 5)."""

import numpy as np

from skdp.utils import check_positive_int, check_random_state, check_real

__all__ = ["make_margin_classification"]


def make_margin_classification(n_samples, *, n_features=8, margin=0.3, flip_y=0.05,
                               curvature=0.3, random_state=None):
    """Two Gaussian half-spaces with a curved boundary, an empty margin and label noise.

    Features are standard normal; the score is ``s(x) = <theta, x> +
    curvature * sin(2 x_1)`` for a fixed unit ``theta``; points with
    ``|s(x)| < margin`` are rejected (so the boundary has an empty band of
    width ``2 margin``, the realizable-with-margin regime of Thakkar (2019),
    Thm. 12), the label is ``s(x) > 0``, and a fraction ``flip_y`` of labels
    is flipped at random (so the best accuracy is about ``1 - flip_y``).
    ``theta`` does not depend on ``random_state``, so separate calls (private,
    public and test sets) draw from the same distribution.

    Parameters
    ----------
    n_samples : int
        Number of rows.
    n_features : int, default=8
        Number of features, >= 2.
    margin : float, default=0.3
        Half-width of the empty band around the boundary, >= 0.
    flip_y : float, default=0.05
        Probability of flipping each label, in ``[0, 0.5)``.
    curvature : float, default=0.3
        Amplitude of the non-linear term (0 gives a linear boundary).
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the draw.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels in ``{0, 1}``.

    Examples
    --------
    >>> from skdp.datasets import make_margin_classification
    >>> X, y = make_margin_classification(1000, random_state=0)
    >>> X.shape, sorted(set(y.tolist()))
    ((1000, 8), [0, 1])
    """
    n_samples = check_positive_int(n_samples, "n_samples")
    n_features = check_positive_int(n_features, "n_features", low=2)
    margin = check_real(margin, "margin", low=0.0)
    flip_y = check_real(flip_y, "flip_y", low=0.0, high=0.5, high_inclusive=False)
    curvature = check_real(curvature, "curvature")
    rng = check_random_state(random_state)
    theta = 1.0 / np.arange(1, n_features + 1)
    theta /= np.linalg.norm(theta)
    X = np.empty((n_samples, n_features))
    score = np.empty(n_samples)
    filled = 0
    while filled < n_samples:
        block = rng.standard_normal((max(1024, int(1.2 * (n_samples - filled))), n_features))
        s = block @ theta + curvature * np.sin(2.0 * block[:, 0])
        keep = np.flatnonzero(np.abs(s) >= margin)[: n_samples - filled]
        X[filled:filled + keep.size] = block[keep]
        score[filled:filled + keep.size] = s[keep]
        filled += keep.size
    y = (score > 0).astype(np.int64)
    flip = rng.random(n_samples) < flip_y
    y[flip] = 1 - y[flip]
    return X, y
