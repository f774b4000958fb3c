"""Sensitivities and noise scales of the private matrix completion releases.

Neighbouring relation: replace one user's whole row of ratings (Thakkar (2019),
Def. 2.1.1 applied to users, as Ch. 6 does). Every release is a Gaussian
mechanism on a sum over users of ``a_i a_i^T`` (or of ``a_i a_i^T`` applied to
a released unit vector), where ``a_i`` is user ``i``'s clipped row or residual
row with ``||a_i||_2 <= rho``. Replacing user ``i`` changes the sum by
``D = a a^T - b b^T`` with ``||a||, ||b|| <= rho``.

* Frobenius norm (the whole symmetric matrix is released):
  ``||D||_F^2 = ||a||^4 + ||b||^4 - 2 (a.b)^2 <= 2 rho^4``, so
  ``||D||_F <= sqrt(2) rho^2``, attained by orthogonal ``a, b`` of norm ``rho``.
* Operator norm (``D x`` or ``x^T D x`` for a unit ``x`` is released): the two
  eigenvalues of ``D`` have opposite signs and each is at most
  ``max(||a||^2, ||b||^2)`` in absolute value, so ``||D||_2 <= rho^2``,
  attained by ``a`` parallel to ``x`` and ``b`` orthogonal to it.
* Block of ``r`` orthonormal columns ``X`` (``D X`` is released):
  ``||D X||_F <= min(||D||_F, sqrt(r) ||D||_2) = min(sqrt(2), sqrt(r)) rho^2``.

In private Frank-Wolfe (Alg. 13) the residual rows are
``A_i = P_Omega(Y_i - Y*_i)`` with both terms clipped to ``Delta`` on the
observed entries, so ``rho = 2 Delta``; in the first iteration ``Y = 0`` and
``rho = Delta``. Rank-one pursuit clips each residual row to ``Delta``, and
private SVD (Alg. 15) each row of ratings, so ``rho = Delta`` for both.
Thakkar (2019), Lemma 6.2.1, states the Frobenius sensitivity of Frank-Wolfe as
``4 Delta^2``; the bound above, ``sqrt(2) (2 Delta)^2 = 4 sqrt(2) Delta^2``,
is the correct (and attained) value.

Private projected gradient descent (Alg. 16) releases the Gram matrix of the
users' whole iterate rows ``Y^(t)``, which are dense (every item) and which
nothing in the printed algorithm bounds: ``||P_Omega(Y*_i)|| <= Delta``
bounds the data, not the iterate. Here each user clips her whole row to
``rho = row_norm_bound`` before the release, so every one of the ``T``
releases has sensitivity ``sqrt(2) rho^2``.

Composition. The releases are adaptive Gaussian mechanisms with noise
``sigma`` and sensitivities ``s_1, ..., s_K``. Their privacy-loss
distributions compose exactly into that of a single Gaussian mechanism with
sensitivity ``sqrt(s_1^2 + ... + s_K^2)`` and the same ``sigma`` (Dong, Roth
and Su 2022, Cor. 3.3: mu-GDP composes as ``sqrt(sum mu_k^2)``, and a Gaussian
mechanism is exactly ``s/sigma``-GDP). The noise is therefore the analytic
Gaussian calibration (Balle and Wang 2018) of that total sensitivity, exact at
every ``epsilon > 0``; Thakkar's (2019) zCDP route (Lemmas 2.1.12 to 2.1.14) is
looser and needs ``epsilon <= 2 ln(1/delta)``.

Discrete noise (``noise="discrete_gaussian"``). Every release is rounded to
a public power-of-two grid ``g`` and exact discrete Gaussian noise is added
to the integer grid indices (Canonne, Kamath and Steinke 2020, "CKS"). The
GDP composition above is a statement about continuous Gaussians and does not
apply; the discrete releases are accounted in zCDP instead: integer noise
``N_Z(0, s_j^2)`` on coordinate ``j`` of an integer query is, for a shift
``w_j`` between neighbours, Renyi-``alpha`` divergent by at most
``alpha w_j^2 / (2 s_j^2)`` (CKS, the one-coordinate concentrated-DP bound of
the discrete Gaussian), and Renyi divergences of independent coordinates
add, so one release is ``sum_j w_j^2 / (2 s_j^2)``-zCDP (the multivariate
statement of CKS); zCDP composes adaptively by adding the rho's (Thakkar (2019),
Lemma 2.1.12), and the total converts to ``(epsilon, delta)`` by CKS
Cor. 13 (:func:`skdp.accounting.zcdp_for_dp`, tighter than Thakkar (2019),
Lemma 2.1.13, which skdp used before). See :func:`discrete_noise`.
"""

