"""Kernels for the private kernel learners: resolution, bounds and feature-space clipping.

Every privacy proof in this subpackage needs ``kappa^2 >= k(x, x)`` for every
point ``x`` that can occur, the squared norm bound of the feature map
(``R_phi^2`` in Jain and Thakurta (2013), ``kappa^2`` in Hall et al. 2013). For bounded
kernels (``rbf``, ``laplacian``, ``chi2``, ``cosine``, stationary
scikit-learn kernels) it is known exactly. For the others (``linear``,
``poly``, a callable) the user gives it as ``kernel_bound`` and every point is
*clipped in feature space*: ``phi(x)`` is scaled by
``s(x) = min(1, kappa / sqrt(k(x, x)))``, i.e. the kernel is replaced by
``s(a) s(b) k(a, b)``. For the linear kernel this is exactly L2 row clipping;
for any kernel it is a per-record operation that costs no privacy and makes
``k(x, x) <= kappa^2`` hold for arbitrary input.
"""

import copy
import re
import textwrap

import numpy as np
from scipy import linalg
from scipy.spatial.distance import cdist
from scipy.stats import qmc
from sklearn.gaussian_process import kernels as gp_kernels
from sklearn.gaussian_process.kernels import Kernel as SklearnGPKernel, PairwiseKernel
from sklearn.metrics.pairwise import pairwise_kernels

from skdp.utils._docstrings import fill_doc
from skdp.utils._validation import check_positive_int, check_real

__all__ = [
    "KERNEL_BOUND_DOC",
    "KERNEL_DOC",
    "KERNEL_ERM_DOC",
    "KERNEL_PSD_DOC",
    "KernelParamsMixin",
    "ResolvedKernel",
    "fill_kernel_doc",
    "gaussian_kernel",
    "psd_probe_points",
    "resolve_kernel",
]

# k(x, x) == 1 for every x: the feature map has norm 1 and nothing needs clipping.
_UNIT_DIAGONAL = ("rbf", "laplacian", "chi2", "cosine")
# Positive semi-definite but unbounded: need ``kernel_bound``.
_UNBOUNDED = ("linear", "poly", "polynomial")
# Not positive semi-definite: there is no RKHS (and no Gaussian process) to speak of.
_NOT_PSD = ("sigmoid", "additive_chi2")

KERNEL_DOC = """\
kernel : str, callable or scikit-learn GP kernel, default="rbf"
    A positive semi-definite kernel: a name of
    :func:`sklearn.metrics.pairwise.pairwise_kernels` (``"rbf"``,
    ``"laplacian"``, ``"chi2"``, ``"cosine"``, ``"linear"``, ``"poly"``), a
    callable ``k(x, y)`` on two rows, or a kernel object of
    :mod:`sklearn.gaussian_process.kernels` (used as given, never tuned).
    Kernels that are not PSD are refused (:ref:`kernel_choice`).
gamma : float or None, default=None
    Parameter of the named kernels. ``None``: for the kernel classifiers
    ``1 / (2 data_norm**2)`` (or ``2 / sum_j (high_j - low_j)**2`` with
    ``bounds``; stored in ``gamma_``), for the other estimators
    ``1 / n_features``; neither reads the data.
degree : int, default=3
    Degree of the ``"poly"`` kernel.
coef0 : float, default=1.0
    Constant of the ``"poly"`` kernel.
kernel_params : dict or None, default=None
    Extra keyword arguments of a callable or named kernel."""

KERNEL_BOUND_DOC = """\
kernel_bound : float or None, default=None
    ``kappa^2``, a public upper bound on ``k(x, x)``, enforced on every
    point by clipping the feature map; required for ``"linear"``,
    ``"poly"``, callables and non-stationary kernel objects. ``None`` uses
    the exact bound of bounded kernels (1 for ``"rbf"``)."""


def gaussian_kernel(A, B, gamma):
    """``exp(-gamma ||a - b||^2)`` for validated float arrays (no input checks: fast).

    Parameters
    ----------
    A : ndarray of shape (m, d)
    B : ndarray of shape (k, d)
    gamma : float

    Returns
    -------
    K : ndarray of shape (m, k)
    """
    return np.exp(-gamma * cdist(A, B, "sqeuclidean"))


