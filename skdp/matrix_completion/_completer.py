"""DPMatrixCompleter: user-level (joint) differentially private matrix completion."""

import math

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.base import DPEstimatorMixin
from skdp.matrix_completion._biases import (
    ITEM_SENSITIVITY_FACTOR,
    item_biases,
    item_statistics,
    recentre,
)
from skdp.matrix_completion._calibration import (
    discrete_noise,
    noise_sigma,
    release_schedule,
    total_sensitivity,
)
from skdp.matrix_completion._ratings import ratings_from_input
from skdp.matrix_completion._solvers import (
    clipped_values,
    frank_wolfe_local,
    least_squares_coef,
    nuclear_shrinkage,
    pgd_local,
    private_eigh,
    private_oja,
    private_top_eigen,
    grid_release,
    pursuit_local,
    step_sizes,
)
from skdp.utils._docstrings import fill_doc
from skdp.utils._validation import check_option, check_positive_int, check_real

__all__ = ["DPMatrixCompleter"]

METHODS = ("frank_wolfe", "pursuit", "svd", "pgd")
EIGENSOLVERS = ("auto", "exact", "oja")
NOISES = ("gaussian", "discrete_gaussian")
_AUTO_EXACT_MAX_ITEMS = 2000  # above this, 'auto' avoids the n x n noise matrix
_TRANSFORM_BLOCK = 20_000  # users completed at a time by transform


