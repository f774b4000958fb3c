"""Principal component analysis from a privately released second moment."""

import math

import dp_accounting
import numpy as np
import scipy.sparse as sp
from scipy import linalg
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from skdp.base import DPEstimatorMixin
from skdp.matrix_completion._solvers import oja_release, symmetric_noise
from skdp.mechanisms import gaussian_sigma_analytic
from skdp.utils._clipping import clip_rows_l2
from skdp.utils._docstrings import fill_doc
from skdp.utils._validation import check_option, check_positive_int, check_real

__all__ = ["DPPCA", "pca_sensitivity"]

# Weight w of the private row sum in the joint release (w = data_norm / sqrt(2)): its
# squared sensitivity (2 R w)^2 = 2 R^4 equals that of one second-moment release.
_MEAN_WEIGHT = 1.0 / math.sqrt(2.0)
_DEFAULT_OJA_ITER = 10


def pca_sensitivity(data_norm, *, n_releases=1, private_mean=False, trace=False):
    """L2 sensitivity (replace-one) of the joint release of :class:`DPPCA`.

    With rows ``x`` of norm at most ``R = data_norm``, replacing ``x`` by
    ``x'`` changes the second moment ``S = sum_i x_i x_i^T`` by
    ``x x^T - x' x'^T``, whose squared Frobenius norm is
    ``||x||^4 + ||x'||^4 - 2 (x . x')^2 <= 2 R^4`` (reached by orthogonal rows
    of norm ``R``): ``sqrt(2) R^2``. Under add/remove neighbours it would be
    ``R^2`` (Dwork, Talwar, Thakurta and Zhang 2014, "Analyze Gauss"); skdp
    protects replace-one neighbours (``n`` public). Each of the ``n_releases``
    releases ``S V_t`` with an orthonormal ``V_t`` chosen from earlier releases
    moves by at most ``||x x^T - x' x'^T||_F``; the private row sum, released
    with weight ``w = R / sqrt(2)``, moves by ``w ||x - x'|| <= sqrt(2) R^2``;
    the sum of squared norms ``sum_i ||x_i||^2`` by at most ``R^2``. The joint
    vector's squared sensitivity is the sum of these squares, and adaptive
    Gaussian releases with one ``sigma`` compose as one Gaussian mechanism of
    that joint sensitivity (Dong, Roth and Su 2022, Cor. 3.3).

    Returns
    -------
    sensitivity : float
    """
    r2 = float(data_norm) ** 2
    squared = 2.0 * r2**2 * n_releases
    if private_mean:
        squared += 2.0 * r2**2  # (2 R w)^2 with w = R / sqrt(2)
    if trace:
        squared += r2**2
    return math.sqrt(squared)