def _named_kernel(name, A, B, params):
    """The common named kernels on validated arrays; scikit-learn's for the rest."""
    gamma = params.get("gamma")
    gamma = 1.0 / A.shape[1] if gamma is None else gamma
    if name == "rbf":
        return gaussian_kernel(A, B, gamma)
    if name == "laplacian":
        return np.exp(-gamma * cdist(A, B, "cityblock"))
    if name == "linear":
        return A @ B.T
    if name in ("poly", "polynomial"):
        return (gamma * (A @ B.T) + params["coef0"]) ** params["degree"]
    return np.asarray(pairwise_kernels(A, B, metric=name, filter_params=True, **params),
                      dtype=float)


class ResolvedKernel:
    """A validated kernel with a norm bound, applied with feature-space clipping.

    Built by :func:`resolve_kernel`; holds only plain parameters, so fitted
    estimators stay picklable (they rebuild it from their parameters).
    """

    def __init__(self, kernel, params, bound, clip, known_psd=False):
        self.kernel = kernel
        self.params = params
        self.bound = bound
        self.clip = clip
        # True when the kernel is positive semi-definite by construction (named kernels with
        # validated parameters, scikit-learn kernel objects of known families): see
        # resolve_kernel. Otherwise check_public_psd tests it on public points.
        self.known_psd = known_psd

    def check_public_psd(self, owner, n_features, support=None, K_uu=None):
        """Refuse (before the charge) a kernel that is not PSD on public points.

        Every privacy proof of the kernel classifiers needs a reproducing
        kernel: the RKHS sensitivity ``2 kappa / (lambda n)`` of the ERM
        minimizer (Jain and Thakurta (2013), eq. 2; Chaudhuri et al. (2011), Cor. 1) and the step
        ``|f(u) - f'(u)| <= ||f - f'||_H kappa`` both fail for an indefinite
        "kernel" (there is no RKHS). A kernel that is PSD by construction
        (``known_psd``) passes. Any other (a callable, a kernel object of an
        unknown family) must be PSD on the union of the public ``support``
        and a fixed, data-independent probe set (:func:`psd_probe_points`):
        its clipped Gram matrix there must be symmetric and have no
        eigenvalue below ``-64 m u max|eig|`` (rounding). Only public points
        are read, so the refusal leaks nothing; it cannot prove the kernel
        PSD on the private rows (no check that does not read them can), so
        a callable remains the user's declaration that it is PSD.

        Parameters
        ----------
        owner : str
            Name of the estimator, for the error message.
        n_features : int
            Number of input features.
        support : ndarray of shape (m, n_features) or None
            Public points of the release (``None``: the probe set only).
        K_uu : ndarray of shape (m, m) or None
            ``self(support)`` when the caller has it.
        """
        if getattr(self, "known_psd", False):
            return
        probe = psd_probe_points(n_features)
        K_pp = self(probe, probe.copy())  # a copy: every pair evaluated, both orders
        if not np.allclose(K_pp, K_pp.T, rtol=1e-12, atol=0.0):
            raise ValueError(f"{owner}: the kernel is not symmetric (k(a, b) != k(b, a) at "
                             "public probe points), so it is not positive semi-definite; "
                             "the privacy proofs need a reproducing kernel. Nothing was spent.")
        K = 0.5 * (K_pp + K_pp.T)
        if support is not None:
            K_uu = self(support) if K_uu is None else K_uu
            K_pu = self(probe, support)
            K = np.block([[K_uu, K_pu.T], [K_pu, K]])
        evals = linalg.eigvalsh(K, check_finite=False)
        scale = max(float(np.max(np.abs(evals))), np.finfo(float).tiny)
        if evals[0] < -64.0 * K.shape[0] * np.finfo(float).eps * scale:
            raise ValueError(
                f"{owner}: the kernel is not positive semi-definite (its Gram matrix on public "
                "points has a negative eigenvalue); the privacy proofs need a reproducing "
                "kernel, and an indefinite one is under-noised. Nothing was spent.")

    def _raw(self, A, B):
        if isinstance(self.kernel, SklearnGPKernel):
            return np.asarray(self.kernel(A, B), dtype=float)
        if isinstance(self.kernel, str):
            return _named_kernel(self.kernel, A, B, self.params)
        return np.asarray(pairwise_kernels(A, B, metric=self.kernel, filter_params=True,
                                           **self.params), dtype=float)

    def _raw_diag(self, A):
        if isinstance(self.kernel, SklearnGPKernel):
            return np.asarray(self.kernel.diag(A), dtype=float)
        if self.kernel in _UNIT_DIAGONAL:
            return np.ones(A.shape[0])
        if self.kernel == "linear":
            return np.einsum("ij,ij->i", A, A)
        if self.kernel in ("poly", "polynomial"):
            gamma = self.params.get("gamma")
            gamma = 1.0 / A.shape[1] if gamma is None else gamma
            return (gamma * np.einsum("ij,ij->i", A, A) + self.params["coef0"]) ** self.params["degree"]
        # A callable: one evaluation per row.
        return np.array([float(self.kernel(a, a, **self.params)) for a in A])

    def scale(self, A):
        """Feature-space clipping factors ``s(x) = min(1, kappa / sqrt(k(x, x)))``.

        A point whose ``k(x, x)`` overflows (a finite but huge record, e.g.
        ``||x||^2 > 1.8e308`` for the linear kernel) gets ``s(x) = 0``: it is
        mapped to the origin of the feature space, still a per-record
        operation with ``k(x, x) <= kappa^2``, instead of ``inf * 0 = NaN``
        entries that made every fit on such data fail.
        """
        if not self.clip:
            return np.ones(A.shape[0])
        with np.errstate(over="ignore", invalid="ignore"):
            diag = self._raw_diag(A)
        if np.any(diag < -1e-12 * max(1.0, self.bound)):
            raise ValueError("the kernel has k(x, x) < 0 at some point: it is not positive "
                             "semi-definite.")
        s = np.ones_like(diag)
        big = ~(diag <= self.bound)  # also inf and NaN
        s[big] = np.sqrt(self.bound / diag[big])
        s[~np.isfinite(diag)] = 0.0
        return s

    def __call__(self, A, B=None):
        """Clipped kernel matrix ``s(a) s(b) k(a, b)`` between the rows of ``A`` and ``B``."""
        B = A if B is None else B
        with np.errstate(over="ignore", invalid="ignore"):
            K = self._raw(A, B)
            if self.clip:
                s_a, s_b = self.scale(A), self.scale(B)
                K *= s_a[:, None]
                K *= s_b[None, :]
                # Points mapped to the origin (s = 0) have k = 0 with everything, not inf * 0.
                K[s_a == 0.0, :] = 0.0
                K[:, s_b == 0.0] = 0.0
        if not np.all(np.isfinite(K)):
            raise ValueError("the kernel gave non-finite values (overflow, or a kernel that "
                             "is not defined at some input); check the kernel and its "
                             "parameters, or pass kernel_bound to clip in feature space.")
        return K

    def diag(self, A):
        """Clipped ``k(x, x)`` for every row ``x`` of ``A``."""
        if not self.clip:
            return self._raw_diag(A)
        with np.errstate(over="ignore", invalid="ignore"):
            d = self._raw_diag(A)
        return np.where(np.isfinite(d), np.minimum(d, self.bound), 0.0)