@fill_doc
class DPMatrixCompleter(OneToOneFeatureMixin, TransformerMixin, DPEstimatorMixin, BaseEstimator):
    """Complete a users x items ratings matrix with user-level joint differential privacy.

    The algorithms of Jain, Thakkar and Thakurta (2018) (Thakkar (2019), Ch. 6)
    split every iteration into a **global component**, the only step that sees
    all users (noisy top eigenvectors of ``sum_i A_i^T A_i``, kept in
    ``components_``), and a **local component**, :meth:`transform`, that
    completes each user's row from her own ratings and those vectors only.

    Derivations, the defaults' rules and measurements on real ratings are in
    the user guide, :doc:`/guide/matrix_completion`.

    Parameters
    ----------
    %(epsilon)s
    delta : float or None, default=None
        In ``(0, 1)``. ``None`` uses ``1 / n_users**2`` (stored in ``delta_``);
        Thakkar (2019) asks for ``delta < 1 / n_users``.
    nuclear_norm : float or None, default=None
        ``"frank_wolfe"`` and ``"pgd"``: the bound ``k`` on the nuclear norm of
        the centred completed matrix, > 0. ``None``: the public rule
        ``sqrt(n_users) * row_norm_bound`` (stored in ``nuclear_norm_``).
    max_iter : int, default=10
        Iterations ``T`` of ``"frank_wolfe"`` and ``"pgd"``; the noise grows
        like ``sqrt(T)``.
    row_norm_bound : float or None, default=None
        Each user's centred observed ratings (Frank-Wolfe: also her iterate on
        them; ``"pgd"``: her **whole** iterate row) are scaled down to this L2
        norm before they enter the global statistic (free, per user); the noise
        grows like its square. ``None``: ``3 s`` (``"pgd"``: ``0.4 s
        sqrt(n_items)``), ``s`` half the width of ``rating_bounds``.
    method : {"svd", "frank_wolfe", "pursuit", "pgd"}, default="svd"
        * ``"svd"`` (default): private SVD completion (Alg. 15): one noisy
          top-``rank`` subspace of the clipped ratings; each user fits her row on
          it by ridge least squares.
        * ``"frank_wolfe"``: private Frank-Wolfe (Alg. 13) on
          ``min ||P_Omega(Y - Y*)||_F^2`` over ``||Y||_nuc <= nuclear_norm``.
        * ``"pursuit"``: the same global component; each user refits her row on
          all directions released so far and sends her clipped residual to the
          next iteration (a private greedy rank-one pursuit, an skdp addition).
        * ``"pgd"``: private projected gradient descent (Alg. 16), releasing a
          full noisy ``n x n`` Gram matrix per iteration (a few thousand items at
          most).
    eigensolver : {"auto", "exact", "oja"}, default="auto"
        ``"exact"``: eigenpairs of the noisy ``n x n`` matrix (memory
        ``O(nnz + n^2)``). ``"oja"``: private Oja's method (Alg. 14), noisy
        products with vectors only (memory ``O(nnz + n_users + n)``).
        ``"auto"``: ``"exact"`` up to 2000 items, else ``"oja"``. ``"pgd"``
        needs ``"exact"`` (``"auto"`` picks it, ``"oja"`` is refused).
    rank : int or None, default=None
        Directions released by ``"svd"`` (one subspace) and ``"pursuit"``
        (one release each). ``None``: ``min(5, n_items)`` for ``"svd"``,
        ``min(3, n_items)`` for ``"pursuit"``. Unused by the other methods.
    center : {"user_item", "user", None}, default="user_item"
        ``"user"``: subtract each user's mean rating (local, free) and add it
        back. ``"user_item"``: also subtract item biases ``item_biases_``,
        released once with the share ``item_share`` of the budget; each user
        then re-centres on ``r_ij - b_j``.
    item_share : float, default=0.25
        In ``(0, 1)``, ``center="user_item"`` only: the share of ``mu^2``
        (Gaussian DP, Dong, Roth and Su 2022) spent on the item biases.
    rating_bounds : tuple of (float, float) or None, default=None
        Public range ``(low, high)`` of the ratings, e.g. ``(0.5, 5.0)``: it
        scales ``row_norm_bound``'s rule and the item-bias release (ratings
        are not clipped to it). ``None`` means ``(-1, 1)``.
    ridge : float, default=0.3
        ``"svd"`` and ``"pursuit"``: the ridge of each user's least squares on
        the released directions. No effect on privacy; 0 suits noiseless
        low-rank data.
    oja_iter : int, default=5
        Noisy Oja steps per eigen-decomposition (``eigensolver="oja"``).
    step_schedule : {"standard", "constant"}, default="standard"
        Frank-Wolfe steps ``2 / (t + 1)`` (Jaggi 2013) or Thakkar's (2019)
        ``1 / T``. No effect on privacy.
    learning_rate : float or array-like of shape (max_iter,), default=1.0
        ``"pgd"`` only: the gradient steps ``eta_t``, each in ``(0, 2)``; the
        default ``1`` is ``1 / L`` for ``||P_Omega(Y - Y*)||_F^2 / 2``. No
        effect on privacy.
    noise : {"gaussian", "discrete_gaussian"}, default="gaussian"
        ``"gaussian"``: continuous Gaussian noise, exact GDP composition.
        ``"discrete_gaussian"``: every release is rounded to a public
        power-of-two grid (``granularity_``) and gets exact discrete Gaussian
        noise (Canonne, Kamath and Steinke 2020), accounted in zCDP: about
        1.07 times the noise at ``epsilon = 1``. With the exact eigensolver it
        forms ``A^T A`` in every iteration.
    %(random_state)s
    %(accountant)s
    %(verbose)s

    Attributes
    ----------
    item_biases_ : ndarray of shape (n_items,) or None
        The released item biases (``center="user_item"``), added back to every
        completed row; ``None`` otherwise.
    components_ : ndarray of shape (n_components, n_items)
        The released unit directions (``"pgd"``: those kept by the last
        projection; completed rows lie in their span).
    singular_values_ : ndarray of shape (max_iter,) or None
        ``"frank_wolfe"``: the released estimates of ``||A v_t||`` that scale
        each update; ``None`` otherwise.
    projections_ : list of (ndarray, ndarray) or None
        ``"pgd"``: per iteration the released ``(V_t, s_t)``, ``V_t`` of shape
        ``(r_t, n_items)`` and shrinkage factors ``s_t`` in ``(0, 1]``; a row
        ``y`` moves to ``(y V_t^T * s_t) V_t``. ``None`` otherwise.
    row_norm_bound_ : float
        The clipping bound used.
    nuclear_norm_ : float or None
        The nuclear-norm bound used (``"frank_wolfe"``, ``"pgd"``), else ``None``.
    eigensolver_ : str
        ``"exact"`` or ``"oja"``.
    sensitivity_ : float
        Composed L2 sensitivity of all releases.
    sigma_ : float
        Standard deviation of each release's noise (per vector entry and
        matrix diagonal entry).
    granularity_ : float or None
        The grid of ``"discrete_gaussian"`` (a power of two); else ``None``.
    n_iter_ : int
        Number of global iterations run.
    delta_ : float
        The delta used.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta_)``.
    n_features_in_ : int
        Number of items.
    feature_names_in_ : ndarray of shape (n_items,)
        Item names, when ``X`` has string column names.

    Privacy
    -------
    User-level **joint** differential privacy (Jain, Thakkar and Thakurta
    2018; Thakkar (2019), Def. 18) under replacement of one user's entire row:
    which items she rated and her ratings. Everything :meth:`fit` releases
    (``components_``, ``singular_values_``, ``projections_``,
    ``item_biases_``) is ``(epsilon, delta)``-DP for any input: each user's
    contribution is clipped (``row_norm_bound``), the Gaussian releases are
    composed exactly by Gaussian DP (Dong, Roth and Su 2022) and calibrated
    by the analytic Gaussian mechanism (Balle and Wang 2018). A completed row
    is computed from these and that user's own row only (Thakkar (2019),
    Thm. 20 and 28), so the rows delivered to all other users are
    ``(epsilon, delta)``-DP with respect to her data. Deliver row ``i`` of
    :meth:`transform` to user ``i`` only: the completed matrix as a whole is
    not private. Completing new users costs the training users nothing.

    The default ``noise="gaussian"`` is drawn in floating point, whose
    low-order bits can leak (Mironov 2012); ``noise="discrete_gaussian"``
    adds exact discrete Gaussian noise on a public grid instead. The
    sensitivities, corrections to Thakkar's (2019) constants and the
    discrete accounting are derived in :doc:`/guide/matrix_completion`.

    See Also
    --------
    skdp.datasets.make_low_rank_ratings : The synthetic ratings of Thakkar (2019), Sec. 6.4.
    skdp.datasets.load_ratings : Load a MovieLens-style ratings file.

    Notes
    -----
    Users with no ratings are completed with the item biases (zeros with
    ``center="user"`` or ``None``).

    References
    ----------
    P. Jain, O. Thakkar and A. Thakurta, "Differentially private matrix
    completion revisited", ICML 2018 (O. Thakkar, PhD thesis, 2019, Ch. 6).

    J. Dong, A. Roth and W. Su, "Gaussian differential privacy", JRSS B, 2022.

    B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for
    differential privacy: analytical calibration and optimal denoising",
    ICML 2018.

    C. Canonne, G. Kamath and T. Steinke, "The discrete Gaussian for
    differential privacy", NeurIPS 2020.

    I. Mironov, "On significance of the least significant bits for
    differential privacy", CCS 2012.

    Examples
    --------
    >>> from skdp.datasets import make_low_rank_ratings
    >>> from skdp.matrix_completion import DPMatrixCompleter
    >>> data = make_low_rank_ratings(20_000, 30, n_ratings=10, random_state=0)
    >>> model = DPMatrixCompleter(epsilon=1.0, delta=1e-6, random_state=0).fit(data.train)
    >>> completed = model.transform(data.train[:5])
    >>> completed.shape
    (5, 30)
    """

    def __init__(self, epsilon=1.0, delta=None, *, nuclear_norm=None, max_iter=10,
                 row_norm_bound=None, method="svd", eigensolver="auto", rank=None,
                 center="user_item", item_share=0.25, rating_bounds=None, ridge=0.3, oja_iter=5,
                 step_schedule="standard", learning_rate=1.0, noise="gaussian",
                 random_state=None, accountant=None, verbose=0):
        self.epsilon = epsilon
        self.delta = delta
        self.nuclear_norm = nuclear_norm
        self.max_iter = max_iter
        self.row_norm_bound = row_norm_bound
        self.method = method
        self.eigensolver = eigensolver
        self.rank = rank
        self.center = center
        self.item_share = item_share
        self.rating_bounds = rating_bounds
        self.ridge = ridge
        self.oja_iter = oja_iter
        self.step_schedule = step_schedule
        self.learning_rate = learning_rate
        self.noise = noise
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    def _validate_input(self, X, reset):
        return validate_data(self, X, reset=reset, accept_sparse=("csr", "csc", "coo"),
                             dtype=np.float64, ensure_all_finite="allow-nan")

    def _check_params(self, n_users, n_items):
        """Validate every parameter (before any budget is spent); return the resolved ones.

        ``bound`` and ``nuclear_norm`` are ``None`` when left to their rules,
        which :func:`_default_bound` and :func:`_default_nuclear_norm` apply once
        the budget is resolved.
        """
        method = check_option(self.method, "method", METHODS)
        eigensolver = check_option(self.eigensolver, "eigensolver", EIGENSOLVERS)
        params = {
            "method": method,
            "noise": check_option(self.noise, "noise", NOISES),
            "center": check_option(self.center, "center", ("user_item", "user", None)),
            "step_schedule": check_option(self.step_schedule, "step_schedule",
                                          ("standard", "constant")),
            "bound": (None if self.row_norm_bound is None else
                      check_real(self.row_norm_bound, "row_norm_bound", low=0.0,
                                 low_inclusive=False)),
            "n_iter": check_positive_int(self.max_iter, "max_iter"),
            "oja_iter": check_positive_int(self.oja_iter, "oja_iter"),
            "rank": (min(_DEFAULT_RANK[method], n_items) if self.rank is None
                     else check_positive_int(self.rank, "rank")),
            "eigensolver": (("exact" if n_items <= _AUTO_EXACT_MAX_ITEMS else "oja")
                            if eigensolver == "auto" else eigensolver),
            "half_range": _half_range(self.rating_bounds),
            "ridge": check_real(self.ridge, "ridge", low=0.0),
        }
        if params["center"] == "user_item":
            params["item_share"] = check_real(self.item_share, "item_share", low=0.0, high=1.0,
                                              low_inclusive=False, high_inclusive=False)
        if params["rank"] > n_items:
            raise ValueError(f"rank={params['rank']} exceeds the number of items "
                             f"(n_features = {n_items}).")
        check_positive_int(self.verbose, "verbose", low=0)
        params["nuclear_norm"] = None
        if method in ("frank_wolfe", "pgd") and self.nuclear_norm is not None:
            params["nuclear_norm"] = check_real(self.nuclear_norm, "nuclear_norm", low=0.0,
                                                low_inclusive=False)
        if method == "pgd":
            if eigensolver == "oja":
                raise ValueError("method='pgd' projects on the whole noisy spectrum, which "
                                 "Oja's method does not release: use eigensolver='exact' "
                                 "(or 'auto').")
            params["eigensolver"] = "exact"
            params["etas"] = _pgd_steps(self.learning_rate, params["n_iter"])
        elif method == "pursuit":
            params["n_iter"] = params["rank"]
        elif method == "svd":
            params["n_iter"] = 1
        return params

    def _resolve_defaults(self, p, n_users, n_items, epsilon, delta):
        """Apply the public default rules (user guide, "Matrix completion")."""
        if p["bound"] is None:
            p["bound"] = check_real(
                _default_bound(p["method"], p["half_range"], n_users, n_items, epsilon, delta),
                "row_norm_bound=None's rule", low=0.0, low_inclusive=False)
        if p["method"] in ("frank_wolfe", "pgd") and p["nuclear_norm"] is None:
            # Public: the number of users (fixed under replace-one-user neighbours)
            # and the public row_norm_bound only.
            p["nuclear_norm"] = check_real(
                _NUCLEAR_FACTOR * math.sqrt(n_users) * p["bound"],
                "nuclear_norm=None's sqrt(n_users) * row_norm_bound", low=0.0,
                low_inclusive=False)
        if p["center"] == "user_item":
            p["item_clip"] = _default_item_clip(n_users, n_items, epsilon, delta,
                                                p["item_share"])
        return p

    def fit(self, X, y=None):
        """Run the global component on the training users' ratings.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_users, n_items)
            Ratings. Sparse: every stored entry (explicit zeros included) is
            an observed rating, NaN may not be stored. Dense: NaN marks a
            missing rating.
        y : None
            Ignored.

        Returns
        -------
        self : DPMatrixCompleter
        """
        X = self._validate_input(X, reset=True)
        n_users, n_items = X.shape
        p = self._check_params(n_users, n_items)
        budget_args = dict(default_delta=lambda m: 1.0 / m**2, allow_zero_delta=False)
        # The noise before the charge: a calibration that fails must spend nothing.
        epsilon, delta = self._resolve_budget(n_users, **budget_args)
        p = self._resolve_defaults(p, n_users, n_items, epsilon, delta)
        # No floating-point warning from the numerics of fit: whether one is
        # raised (an overflow in one user's ratings, centring or update) would
        # depend on the data.
        with np.errstate(all="ignore"):
            ratings = ratings_from_input(X, center=None if p["center"] is None else "user")
        sensitivity = total_sensitivity(p["bound"], method=p["method"],
                                        eigensolver=p["eigensolver"], n_iter=p["n_iter"],
                                        oja_iter=p["oja_iter"], rank=p["rank"])
        item_sensitivity = None
        if p["center"] == "user_item":
            # GDP composition (Dong, Roth and Su 2022, Cor. 3.3): a release of
            # sensitivity s_b scaled by c = s_item / s_b, with the same sigma as the
            # completion releases, takes the share item_share of mu^2 when
            # s_item^2 = item_share / (1 - item_share) * s_completion^2.
            share = p["item_share"]
            item_sensitivity = sensitivity * math.sqrt(share / (1.0 - share))
            sensitivity = math.hypot(sensitivity, item_sensitivity)
        grid = None
        if p["noise"] == "gaussian":
            sigma = noise_sigma(epsilon, delta, sensitivity)
        else:
            releases = release_schedule(p["bound"], method=p["method"],
                                        eigensolver=p["eigensolver"], n_iter=p["n_iter"],
                                        oja_iter=p["oja_iter"], rank=p["rank"], n_items=n_items)
            rho_max = 2.0 * p["bound"] if p["method"] == "frank_wolfe" else p["bound"]
            value_bound = n_users * rho_max**2
            if item_sensitivity is not None:
                releases = releases + [(item_sensitivity, 2 * n_items)]
                # |c X_j|, |c Z_j| <= c n_users D with c = s_item / (sqrt(6) D).
                value_bound = max(value_bound,
                                  n_users * item_sensitivity / ITEM_SENSITIVITY_FACTOR)
            grid = discrete_noise(epsilon, delta, releases, value_bound)
            sigma = grid.sigma
        budget, rng = self._start_private_fit(n_users, **budget_args)
        biases = None
        if p["center"] == "user_item":
            # The only access to all users' data besides the completion releases.
            with np.errstate(all="ignore"):
                stats = item_statistics(ratings, scale=p["half_range"], clip=p["item_clip"])
            released, noise_scale = _release_item_statistics(
                stats, item_sensitivity, p["item_clip"], sigma, grid, rng)
            biases = item_biases(released, scale=p["half_range"],
                                 prior=_default_item_prior(released, noise_scale))
            with np.errstate(all="ignore"):
                ratings = recentre(ratings, biases)

        def release(A, k=1, eigenvalue=False):
            # The only access to all users' data: one noisy eigen-decomposition.
            if p["eigensolver"] == "exact":
                vectors, values = private_top_eigen(A, sigma, rng, k=k, grid=grid)
                return vectors, values[0]
            return private_oja(A, sigma, rng, n_steps=p["oja_iter"], k=k, eigenvalue=eigenvalue,
                               grid=grid)

        components, scales = [], []

        def global_direction(t, A):
            vectors, value = release(A, eigenvalue=p["method"] == "frank_wolfe")
            v = vectors[:, 0]
            components.append(v)
            scales.append(math.sqrt(max(value, 0.0)) if value is not None else np.nan)
            if self.verbose:
                print(f"[DPMatrixCompleter] iteration {t + 1}/{p['n_iter']}")
            return v, scales[-1]

        projections = []

        def global_projection(t, gram):
            # The only access to all users' data: the noisy Gram matrix of their
            # clipped rows; its projection factors are a post-processing.
            values, vectors = private_eigh(gram, sigma, rng, grid=grid)
            keep, factors = nuclear_shrinkage(values, p["nuclear_norm"])
            projections.append((vectors[:, keep].T, factors))
            if self.verbose:
                print(f"[DPMatrixCompleter] iteration {t + 1}/{p['n_iter']}, "
                      f"rank {len(factors)}")
            return projections[-1]

        with np.errstate(all="ignore"):
            if p["method"] == "frank_wolfe":
                frank_wolfe_local(ratings, global_direction, nuclear_norm=p["nuclear_norm"],
                                  bound=p["bound"],
                                  etas=step_sizes(p["n_iter"], p["step_schedule"]))
            elif p["method"] == "pgd":
                components = pgd_local(ratings, global_projection, bound=p["bound"],
                                       etas=p["etas"], gram=True, coefficients=False,
                                       gram_step=None if grid is None else grid.row_step)[1]
            elif p["method"] == "pursuit":
                pursuit_local(ratings, global_direction, n_iter=p["n_iter"], bound=p["bound"],
                              ridge=p["ridge"])
            else:
                A = ratings.matrix(clipped_values(ratings, ratings.values, p["bound"]))
                components = list(release(A, k=p["rank"])[0].T)

        self._local_params = p
        self.item_biases_ = biases
        self.components_ = np.array(components)
        self.singular_values_ = np.array(scales) if p["method"] == "frank_wolfe" else None
        self.projections_ = projections if p["method"] == "pgd" else None
        self.row_norm_bound_ = p["bound"]
        self.nuclear_norm_ = p["nuclear_norm"]
        self.eigensolver_ = p["eigensolver"]
        self.sensitivity_ = sensitivity
        self.sigma_ = sigma
        self.granularity_ = None if grid is None else grid.granularity
        self.n_iter_ = p["n_iter"]
        self.delta_ = budget.delta
        self.privacy_spent_ = budget
        return self

    def transform(self, X):
        """Complete each row with the local component (uses only that row).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_users, n_items)
            Ratings of training users or of new users, in the format of :meth:`fit`.

        Returns
        -------
        X_completed : ndarray of shape (n_users, n_items)
            Row ``i`` is user ``i``'s completed ratings (her mean added back
            when ``center="user"``). Give row ``i`` to user ``i`` only.
        """
        check_is_fitted(self)
        X = self._validate_input(X, reset=False)
        p = self._local_params  # as fitted, even if parameters were changed since
        ratings = ratings_from_input(X, center=None if p["center"] is None else "user")
        if self.item_biases_ is not None:
            ratings = recentre(ratings, self.item_biases_)
        out = np.empty(X.shape)
        for start in range(0, ratings.n_users, _TRANSFORM_BLOCK):
            stop = min(start + _TRANSFORM_BLOCK, ratings.n_users)
            block = ratings.rows(start, stop)
            if p["method"] == "frank_wolfe":
                coef = frank_wolfe_local(
                    block, lambda t, A: (self.components_[t], self.singular_values_[t]),
                    nuclear_norm=p["nuclear_norm"], bound=p["bound"],
                    etas=step_sizes(p["n_iter"], p["step_schedule"]), coefficients=True)
            elif p["method"] == "pgd":
                coef = pgd_local(block, lambda t, gram: self.projections_[t], bound=p["bound"],
                                 etas=p["etas"])[0]
            elif p["method"] == "pursuit":
                coef = least_squares_coef(block, self.components_, p["ridge"])
            else:
                coef = least_squares_coef(block, self.components_, p["ridge"])
            np.matmul(coef, self.components_, out=out[start:stop])
            out[start:stop] += block.means[:, None]
            if self.item_biases_ is not None:
                out[start:stop] += self.item_biases_
        return out


