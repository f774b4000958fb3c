"""Private linear regression: sufficient statistics (Wang 2018), noisy gradient descent, Huber."""

import math
from contextlib import nullcontext

import dp_accounting
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from skdp.base import DPEstimatorMixin, warn_privacy_leak
from skdp.linear_model._private_glm import check_bool
from skdp.linear_model._sufficient_statistics import (
    gaussian_mu,
    gram_sensitivity,
    release_gram,
    solve_ridge_psd,
    split_gaussian_budget,
)
from skdp.utils._clipping import clip_rows_l2
from skdp.utils._docstrings import fill_doc
from skdp.utils._validation import check_option, check_positive_int, check_real

__all__ = ["DPHuberRegressor", "DPLinearRegression", "adassp_ridge", "check_y_bounds",
           "default_huber_steps"]

# Value of the intercept column, as a fraction of data_norm: the row bound becomes
# data_norm sqrt(1 + 0.25), so the noise on X^T X grows by 25% instead of 100% with
# the value 1 (measured in docs/guide/regression.rst).
_INTERCEPT_SCALE = 0.5

# L2 regularization of the mean loss in noisy gradient descent (DPHuberRegressor's default).
_GD_ALPHA = 1e-4

# Probability with which AdaSSP's ridge may fail to dominate the noise (Wang 2018,
# Alg. 2, "rho"; Thm. 3 holds with probability 1 - rho).
_ADASSP_FAILURE = 0.05


def check_y_bounds(y_bounds, y, owner):
    """Public label bounds ``(low, high)``, or read from ``y`` with a PrivacyLeakWarning.

    Returns
    -------
    low, high : float
        ``low < high``.
    """
    if y_bounds is None:
        warn_privacy_leak(
            f"{owner}: y_bounds=None reads the label range from the private labels (their "
            f"minimum and maximum); pass public y_bounds=(low, high).")
        low, high = float(np.min(y)), float(np.max(y))
        if not high > low:  # one distinct label: any positive width
            high = low + 1.0
        return low, high
    try:
        low, high = y_bounds
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: y_bounds must be a pair (low, high), got "
                         f"{y_bounds!r}.") from None
    low, high = check_real(low, "y_bounds[0]"), check_real(high, "y_bounds[1]")
    if not low < high or not math.isfinite(high - low):
        raise ValueError(f"{owner}: y_bounds needs low < high (a finite width), got "
                         f"{y_bounds!r}.")
    return low, high


def adassp_ridge(dim, sigma_gram, lambda_min_noisy=0.0):
    """AdaSSP's ridge (Wang 2018, Alg. 2 line 2) from public noise scales.

    ``lambda = max(0, sigma_gram sqrt(d log(2 d^2 / rho)) - lambda_min)``
    with ``rho = 0.05``: ``sigma_gram sqrt(d log(2 d^2 / rho))`` bounds the
    spectral norm of the symmetric Gaussian noise on ``X^T X`` with
    probability ``1 - rho``, so the noisy system stays well posed; a private
    lower bound on the smallest eigenvalue of ``X^T X`` (``lambda_min_noisy``)
    lowers it when the data are well conditioned (0 for plain SSP).

    Parameters
    ----------
    dim : int
        ``d``, the size of ``X^T X`` (intercept column included).
    sigma_gram : float
        Noise standard deviation per entry of ``X^T X``.
    lambda_min_noisy : float, default=0.0
        Private lower bound on ``lambda_min(X^T X)``.

    Returns
    -------
    ridge : float
    """
    base = sigma_gram * math.sqrt(dim * math.log(2.0 * dim * dim / _ADASSP_FAILURE))
    return max(0.0, base - lambda_min_noisy)


def default_huber_steps(epsilon, delta, n_samples):
    """The default number of noisy gradient steps: ``(mu n / 60)^2`` in ``[floor, 1000]``.

    ``mu`` = :func:`~skdp.linear_model._sufficient_statistics.gaussian_mu`
    ``(epsilon, delta)`` and ``floor = min(20, max(1, round(mu n / 4)))``;
    every input is public. Below ``mu n = 80`` every step is mostly noise
    and fewer steps are better (generated data, 500 rows, ``epsilon = 0.1``:
    R^2 -1.46 with 20 steps, 0.04 with 1).
    """
    mu_n = gaussian_mu(epsilon, delta) * n_samples
    floor = min(20, max(1, round(mu_n / 4.0)))
    return int(min(1000, max(floor, round((mu_n / 60.0) ** 2))))


