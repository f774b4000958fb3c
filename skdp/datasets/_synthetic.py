"""The synthetic binary classification problems of Thakkar (2019), Ch. 4 (Table 4.1).

Thakkar (2019) generates its two synthetic data sets with scikit-learn's
``make_classification``; its text fixes the low-dimensional one exactly and
describes the high-dimensional one ("well-characterized by just ten important
features", run at 2,000 samples by 2,000 dimensions, Sec. 4.4.6). Both
generators return a fixed 80/20 train/test split, as in Thakkar's (2019) protocol
(Sec. 4.4, "take the first 80% as the training set").
"""

from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

__all__ = ["make_synthetic_h", "make_synthetic_l"]


def _split(X, y, test_size, random_state):
    return tuple(train_test_split(X, y, test_size=test_size, random_state=random_state))


def make_synthetic_l(*, test_size=0.2, random_state=1000):
    """Synthetic-L: a low-dimensional binary problem (10,000 x 40).

    ``make_classification(10000, 40, n_informative=30, class_sep=2,
    random_state=1000)``, split 80/20 (the split also uses ``random_state``).
    It is the problem on which the hyperparameter-free AMP strategy of Thakkar (2019)
    Sec. 4.4.1 was set, and its H-F AMP accuracy is 80.6% at epsilon = 0.1.

    Parameters
    ----------
    test_size : float, default=0.2
        Fraction of the samples held out for testing.
    random_state : int, default=1000
        Seed of the generator and of the split. Data, not noise: a fixed seed
        is fine here.

    Returns
    -------
    X_train, X_test, y_train, y_test : ndarray
        Features of shape ``(n, 40)`` and labels in ``{0, 1}``.

    Examples
    --------
    >>> from skdp.datasets import make_synthetic_l
    >>> X_train, X_test, y_train, y_test = make_synthetic_l()
    >>> X_train.shape, X_test.shape
    ((8000, 40), (2000, 40))
    """
    X, y = make_classification(
        n_samples=10000, n_features=40, n_informative=30, class_sep=2,
        random_state=random_state,
    )
    return _split(X, y, test_size, random_state)


def make_synthetic_h(n_samples=2000, n_features=2000, *, n_informative=10,
                     class_sep=3.0, test_size=0.2, random_state=1000):
    """Synthetic-H: a high-dimensional binary problem (d >= n, 10 informative features).

    ``make_classification(n_samples, n_features, n_informative=10,
    n_redundant=0, class_sep=3, random_state=random_state)``, split 80/20.
    Thakkar (2019) lists 5,000 x 5,000 (Table 4.1) but runs its experiments on
    2,000 x 2,000 (Sec. 4.4.6), the default here; the model is well
    characterized by ten features, which favours private Frank-Wolfe over
    L2-noised methods. Thakkar (2019) does not give its generator's arguments;
    ``class_sep=3`` was chosen so that scikit-learn's default
    ``LogisticRegression`` reaches about 95% test accuracy, close to the
    thesis' non-private baseline (95.8%, Fig. 4.5).

    Parameters
    ----------
    n_samples : int, default=2000
        Number of samples before the split.
    n_features : int, default=2000
        Number of features (keep ``n_features >= n_samples`` for the
        high-dimensional regime).
    n_informative : int, default=10
        Number of informative features; the rest are pure noise.
    class_sep : float, default=3.0
        Separation of the classes (``make_classification``'s ``class_sep``).
    test_size : float, default=0.2
        Fraction of the samples held out for testing.
    random_state : int, default=1000
        Seed of the generator and of the split.

    Returns
    -------
    X_train, X_test, y_train, y_test : ndarray
        Features of shape ``(n, n_features)`` and labels in ``{0, 1}``.

    Examples
    --------
    >>> from skdp.datasets import make_synthetic_h
    >>> X_train, X_test, y_train, y_test = make_synthetic_h(200, 300)
    >>> X_train.shape
    (160, 300)
    """
    X, y = make_classification(
        n_samples=n_samples, n_features=n_features, n_informative=n_informative,
        n_redundant=0, class_sep=class_sep, random_state=random_state,
    )
    return _split(X, y, test_size, random_state)