def _check_named_psd(name, params):
    """Refuse parameters that make a named kernel indefinite (after ``kernel_params``).

    ``kernel_params`` is applied over the validated ``gamma``, ``degree`` and
    ``coef0``, so they are validated again here. ``exp(-gamma d(a, b))``
    (rbf, laplacian, chi2) is positive semi-definite for ``gamma > 0`` (for
    ``gamma < 0`` it grows without bound off the diagonal while
    ``k(x, x) = 1``); ``(gamma <a, b> + c)^p`` (poly) for ``gamma > 0``,
    ``c >= 0`` and an integer ``p >= 1`` (a sum of products of PSD kernels with
    non-negative coefficients; Schur product theorem). linear and cosine have
    no parameter.
    """
    if name in ("linear", "cosine"):
        return
    if params.get("gamma") is not None:
        params["gamma"] = check_real(params["gamma"], "gamma", low=0.0, low_inclusive=False)
    if name in ("poly", "polynomial"):
        params["degree"] = check_positive_int(params["degree"], "degree")
        params["coef0"] = check_real(params["coef0"], "coef0")
        if params["coef0"] < 0:
            raise ValueError("the 'poly' kernel needs coef0 >= 0 to be positive semi-definite "
                             f"for every degree; got coef0={params['coef0']}.")


