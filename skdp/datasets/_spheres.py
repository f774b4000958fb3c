"""Concentric spheres: a non-linearly separable classification problem in any dimension."""

import numpy as np

from skdp.utils._random import check_random_state
from skdp.utils._validation import check_positive_int, check_real

__all__ = ["make_concentric_spheres"]


def make_concentric_spheres(n_samples=1000, n_features=2, *, factor=0.5, noise=0.1,
                            random_state=None):
    """Two classes on concentric spheres (``make_circles`` in ``n_features`` dimensions).

    Class 0 lies on the unit sphere and class 1 on the sphere of radius
    ``factor``, with directions uniform on the sphere and isotropic Gaussian
    noise added. No hyperplane separates the classes (a linear classifier is
    at chance), while a radial kernel separates them well.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points, split as evenly as possible between the classes.
    n_features : int, default=2
        Dimension, >= 1.
    factor : float, default=0.5
        Radius of the inner sphere, in ``(0, 1)``.
    noise : float, default=0.1
        Standard deviation of the Gaussian noise, >= 0.
    random_state : int, numpy.random.Generator or None, default=None
        Source of randomness.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Points.
    y : ndarray of shape (n_samples,)
        Labels in ``{0, 1}`` (1 = inner sphere).

    Examples
    --------
    >>> from skdp.datasets import make_concentric_spheres
    >>> X, y = make_concentric_spheres(100, n_features=3, random_state=0)
    >>> X.shape, int(y.sum())
    ((100, 3), 50)
    """
    n_samples = check_positive_int(n_samples, "n_samples", low=2)
    n_features = check_positive_int(n_features, "n_features")
    factor = check_real(factor, "factor", low=0.0, high=1.0, low_inclusive=False,
                        high_inclusive=False)
    noise = check_real(noise, "noise", low=0.0)
    rng = check_random_state(random_state)
    y = np.arange(n_samples) % 2
    directions = rng.normal(size=(n_samples, n_features))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    X = directions * np.where(y == 1, factor, 1.0)[:, None]
    X += noise * rng.normal(size=X.shape)
    order = rng.permutation(n_samples)
    return X[order], y[order]