def _pgd_steps(learning_rate, n_iter):
    """Validated PGD step sizes ``eta_1, ..., eta_T``, each in ``(0, 2)``."""
    if np.ndim(learning_rate) == 0:
        eta = check_real(learning_rate, "learning_rate", low=0.0, high=2.0,
                         low_inclusive=False, high_inclusive=False)
        return np.full(n_iter, eta)
    etas = [check_real(eta, "learning_rate", low=0.0, high=2.0, low_inclusive=False,
                       high_inclusive=False) for eta in np.ravel(learning_rate)]
    if np.ndim(learning_rate) != 1 or len(etas) != n_iter:
        raise ValueError(f"learning_rate must be a number or have one step per iteration "
                         f"(max_iter = {n_iter}), got shape {np.shape(learning_rate)}.")
    return np.array(etas)


# ----------------------------------------------------------------- default rules
# Derived in the user guide ("Matrix completion"); public inputs only.

_ROW_NORM_FACTOR = 3.0
_PGD_ROW_FACTOR = 0.4
_NUCLEAR_FACTOR = 1.0
# svd: one release whatever the rank (its cost does not grow with it); pursuit
# pays one release per direction.
_DEFAULT_RANK = {"svd": 5, "pursuit": 3, "frank_wolfe": 3, "pgd": 3}
_ITEM_CLIP = 16.0
_ITEM_PRIOR = 3.0
_ITEM_PRIOR_NOISE = 25.0