def _gp_kernel_known_psd(kernel):
    """Whether a scikit-learn kernel object is PSD by construction (``ValueError`` if surely not).

    Known families (the exact classes, not subclasses that may override
    ``__call__``): ``RBF``, ``ExpSineSquared``, ``DotProduct`` (any
    hyperparameters), ``Matern`` (``nu > 0``), ``RationalQuadratic``
    (``alpha > 0``), ``ConstantKernel`` and ``WhiteKernel`` (a value ``>= 0``),
    ``PairwiseKernel`` with a named PSD metric and parameters as in
    :func:`_check_named_psd`; ``Sum`` and ``Product`` of known ones (Schur
    product theorem), ``Exponentiation`` of a known one to an integer power
    ``>= 0``. A negative constant, ``nu`` or ``alpha``, or an indefinite metric
    is refused. Anything else (a fractional power, a callable metric, a
    user-defined kernel class) is unknown: ``False``, and the kernel is checked
    on public points (:meth:`ResolvedKernel.check_public_psd`).
    """
    kind = type(kernel)
    if kind in (gp_kernels.Sum, gp_kernels.Product):
        # Both operands are examined (each may refuse).
        return all([_gp_kernel_known_psd(kernel.k1), _gp_kernel_known_psd(kernel.k2)])
    if kind is gp_kernels.Exponentiation:
        base = _gp_kernel_known_psd(kernel.kernel)
        exponent = float(kernel.exponent)
        return base and exponent >= 0 and exponent.is_integer()
    if kind in (gp_kernels.RBF, gp_kernels.ExpSineSquared, gp_kernels.DotProduct):
        return True
    checks = {gp_kernels.Matern: ("nu", False), gp_kernels.RationalQuadratic: ("alpha", False),
              gp_kernels.ConstantKernel: ("constant_value", True),
              gp_kernels.WhiteKernel: ("noise_level", True)}
    if kind in checks:
        name, zero_ok = checks[kind]
        value = float(getattr(kernel, name))
        if not (value >= 0 if zero_ok else value > 0):
            raise ValueError(f"kernel {kernel!r}: {kind.__name__} needs {name} "
                             f"{'>=' if zero_ok else '>'} 0 to be positive semi-definite; "
                             f"got {value}.")
        return True
    if kind is PairwiseKernel and isinstance(kernel.metric, str):
        if kernel.metric not in _UNIT_DIAGONAL + _UNBOUNDED:
            return False
        params = {"gamma": kernel.gamma, "degree": 3, "coef0": 1.0}
        params.update(kernel.pairwise_kernels_kwargs or {})
        _check_named_psd(kernel.metric, params)
        return True
    return False


def psd_probe_points(n_features):
    """Fixed public points on which a kernel not PSD by construction is checked.

    16 points of a scrambled Halton sequence (fixed seed: not privacy noise)
    in each of the boxes ``[-s, s]^d`` for ``s`` in 0.1, 1, 10 and 100, so
    the probe covers small and large inputs without reading any data.

    Parameters
    ----------
    n_features : int
        Dimension.

    Returns
    -------
    points : ndarray of shape (64, n_features)
    """
    unit = qmc.Halton(d=n_features, scramble=True, rng=np.random.default_rng(0)).random(64)
    scales = np.repeat([0.1, 1.0, 10.0, 100.0], 16)[:, None]
    return scales * (2.0 * unit - 1.0)


def _copy_if_possible(obj):
    """A deep copy of a callable kernel or kernel_params, or ``obj`` if it cannot be copied."""
    try:
        return copy.deepcopy(obj)
    except Exception:  # noqa: BLE001 - e.g. TypeError: cannot pickle '_thread.lock'
        return obj


