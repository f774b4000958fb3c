"""PrivateSVMRFF (Rubinstein et al. (2012), Alg. 3) and PrivateLinearSVM (Rubinstein et al. (2012), Alg. 2)."""

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.kernel_approximation import RandomFourierFeatures
from skdp.linear_model._base import add_intercept_column
from skdp.svm._base import BasePrivateSVM
from skdp.utils._clipping import clip_rows_l2
from skdp.utils._docstrings import fill_doc
from skdp.utils._validation import check_real

__all__ = ["PrivateLinearSVM", "PrivateSVMRFF"]

_SHARED_PARAMS = """\
C : "auto" or float, default="auto"
        Regularization: the objective is ``||w||^2 / 2 + (C/n) sum_i s_i loss_i``
        (``LinearSVC(C=c)`` is ``C = c n`` here); the noise grows linearly
        with ``C``. ``"auto"``: ``n / (kappa^2 max(f, m r))`` from public
        quantities only (stored in ``C_``), ``r`` the noise per unit
        sensitivity of one class problem, ``f`` the non-private limit (see
        ``C_``), ``m = 4`` for two classes and a multiple of ``K^2`` for
        ``K > 2`` classes (see ``C_``; :doc:`/guide/svm_and_perturbation`).
    loss : {"hinge", "huber"}, default="hinge"
        Hinge loss, or the Huber (smoothed hinge) loss of half-width
        ``huber_h``; both are 1-Lipschitz.
    huber_h : float, default=0.1
        Half-width of the Huber loss's quadratic zone (``loss='huber'`` only).
    mechanism : {"laplace", "gaussian", "discrete_laplace", "discrete_gaussian"}, \
default="laplace"
        Output noise: Rubinstein et al.'s (2012) pure-DP Laplace, or the
        analytic Gaussian (needs ``delta``), far less noisy beyond a few
        dozen coefficients or with many classes (see Privacy). The
        ``"discrete_"`` variants add exact integer noise on a public grid
        (``noise_granularity_``), safe against floating-point attacks.
    tol : float, default=0.01
        Certified optimality, relative to the sensitivity: the solver must
        certify (duality gap for hinge, gradient norm for Huber) that its
        solution is within ``tol`` times half the exact minimizer's
        sensitivity of that minimizer; the noise is calibrated to ``(1 +
        tol)`` times that sensitivity. Data-independent.
    max_iter : int, default=1000
        Newton steps allowed to reach the certificate (the hinge loss' Huber
        fallback gets up to five times as many); if it is not reached,
        :class:`~skdp.exceptions.CertificationError` is raised after the charge
        and nothing is released (see :ref:`certified-solvers`)."""

_SHARED_ATTRIBUTES = """\
coef_ : ndarray of shape (1, n_coef) or (n_classes, n_coef)
        Released (noisy) weights; one row per class for more than 2 classes.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Released intercepts.
    classes_ : ndarray of shape (n_classes,)
        Class labels (sorted ``classes`` when given).
    n_features_in_ : int
        Number of input features.
    feature_names_in_ : ndarray of shape (n_features,)
        Input feature names, when ``X`` has string column names.
    sensitivity_ : float
        L2 sensitivity of one class problem's weights (with the solver's
        tolerance); the noise is calibrated to it (see Privacy).
    noise_scale_ : float
        Laplace scale or Gaussian standard deviation of each coordinate's
        noise (for the discrete mechanisms: ``t g`` or ``sigma g``, with ``t``
        and ``sigma`` in grid steps).
    noise_granularity_ : float or None
        The public grid ``g`` (a power of two) of the discrete mechanisms: the
        released weights are exact multiples of it. ``None`` for
        ``"laplace"`` and ``"gaussian"``.
    certified_distance_ : float
        Largest certified distance to the exact minimizer. Not private.
    n_iter_ : int
        Largest number of solver iterations. Not private.
    C_ : float
        The ``C`` used (``C``, or its ``"auto"`` value).
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta)`` spent by the fit."""