# DPLinearRegression(method="auto") runs noisy gradient descent below this value of
# mu * n_samples (public) and SSP above: on gss_wages and generated data SSP was as
# accurate or better from mu n ~ 1e4 - 4e4 on, and gradient descent better below
# (docs/guide/regression.rst).
_AUTO_SSP_FROM = 20_000.0


def noisy_gradient_descent(Xc, yc, *, huber_m, alpha, learning_rate, n_steps, sigma, rng):
    """Full-batch gradient descent on the mean Huber loss, Gaussian noise on every summed gradient.

    One row's gradient is ``psi(r) x`` with ``|psi| <= huber_m`` and
    ``||x|| <= B_x``, so the summed gradient has L2 sensitivity
    ``2 huber_m B_x`` under replace-one neighbours whatever ``theta`` is (the
    full-batch case of DP-SGD, Abadi et al. 2016, with Huber's ``psi``
    bounding the gradient instead of clipping); ``sigma`` is calibrated by the
    caller. The number of steps is fixed, so privacy never depends on
    convergence.
    """
    n = Xc.shape[0]
    theta = np.zeros(Xc.shape[1])
    # Up to 1000 thin matrix-vector products: one BLAS thread avoids thread
    # start-up and contention costs (measured 30 times slower on a loaded machine).
    # Entering the limit costs milliseconds itself: only for large data.
    limit = threadpool_limits(1, user_api="blas") if Xc.size > 100_000 else nullcontext()
    with limit:
        for _ in range(n_steps):
            psi = np.clip(Xc @ theta - yc, -huber_m, huber_m)  # Huber's psi, |psi| <= huber_m
            # Gaussian mechanism on the summed gradient (sensitivity 2 huber_m B_x).
            noisy_sum = Xc.T @ psi + rng.normal(0.0, sigma, size=theta.shape)
            theta = theta - learning_rate * (noisy_sum / n + alpha * theta)
    return theta


