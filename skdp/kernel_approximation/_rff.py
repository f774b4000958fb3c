"""Random Fourier features (Rahimi and Recht 2007) as used by Rubinstein et al. (2012), Sec. 4."""

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.utils._random import check_random_state
from skdp.utils._validation import check_option, check_positive_int, check_real

__all__ = ["RandomFourierFeatures", "random_fourier_map", "sample_frequencies"]

KERNELS = ("rbf", "laplacian", "cauchy")


def sample_frequencies(kernel, gamma, n_features, n_components, rng):
    """Draw frequency vectors from a translation-invariant kernel's spectral density.

    Bochner's theorem writes ``k(x, x') = E_omega[cos(<omega, x - x'>)]`` with
    ``omega`` drawn from the kernel's normalized Fourier transform (Rubinstein et al. (2012),
    Table 2):

    * ``"rbf"``, ``k = exp(-gamma ||x - x'||_2^2)``: ``omega ~ N(0, 2 gamma I)``
      (Table 2's ``N(0, I)`` is ``gamma = 1/2``, i.e. ``sigma = 1``);
    * ``"laplacian"``, ``k = exp(-gamma ||x - x'||_1)``: independent Cauchy
      coordinates of scale ``gamma`` (Table 2 with ``gamma = 1``);
    * ``"cauchy"``, ``k = prod_j 1 / (1 + gamma (x_j - x'_j)^2)``: independent
      Laplace coordinates of scale ``sqrt(gamma)``. Rubinstein et al. (2012), Tables 1-2 write
      this kernel as ``prod_j 2 / (1 + d_j^2)`` with density ``exp(-||omega||_1)``,
      neither normalized (``k(x, x) = 2^d``); the normalized pair used here has
      ``k(x, x) = 1``, which the privacy proof needs.

    Parameters
    ----------
    kernel : {"rbf", "laplacian", "cauchy"}
        The kernel.
    gamma : float
        Kernel parameter, > 0.
    n_features : int
        Input dimension ``d``.
    n_components : int
        Number of frequency vectors ``d_hat``.
    rng : numpy.random.Generator
        Source of the (data-independent) frequencies.

    Returns
    -------
    frequencies : ndarray of shape (n_features, n_components)
        One frequency vector per column.
    """
    size = (n_features, n_components)
    if kernel == "rbf":
        return rng.normal(0.0, np.sqrt(2.0 * gamma), size=size)
    if kernel == "laplacian":
        return gamma * rng.standard_cauchy(size=size)
    return rng.laplace(0.0, np.sqrt(gamma), size=size)


def random_fourier_map(X, frequencies):
    """The ``2 d_hat``-dimensional feature map of Rubinstein et al. (2012), Eq. (6).

    ``phi(x) = d_hat^(-1/2) [cos <rho_1, x>, ..., cos <rho_d_hat, x>,
    sin <rho_1, x>, ..., sin <rho_d_hat, x>]``: Eq. (6) with its coordinates
    grouped (all cosines, then all sines), which changes no inner product.
    Since ``cos^2 + sin^2 = 1``, every feature vector has norm exactly 1
    (up to rounding), the bound ``k_hat(x, x) = 1`` the privacy proof uses.
    A projection ``<rho_j, x>`` that overflows the doubles is taken as 0, so
    this holds for every finite row.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Inputs.
    frequencies : ndarray of shape (n_features, n_components)
        From :func:`sample_frequencies`.

    Returns
    -------
    features : ndarray of shape (n_samples, 2 * n_components)
    """
    with np.errstate(over="ignore", invalid="ignore"):
        projection = np.asarray(X @ frequencies)
    # A finite row can overflow <rho, x> (|<rho, x>| beyond 1.8e308, or inf - inf), and its
    # cos and sin would be NaN. Such an entry is mapped to 0 (cos 1, sin 0): a fixed
    # per-row rule that keeps ||phi(x)|| = 1, so a private model's sensitivity holds, and
    # a fit does not fail (after its budget is charged) because such a row exists.
    projection[~np.isfinite(projection)] = 0.0
    n_components = frequencies.shape[1]
    features = np.empty((projection.shape[0], 2 * n_components))
    np.cos(projection, out=features[:, :n_components])
    np.sin(projection, out=features[:, n_components:])
    features *= 1.0 / np.sqrt(n_components)
    return features


class RandomFourierFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Random Fourier features with the cosine/sine pairing of Rubinstein et al. (2012), Eq. (6).

    Maps ``x`` to ``phi(x)`` in ``R^(2 n_components)`` so that
    ``<phi(x), phi(x')>`` approximates a translation-invariant kernel
    ``k(x, x')`` uniformly (Rubinstein et al. (2012), Lemma 18). Unlike scikit-learn's
    :class:`~sklearn.kernel_approximation.RBFSampler` (one cosine with a
    random phase per component), each frequency contributes a cosine *and* a
    sine, so ``||phi(x)|| = 1`` for every ``x``: the bound
    ``k_hat(x, x) = 1`` that :class:`~skdp.svm.PrivateSVMRFF`'s sensitivity
    rests on holds exactly instead of only in expectation.

    Parameters
    ----------
    kernel : {"rbf", "laplacian", "cauchy"}, default="rbf"
        Kernel to approximate: ``exp(-gamma ||x - x'||_2^2)``,
        ``exp(-gamma ||x - x'||_1)``, or ``prod_j 1 / (1 + gamma (x_j - x'_j)^2)``.
    gamma : float, default=1.0
        Kernel parameter, > 0. Choose it without looking at private data
        (a data-derived scale, like ``SVC``'s ``gamma='scale'``, leaks). The
        default suits a few features of unit variance; with more features
        the kernel gets too narrow (``exp(-gamma ||x - x'||^2)`` with
        ``||x - x'||^2`` about ``2 n_features``): ``1 / n_features``, the
        default ``gamma="auto"`` of :class:`~skdp.svm.PrivateSVMRFF`, is a
        public choice that matches ``SVC(gamma="scale")`` on standardized
        features.
    n_components : int, default=100
        Number of frequency vectors ``d_hat``; the output has
        ``2 * n_components`` columns.
    random_state : int, numpy.random.Generator or None, default=None
        Source of the frequencies. They are public, so a fixed seed costs no
        privacy here; ``None`` draws fresh entropy from the operating system.

    Attributes
    ----------
    frequencies_ : ndarray of shape (n_features, n_components)
        The frequency vectors ``rho_1, ..., rho_d_hat`` (columns). They are
        drawn independently of the data and are part of any model released
        on these features.
    n_features_in_ : int
        Number of input features.
    feature_names_in_ : ndarray of shape (n_features,)
        Input feature names, when ``X`` has string column names.

    Privacy
    -------
    The map is data-independent: ``fit`` reads only the number of columns,
    so fitting it and releasing ``frequencies_`` costs no privacy (Rubinstein et al. (2012),
    Sec. 4: the adversary is assumed to know the frequencies). A private model
    trained on the features must still be differentially private on its own.

    See Also
    --------
    skdp.svm.PrivateSVMRFF : Private SVM on these features (Rubinstein et al. (2012), Alg. 3).
    sklearn.kernel_approximation.RBFSampler : One cosine per component.

    Notes
    -----
    The frequency distributions are in :func:`sample_frequencies`. As
    ``n_components`` grows, ``<phi(x), phi(x')>`` converges to ``k(x, x')``
    uniformly on compact sets at rate ``O(1 / sqrt(n_components))``
    (Rubinstein et al. (2012), Lemma 18).

    References
    ----------
    A. Rahimi and B. Recht, "Random features for large-scale kernel machines",
    NIPS 2007. B. Rubinstein, P. Bartlett, L. Huang and N. Taft, "Learning in a
    large function space: privacy-preserving mechanisms for SVM learning",
    J. Privacy and Confidentiality, 2012.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.kernel_approximation import RandomFourierFeatures
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]])
    >>> rff = RandomFourierFeatures(gamma=0.5, n_components=50, random_state=0)
    >>> Phi = rff.fit_transform(X)
    >>> Phi.shape
    (3, 100)
    >>> np.allclose(np.linalg.norm(Phi, axis=1), 1.0)
    True
    """

    def __init__(self, kernel="rbf", *, gamma=1.0, n_components=100, random_state=None):
        self.kernel = kernel
        self.gamma = gamma
        self.n_components = n_components
        self.random_state = random_state

    def _check_params(self):
        check_option(self.kernel, "kernel", KERNELS)
        gamma = check_real(self.gamma, "gamma", low=0.0, low_inclusive=False)
        n_components = check_positive_int(self.n_components, "n_components")
        return gamma, n_components

    def fit(self, X, y=None):
        """Draw the frequencies (only the number of columns of ``X`` is used).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.

        Returns
        -------
        self : RandomFourierFeatures
        """
        X = validate_data(self, X, accept_sparse="csr")
        gamma, n_components = self._check_params()
        rng = check_random_state(self.random_state)
        self.frequencies_ = sample_frequencies(self.kernel, gamma, X.shape[1], n_components, rng)
        self._n_features_out = 2 * n_components
        return self

    def transform(self, X):
        """Map ``X`` to the random feature space.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        features : ndarray of shape (n_samples, 2 * n_components)
            Rows of norm 1.
        """
        check_is_fitted(self, "frequencies_")
        X = validate_data(self, X, accept_sparse="csr", reset=False)
        return random_fourier_map(X, self.frequencies_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
