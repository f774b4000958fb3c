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

    The algorithms of Thakkar (2019), Ch. 6 (Jain, Thakkar and Thakurta 2018) split
    every iteration into a **global component**, the only step that sees all
    users, which releases a noisy top eigenvector of the users' aggregated
    statistic ``sum_i A_i^T A_i``, and a **local component** that completes
    each user's row from her own ratings and the released vectors only.
    :meth:`fit` runs the global component on the training users (the local
    updates it needs are computed along the way) and keeps the released
    vectors in ``components_``; :meth:`transform` runs the local component for
    each row it is given, training users or new ones.

    Four methods share this structure:

    * ``"frank_wolfe"``: private Frank-Wolfe (Alg. 13) on
      ``min ||P_Omega(Y - Y*)||_F^2`` over ``||Y||_nuc <= nuclear_norm``; each
      iteration adds a rank-one update along the released direction.
    * ``"pursuit"``: the same global component, but each user refits her row
      by least squares on all directions released so far, and contributes her
      clipped residual to the next iteration (a private greedy rank-one
      pursuit; an skdp addition, not in Thakkar (2019)).
    * ``"svd"``: private SVD completion (Alg. 15): one noisy top-``rank``
      subspace of the clipped ratings; each user fits her own row on it by
      ridge least squares (Alg. 15 rescales her projection by
      ``n_items / |Omega_i|``, which amplifies noise; see Notes).
    * ``"pgd"``: private projected gradient descent (Alg. 16), Thakkar's (2019)
      private baseline: each user takes a gradient step on her observed
      entries and clips her whole row; the global component releases the
      noisy Gram matrix of all rows, whose eigen-decomposition gives the
      projection onto ``||Y||_nuc <= nuclear_norm``; each user applies it to
      her own row. Every iteration releases a full ``n x n`` matrix.

    Parameters
    ----------
    %(epsilon)s
    delta : float or None, default=None
        In ``(0, 1)``. ``None`` uses ``1 / n_users**2`` (stored in ``delta_``);
        Thakkar (2019) asks for ``delta < 1 / n_users``.
    nuclear_norm : float or None, default=None
        The constraint ``k`` on the nuclear norm of the (centred) completed
        matrix, > 0, used by ``method="frank_wolfe"`` and ``"pgd"`` (unused
        otherwise). ``None`` means the public rule
        ``sqrt(n_users) * row_norm_bound``: the nuclear norm of a rank-one
        matrix whose every row has norm ``row_norm_bound`` (the number of
        users is public under replace-one-user neighbours, so this costs no
        privacy); the value used is stored in ``nuclear_norm_``.
    max_iter : int, default=10
        Iterations ``T`` (``"frank_wolfe"`` and ``"pgd"``). Each costs
        privacy: the noise grows like ``sqrt(T)``.
    row_norm_bound : float or None, default=None
        ``Delta``: each user's (centred) observed ratings, and for
        Frank-Wolfe each iterate on her observed entries, are scaled down to
        this L2 norm before they enter the global statistic. For ``"pgd"``
        it bounds each user's **whole** iterate row (all items, observed or
        not). A per-user operation that costs no privacy; the noise grows
        like ``Delta^2``. ``None``: ``3 s`` (``"pgd"``: ``0.4 s sqrt(n_items)``)
        with ``s`` half the width of ``rating_bounds`` (see the user guide,
        "Matrix completion").
    method : {"frank_wolfe", "pursuit", "svd", "pgd"}, default="frank_wolfe"
        See above.
    eigensolver : {"auto", "exact", "oja"}, default="auto"
        ``"exact"``: top eigenpair(s) of the noisy ``n x n`` matrix
        ``sum_i A_i^T A_i + E`` (memory ``O(nnz + n^2)``). ``"oja"``: private
        Oja's method (Alg. 14), which only releases noisy products with
        vectors and never forms an ``n x n`` matrix (memory ``O(nnz + n_users
        + n)``). ``"auto"`` is ``"exact"`` up to 2000 items, else ``"oja"``;
        ``"pgd"`` needs the whole noisy spectrum, so it always uses
        ``"exact"`` and refuses ``"oja"``.
    rank : int or None, default=None
        Number of directions for ``"svd"`` (subspace dimension) and
        ``"pursuit"`` (one per iteration, each costing privacy like a
        Frank-Wolfe iteration); ``None`` means ``min(3, n_items)``. Ignored by
        ``"frank_wolfe"``, whose rank is at most ``max_iter``, and by
        ``"pgd"``, whose rank is set by the nuclear-norm projection. Pursuit
        keeps a ``rank x rank`` Gram matrix per user (``8 n_users rank^2``
        bytes).
    center : {"user_item", "user", None}, default="user_item"
        ``"user"`` subtracts each user's mean observed rating before completion
        and adds it back afterwards (free: it is local, Thakkar 2019,
        Sec. 6.4). ``"user_item"`` also subtracts item biases ``b_j``
        (``item_biases_``), a global statistic released once with Gaussian
        noise that takes the share ``item_share`` of the budget (see
        Privacy); each user then re-centres on ``r_ij - b_j`` (local).
    item_share : float, default=0.25
        In ``(0, 1)``, ``center="user_item"`` only: the share of the
        privacy budget, in the Gaussian-DP sense (``mu^2``, Dong, Roth and
        Su 2022), spent on the item biases; the completion releases get the
        rest.
    rating_bounds : tuple of (float, float) or None, default=None
        Public range ``(low, high)`` of the ratings (e.g. ``(0.5, 5.0)``):
        it scales the default ``row_norm_bound`` and the item-bias release.
        Ratings are not clipped to it. ``None`` means ``(-1, 1)``
        (:func:`~skdp.datasets.make_low_rank_ratings`).
    ridge : float, default=0.1
        ``"pursuit"`` and ``"svd"``: the ridge added to each user's least
        squares on the released directions (her completed row is her ridge
        fit). No effect on privacy; 0 suits noiseless data.
    oja_iter : int, default=5
        Noisy Oja steps per eigen-decomposition (``eigensolver="oja"``).
    step_schedule : {"standard", "constant"}, default="standard"
        Frank-Wolfe step sizes: ``2 / (t + 1)`` (Jaggi 2013) or Thakkar's (2019)
        ``1 / T`` (see Notes). No effect on privacy. ``"frank_wolfe"`` only.
    learning_rate : float or array-like of shape (max_iter,), default=1.0
        ``"pgd"`` only: the gradient step sizes ``eta_t``, each in ``(0, 2)``;
        a number is used at every step. The default ``1`` is ``1 / L`` for
        the objective ``||P_Omega(Y - Y*)||_F^2 / 2``, whose smoothness
        constant is ``L = 1`` whatever the data: the step replaces each
        observed entry of the iterate by the rating (as in soft-impute). The
        thesis tunes ``eta_t`` in ``{t^-1/2, t^-1, 0.05, 0.1, 0.2, 0.5}``
        (Sec. 6.4); pass e.g. ``1 / np.sqrt(np.arange(1, T + 1))``. No effect
        on privacy.
    noise : {"gaussian", "discrete_gaussian"}, default="gaussian"
        ``"gaussian"``: continuous Gaussian noise drawn in floating point,
        calibrated by exact GDP composition. ``"discrete_gaussian"``: every
        released matrix, vector and eigenvalue is rounded to a public
        power-of-two grid ``g`` (``granularity_``, about ``2**-30`` of the
        noise scale) and exact discrete Gaussian noise (Canonne, Kamath and
        Steinke 2020) is added to the integer grid indices, so the releases
        are safe against floating-point attacks on the noise (Mironov 2012);
        accounted in zCDP, it needs more noise than ``"gaussian"`` (1.07
        times at ``epsilon = 1``, ``delta = 1e-6``; 1.09 at ``epsilon =
        0.1``, 1.05 at ``epsilon = 10``; see Privacy and Notes). Both are
        ``(epsilon, delta)``-DP. With the exact eigensolver the discrete
        release rounds the whole matrix ``A^T A``, so it is formed in every
        iteration (``O(sum_i r_i^2)`` time for users with ``r_i`` ratings),
        where the continuous noise on large data only applies it to vectors;
        with Oja's eigensolver both cost the same.
    %(random_state)s
    %(accountant)s
    %(verbose)s

    Attributes
    ----------
    item_biases_ : ndarray of shape (n_items,) or None
        The released item biases (``center="user_item"``), added back to
        every completed row; ``None`` otherwise. Public: ``(epsilon,
        delta)``-DP.
    components_ : ndarray of shape (n_components, n_items)
        The released unit directions: one per Frank-Wolfe or pursuit
        iteration, the ``rank`` orthonormal ones of ``"svd"``, or, for
        ``"pgd"``, the orthonormal directions kept by the last projection
        (completed rows lie in their span). Public: they are
        ``(epsilon, delta)``-DP.
    singular_values_ : ndarray of shape (max_iter,) or None
        Frank-Wolfe only: the released estimate of ``||A v_t||`` used to scale
        each local update (``None`` for the other methods).
    projections_ : list of (ndarray, ndarray) or None
        ``"pgd"`` only (``None`` otherwise): for each iteration ``t`` the
        released projection ``(V_t, s_t)``, ``V_t`` of shape
        ``(r_t, n_items)`` the noisy eigenvectors kept by the nuclear-norm
        projection and ``s_t`` of shape ``(r_t,)`` their shrinkage factors
        ``Z / Lambda`` in ``(0, 1]``; a user's row moves to
        ``(y V_t^T * s_t) V_t``. Public: ``(epsilon, delta)``-DP.
    row_norm_bound_ : float
        The bound each user's row was clipped to (``row_norm_bound``, or its
        public rule when ``None``).
    nuclear_norm_ : float or None
        The nuclear-norm constraint used (``nuclear_norm``, or the rule above
        for ``"frank_wolfe"`` with ``nuclear_norm=None``); ``None`` for
        ``"svd"`` and ``"pursuit"``.
    eigensolver_ : str
        The eigensolver used (``"exact"`` or ``"oja"``).
    sensitivity_ : float
        Composed L2 sensitivity of all releases (see Notes).
    sigma_ : float
        Standard deviation of the Gaussian noise of each release (for
        ``"discrete_gaussian"``, ``granularity_ * sqrt(sigma^2)`` with
        ``sigma^2`` the discrete Gaussian's parameter in grid steps: the
        scale of vector entries and of the diagonal of a released matrix,
        off-diagonal entries having half its square, as for ``"gaussian"``).
    granularity_ : float or None
        The grid ``g`` of the ``"discrete_gaussian"`` releases (a power of
        two, data-independent); ``None`` for ``"gaussian"``.
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
    User-level **joint** differential privacy (Thakkar (2019), Def. 18; Kearns et
    al. 2014) under replacement of one user's entire row: which items she
    rated and all her ratings. The released ``components_`` (and
    ``singular_values_``) are ``(epsilon, delta)``-DP with respect to every
    training user; each completed row is then computed from these and the
    user's own row only (post-processing, Thakkar (2019) Lemma 2.1.4), so the
    completions of all other users together are ``(epsilon, delta)``-DP with
    respect to her data (Thm. 20, Thm. 28; pursuit and projected gradient
    descent rest on the same argument, as Thakkar's (2019) Sec. 6.4 says of
    Alg. 16). This holds for any input, because ``row_norm_bound`` clipping
    is applied to every row. With ``center="user_item"`` the item biases
    ``item_biases_`` are one more Gaussian release (per-user weighted
    item sums, sensitivity ``sqrt(6) D``, Notes), composed with the others
    by Gaussian DP (Dong, Roth and Su 2022): all releases together are
    ``(epsilon, delta)``-DP, the item biases taking ``item_share`` of
    ``mu^2``.

    Joint DP protects a user from what is released **to others**: deliver
    row ``i`` of :meth:`transform`'s output to user ``i`` only. The completed
    matrix as a whole is not differentially private (a user's completed row
    depends on her own ratings). :meth:`transform` on users who were not in
    the training data costs the training users nothing.

    Corrections to Thakkar (2019): the Frobenius sensitivity of the Frank-Wolfe
    statistic is ``4 sqrt(2) Delta^2``, not ``4 Delta^2`` (Lemma 6.2.1); the
    noise is set by exact Gaussian composition and the analytic Gaussian
    mechanism, valid for every ``epsilon > 0``; Oja's noise is calibrated to
    all its releases in all iterations, its eigenvalue release included.
    Projected gradient descent (Alg. 16) is printed without any bound on
    the iterate rows whose Gram matrix it releases and with
    ``sigma = Delta^2 sqrt(64 T ln(1/delta) / epsilon)`` (``epsilon`` inside
    the root, which is not private for small ``epsilon``); here each user's
    whole row is clipped to ``row_norm_bound = rho`` and each release has
    sensitivity ``sqrt(2) rho^2``, composed like the others (see Notes).

    With ``noise="discrete_gaussian"`` the same releases are made on the
    public grid ``g`` with exact discrete Gaussian noise: each released
    value is ``g (round(x / g) + Z)`` with ``Z`` an integer drawn exactly
    (CKS Alg. 3) from uniform integers, so no low-order bit of a released
    value depends on the data beyond what the ideal mechanism reveals (the
    attack of Mironov 2012 on floating-point noise does not apply). The
    guarantee is zCDP (the discrete Gaussian's Renyi bound, CKS, summed over
    coordinates and over the adaptive releases, Thakkar (2019) Lemma 2.1.12),
    converted to ``(epsilon, delta)`` by CKS Cor. 13; rounding
    moves each entry by at most one grid step more than its value between
    neighbours, which the calibration includes. With the exact eigensolver
    (and ``"pgd"``) the released Gram matrix is itself computed exactly:
    each row entry is first truncated toward zero to a public power of two
    ``h`` (which never increases a row's norm), chosen so that every product
    and partial sum is an exact float64 (Notes), so a float sum whose
    round-off depends on the data (Casacuberta et al. 2022) never reaches a
    release. What stays floating point: with ``eigensolver="oja"`` the
    products ``A^T A v`` and ``||A v||^2`` are computed in float64, the
    sensitivity bound holds for their exact values and their round-off
    (relative ``~1e-16`` per term, data-dependent) is not accounted for;
    the per-user clipping and local updates are float computations whose
    only role is to bound each row's norm (up to a relative ``2**-40``
    margin included in the calibration). Everything computed from the
    releases (eigen-decompositions, completions) is post-processing.

    See Also
    --------
    skdp.datasets.make_low_rank_ratings : The synthetic ratings of Thakkar (2019), Sec. 6.4.

    Notes
    -----
    **Sensitivity.** Replacing user ``i`` changes ``W = sum_j a_j a_j^T`` by
    ``D = a a^T - b b^T`` with ``||a||, ||b|| <= rho``. Then
    ``||D||_F^2 = ||a||^4 + ||b||^4 - 2 (a.b)^2 <= 2 rho^4``, attained by
    orthogonal rows of norm ``rho``; and ``||D||_2 <= rho^2`` (its two
    eigenvalues have opposite signs). For Frank-Wolfe,
    ``a_i = P_Omega(Y_i - Y*_i)`` with both terms clipped to ``Delta`` on the
    observed entries, so ``rho = 2 Delta`` and the Frobenius sensitivity is
    ``4 sqrt(2) Delta^2``; in the first iteration ``Y = 0`` and
    ``rho = Delta``. For pursuit the clipped residual has ``rho = Delta``; for
    SVD the clipped ratings have ``rho = Delta``.

    **Exact eigensolver.** Each iteration releases ``W + E`` with ``E``
    symmetric, ``E_jj ~ N(0, sigma^2)`` and ``E_jk = E_kj ~ N(0, sigma^2/2)``:
    isotropic noise in the Frobenius geometry of symmetric matrices, so each
    release is a Gaussian mechanism with sensitivity ``s_t = sqrt(2) rho_t^2``.

    **Oja's method** (Alg. 14) releases, at each of its ``oja_iter`` steps,
    ``W v + g`` with ``g ~ N(0, sigma^2 I)`` and ``v`` a unit vector computed
    from earlier releases: sensitivity ``||D v|| <= ||D||_2 = rho_t^2``. For
    Frank-Wolfe it also releases ``||A v||^2 + N(0, sigma^2)``, sensitivity
    ``|(a.v)^2 - (b.v)^2| <= rho_t^2``. (For ``"svd"`` a block of ``rank``
    orthonormal columns ``V`` is used: ``||D V||_F <= min(sqrt(2),
    sqrt(rank)) rho^2``.) Thakkar (2019) calibrates Alg. 14 for one eigenvector
    in isolation; here its noise covers every step of every iteration. Each
    step moves ``v <- (v + eta (W v + g)) / ||...||`` with
    ``eta = 1 / (sigma sqrt(n))``; Alg. 14's ``1 / (Gamma sigma sqrt(n))`` is
    meant for a large number of steps ``Gamma`` and, with the few steps a
    private budget affords, barely moves ``v`` from its random start (a
    post-processing choice, free of privacy cost).

    **Composition.** All releases are adaptive Gaussian mechanisms with the
    same ``sigma``. Their composition is exactly a single Gaussian mechanism
    with sensitivity ``sqrt(sum_k s_k^2)`` (Gaussian differential privacy,
    Dong, Roth and Su 2022, Cor. 3.3), e.g. ``sqrt(2 (1 + 16 (T - 1)))
    Delta^2`` for Frank-Wolfe with the exact solver (``sqrt(T) 4 sqrt(2)
    Delta^2`` if the smaller first iteration were not used). ``sigma`` is
    the analytic Gaussian calibration of that sensitivity (Balle and Wang
    2018), exact for every ``epsilon``. Thakkar's (2019) zCDP route gives
    ``sigma = Delta^2 sqrt(64 T ln(1/delta)) / epsilon`` and needs
    ``epsilon <= 2 ln(1/delta)``; the analytic value is smaller even before
    correcting the sensitivity, and has no such restriction.

    **Discrete noise.** Each release ``k`` of sensitivity ``s_k`` over
    ``d_k`` entries (``n^2`` for the symmetric matrix counted in full, ``n``
    for an Oja vector, ``n r`` for a block, 1 for an eigenvalue) is rounded
    to the grid; its integer indices move between neighbours by ``w`` with
    ``||w||_2^2 <= W_k < (s_k / g + sqrt(d_k))^2`` (each entry at most one
    step more than its value). A symmetric matrix gets discrete Gaussian
    ``sigma^2`` (grid steps) on the diagonal and ``sigma^2 / 2`` on the
    upper triangle, mirrored (the law of ``E`` above): its zCDP cost is
    ``sum_j w_jj^2 / (2 sigma^2) + sum_{j<l} w_jl^2 / sigma^2 =
    ||w||_F^2 / (2 sigma^2)``. All releases together are
    ``rho = sum_k W_k / (2 sigma^2)``-zCDP, and
    ``sigma^2 = sum_k W_k / (2 rho)`` with ``rho`` the largest zCDP
    budget whose CKS Cor. 13 conversion stays within ``(epsilon, delta)``
    (:func:`skdp.accounting.zcdp_for_dp`), rounded up. ``g`` is the largest power of two at most ``2**-30`` times
    the unrounded zCDP noise (data-independent; the rounding term is then a
    relative ``~ sqrt(d_k) 2**-30`` of the sensitivity and the sampler runs
    at ``sigma ~ 2**30`` steps, its fast range), raised if needed so that
    ``2**52 g`` exceeds ``n_users rho_max^2``, a bound on every released
    entry (the index clamp of the grid never binds). Against the GDP route
    the zCDP route costs noise: at ``epsilon = 1``, ``delta = 1e-6`` the
    discrete ``sigma`` is about 1.07 times the continuous one (1.27 with
    Thakkar (2019), Lemma 2.1.13, used before). Before the
    exact solver's release, row entries are truncated toward zero to
    multiples of ``h``, the smallest power of two with ``n_users rho_max^2
    < 2**52 h^2``: entries are then ``k h`` with ``|k| <= 2**26`` and
    ``sum_i a_ij a_ik`` is a sum of integer multiples of ``h^2`` whose
    partial sums stay below ``2**53 h^2``, exact in float64 in any order.

    **Frank-Wolfe steps.** With Thakkar's (2019) constant step ``1 / T`` the
    recursion ``h_t <= (1 - 1/T) h_{t-1} + C / (2 T^2)`` (proof of Thm. 19)
    unrolls to ``h_T <= (1 - 1/T)^T h_0 + C / (2T)``: the initial error only
    shrinks by about ``e``, a term Thakkar (2019) drops. The default schedule
    ``2 / (t + 1)`` has the ``O(1/T)`` guarantee (Jaggi 2013). Thakkar (2019)
    adds a margin ``sqrt(sigma log(n / beta)) n^(1/4)`` to the eigenvalue
    used to scale each update, to keep ``||u|| <= 1`` with high probability
    in its proof; it shortens every step, and it is not used here: the
    released eigenvalue itself is used.

    **Local step of SVD.** Alg. 15 scales ``P_Omega(Y*_i) V V^T`` by
    ``m / |Omega|``, where its proof uses ``1 / p = m n / |Omega|``. That
    rescaling multiplies the error on the released subspace by ``1 / p``
    and made the completion worse as epsilon grew on real ratings; here
    each user fits her row on ``V`` by ridge least squares instead (the
    local step of pursuit), a post-processing.

    **Item biases** (``center="user_item"``). Each user ``i`` contributes
    ``x_i = w_i e_i / s`` (``e_i`` her user-centred ratings, ``s`` the half
    range of ``rating_bounds``) and ``z_i = w_i 1_{Omega_i}``, with
    ``w_i = min(1, D / ||e_i / s||, D / sqrt(|Omega_i|))``; the sums
    ``(X, Z)`` have L2 sensitivity ``sqrt(6) D`` (``||x_i - x_i'|| <= 2 D``,
    and ``||z_i - z_i'||^2 <= 2 D^2`` for non-negative vectors). They are
    released once with the completion's ``sigma`` after scaling by
    ``c = s_item / (sqrt(6) D)``, where ``s_item^2 = item_share / (1 -
    item_share) s_c^2`` and ``s_c`` is the completion's composed
    sensitivity: the composition is a Gaussian mechanism of sensitivity
    ``sqrt(s_c^2 + s_item^2) = s_c / sqrt(1 - item_share)``
    (``sensitivity_``). ``b_j = s X_j / (max(Z_j, 0) + lambda_j)``, with
    ``D`` and ``lambda_j`` public rules (user guide) of the budget and the
    released counts.

    **Projected gradient descent** (Alg. 16). Iteration ``t`` of user ``i``:
    ``y_i <- Pi_rho(y_i - eta_t P_Omega(y_i - y*_i))`` (the printed
    ``Y^(t-1) - eta_t P_Omega(Y* - Y^(t))`` has the sign and index of the
    gradient swapped), then the release ``W_t = sum_i y_i y_i^T + E`` with
    ``E`` symmetric as above (the symmetric part of Alg. 16's i.i.d. noise
    matrix has this law: a post-processing). Rows are whole ``n``-vectors,
    not only observed entries, and ``Pi_rho`` scales each to norm at most
    ``rho``, so ``s_t = sqrt(2) rho^2`` in every iteration; ``T`` releases
    compose into sensitivity ``sqrt(2 T) rho^2``. Thakkar's (2019) zCDP route
    would give ``sigma = rho^2 sqrt(8 T ln(1/delta)) / epsilon``; the
    analytic value used here is smaller. From ``W_t = V diag(lambda) V^T``,
    ``Lambda = sqrt(max(lambda, 0))`` (noisy eigenvalues may be negative) is
    projected onto the L1 ball of radius ``k`` (Duchi et al. 2008), giving
    ``Z``; user ``i`` moves to ``y_i V diag(Z / Lambda) V^T``, which is the
    exact Frobenius projection of ``Y`` onto ``{||Y||_nuc <= k}`` when
    ``E = 0``. Without noise the method is a projected soft-impute; with
    noise the L1 budget ``k`` is shared with noise directions, so the rank
    of the iterates grows as ``k`` exceeds the nuclear norm of the clipped,
    centred data. Memory is ``O(nnz + n^2 + n_users r)`` with ``r`` the
    number of kept directions (at most ``n``); each iteration costs
    ``O(n_users n (n + r))``.

    **Users with no ratings** contribute nothing and are completed with
    zeros, or with the item biases when ``center="user_item"`` (there is
    no private estimate of a global mean rating). A user
    whose row overflows float64 in her centring or local updates (ratings
    near ``1e308``) contributes nothing either, and her own completed row is
    not finite: a per-user rule, so the guarantee holds for every finite
    input, and ``fit`` emits no floating-point warning that would depend on
    the data.

    References
    ----------
    P. Jain, O. Thakkar and A. Thakurta, "Differentially private matrix
    completion revisited", ICML 2018 (Thakkar 2019, Ch. 6).

    J. Dong, A. Roth and W. Su, "Gaussian differential privacy", JRSS B, 2022.

    C. Canonne, G. Kamath and T. Steinke, "The discrete Gaussian for
    differential privacy", NeurIPS 2020.

    I. Mironov, "On significance of the least significant bits for
    differential privacy", CCS 2012.

    S. Casacuberta, M. Shoemate, S. Vadhan and C. Wagaman, "Widespread
    underestimation of sensitivity in differentially private libraries and
    how to fix it", CCS 2022.

    B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for
    differential privacy: analytical calibration and optimal denoising",
    ICML 2018.

    M. Jaggi, "Revisiting Frank-Wolfe: projection-free sparse convex
    optimization", ICML 2013.

    J. Duchi, S. Shalev-Shwartz, Y. Singer and T. Chandra, "Efficient
    projections onto the l1-ball for learning in high dimensions", ICML 2008.

    Examples
    --------
    >>> from skdp.datasets import make_low_rank_ratings
    >>> from skdp.matrix_completion import DPMatrixCompleter
    >>> data = make_low_rank_ratings(20_000, 30, n_ratings=10, random_state=0)
    >>> model = DPMatrixCompleter(epsilon=1.0, delta=1e-6, method="pursuit", rank=2,
    ...                           row_norm_bound=1.0, random_state=0).fit(data.train)
    >>> completed = model.transform(data.train[:5])
    >>> completed.shape
    (5, 30)
    """

    def __init__(self, epsilon=1.0, delta=None, *, nuclear_norm=None, max_iter=10,
                 row_norm_bound=None, method="frank_wolfe", eigensolver="auto", rank=None,
                 center="user_item", item_share=0.25, rating_bounds=None, ridge=0.1, oja_iter=5,
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
            "rank": (min(_DEFAULT_RANK, n_items) if self.rank is None
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
_DEFAULT_RANK = 3
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