def resolve_kernel(kernel, *, gamma=None, degree=3, coef0=1.0, kernel_params=None,
                   kernel_bound=None, n_features, require_bound=True):
    """Validate a kernel specification and find its norm bound ``kappa^2``.

    Parameters
    ----------
    kernel : str, callable or sklearn.gaussian_process.kernels.Kernel
        See ``KERNEL_DOC``.
    gamma, degree, coef0, kernel_params
        Kernel parameters.
    kernel_bound : float or None
        User-given ``kappa^2``; enforced by feature-space clipping when given.
    n_features : int
        Number of input features (for a stationary kernel object's diagonal).
    require_bound : bool, default=True
        Whether the caller's privacy proof needs ``kappa^2``; if not, an
        unbounded kernel is accepted without ``kernel_bound`` (``bound=inf``).

    Returns
    -------
    kernel : ResolvedKernel
        Callable as ``kernel(A, B)``; ``kernel.bound`` is ``kappa^2``.
    """
    params = {}
    if gamma is not None:
        params["gamma"] = check_real(gamma, "gamma", low=0.0, low_inclusive=False)
    params["degree"] = check_positive_int(degree, "degree")
    params["coef0"] = check_real(coef0, "coef0")
    if kernel_params is not None:
        if not isinstance(kernel_params, dict):
            raise TypeError(f"kernel_params must be a dict or None, got {kernel_params!r}.")
        params.update(_copy_if_possible(kernel_params))  # see the callable case
    if kernel_bound is not None:
        kernel_bound = check_real(kernel_bound, "kernel_bound", low=0.0, low_inclusive=False)

    if isinstance(kernel, str):
        if kernel in _NOT_PSD:
            raise ValueError(f"kernel={kernel!r} is not positive semi-definite; the privacy "
                             "proofs need a reproducing kernel.")
        if kernel not in _UNIT_DIAGONAL + _UNBOUNDED:
            raise ValueError(f"kernel must be one of {sorted(_UNIT_DIAGONAL + _UNBOUNDED)}, a "
                             f"callable or a scikit-learn GP kernel; got {kernel!r}.")
        _check_named_psd(kernel, params)
        natural = 1.0 if kernel in _UNIT_DIAGONAL else None
        known_psd = True
    elif isinstance(kernel, SklearnGPKernel):
        # A copy: set_params changes a kernel object in place (also through an estimator's
        # kernel__ parameters), and the kernel of a release must stay the one checked here.
        kernel = copy.deepcopy(kernel)
        parts = [kernel] + [v for v in kernel.get_params(deep=True).values()
                            if isinstance(v, SklearnGPKernel)]
        for part in parts:
            if isinstance(part, PairwiseKernel) and part.metric in _NOT_PSD:
                raise ValueError(f"kernel {kernel!r} uses metric={part.metric!r}, which is not "
                                 "positive semi-definite; the privacy proofs need a "
                                 "reproducing kernel.")
        known_psd = _gp_kernel_known_psd(kernel)
        params, natural = {}, None
        if kernel.is_stationary():
            natural = float(kernel.diag(np.zeros((1, n_features)))[0])
    elif callable(kernel):
        # As KernelRidge: a callable gets kernel_params only. A copy, as for kernel
        # objects: the parameter keeps the user's callable by reference (as scikit-learn
        # does), but a fitted model must not change if that object is mutated later.
        # (copy.deepcopy returns a plain function itself: functions are immutable, but
        # state a function closes over is not copied; nor is an object that cannot be
        # copied, e.g. one holding a lock: it is kept by reference, as before.)
        kernel = _copy_if_possible(kernel)
        params, natural = _copy_if_possible(dict(kernel_params or {})), None
        known_psd = False
    else:
        raise TypeError(f"kernel must be a string, a callable or a scikit-learn GP kernel; "
                        f"got {kernel!r}.")

    if kernel_bound is None:
        if natural is None and not require_bound:
            return ResolvedKernel(kernel, params, np.inf, clip=False, known_psd=known_psd)
        if natural is None:
            name = kernel if isinstance(kernel, str) else type(kernel).__name__
            raise ValueError(
                f"kernel {name!r} has no bound on k(x, x): pass kernel_bound, an upper bound "
                "on k(x, x) over your data domain chosen without looking at the data (e.g. "
                "data_norm**2 for the linear kernel); points beyond it are clipped in "
                "feature space."
            )
        return ResolvedKernel(kernel, params, natural, clip=False, known_psd=known_psd)
    return ResolvedKernel(kernel, params, kernel_bound, clip=True, known_psd=known_psd)