class _PrivateLinearRegressorMixin(RegressorMixin):
    """``predict`` from ``coef_`` and ``intercept_``, clipped to ``y_bounds_``."""

    def predict(self, X):
        """Predicted targets, clipped to the public ``y_bounds_`` (post-processing).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return np.clip(X @ self.coef_ + self.intercept_, *self.y_bounds_)


def _common_params(est, y, owner):
    data_norm = check_real(est.data_norm, "data_norm", low=0.0, low_inclusive=False)
    fit_intercept = check_bool(est.fit_intercept, "fit_intercept")
    y_low, y_high = check_y_bounds(est.y_bounds, y, owner)
    return data_norm, fit_intercept, y_low, y_high


def _prepare_rows(X, y, data_norm, fit_intercept, y_low, y_high):
    """Clip rows to ``data_norm``, append the intercept column (value ``c = data_norm / 2``),
    clip the labels to ``y_bounds`` and centre them on its midpoint (per-row maps).

    Returns the rows, the labels, the midpoint, the intercept column value and the
    row norm bound ``data_norm sqrt(1 + 1/4)`` (``data_norm`` without intercept)."""
    Xc = clip_rows_l2(X, data_norm)
    c = _INTERCEPT_SCALE * data_norm
    if fit_intercept:
        Xc = np.hstack([Xc, np.full((X.shape[0], 1), c)])
    mid = 0.5 * (y_low + y_high)
    yc = np.clip(y, y_low, y_high) - mid
    return Xc, yc, mid, c


def _row_norm(data_norm, fit_intercept):
    return data_norm * math.sqrt(1.0 + _INTERCEPT_SCALE**2) if fit_intercept else data_norm


def _gaussian_steps_event(sigma, sensitivity, n_steps):
    """``n_steps`` Gaussian mechanisms of noise ``sigma`` and L2 sensitivity ``sensitivity``."""
    return dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma / sensitivity),
                                             int(n_steps))


def _default_delta(n):
    return 1.0 / float(n) ** 2  # Thakkar (2019), Sec. 4.4: delta = 1 / n^2


@fill_doc
class DPLinearRegression(DPEstimatorMixin, _PrivateLinearRegressorMixin, BaseEstimator):
    """Differentially private least-squares regression with public feature and label bounds.

    Two mechanisms, chosen from public quantities by ``method="auto"``:

    * ``"gd"``: noisy full-batch gradient descent on the squared loss, its
      gradient bounded by Huber's ``psi`` at half the label half-range (the
      full-batch case of DP-SGD, Abadi et al. 2016; a fixed number of steps,
      so privacy never depends on convergence). It regularizes implicitly
      (directions the data barely determine stay near 0) and is the more
      accurate at small ``mu n`` (see ``method``).
    * ``"ssp"`` / ``"adassp"``: sufficient-statistics perturbation (Wang
      2018, Alg. 1 and 2): release ``X^T X`` and ``X^T y`` with Gaussian
      noise and solve the noisy normal equations with a ridge that dominates
      the noise (AdaSSP's rule). Exact in the limit of large ``epsilon``.

    Use it like :class:`sklearn.linear_model.Ridge` on features scaled to a
    public row norm bound (e.g. after
    :class:`~sklearn.preprocessing.Normalizer`, with the default
    ``data_norm=1``) and with public label bounds ``y_bounds``.

    Parameters
    ----------
    %(epsilon)s
    delta : float or None, default=None
        In ``(0, 1)``. ``None`` uses ``1 / n_samples^2``, stored in ``delta_``.
    data_norm : float, default=1.0
        Public bound on the L2 norm of each row of ``X`` (the intercept
        column, of value ``data_norm / 2``, is appended after clipping). Rows
        with a larger norm are scaled down to it, a per-row operation that
        costs no privacy.
    y_bounds : tuple of float or None, default=None
        Public range ``(low, high)`` of the labels; labels outside are
        clipped to it (silently, per row). ``None`` reads it from ``y``,
        which is not private (:class:`~skdp.PrivacyLeakWarning`).
    fit_intercept : bool, default=True
        Append a constant column ``data_norm / 2`` whose weight is the
        intercept (labels are centred on the midpoint of ``y_bounds``
        first). It is regularized like the other weights.
    method : {"auto", "gd", "ssp", "adassp"}, default="auto"
        ``"auto"``: ``"gd"`` when ``mu n_samples < 20000`` and ``"ssp"``
        otherwise, ``mu`` the Gaussian-DP budget of ``(epsilon, delta)``
        (public; about 0.18 at ``epsilon = 1``, ``delta = 1e-9``, and 1.6 at
        ``epsilon = 10``). ``"gd"``: :class:`DPHuberRegressor`'s default
        mechanism with ``huber_m`` a quarter of the width of ``y_bounds``.
        ``"ssp"``: Wang (2018), Alg. 1, the budget split 40% / 60% (of
        ``mu^2``) between ``X^T X`` and ``X^T y``, and 0.35 times AdaSSP's
        ridge. ``"adassp"``: Wang (2018), Alg. 2 as published: a third
        release, a private lower bound on the smallest eigenvalue of
        ``X^T X``, lowers the ridge on well-conditioned data; shares 10% /
        45% / 45%. The rule and the constants were chosen on generated data
        and the gss_wages table (see the user guide).
    alpha : float or None, default=None
        ``"ssp"`` and ``"adassp"`` only: the ridge added to the noisy
        ``X^T X`` (in the units of :class:`sklearn.linear_model.Ridge`'s
        ``alpha``). ``None`` uses the rule of ``method``, from public
        quantities only.
    %(random_state)s
    %(accountant)s

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Weights.
    intercept_ : float
        Intercept.
    method_ : str
        The mechanism used (``"auto"`` resolved).
    y_bounds_ : tuple of float
        The label range used (predictions are clipped to it).
    ridge_ : float or None
        The ridge added to the noisy ``X^T X`` (``None`` for ``"gd"``).
    noise_scales_ : dict
        Standard deviations of the Gaussian noise of each release
        (``"lambda_min"``, ``"gram"``, ``"moment"``, or ``"gradient"`` per
        step); public.
    n_iter_ : int or None
        Gradient steps of ``"gd"`` (fixed from public quantities), else ``None``.
    n_features_in_ : int
        Number of features seen in ``fit``.
    delta_ : float
        The delta spent.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta)``.
    privacy_event_ : dp_accounting.DpEvent
        The Gaussian releases of the fit.
        The event a tight :class:`~skdp.BudgetAccountant` composes.

    Privacy
    -------
    ``(epsilon, delta)``-DP for replace-one neighbours (one row, features and
    label, replaced; ``n_samples`` public), given public ``data_norm`` and
    ``y_bounds``. Rows are clipped to ``B_x = data_norm`` (``sqrt(5) / 2
    data_norm`` with the intercept column) and labels centred and clipped
    to ``|y| <= B_y`` (half the width of ``y_bounds``). Every release is a
    Gaussian mechanism: ``"ssp"`` releases ``X^T X`` (upper triangle, L2
    sensitivity ``sqrt(2) B_x^2``) and ``X^T y`` (``2 B_x B_y``), and
    ``"adassp"`` also ``lambda_min(X^T X)`` (``B_x^2``, by Weyl's
    inequality); ``"gd"`` releases ``T`` summed gradients
    (``2 (B_y / 2) B_x`` each). Their noise shares one Gaussian-DP budget
    ``mu`` (Dong, Roth and Su 2022, Cor. 3.3), and ``mu``-GDP is exactly
    ``(epsilon, delta)``-DP for ``mu = 1 / sigma(1, epsilon, delta)`` of the
    analytic Gaussian mechanism (Balle and Wang 2018, Thm. 8). The choice of
    ``"auto"``, the ridge, the solve and the clipping of predictions use
    public values and the releases only (post-processing).

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    DPHuberRegressor : Private robust regression by noisy gradient descent.

    References
    ----------
    Y.-X. Wang. Revisiting differentially private linear regression: optimal
    and adaptive prediction & estimation in unbounded domain. UAI 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model import DPLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(5000, 3))
    >>> y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.standard_normal(5000)
    >>> reg = DPLinearRegression(epsilon=1.0, y_bounds=(-3, 3), random_state=0).fit(X, y)
    >>> reg.method_, reg.privacy_spent_.epsilon
    ('gd', 1.0)
    """

    _METHODS = ("auto", "gd", "ssp", "adassp")
    # Shares of mu^2 (Gaussian DP) per release and the factor on AdaSSP's ridge:
    # "adassp" is Wang (2018), Alg. 2 as published (equal shares, factor 1); "ssp"'s
    # constants were chosen on generated data and the derive tables
    # (docs/guide/regression.rst).
    _SHARES = {"adassp": (0.1, 0.45, 0.45), "ssp": (0.4, 0.6)}
    _RIDGE_FACTOR = {"adassp": 1.0, "ssp": 0.35}

    def __init__(self, epsilon=1.0, delta=None, *, data_norm=1.0, y_bounds=None,
                 fit_intercept=True, method="auto", alpha=None, random_state=None,
                 accountant=None):
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.y_bounds = y_bounds
        self.fit_intercept = fit_intercept
        self.method = method
        self.alpha = alpha
        self.random_state = random_state
        self.accountant = accountant

    def _noise_scales(self, budget, method, row_norm, y_half, n_steps=None):
        """Noise standard deviations of the releases (a hook the audit tests override)."""
        if method == "gd":
            # n_steps Gaussian mechanisms of sensitivity 2 huber_m B_x (huber_m = y_half / 2)
            # compose to sqrt(n_steps) mu_step-GDP (Dong, Roth and Su 2022, Cor. 3.3).
            (sigma,) = split_gaussian_budget(budget.epsilon, budget.delta,
                                             [row_norm * y_half], [1.0])
            return {"gradient": sigma * math.sqrt(n_steps)}
        sens = {"lambda_min": row_norm**2, "gram": gram_sensitivity(row_norm),
                "moment": 2.0 * row_norm * y_half}
        names = ("lambda_min", "gram", "moment") if method == "adassp" else ("gram", "moment")
        sigmas = split_gaussian_budget(budget.epsilon, budget.delta, [sens[k] for k in names],
                                       self._SHARES[method])
        return dict(zip(names, sigmas))

    def fit(self, X, y):
        """Fit the private model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; rows are clipped to ``data_norm``.
        y : array-like of shape (n_samples,)
            Targets; clipped to ``y_bounds``.

        Returns
        -------
        self : DPLinearRegression
            The fitted estimator.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        owner = type(self).__name__
        data_norm, fit_intercept, y_low, y_high = _common_params(self, y, owner)
        method = check_option(self.method, "method", self._METHODS)
        alpha = (None if self.alpha is None else
                 check_real(self.alpha, "alpha", low=0.0))
        n, d = X.shape
        dim = d + int(fit_intercept)
        row_norm = _row_norm(data_norm, fit_intercept)
        y_half = 0.5 * (y_high - y_low)
        # Every refusal happens before the charge: the calibration uses public values only.
        budget = self._resolve_budget(n, default_delta=_default_delta, allow_zero_delta=False)
        n_steps = None
        try:
            if method == "auto":
                mu_n = gaussian_mu(budget.epsilon, budget.delta) * n
                method = "gd" if mu_n < _AUTO_SSP_FROM else "ssp"
            if method == "gd":
                n_steps = default_huber_steps(budget.epsilon, budget.delta, n)
            sigmas = self._noise_scales(budget, method, row_norm, y_half, n_steps)
        except (ArithmeticError, ValueError) as error:
            raise ValueError(f"{owner}: the noise could not be calibrated for epsilon="
                             f"{budget.epsilon:g}, delta={budget.delta:g}, data_norm="
                             f"{data_norm:g}, y_bounds=({y_low:g}, {y_high:g}) ({error}). "
                             "Nothing was spent.") from error
        if method == "gd":
            # n_steps Gaussian mechanisms of sensitivity 2 huber_m B_x = y_half B_x.
            event = _gaussian_steps_event(sigmas["gradient"], row_norm * y_half, n_steps)
        else:
            sens = {"lambda_min": row_norm**2, "gram": gram_sensitivity(row_norm),
                    "moment": 2.0 * row_norm * y_half}
            event = dp_accounting.ComposedDpEvent(
                [dp_accounting.GaussianDpEvent(sigmas[k] / sens[k]) for k in sigmas])
        budget, rng = self._start_private_fit(n, default_delta=_default_delta,
                                              allow_zero_delta=False, event=event)

        Xc, yc, mid, c = _prepare_rows(X, y, data_norm, fit_intercept, y_low, y_high)
        if method == "gd":
            theta = noisy_gradient_descent(
                Xc, yc, huber_m=0.5 * y_half, alpha=_GD_ALPHA,
                learning_rate=1.0 / (row_norm**2 + _GD_ALPHA), n_steps=n_steps,
                sigma=sigmas["gradient"], rng=rng)
            self._set_fitted(theta, d, c, mid, (y_low, y_high), budget)
            self.method_, self.ridge_, self.noise_scales_ = method, None, sigmas
            self.n_iter_ = n_steps
            return self
        lam_min = 0.0
        if method == "adassp":
            # Wang (2018), Alg. 2 line 1: a private lower bound on lambda_min(X^T X),
            # the Gaussian mechanism (sensitivity B_x^2, Weyl) shifted down by
            # z_{1 - rho} sigma so that it is below the true value with probability 1 - rho.
            s = sigmas["lambda_min"]
            true_min = float(np.linalg.eigvalsh(Xc.T @ Xc)[0])
            lam_min = max(0.0, true_min + rng.normal(0.0, s) - 1.6448536269514722 * s)
        # Wang (2018), Alg. 1-2: Gaussian noise on X^T X (upper triangle, sensitivity
        # sqrt(2) B_x^2) and on X^T y (sensitivity 2 B_x B_y); mu-GDP shares above.
        gram = release_gram(Xc, sigmas["gram"], rng)
        moment = Xc.T @ yc + rng.normal(0.0, sigmas["moment"], size=dim)
        if alpha is None:
            ridge = self._RIDGE_FACTOR[method] * adassp_ridge(dim, sigmas["gram"])
            ridge = max(0.0, ridge - lam_min)
        else:
            ridge = alpha
        theta = solve_ridge_psd(gram, moment, ridge)
        self._set_fitted(theta, d, c, mid, (y_low, y_high), budget)
        self.method_, self.ridge_, self.noise_scales_ = method, float(ridge), sigmas
        self.n_iter_ = None
        return self

    def _set_fitted(self, theta, d, c, mid, y_bounds, budget):
        self.coef_ = theta[:d].copy()
        self.intercept_ = float(theta[d] * c + mid) if len(theta) > d else float(mid)
        self.y_bounds_ = y_bounds
        self.delta_ = budget.delta
        self.privacy_spent_ = budget