@fill_doc
class DPPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, DPEstimatorMixin, BaseEstimator):
    """Principal component analysis with differential privacy ("Analyze Gauss").

    Rows are clipped to L2 norm ``data_norm``; their second moment
    ``sum_i x_i x_i^T`` is released once with symmetric Gaussian noise (Dwork,
    Talwar, Thakurta and Zhang 2014, Alg. 1), and the components are the top
    eigenvectors of the released covariance. For wide (or sparse) data,
    ``svd_solver="oja"`` never forms a ``d x d`` matrix: it runs a private
    noisy power iteration (Hardt and Price 2014), releasing ``S V + G`` for a
    ``d x k`` orthonormal ``V`` at each of ``n_iter`` steps (memory
    ``O(nnz + d k)``). Used like scikit-learn's ``PCA``.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of components kept; ``None`` keeps all ``n_features`` (needs
        an int with ``svd_solver="oja"``).
    %(epsilon)s
    delta : float or None, default=None
        Probability with which the epsilon bound may fail, in ``(0, 1)``.
        ``None`` means ``1 / n_samples**2``.
    %(data_norm)s
    center : "private", float or array-like of shape (n_features,), default="private"
        ``"private"`` centres by a private mean released jointly with the
        second moment (it raises the noise by ``sqrt(2)`` for
        ``svd_solver="covariance"``). A public constant (``0.0`` for no
        centring, or a vector fixed without looking at the data) is
        subtracted from the clipped rows; the noise then grows with
        ``(data_norm + ||center||)^2``.
    svd_solver : {"covariance", "oja"}, default="covariance"
        ``"covariance"``: one release of the ``d x d`` matrix, then an exact
        eigendecomposition. ``"oja"``: ``n_iter`` releases of ``d x k``
        matrices (sparse input is never densified).
    n_iter : int or None, default=None
        Steps of ``svd_solver="oja"`` (``None``: 10). Each step divides the
        budget further (the noise grows with ``sqrt(n_iter)``).
    %(random_state)s
    %(accountant)s

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Orthonormal private principal axes, largest variance first.
    explained_variance_ : ndarray of shape (n_components,)
        Private variance along each component (eigenvalues of the released
        covariance, clipped at 0; for ``"oja"`` the last step's norms).
    explained_variance_ratio_ : ndarray of shape (n_components,)
        ``explained_variance_`` over the private total variance.
    mean_ : ndarray of shape (n_features,)
        The private mean (``center="private"``) or the public centre.
    n_components_ : int
        Number of components kept.
    output_norm_ : float
        Bound on the L2 norm of every transformed row, ``data_norm +
        ||mean_||`` (a public function of the release): pass it as
        ``data_norm`` to an skdp estimator after this step.
    noise_scale_ : float
        Standard deviation of the Gaussian noise on each coordinate of the
        release (in the Frobenius geometry).
    delta_ : float
        The delta used.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta_)``.
    privacy_event_ : dp_accounting.DpEvent
        One Gaussian release (all the noisy statistics together).
        The event a tight :class:`~skdp.BudgetAccountant` composes.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names, when ``X`` has string column names.

    Privacy
    -------
    ``(epsilon, delta)``-differentially private for replace-one neighbours
    (data sets of the same public size ``n_samples`` differing in one row):
    every feature of the replaced row is protected. Rows are clipped to
    ``data_norm`` (per row, free); the second moment (and, with
    ``center="private"``, the row sum and for ``"oja"`` the sum of squared
    norms) is one release by the analytic Gaussian mechanism (Balle and Wang
    2018, Thm. 8) of L2 sensitivity ``sqrt(2) data_norm^2`` per matrix
    release (``sqrt(2 (T + 1))`` times that over ``T`` Oja steps with a
    private mean; :func:`pca_sensitivity`). Under add/remove neighbours the
    sensitivity of one release would be ``data_norm^2`` (Dwork et al. 2014).
    Components, variances and mean are post-processing. ``transform`` costs
    nothing more. In a pipeline each step spends its own budget on the same
    rows (basic composition); one shared ``accountant`` records the sum.

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    sklearn.decomposition.PCA : The non-private PCA.

    References
    ----------
    C. Dwork, K. Talwar, A. Thakurta and L. Zhang, "Analyze Gauss: optimal
    bounds for privacy-preserving principal component analysis", STOC 2014.

    M. Hardt and E. Price, "The noisy power method: a meta algorithm with
    applications", NeurIPS 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.decomposition import DPPCA
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20000, 3)) * [1.0, 0.1, 0.1] / 4
    >>> pca = DPPCA(n_components=1, epsilon=1.0, random_state=0).fit(X)
    >>> np.round(np.abs(pca.components_), 1)
    array([[1., 0., 0.]])
    """

    def __init__(self, n_components=None, *, epsilon=1.0, delta=None, data_norm=1.0,
                 center="private", svd_solver="covariance", n_iter=None, random_state=None,
                 accountant=None):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.center = center
        self.svd_solver = svd_solver
        self.n_iter = n_iter
        self.random_state = random_state
        self.accountant = accountant

    def _sigma(self, sensitivity, budget):
        """Noise standard deviation (a method so tests can under-noise a copy)."""
        # Analytic Gaussian mechanism, Balle and Wang (2018), Thm. 8.
        return gaussian_sigma_analytic(sensitivity, budget.epsilon, budget.delta)

    def _check_center(self, d):
        center = self.center
        if isinstance(center, str):
            check_option(center, "center", ("private",))
            return None
        center = np.asarray(center, dtype=np.float64)
        if center.ndim == 0:
            center = np.full(d, float(center))
        if center.shape != (d,) or not np.all(np.isfinite(center)):
            raise ValueError(f"DPPCA: center must be 'private', a finite float or a finite "
                             f"array of shape ({d},), got {self.center!r}.")
        return center

    def fit(self, X, y=None):
        """Spend the budget on the private principal components.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; rows are clipped to ``data_norm``.
        y : None
            Ignored.

        Returns
        -------
        self : DPPCA
        """
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit, then transform ``X`` (see :meth:`transform`)."""
        return self._fit(X).transform(X)

    def _fit(self, X):
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64, reset=True)
        n, d = X.shape
        solver = check_option(self.svd_solver, "svd_solver", ("covariance", "oja"))
        data_norm = check_real(self.data_norm, "data_norm", low=0.0, low_inclusive=False)
        if self.n_components is None:
            if solver == "oja":
                raise ValueError("DPPCA: svd_solver='oja' needs an int n_components.")
            k = d
        else:
            k = check_positive_int(self.n_components, "n_components", high=d)
        n_iter = 1
        if solver == "oja":
            n_iter = (_DEFAULT_OJA_ITER if self.n_iter is None
                      else check_positive_int(self.n_iter, "n_iter"))
        elif self.n_iter is not None:
            check_positive_int(self.n_iter, "n_iter")
        center = self._check_center(d)
        private_mean = center is None
        # Row bound of the rows whose second moment is released.
        bound = data_norm if private_mean else data_norm + float(np.linalg.norm(center))
        sensitivity = pca_sensitivity(bound, n_releases=n_iter, private_mean=private_mean,
                                      trace=solver == "oja")

        def default_delta(m):
            return 1.0 / m**2

        # The calibration is public but can fail (epsilon = 1e300): before the charge.
        planned = self._resolve_budget(n, default_delta, allow_zero_delta=False)
        sigma = self._sigma(sensitivity, planned)
        # All releases are one Gaussian mechanism of L2 sensitivity `sensitivity`.
        budget, rng = self._start_private_fit(
            n, default_delta=default_delta, allow_zero_delta=False,
            event=dp_accounting.GaussianDpEvent(sigma / sensitivity))

        A = clip_rows_l2(X, data_norm)
        if not private_mean and np.any(center != 0.0):
            if sp.issparse(A):
                A = A.toarray()
            A = A - center
        if private_mean:
            row_sum = np.asarray(A.sum(axis=0)).ravel()
            # Joint release: w * sum + N(0, sigma^2), i.e. noise sigma / w on the sum.
            w = _MEAN_WEIGHT * data_norm
            mean = (row_sum + (sigma / w) * rng.standard_normal(d)) / n
            norm = np.linalg.norm(mean)
            if norm > data_norm:  # the true mean lies in the ball (post-processing)
                mean *= data_norm / norm
        else:
            mean = center
        if solver == "covariance":
            gram = A.T @ A
            gram = gram.toarray() if sp.issparse(gram) else np.asarray(gram)
            # Analyze Gauss (Dwork et al. 2014, Alg. 1): S + E, E symmetric, Frobenius-isotropic.
            released = (gram + symmetric_noise(d, sigma, rng)) / n
            if private_mean:
                released -= np.outer(mean, mean)
            values, vectors = linalg.eigh(released)
            values, vectors = values[::-1][:k], vectors[:, ::-1][:, :k]
            total = float(np.trace(released))
        else:
            squares = A.multiply(A).sum() if sp.issparse(A) else np.einsum("ij,ij->", A, A)
            total = (float(squares) + sigma * rng.standard_normal()) / n
            V = linalg.qr(rng.standard_normal((d, k)), mode="economic")[0]
            for _ in range(n_iter):
                # Noisy power method (Hardt and Price 2014, Fig. 1): Y = S V + G.
                Y = oja_release(A, V, sigma, rng) / n
                if private_mean:
                    Y -= np.outer(mean, mean @ V)
                V, R = linalg.qr(Y, mode="economic")
            values, vectors = np.abs(np.diag(R)), V
            if private_mean:
                total -= float(mean @ mean)
        values = np.maximum(values, 0.0)
        vectors = _flip_signs(vectors)
        self.components_ = vectors.T
        self.explained_variance_ = values
        self.explained_variance_ratio_ = values / max(total, float(values.sum()),
                                                      np.finfo(np.float64).tiny)
        self.mean_ = mean
        self.n_components_ = k
        self.output_norm_ = data_norm + float(np.linalg.norm(mean))
        self.noise_scale_ = sigma
        self.delta_ = budget.delta
        self.privacy_spent_ = budget
        return self

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def transform(self, X):
        """Project the rows (clipped to ``data_norm``, then centred) on the components.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            Rows of L2 norm at most ``output_norm_``.
        """
        check_is_fitted(self, "components_")
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64, reset=False)
        A = clip_rows_l2(X, self.data_norm)
        return np.asarray(A @ self.components_.T) - self.mean_ @ self.components_.T

    def inverse_transform(self, X):
        """Map projected rows back to the original space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self, "components_")
        X = check_array(X, dtype=np.float64)
        if X.shape[1] != self.components_.shape[0]:
            raise ValueError(f"DPPCA.inverse_transform: X has {X.shape[1]} columns, expected "
                             f"{self.components_.shape[0]} (n_components_).")
        return X @ self.components_ + self.mean_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _flip_signs(vectors):
    """Deterministic signs: the largest-magnitude entry of each column is positive."""
    rows = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[rows, np.arange(vectors.shape[1])])
    signs[signs == 0] = 1.0
    return vectors * signs