_PRIVACY_COMMON = """\
``epsilon``-DP (``"laplace"``, ``"discrete_laplace"``) or ``(epsilon,
    delta)``-DP (``"gaussian"``, ``"discrete_gaussian"``) for replace-one
    neighbours (datasets of the same size differing in one row); every
    training row (features, label, weight) is protected. The certified
    minimizer moves by at most ``Delta = (1 + tol) 2 C kappa / n``
    (Rubinstein et al. (2012), Lemma 9, tightened by a factor of 2), and the
    weights get Laplace noise of scale ``sqrt(F) Delta / epsilon``
    (Rubinstein et al. (2012), Thm. 10), analytic Gaussian noise (Balle and
    Wang 2018), or exact discrete noise on a public grid (Canonne, Kamath
    and Steinke 2020). With ``K > 2`` classes one record moves all ``K``
    one-vs-rest weight vectors: the Gaussian mechanisms release them jointly
    (L2 sensitivity ``sqrt(K) Delta`` at the whole budget), the Laplace ones
    give each ``epsilon / K`` (a joint pure-DP release would cost the same).
    Row weights are clipped to ``[0, 1]``. Public: ``n``, the parameters and
    ``classes`` (with ``classes=None`` the label set is read from ``y``,
    :class:`~skdp.PrivacyLeakWarning`). The continuous noise can leak through
    its floating-point bits (Mironov 2012): use a ``"discrete_"`` mechanism
    against that. ``certified_distance_`` and ``n_iter_`` are not private; do
    not publish them. Derivations: :doc:`/guide/svm_and_perturbation`."""


_NOTES_COMMON = """\
The sensitivity bound (half of Rubinstein et al.'s (2012) Lemma 9), the
    certified solver, the hinge loss' Huber fallback and the floating-point
    limits refused before anything is spent are derived in the user guide,
    :doc:`/guide/svm_and_perturbation`.

    With ``K > 2`` classes and pure-DP noise the default predicts the
    majority class at ``epsilon = 1`` on tables of 40,000 rows (guide,
    "Known limits"): prefer :class:`~skdp.linear_model.DPSGDClassifier`."""


def _fill_svm_doc(cls):
    cls.__doc__ = (cls.__doc__.replace("%(svm_params)s", _SHARED_PARAMS)
                   .replace("%(svm_attributes)s", _SHARED_ATTRIBUTES)
                   .replace("%(svm_privacy)s", _PRIVACY_COMMON)
                   .replace("%(svm_notes)s", _NOTES_COMMON))
    return fill_doc(cls)