def _half_range(rating_bounds):
    """Half the width of the public rating range (1 for the default ``[-1, 1]``)."""
    if rating_bounds is None:
        return 1.0
    if np.ndim(rating_bounds) != 1 or len(rating_bounds) != 2:
        raise ValueError(f"rating_bounds must be a pair (low, high), got {rating_bounds!r}.")
    low = check_real(rating_bounds[0], "rating_bounds[0]")
    high = check_real(rating_bounds[1], "rating_bounds[1]")
    if not high > low:
        raise ValueError(f"rating_bounds must have low < high, got {rating_bounds!r}.")
    return check_real((high - low) / 2.0, "half of rating_bounds' range", low=0.0,
                      low_inclusive=False)


def _default_bound(method, half_range, n_users, n_items, epsilon, delta):
    if method == "pgd":
        return _PGD_ROW_FACTOR * half_range * math.sqrt(n_items)
    return _ROW_NORM_FACTOR * half_range


def _release_item_statistics(stats, item_sensitivity, clip, sigma, grid, rng):
    """Release the item sums ``(X, Z)`` (sensitivity ``sqrt(6) clip``) with noise.

    They are scaled by ``c = item_sensitivity / (sqrt(6) clip)`` so that the
    release has sensitivity ``item_sensitivity`` under the completion's own
    ``sigma`` (or ``grid``); returns the released sums divided by ``c`` and
    their noise standard deviation ``sigma / c``.
    """
    c = item_sensitivity / (ITEM_SENSITIVITY_FACTOR * clip)
    if grid is None:
        released = c * stats + sigma * rng.standard_normal(stats.shape)
    else:
        released = grid_release(c * stats, grid, rng)
    return released / c, sigma / c


def _default_item_clip(n_users, n_items, epsilon, delta, share):
    """``D = clip(2 mu_item, 2, 16)``, ``mu_item = sqrt(share) mu`` the item release's GDP."""
    mu = 1.0 / noise_sigma(epsilon, delta, 1.0)
    return min(_ITEM_CLIP, max(2.0, 2.0 * math.sqrt(share) * mu))


def _default_item_prior(released, noise_scale):
    """``lambda_j = 3 + sigma_Z^2 / (tau^2 max(Z_j - 2 sigma_Z, 1))``, ``1 / tau^2 = 25``."""
    counts = released[len(released) // 2:]
    lower = np.maximum(counts - 2.0 * noise_scale, 1.0)  # a lower confidence bound on n_j
    return _ITEM_PRIOR + _ITEM_PRIOR_NOISE * noise_scale**2 / lower