@fill_doc
class DPHuberRegressor(DPEstimatorMixin, _PrivateLinearRegressorMixin, BaseEstimator):
    """Differentially private robust (Huber) regression by noisy full-batch gradient descent.

    Minimizes the mean Huber loss of the residuals plus ``alpha / 2
    ||w||^2`` by ``max_iter`` steps of gradient descent, each on the exact
    full-data gradient plus Gaussian noise. One row's gradient is bounded
    by the Huber loss itself (``|psi(r)| <= huber_m``), so no gradient is
    clipped and the privacy does not depend on convergence: the number of
    steps is fixed in advance. Less accurate than :class:`DPLinearRegression`
    on clean data; use it when a few rows carry gross label errors.

    Parameters
    ----------
    %(epsilon)s
    delta : float or None, default=None
        In ``(0, 1)``. ``None`` uses ``1 / n_samples^2``, stored in ``delta_``.
    data_norm : float, default=1.0
        Public bound on the L2 norm of each row of ``X`` (the intercept
        column, of value ``data_norm / 2``, is appended after clipping).
    y_bounds : tuple of float or None, default=None
        Public label range; labels are clipped to it and centred on its
        midpoint. ``None`` reads it from ``y`` (:class:`~skdp.PrivacyLeakWarning`).
    fit_intercept : bool, default=True
        Append the constant column ``data_norm / 2``; its weight is the intercept.
    huber_m : float or None, default=None
        Threshold of the Huber loss (quadratic for residuals below it,
        linear above). ``None`` uses a quarter of the width of ``y_bounds``.
    alpha : float, default=1e-4
        L2 regularization of the mean loss.
    max_iter : int or None, default=None
        Number of noisy gradient steps (fixed in advance: the budget is split
        over them). ``None`` uses ``T = (mu n / 60)^2`` clipped to
        ``[min(20, mu n / 4), 1000]`` (at least 1), with ``mu`` the
        Gaussian-DP budget of ``(epsilon,
        delta)`` (public): it keeps the noise of the mean gradient,
        ``sqrt(T) / (mu n)`` times the sensitivity, at the level measured
        best at ``epsilon = 0.1`` on the gss_wages table, and runs more steps
        (better convergence) when the budget allows.
    learning_rate : float or None, default=None
        Step size. ``None`` uses ``1 / (B_x^2 + alpha)``, the inverse of the
        objective's smoothness (``B_x`` the augmented row norm bound).
    %(random_state)s
    %(accountant)s

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    y_bounds_ : tuple of float
    noise_scale_ : float
        Standard deviation of the Gaussian noise on each summed gradient.
    n_iter_ : int
        Steps taken (``max_iter``).
    n_features_in_ : int
    delta_ : float
    privacy_spent_ : PrivacyBudget
    privacy_event_ : dp_accounting.DpEvent
        The Gaussian releases of the fit.
        The event a tight :class:`~skdp.BudgetAccountant` composes.

    Privacy
    -------
    ``(epsilon, delta)``-DP for replace-one neighbours (one row, features and
    label, replaced; ``n_samples`` public), given public ``data_norm`` and
    ``y_bounds``. Each step releases the summed gradient ``sum_i psi(r_i)
    x_i`` with ``|psi| <= huber_m`` and ``||x_i|| <= B_x``: L2 sensitivity
    ``2 huber_m B_x``, plus Gaussian noise (the full-batch case of DP-SGD,
    Abadi et al. 2016, without clipping or subsampling). The ``max_iter``
    Gaussian mechanisms compose to ``sqrt(max_iter) mu_step``-GDP (Dong,
    Roth and Su 2022, Cor. 3.3), calibrated to be exactly
    ``(epsilon, delta)``-DP (Balle and Wang 2018, Thm. 8).

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    DPLinearRegression : Private least squares (more accurate on clean labels).

    References
    ----------
    M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar and
    L. Zhang, "Deep learning with differential privacy", ACM CCS 2016.

    B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential
    privacy: analytical calibration and optimal denoising", ICML 2018.

    J. Dong, A. Roth and W. J. Su, "Gaussian differential privacy", Journal of
    the Royal Statistical Society, Series B 84(1), 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model import DPHuberRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(5000, 3))
    >>> y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.standard_normal(5000)
    >>> reg = DPHuberRegressor(epsilon=1.0, y_bounds=(-3, 3), random_state=0).fit(X, y)
    >>> reg.n_iter_  # (mu n / 60)^2 with mu = 0.21 at (1, 1 / 5000^2)
    295
    """

    def __init__(self, epsilon=1.0, delta=None, *, data_norm=1.0, y_bounds=None,
                 fit_intercept=True, huber_m=None, alpha=_GD_ALPHA, max_iter=None,
                 learning_rate=None, random_state=None, accountant=None):
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.y_bounds = y_bounds
        self.fit_intercept = fit_intercept
        self.huber_m = huber_m
        self.alpha = alpha
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.accountant = accountant

    def _noise_scale(self, budget, sensitivity, n_steps):
        """Noise standard deviation per step (a hook the audit tests override)."""
        return split_gaussian_budget(budget.epsilon, budget.delta, [sensitivity],
                                     [1.0])[0] * math.sqrt(n_steps)

    def fit(self, X, y):
        """Fit the private model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; rows are clipped to ``data_norm``.
        y : array-like of shape (n_samples,)
            Targets; clipped to ``y_bounds``.

        Returns
        -------
        self : DPHuberRegressor
            The fitted estimator.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        owner = type(self).__name__
        data_norm, fit_intercept, y_low, y_high = _common_params(self, y, owner)
        y_half = 0.5 * (y_high - y_low)
        huber_m = (0.5 * y_half if self.huber_m is None else
                   check_real(self.huber_m, "huber_m", low=0.0, low_inclusive=False))
        alpha = check_real(self.alpha, "alpha", low=0.0)
        n, d = X.shape
        n_steps = (None if self.max_iter is None else
                   check_positive_int(self.max_iter, "max_iter"))
        dim = d + int(fit_intercept)
        row_norm = _row_norm(data_norm, fit_intercept)
        lr = (1.0 / (row_norm**2 + alpha) if self.learning_rate is None else
              check_real(self.learning_rate, "learning_rate", low=0.0, low_inclusive=False))
        sensitivity = 2.0 * huber_m * row_norm
        budget = self._resolve_budget(n, default_delta=_default_delta, allow_zero_delta=False)
        try:
            if n_steps is None:
                n_steps = default_huber_steps(budget.epsilon, budget.delta, n)
            sigma = self._noise_scale(budget, sensitivity, n_steps)
        except (ArithmeticError, ValueError) as error:
            raise ValueError(f"{owner}: the noise could not be calibrated for epsilon="
                             f"{budget.epsilon:g}, delta={budget.delta:g} ({error}). "
                             "Nothing was spent.") from error
        budget, rng = self._start_private_fit(
            n, default_delta=_default_delta, allow_zero_delta=False,
            event=_gaussian_steps_event(sigma, sensitivity, n_steps))

        Xc, yc, mid, c = _prepare_rows(X, y, data_norm, fit_intercept, y_low, y_high)
        theta = noisy_gradient_descent(Xc, yc, huber_m=huber_m, alpha=alpha, learning_rate=lr,
                                       n_steps=n_steps, sigma=sigma, rng=rng)

        self.coef_ = theta[:d].copy()
        self.intercept_ = float(theta[d] * c + mid) if fit_intercept else float(mid)
        self.y_bounds_ = (y_low, y_high)
        self.noise_scale_ = sigma
        self.n_iter_ = n_steps
        self.delta_ = budget.delta
        self.privacy_spent_ = budget
        return self