@_fill_svm_doc
class PrivateSVMRFF(BasePrivateSVM):
    """Differentially private kernel SVM on random Fourier features (Rubinstein et al. (2012), Alg. 3).

    Draws ``n_components`` frequencies from the kernel's spectral density
    (:class:`~skdp.kernel_approximation.RandomFourierFeatures`), solves the
    primal SVM on the ``2 n_components`` norm-1 features to a certified
    accuracy, and releases the weights plus Laplace (or Gaussian) noise,
    together with the data-independent frequencies.

    Parameters
    ----------
    %(epsilon)s
    delta : float, default=0.0
        ``0`` for ``"laplace"`` and ``"discrete_laplace"``; in ``(0, 1)`` for
        ``"gaussian"`` and ``"discrete_gaussian"`` (well below ``1 / n``).
    kernel : {"rbf", "laplacian", "cauchy"}, default="rbf"
        Translation-invariant kernel (Rubinstein et al. (2012), Tables 1-2); see
        :class:`~skdp.kernel_approximation.RandomFourierFeatures`.
    gamma : "norm", "auto" or float, default="norm"
        Kernel parameter, > 0, chosen without looking at the private data.
        ``"norm"`` is ``1 / data_norm**2``, close to ``SVC``'s
        ``gamma="scale"`` on rows of norm ``data_norm`` (user guide);
        ``"auto"`` is ``1 / n_features``. ``"scale"`` is refused: it reads
        the variance of the private data. Stored in ``gamma_``.
    data_norm : float, default=1.0
        Public typical L2 norm of the input rows, used only by
        ``gamma="norm"``. Rows are not clipped to it: the random Fourier
        features have norm 1 whatever the input.
    n_components : int, default=100
        Number of random frequencies (``2 n_components`` coefficients). More
        approximate the kernel better but add noise.
    %(svm_params)s
    %(classes)s
    %(class_weight)s
    %(n_jobs)s
    %(random_state)s
    %(accountant)s
    %(verbose)s
        It prints the noise calibration and the solver's diagnostics (not
        private: see Privacy).

    Attributes
    ----------
    gamma_ : float
        The kernel parameter used (``gamma``, ``1 / data_norm**2`` for
        ``"norm"``, ``1 / n_features_in_`` for ``"auto"``).
    random_fourier_features_ : RandomFourierFeatures
        The fitted feature map; its ``frequencies_`` are released with the model.
    %(svm_attributes)s

    With ``C="auto"`` the non-private limit is ``f = 1``, i.e. ``C = n``:
    scikit-learn's ``SVC()`` (``C=1``, hinge loss) on the norm-1 random
    features, which have no intercept column; with ``K > 2`` classes
    ``m = 4 K^2``.

    Privacy
    -------
    %(svm_privacy)s
    Here ``kappa = 1`` (every random Fourier feature vector has norm 1) and
    ``F = 2 n_components``. The frequencies are drawn independently of the
    data (from a stream separate from the noise) and cost no privacy.

    See Also
    --------
    PrivateLinearSVM : The same mechanism for an explicit, bounded feature map.
    skdp.kernel_approximation.RandomFourierFeatures : The feature map alone.

    Notes
    -----
    %(svm_notes)s

    The intercept is 0 (Rubinstein et al. (2012) learns ``f(x) = <w, phi(x)>``).

    References
    ----------
    B. Rubinstein, P. Bartlett, L. Huang and N. Taft, "Learning in a large
    function space: privacy-preserving mechanisms for SVM learning",
    J. Privacy and Confidentiality 4(1), 2012.

    Examples
    --------
    >>> from sklearn.datasets import make_circles
    >>> from skdp.svm import PrivateSVMRFF
    >>> X, y = make_circles(n_samples=2000, noise=0.1, factor=0.5, random_state=0)
    >>> clf = PrivateSVMRFF(epsilon=1.0, gamma=4.0, C=10.0, n_components=100,
    ...                     classes=[0, 1], random_state=0).fit(X, y)
    >>> clf.coef_.shape
    (1, 200)
    >>> clf.score(X, y) > 0.8
    True
    """

    def __init__(self, epsilon=1.0, delta=0.0, *, kernel="rbf", gamma="norm", data_norm=1.0,
                 n_components=100, C="auto", loss="hinge", huber_h=0.1, mechanism="laplace",
                 tol=0.01, max_iter=1000, classes=None, class_weight=None, n_jobs=None,
                 random_state=None, accountant=None, verbose=0):
        self.epsilon = epsilon
        self.delta = delta
        self.kernel = kernel
        self.gamma = gamma
        self.data_norm = data_norm
        self.n_components = n_components
        self.C = C
        self.loss = loss
        self.huber_h = huber_h
        self.mechanism = mechanism
        self.tol = tol
        self.max_iter = max_iter
        self.classes = classes
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def _resolve_gamma(self):
        """``gamma``: ``"norm"`` = ``1 / data_norm**2``, ``"auto"`` = ``1 / n_features_in_``."""
        if not isinstance(self.gamma, str):
            return self.gamma  # checked by RandomFourierFeatures
        if self.gamma == "norm":
            data_norm = check_real(self.data_norm, "data_norm", low=0.0, low_inclusive=False)
            return 1.0 / data_norm**2
        if self.gamma == "auto":
            return 1.0 / self.n_features_in_
        if self.gamma == "scale":
            raise ValueError(
                "gamma='scale' (scikit-learn's 1 / (n_features * X.var())) reads the variance "
                "of the private training data, which this estimator does not release without "
                "noise. Use gamma='norm' (1 / data_norm**2, at most scikit-learn's value on "
                "rows of norm data_norm), 'auto' (1 / n_features) or a float chosen without "
                "the data. Nothing was spent.")
        raise ValueError(
            f"gamma must be 'norm', 'auto' or a real number > 0, got {self.gamma!r}.")

    def _make_map(self, random_state):
        return RandomFourierFeatures(kernel=self.kernel, gamma=self._resolve_gamma(),
                                     n_components=self.n_components,
                                     random_state=random_state)

    def _check_feature_params(self):
        check_real(self.data_norm, "data_norm", low=0.0, low_inclusive=False)
        self._make_map(None)._check_params()

    def _public_shape(self, X, part):
        # phi(x) = (cos, sin)(W x) / sqrt(D): 2 n_components coefficients, ||phi(x)|| = 1.
        return 2 * self.n_components, 1.0

    def _features(self, X, rng):
        feature_map = self._make_map(rng).fit(X)
        # The frequencies are drawn; the spawned generator must not stay in the released
        # map: its seed sequence holds the root entropy, from which the sibling stream that
        # draws the output noise can be rebuilt.
        feature_map.random_state = None
        return feature_map.transform(X), feature_map

    def _set_model(self, W, feature_map):
        self.gamma_ = feature_map.gamma
        self.random_fourier_features_ = feature_map
        self.coef_ = W
        self.intercept_ = np.zeros(W.shape[0])

    def decision_function(self, X):
        """Signed scores ``<w, phi(x)>`` per class (or of the positive class if binary).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, accept_sparse="csr", reset=False)
        scores = self.random_fourier_features_.transform(X) @ self.coef_.T
        return scores.ravel() if scores.shape[1] == 1 else scores


@_fill_svm_doc
class PrivateLinearSVM(BasePrivateSVM):
    """Differentially private linear SVM by output perturbation (Rubinstein et al. (2012), Alg. 2).

    The finite-feature-map mechanism: rows (with a constant intercept feature
    appended) are scaled down to norm at most ``data_norm``, the primal SVM
    is solved to a certified accuracy, and noise is added to the weights.
    Any explicit feature map (``PolynomialFeatures``, a fixed embedding, ...)
    placed before it in a Pipeline is made private this way, provided
    ``data_norm`` bounds the mapped rows or the clipping is acceptable.

    Parameters
    ----------
    %(epsilon)s
    delta : float, default=0.0
        ``0`` for ``"laplace"`` and ``"discrete_laplace"``; in ``(0, 1)`` for
        ``"gaussian"`` and ``"discrete_gaussian"`` (well below ``1 / n``).
    %(data_norm)s
    fit_intercept : bool, default=True
        Append a constant feature of value 1 (counted in the row norm and
        regularized, as in ``LinearSVC``) whose weight is the intercept.
    %(svm_params)s
    %(classes)s
    %(class_weight)s
    %(n_jobs)s
    %(random_state)s
    %(accountant)s
    %(verbose)s
        It prints the noise calibration and the solver's diagnostics (not
        private: see Privacy).

    Attributes
    ----------
    %(svm_attributes)s

    With ``C="auto"`` the non-private limit is ``f = 1/4``, i.e. ``C = 4 n /
    data_norm^2``: scikit-learn's ``LinearSVC()`` (``C=1``, squared hinge) on
    rows of norm ``data_norm``, where the intercept column inside the norm
    halves the squared feature norm (a factor 2) and the hinge loss needs
    about twice the squared hinge's ``C`` (measured). With ``K > 2`` classes
    ``m = 16 K^2``.

    Privacy
    -------
    %(svm_privacy)s
    Here ``kappa = data_norm`` (Rubinstein et al. (2012), Thm. 10's bound ``k(x, x) <= kappa^2``
    is enforced by clipping each row, a per-row operation that costs no
    privacy) and ``F = n_features (+ 1 with an intercept)``.

    See Also
    --------
    PrivateSVMRFF : The same mechanism in a random Fourier feature space.

    Notes
    -----
    %(svm_notes)s

    References
    ----------
    B. Rubinstein, P. Bartlett, L. Huang and N. Taft, "Learning in a large
    function space: privacy-preserving mechanisms for SVM learning",
    J. Privacy and Confidentiality 4(1), 2012.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skdp.svm import PrivateLinearSVM
    >>> X, y = make_classification(n_samples=2000, n_features=4, random_state=0)
    >>> clf = PrivateLinearSVM(epsilon=1.0, data_norm=4.0, C=10.0, classes=[0, 1],
    ...                        random_state=0).fit(X, y)
    >>> clf.coef_.shape
    (1, 4)
    >>> clf.score(X, y) > 0.8
    True
    """

    def __init__(self, epsilon=1.0, delta=0.0, *, data_norm=1.0, fit_intercept=True, C="auto",
                 loss="hinge", huber_h=0.1, mechanism="laplace", tol=0.01, max_iter=1000,
                 classes=None, class_weight=None, n_jobs=None, random_state=None,
                 accountant=None, verbose=0):
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.fit_intercept = fit_intercept
        self.C = C
        self.loss = loss
        self.huber_h = huber_h
        self.mechanism = mechanism
        self.tol = tol
        self.max_iter = max_iter
        self.classes = classes
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    _C_FLOOR = 0.25
    _C_MULTICLASS_MULTIPLIER = 16.0

    def _check_feature_params(self):
        check_real(self.data_norm, "data_norm", low=0.0, low_inclusive=False)
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be a bool, got {self.fit_intercept!r}.")

    def _public_shape(self, X, part):
        # Rows (with the intercept column) are clipped to L2 norm data_norm.
        return X.shape[1] + bool(self.fit_intercept), float(self.data_norm)

    def _features(self, X, rng):
        if self.fit_intercept:
            X = add_intercept_column(X)
        return clip_rows_l2(X, self.data_norm), None

    def _set_model(self, W, _):
        if self.fit_intercept:
            self.coef_, self.intercept_ = W[:, :-1], W[:, -1].copy()
        else:
            self.coef_, self.intercept_ = W, np.zeros(W.shape[0])