import math
import sys
from fractions import Fraction

from skdp.accounting import zcdp_for_dp
from skdp.mechanisms._discrete import check_grid_noise_parameter
from skdp.mechanisms import gaussian_sigma_analytic
from skdp.mechanisms._discrete import (
    _RHO_MARGIN,
    _check_granularity,
    _grid_l2_sensitivity_squared,
    _round_up,
)
from skdp.svm._base import svm_noise_granularity
from skdp.utils._validation import check_epsilon_delta, check_positive_int, check_real

__all__ = ["DiscreteGrid", "discrete_noise", "noise_sigma", "release_schedule",
           "thesis_sigma", "total_sensitivity"]


def total_sensitivity(row_norm_bound, *, method="frank_wolfe", eigensolver="exact",
                      n_iter=1, oja_iter=1, rank=1):
    """L2 sensitivity of everything the global component releases, composed.

    Parameters
    ----------
    row_norm_bound : float
        ``Delta``: bound on the L2 norm of a user's clipped observed ratings.
    method : {"frank_wolfe", "pursuit", "svd", "pgd"}, default="frank_wolfe"
        Private Frank-Wolfe (Thakkar (2019), Alg. 13): residual rows of norm
        ``rho_1 = Delta`` in the first iteration and ``rho_t = 2 Delta`` after.
        Rank-one pursuit: residual rows clipped to ``rho_t = Delta`` in each
        of its ``n_iter`` iterations. Private SVD (Alg. 15): one release on
        rows of norm ``Delta``. Private projected gradient descent (Alg. 16):
        whole iterate rows clipped to ``rho_t = Delta`` in each of its
        ``n_iter`` iterations (exact eigensolver only).
    eigensolver : {"exact", "oja"}, default="exact"
        ``"exact"`` releases one noisy symmetric ``n x n`` matrix per
        eigen-decomposition (Frobenius sensitivity ``sqrt(2) rho^2``);
        ``"oja"`` releases ``oja_iter`` noisy products with a unit vector
        (operator sensitivity ``rho^2``) or with an orthonormal block of
        ``rank`` columns (``min(sqrt(2), sqrt(rank)) rho^2``), plus, for
        Frank-Wolfe, one noisy eigenvalue ``||A v||^2`` (``rho^2``; Alg. 14).
    n_iter : int, default=1
        Iterations ``T`` (ignored by ``"svd"``).
    oja_iter : int, default=1
        Oja steps per eigen-decomposition (``"oja"`` only).
    rank : int, default=1
        Subspace dimension (``"svd"`` only).

    Returns
    -------
    sensitivity : float
        ``sqrt(sum_k s_k^2)`` over all Gaussian releases ``k``.
    """
    bound = check_real(row_norm_bound, "row_norm_bound", low=0.0, low_inclusive=False)
    n_iter = check_positive_int(n_iter, "n_iter")
    oja_iter = check_positive_int(oja_iter, "oja_iter")
    rank = check_positive_int(rank, "rank")
    delta2 = bound * bound
    try:
        sensitivity = _composed_sensitivity(delta2, method, eigensolver, n_iter, oja_iter, rank)
    except OverflowError:  # delta2**2 beyond the float range
        sensitivity = math.inf
    if not (delta2 * delta2 >= sys.float_info.min and sensitivity < math.inf):
        # Refused here, before any budget is spent: Delta^4 overflowing, or
        # underflowing to zero or to a subnormal number (which has lost
        # precision), would fail the calibration after the charge or
        # understate the sensitivity.
        raise ValueError(
            f"row_norm_bound={row_norm_bound!r} is outside the range where the "
            f"sensitivity (it grows like row_norm_bound^2, composed as "
            f"row_norm_bound^4) is computed exactly in float64: rescale the ratings so "
            f"that a bound between about 1e-75 and 1e75 applies."
        )
    return sensitivity


def _composed_sensitivity(delta2, method, eigensolver, n_iter, oja_iter, rank):
    """:func:`total_sensitivity` from ``delta2 = row_norm_bound**2``."""
    if method == "svd":
        if eigensolver == "exact":
            return math.sqrt(2.0) * delta2
        return math.sqrt(oja_iter) * min(math.sqrt(2.0), math.sqrt(rank)) * delta2
    if method == "pgd" and eigensolver != "exact":
        raise ValueError("method='pgd' releases the whole noisy Gram matrix: "
                         "only eigensolver='exact' applies.")
    if method in ("pursuit", "pgd"):
        rho4_sum, releases_per_iter = n_iter * delta2**2, oja_iter
    else:
        # rho_1 = Delta, rho_t = 2 Delta for t >= 2; Oja also releases ||A v||^2.
        rho4_sum, releases_per_iter = delta2**2 * (1.0 + 16.0 * (n_iter - 1)), oja_iter + 1
    if eigensolver == "exact":
        return math.sqrt(2.0 * rho4_sum)
    return math.sqrt(releases_per_iter * rho4_sum)


