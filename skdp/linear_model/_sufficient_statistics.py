"""Private second moments: the Gaussian releases behind sufficient-statistics regression.

A linear least-squares fit needs only ``X^T X`` and ``X^T y``. Releasing both
with Gaussian noise (sufficient-statistics perturbation, "SSP"; Wang 2018,
Alg. 1 and the adaptive AdaSSP, Alg. 2) and solving the noisy normal
equations is post-processing. The covariance release
:func:`release_gram` is written to be reused (private PCA needs the same
``X^T X``).

Budget splits between several Gaussian releases use Gaussian differential
privacy (Dong, Roth and Su 2022): a Gaussian mechanism with L2 sensitivity
``Delta`` and noise ``sigma`` is ``mu``-GDP with ``mu = Delta / sigma``
(their Thm. 2.7), ``k`` of them compose to ``sqrt(mu_1^2 + ... + mu_k^2)``-GDP
exactly (Cor. 3.3), and ``mu``-GDP is ``(epsilon, delta)``-DP exactly when a
single Gaussian mechanism with ``Delta / sigma = mu`` is (Cor. 2.13; the same
privacy profile as Balle and Wang 2018, Thm. 8). So the total ``mu`` for
``(epsilon, delta)`` is ``1 / sigma_analytic(1, epsilon, delta)``, and each
release gets a share ``w_i`` of ``mu^2``.
"""

import math

import numpy as np

from skdp.mechanisms._gaussian import gaussian_sigma_analytic

__all__ = [
    "gaussian_mu",
    "gram_sensitivity",
    "release_gram",
    "solve_ridge_psd",
    "split_gaussian_budget",
    "symmetric_gaussian_noise",
]


def gaussian_mu(epsilon, delta):
    """The ``mu`` of the Gaussian DP that is exactly ``(epsilon, delta)``-DP.

    Balle and Wang (2018), Thm. 8 (equivalently Dong, Roth and Su 2022,
    Cor. 2.13): the Gaussian mechanism is ``(epsilon, delta)``-DP iff
    ``sigma / Delta >= sigma_analytic(1, epsilon, delta)``; ``mu`` is the
    inverse of that ratio.

    Parameters
    ----------
    epsilon : float
        > 0.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    mu : float
    """
    return 1.0 / gaussian_sigma_analytic(1.0, epsilon, delta)


def split_gaussian_budget(epsilon, delta, sensitivities, shares):
    """Noise scales of several Gaussian releases that together are ``(epsilon, delta)``-DP.

    Release ``i`` (L2 sensitivity ``Delta_i``) gets ``mu_i = sqrt(w_i) mu``
    with ``mu`` = :func:`gaussian_mu` ``(epsilon, delta)`` and ``sum w_i = 1``,
    i.e. ``sigma_i = Delta_i / mu_i``. They compose to exactly ``mu``-GDP
    (Dong, Roth and Su 2022, Cor. 3.3), also when later releases depend on
    earlier ones.

    Parameters
    ----------
    epsilon, delta : float
        The total budget.
    sensitivities : sequence of float
        ``Delta_i`` > 0.
    shares : sequence of float
        ``w_i`` > 0, summing to 1 (within rounding).

    Returns
    -------
    sigmas : list of float
    """
    shares = [float(w) for w in shares]
    if not (all(w > 0 for w in shares) and abs(sum(shares) - 1.0) <= 1e-12):
        raise ValueError(f"the budget shares must be positive and sum to 1, got {shares}.")
    mu = gaussian_mu(epsilon, delta)
    return [float(s) / (mu * math.sqrt(w)) for s, w in zip(sensitivities, shares)]


def gram_sensitivity(row_norm, neighbours="replace"):
    """L2 sensitivity of the upper triangle of ``X^T X`` for rows of norm ``<= row_norm``.

    Replace-one: ``Delta = x x^T - x' x'^T`` has
    ``sum_{i <= j} Delta_ij^2 = (||Delta||_F^2 + sum_i Delta_ii^2) / 2``, with
    ``||Delta||_F^2 = ||x||^4 + ||x'||^4 - 2 (x . x')^2 <= 2 B^4`` and
    ``sum_i (x_i^2 - x'_i^2)^2 <= ||x||^4 + ||x'||^4 <= 2 B^4``, so the
    sensitivity is ``sqrt(2) B^2`` (attained by ``x = B e_1``, ``x' = B e_2``).
    Add/remove-one: ``||x x^T||_F = B^2`` bounds the upper triangle too.

    Parameters
    ----------
    row_norm : float
        ``B``.
    neighbours : {"replace", "add_remove"}, default="replace"

    Returns
    -------
    sensitivity : float
    """
    b2 = float(row_norm) ** 2
    return math.sqrt(2.0) * b2 if neighbours == "replace" else b2


def symmetric_gaussian_noise(dim, sigma, rng):
    """A symmetric ``dim x dim`` matrix, i.i.d. ``N(0, sigma^2)`` on and above the diagonal."""
    upper = np.triu(rng.normal(0.0, sigma, size=(dim, dim)))
    return upper + np.triu(upper, 1).T


def release_gram(X, sigma, rng):
    """``X^T X`` plus symmetric Gaussian noise of standard deviation ``sigma`` per entry.

    The Gaussian mechanism on the upper triangle of ``X^T X`` (Dwork et al.
    2014, "Analyze Gauss", Alg. 1; Wang 2018, Alg. 1 line 1), mirrored.
    With rows of ``X`` clipped to norm ``B`` beforehand and
    ``sigma = gram_sensitivity(B) / mu``, the release is ``mu``-GDP under
    replace-one neighbours (:func:`gram_sensitivity`). The result is
    symmetric and need not be positive semi-definite.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Rows already clipped to the norm the noise is calibrated to.
    sigma : float
        Noise standard deviation, > 0.
    rng : numpy.random.Generator

    Returns
    -------
    gram : ndarray of shape (n_features, n_features)
    """
    gram = X.T @ X
    gram = 0.5 * (gram + gram.T)  # exactly symmetric, whatever BLAS did
    return gram + symmetric_gaussian_noise(X.shape[1], sigma, rng)


def solve_ridge_psd(gram, moment, ridge):
    """``(P(gram) + ridge I)^+ moment`` with ``P`` the projection onto the PSD cone.

    Post-processing of a noisy ``X^T X``: its negative eigenvalues (noise)
    are set to 0, so the system is positive definite whenever ``ridge > 0``;
    an exactly singular direction (``ridge = 0``) gets weight 0
    (pseudo-inverse). Never fails on finite input.
    """
    s, V = np.linalg.eigh(0.5 * (gram + gram.T))
    denom = np.maximum(s, 0.0) + ridge
    proj = V.T @ moment
    coef = np.divide(proj, denom, out=np.zeros_like(proj), where=denom > 0)
    return V @ coef