class KernelParamsMixin:
    """Builds the :class:`ResolvedKernel` of an estimator's kernel parameters."""

    def _get_kernel(self, n_features, require_bound=True):
        return resolve_kernel(self.kernel, gamma=self.gamma, degree=self.degree,
                              coef0=self.coef0, kernel_params=self.kernel_params,
                              kernel_bound=getattr(self, "kernel_bound", None),
                              n_features=n_features, require_bound=require_bound)

    def _fitted_kernel(self, n_features, require_bound=True):
        """The kernel resolved at fit (a model pickled before it was kept rebuilds it)."""
        kernel = getattr(self, "_kernel", None)
        return kernel if kernel is not None else self._get_kernel(n_features, require_bound)


KERNEL_ERM_DOC = """\
alpha : float or None, default=None
    Regularization ``lambda`` of Jain and Thakurta (2013), eq. (2);
    ``SVC(C=C)`` is ``lambda = 1 / (C n)``, and the privacy noise scales as
    ``1 / (lambda n)``. ``None`` (stored in ``alpha_``): ``SVC()``'s
    ``C = 1`` when the noise is negligible, else the smallest ``alpha``
    whose noise on a decision value stays at a third of the margin
    (:doc:`/guide/kernel_methods`).
huber_h : float, default=0.5
    Width of the Huber SVM loss.
max_iter : int, default=100
    Newton iterations of the certified solver.
bounds : array-like of shape (2,) or (n_features, 2) or None, default=None
    Public box of the rows (one ``(low, high)`` pair, or one per feature)
    over which the public points are laid when ``fit`` gets no
    ``X_public``. ``None``: the rows lie in the ball of radius
    ``data_norm`` (e.g. after a ``Normalizer``) and the points cover its
    sphere.
data_norm : float, default=1.0
    Public bound on the rows' L2 norm, used when ``bounds=None`` (for the
    public points and ``gamma=None``)."""

KERNEL_ERM_COST_DOC = """\
Cost: the ERM is solved over the span of the ``m`` public points' kernel
functions by certified Newton steps: time ``O(n_samples m^2)`` per step and
memory ``O(n_samples m)``, one problem per class for one-vs-rest (about 1
to 2 s at the defaults on 3,000 rows, one BLAS thread)."""

KERNEL_PSD_DOC = """\
The proofs need a positive semi-definite kernel. A kernel that is not
PSD by construction (a callable, a kernel class of your own) is checked
before anything is spent on public points only, so passing one declares
it PSD on the whole input domain (:ref:`kernel_choice`)."""

_LOCAL_DOCS = {"kernel": KERNEL_DOC, "kernel_bound": KERNEL_BOUND_DOC,
               "kernel_erm": KERNEL_ERM_DOC, "kernel_erm_cost": KERNEL_ERM_COST_DOC,
               "kernel_psd": KERNEL_PSD_DOC}
_LOCAL_PLACEHOLDER = re.compile(
    r"^(?P<indent>[ \t]*)%\((?P<name>kernel|kernel_bound|kernel_erm|kernel_erm_cost"
    r"|kernel_psd)\)s[ \t]*$",
    re.MULTILINE)


def fill_kernel_doc(cls):
    """Substitute the kernel parameter blocks for ``%(kernel)s`` / ``%(kernel_bound)s`` lines.

    The shared blocks of :func:`skdp.utils.fill_doc` are substituted next.

    Parameters
    ----------
    cls : class
        Class whose docstring holds the placeholders.

    Returns
    -------
    cls : class
        The same class, docstring filled in.
    """
    cls.__doc__ = _LOCAL_PLACEHOLDER.sub(
        lambda m: textwrap.indent(_LOCAL_DOCS[m.group("name")], m.group("indent")), cls.__doc__)
    return fill_doc(cls)