def noise_sigma(epsilon, delta, sensitivity):
    """Noise standard deviation of every release: analytic Gaussian, exact.

    Parameters
    ----------
    epsilon : float
        > 0.
    delta : float
        In ``(0, 1)``.
    sensitivity : float
        Composed sensitivity from :func:`total_sensitivity`.

    Returns
    -------
    sigma : float
        The same ``sigma`` is used by each of the composed releases.
    """
    # Balle and Wang (2018), Thm. 8, on the composed Gaussian (Dong, Roth and
    # Su 2022, Cor. 3.3); replaces Thakkar (2019), Lemma 6.2.1 / Alg. 13-16.
    # Alg. 16 (PGD) prints sigma = Delta^2 sqrt(64 T ln(1/delta) / epsilon):
    # epsilon belongs outside the root (as in the proof of Lemma 6.2.1), and
    # the sensitivity is that of the clipped whole rows, sqrt(2T) rho^2 composed
    # (see total_sensitivity); its zCDP form would be rho^2 sqrt(8 T ln(1/delta)) / epsilon.
    return gaussian_sigma_analytic(sensitivity, epsilon, delta)


def thesis_sigma(epsilon, delta, row_norm_bound, *, method="frank_wolfe",
                 eigensolver="exact", n_iter=1, oja_iter=1):
    """Thakkar's (2019) noise scale, for comparison only (not used to fit).

    Thakkar (2019): Alg. 13 / Lemma 6.2.1 (Frank-Wolfe, exact eigen-decomposition)
    ``sigma = Delta^2 sqrt(64 T ln(1/delta)) / epsilon``; Alg. 14 (Oja, on a
    matrix with rows of norm ``2 Delta``) ``sigma = (2 Delta)^2 sqrt(256
    Gamma ln(2/delta)) / epsilon`` for one eigenvector; Alg. 15 (SVD)
    ``sigma = Delta^2 sqrt(64 ln(1/delta)) / epsilon``. (Alg. 13 prints
    ``epsilon`` inside the square root; the proof of Lemma 6.2.1 has it
    outside, as here.) These come from zCDP composition and the conversion
    ``rho = epsilon^2 / (8 ln(1/delta))``, which is valid only for
    ``epsilon <= 2 ln(1/delta)``; the Frank-Wolfe one also uses the
    sensitivity ``4 Delta^2`` where the correct value is ``4 sqrt(2) Delta^2``.

    Alg. 16 (private projected gradient descent) prints the same expression
    as Alg. 13, ``Delta^2 sqrt(64 T ln(1/delta) / epsilon)``, and Thakkar (2019)
    says it calibrates PGD "as in our private FW experiments" (Sec. 6.4); it
    has no privacy proof of its own. ``method="pgd"`` returns the formula
    exactly as printed, ``epsilon`` inside the root: it scales like
    ``epsilon^(-1/2)``, not like the ``epsilon^(-1)`` of any Gaussian
    mechanism, so it is too small for ``epsilon < 1`` even on Thakkar's (2019)
    own terms (and it bounds rows by ``Delta`` where Alg. 16's iterate rows
    are unbounded).

    Parameters
    ----------
    epsilon, delta : float
        Privacy budget; ``epsilon <= 2 ln(1/delta)`` is required.
    row_norm_bound : float
        ``Delta``.
    method : {"frank_wolfe", "svd", "pgd"}, default="frank_wolfe"
    eigensolver : {"exact", "oja"}, default="exact"
    n_iter : int, default=1
        ``T`` (Frank-Wolfe and PGD).
    oja_iter : int, default=1
        ``Gamma`` (Oja).

    Returns
    -------
    sigma : float
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
    log_term = -math.log(delta)
    if epsilon > 2.0 * log_term:
        raise ValueError(
            f"Thakkar's (2019) calibration needs epsilon <= 2 ln(1/delta) = {2.0 * log_term:.4g}, "
            f"got epsilon={epsilon}."
        )
    delta2 = check_real(row_norm_bound, "row_norm_bound", low=0.0, low_inclusive=False) ** 2
    if method == "svd":
        return delta2 * math.sqrt(64.0 * log_term) / epsilon
    if method == "pgd":
        return delta2 * math.sqrt(64.0 * n_iter * log_term / epsilon)  # as printed
    if eigensolver == "oja":
        return 4.0 * delta2 * math.sqrt(256.0 * oja_iter * math.log(2.0 / delta)) / epsilon
    return delta2 * math.sqrt(64.0 * n_iter * log_term) / epsilon


def release_schedule(row_norm_bound, *, method="frank_wolfe", eigensolver="exact", n_iter=1,
                     oja_iter=1, rank=1, n_items=1):
    """Every Gaussian release of the global component, one by one.

    The releases whose composition :func:`total_sensitivity` bounds (same
    parameters, validated there), listed separately because the discrete
    noise needs each release's dimension for its rounding term.

    Parameters
    ----------
    row_norm_bound, method, eigensolver, n_iter, oja_iter, rank
        As in :func:`total_sensitivity` (validated by it first).
    n_items : int, default=1
        ``n``, the number of items.

    Returns
    -------
    releases : list of (float, int)
        ``(s_k, d_k)`` per release: its L2 sensitivity ``s_k`` (Frobenius norm
        of the change of the whole symmetric matrix for the exact solver) and
        the number ``d_k`` of entries whose rounding can move: ``n^2`` for the
        symmetric ``n x n`` matrix (counted as a full matrix, as its Frobenius
        norm is), ``n k`` for an Oja block, 1 for an eigenvalue.
    """
    total_sensitivity(row_norm_bound, method=method, eigensolver=eigensolver, n_iter=n_iter,
                      oja_iter=oja_iter, rank=rank)  # validation only
    delta2 = float(row_norm_bound) ** 2
    n = check_positive_int(n_items, "n_items")
    if method == "svd":
        if eigensolver == "exact":
            return [(math.sqrt(2.0) * delta2, n * n)]
        return [(min(math.sqrt(2.0), math.sqrt(rank)) * delta2, n * rank)] * oja_iter
    if method == "frank_wolfe":
        rho2 = [delta2] + [4.0 * delta2] * (n_iter - 1)  # rho_1 = Delta, rho_t = 2 Delta
    else:
        rho2 = [delta2] * n_iter
    if eigensolver == "exact":
        return [(math.sqrt(2.0) * r2, n * n) for r2 in rho2]
    # oja_iter products with a unit vector, plus Alg. 14's eigenvalue for Frank-Wolfe.
    dims = [n] * oja_iter + ([1] if method == "frank_wolfe" else [])
    return [(r2, d) for r2 in rho2 for d in dims]


class DiscreteGrid:
    """The public grid ``g`` and the discrete Gaussian ``sigma^2`` (in grid steps) of every release.

    Parameters
    ----------
    granularity : float
        ``g``, a power of two.
    sigma2 : fractions.Fraction
        ``sigma^2`` of the discrete Gaussian, in grid steps squared: that of
        every coordinate of a vector release and of every diagonal entry of a
        symmetric one (off-diagonal entries get ``sigma2 / 2``).
    row_step : float or None, default=None
        A power of two ``h``: the rows whose Gram matrix the exact solver
        releases are truncated toward zero to multiples of ``h`` first, so
        that ``A^T A`` is computed exactly in float64 (see
        :func:`discrete_noise`). ``None``: no truncation.
    """

    def __init__(self, granularity, sigma2, row_step=None):
        self.granularity = granularity
        self.sigma2 = sigma2
        self.row_step = row_step

    @property
    def sigma(self):
        """The noise standard deviation parameter in value units, ``g sqrt(sigma2)``."""
        return self.granularity * math.sqrt(self.sigma2)


_SENSITIVITY_MARGIN = 1.0 + 2.0**-40  # float sensitivities rounded up (see discrete_noise)


def discrete_noise(epsilon, delta, releases, value_bound):
    """Grid and discrete Gaussian ``sigma^2`` making all releases together ``(epsilon, delta)``-DP.

    Parameters
    ----------
    epsilon : float
        > 0.
    delta : float
        In ``(0, 1)``.
    releases : list of (float, int)
        :func:`release_schedule`.
    value_bound : float
        Data-independent bound on the absolute value of every released entry
        (``n_users rho_max^2``: ``|sum_i a_ij a_ik| <= sum_i ||a_i||^2``, and
        the same for ``||A v||^2`` and ``(A^T A v)_j`` with ``||v|| <= 1``).

    Returns
    -------
    grid : DiscreteGrid

    Notes
    -----
    zCDP budget ``rho``: the largest whose conversion stays within
    ``(epsilon, delta)`` by CKS Cor. 13 (:func:`skdp.accounting.zcdp_for_dp`,
    checked with a rounded-up :func:`skdp.accounting.zcdp_delta`), lowered by
    a relative ``2**-40``. The grid is ``g = 2^floor(log2 sigma_ref) * 2**-30``
    with ``sigma_ref = sqrt(sum_k s_k^2 / (2 rho))`` the zCDP sigma before
    rounding (both data-independent), raised if needed so that
    ``2**52 g > value_bound`` (grid indices are clamped to ``+-2**52``; the
    clamp then never binds) (:func:`skdp.svm._base.svm_noise_granularity`).
    On the grid, release ``k``'s integer indices move by ``w`` with
    ``||w||_2^2 <= W_k``, the integer bound of
    :func:`skdp.mechanisms._discrete._grid_l2_sensitivity_squared` for L2
    sensitivity ``s_k / g`` over ``d_k`` entries (each entry moves at most
    one grid step more than its value: ``W_k < (s_k / g + sqrt(d_k))^2``).
    Each float ``s_k`` is first raised by a relative ``2**-40`` (fixed)
    against its own round-off. With the same ``sigma^2`` per release,
    ``rho_total = sum_k W_k / (2 sigma^2)`` (CKS, discrete Gaussian zCDP with
    independent coordinates; Thakkar (2019), Lemma 2.1.12 composition), so
    ``sigma^2 = sum_k W_k / (2 rho)``, rounded *up* to 24 significant bits;
    a ``sigma`` beyond ``2**52`` grid steps is refused (ValueError, before
    any budget is spent).

    A symmetric matrix release puts ``sigma^2`` on each diagonal index and
    ``sigma^2 / 2`` on each upper off-diagonal one (mirrored below): its
    zCDP cost is ``sum_j w_jj^2 / (2 sigma^2) + sum_{j<k} w_jk^2 /
    sigma^2 = ||w||_F^2 / (2 sigma^2)``, with ``||w||_F`` the Frobenius
    norm of the full symmetric index change, the quantity ``W_k`` bounds.

    Exact Gram matrices. A Gram matrix summed in floating point has a
    data-dependent round-off, and its sensitivity can exceed the exact
    value's (Casacuberta et al. 2022). The exact solver therefore truncates
    each row entry toward zero to a multiple of ``h`` (``row_step``), which
    never increases a row's norm (so every sensitivity above holds), with
    ``h`` the smallest power of two such that ``value_bound < 2**52 h^2``:
    every entry is then an integer multiple ``k h`` with ``|k| <= 2**26``,
    every product and every partial sum of ``sum_i a_ij a_ik`` an integer
    multiple of ``h^2`` below ``2**53 h^2``, so float64 computes it exactly
    in any order. The truncation moves an entry by less than
    ``h ~ sqrt(value_bound) 2**-26``, which is ``sqrt(n_users) 2**-26``
    relative to ``rho_max``.
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
    # zCDP -> (epsilon, delta) by CKS Cor. 13 (zcdp_for_dp), with a round-off margin.
    rho = Fraction(zcdp_for_dp(epsilon, delta)) * _RHO_MARGIN
    if rho == 0:
        raise ValueError(f"epsilon={epsilon!r} is too small: its zCDP budget underflows to 0.")
    # hypot, then the division: sum s_k^2 / (2 rho) overflows (or underflows to 0) at
    # extreme but accepted row_norm_bound, and frexp(inf or 0) would size g at 2**-31.
    sigma_ref = math.hypot(*(s for s, _ in releases)) / math.sqrt(2.0 * float(rho))
    granularity = svm_noise_granularity(sigma_ref, value_bound)
    grid = _check_granularity(granularity)
    # Integer L2 sensitivity squared of each rounded release (each entry moves <= 1 step more).
    total = sum(_grid_l2_sensitivity_squared(Fraction(s * _SENSITIVITY_MARGIN), grid, d)
                for s, d in releases)
    # Smallest power of two h with value_bound < 2**52 h^2 (exact Gram matrices, Notes).
    row_step = math.ldexp(1.0, math.ceil((math.frexp(value_bound)[1] - 52) / 2))
    # CKS: rho_k = W_k / (2 sigma^2) per release; Thakkar (2019), Lemma 2.1.12: the rho_k add up.
    sigma2 = _round_up(total / (2 * rho))
    # Refused before the charge: beyond 2**52 steps (a tiny epsilon, where the rounding
    # term sum_k d_k / (2 rho) dominates) the draws leave the sampler's int64 range.
    check_grid_noise_parameter("discrete_gaussian", sigma2, f"epsilon={epsilon!r}")
    return DiscreteGrid(granularity, sigma2, row_step)
