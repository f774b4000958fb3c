"""k-means by private Lloyd iterations from a private coreset initialization."""

import math
import numbers
import warnings

import dp_accounting
import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
)
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.accounting import zcdp_for_dp
from skdp.base import DPEstimatorMixin
from skdp.mechanisms import laplace_scale
from skdp.naive_bayes._gaussian import resolve_bounds
from skdp.utils._docstrings import fill_doc
from skdp.utils._validation import check_positive_int

__all__ = ["DPKMeans", "lloyd_noise_scales"]

# A cell of the coreset (or a cluster) whose noisy count is below this many noise standard
# deviations of its count is dropped (or keeps its previous centre): its mean is mostly noise.
_MIN_COUNT_IN_NOISE = 3.0
# Restarts of the (free, post-processing) weighted k-means++ on the released coreset.
_CORESET_RESTARTS = 10
# "auto" coreset size: n / (_CELL_ROWS_PER_NOISE sqrt(d) sigma) cells, so that a cell of average
# size has a noisy mean 1 / _CELL_ROWS_PER_NOISE half-widths off in L2 norm (typically).
_CELL_ROWS_PER_NOISE = 1.0
# The "auto" numbers of steps are chosen from the noise the default 2 + 5 steps would have.
_REFERENCE_STEPS = 7
# Rows per block when computing distances to the centres (a block's distance matrix is
# _CHUNK_ROWS x n_centres floats).
_CHUNK_ROWS = 8192


def lloyd_noise_scales(n_features, n_steps, epsilon, delta):
    """Noise on the counts and sums of each private Lloyd step, and the count weight.

    Each step releases, for every centre, the number of rows nearest to it
    and the sum of those rows (features mapped onto ``[-1, 1]``). With the
    counts weighted by ``w``, a row contributes ``(w, z)`` to one cluster,
    of squared L2 norm at most ``w^2 + d``; replacing it moves at most two
    clusters' entries, by at most ``sqrt(2 (w^2 + d))`` (two clusters) or
    ``2 sqrt(d)`` (the same cluster) in L2 norm.

    * Gaussian (``delta > 0``): ``w = sqrt(d)``, so that both cases give
      L2 sensitivity ``2 sqrt(d)``; the budget is converted to
      ``rho = zcdp_for_dp(epsilon, delta)`` (Canonne, Kamath and Steinke
      2020, Cor. 13) and split evenly over the ``T`` steps, each a Gaussian
      mechanism of ``rho / T``-zCDP (Bun and Steinke 2016, Prop. 1.6:
      ``sigma = Delta / sqrt(2 rho / T)``) composed by Bun and Steinke
      (2016), Lemma 1.7. The counts get ``sigma / w``.
    * Laplace (``delta = 0``): ``w = 1``, L1 sensitivity ``2 (1 + d)``,
      ``epsilon / T`` per step (basic composition, Dwork et al. 2006).

    Parameters
    ----------
    n_features : int
        ``d``.
    n_steps : int
        ``T``, the number of private Lloyd steps.
    epsilon : float
        > 0.
    delta : float
        In ``[0, 1)``.

    Returns
    -------
    mechanism : {"gaussian", "laplace"}
    count_scale, sum_scale : float
        Noise standard deviation (Gaussian) or scale (Laplace) on each count
        and on each coordinate of each sum, per step.
    """
    d = n_features
    if delta == 0.0:
        # Laplace mechanism (Dwork et al. 2006), L1 sensitivity 2 (1 + d), epsilon / T per step.
        scale = laplace_scale(2.0 * (1.0 + d), epsilon / n_steps)
        return "laplace", scale, scale
    rho = zcdp_for_dp(epsilon, delta)
    # Gaussian mechanism: rho_t = Delta^2 / (2 sigma^2) (Bun and Steinke 2016, Prop. 1.6),
    # Delta = 2 sqrt(d) with counts weighted by sqrt(d).
    sigma = 2.0 * math.sqrt(d) / math.sqrt(2.0 * rho / n_steps)
    return "gaussian", sigma / math.sqrt(d), sigma


def lloyd_privacy_event(n_features, n_steps, mechanism, sum_scale):
    """The privacy event of ``n_steps`` noisy Lloyd steps (see :func:`lloyd_noise_scales`).

    Each step is one Gaussian release of L2 sensitivity ``2 sqrt(d)`` with
    noise ``sum_scale`` per entry, or one Laplace release of L1 sensitivity
    ``2 (1 + d)`` and scale ``sum_scale``; the steps compose.
    """
    d = n_features
    if mechanism == "gaussian":
        step = dp_accounting.GaussianDpEvent(sum_scale / (2.0 * math.sqrt(d)))
    else:
        step = dp_accounting.LaplaceDpEvent(sum_scale / (2.0 * (1.0 + d)))
    return dp_accounting.SelfComposedDpEvent(step, int(n_steps))


def _squared_distances(Z, centres):
    sq = (np.einsum("ij,ij->i", Z, Z)[:, None] - 2.0 * Z @ centres.T
          + np.einsum("ij,ij->i", centres, centres)[None, :])
    return np.maximum(sq, 0.0)


def _nearest(Z, centres, chunk=_CHUNK_ROWS):
    """Index of the nearest centre of each row, in chunks of rows (bounded memory)."""
    return np.concatenate([np.argmin(_squared_distances(Z[i:i + chunk], centres), axis=1)
                           for i in range(0, Z.shape[0], chunk)] or [np.zeros(0, dtype=int)])


def _noisy_lloyd_step(Z, centres, count_scale, sum_scale, draw):
    """Noisy counts and sums of the rows nearest to each centre (one private release)."""
    m, d = centres.shape
    nearest = _nearest(Z, centres)
    counts = np.bincount(nearest, minlength=m).astype(float)
    sums = np.zeros((m, d))
    for j in range(d):
        sums[:, j] = np.bincount(nearest, weights=Z[:, j], minlength=m)
    return counts + draw(0.0, count_scale, size=m), sums + draw(0.0, sum_scale, size=(m, d))


@fill_doc
class DPKMeans(DPEstimatorMixin, ClassNamePrefixFeaturesOutMixin, ClusterMixin,
               TransformerMixin, BaseEstimator):
    """k-means clustering with differentially private centres.

    The private counterpart of :class:`~sklearn.cluster.KMeans`. Features are
    clipped to public bounds. The fit runs Lloyd's algorithm with each step
    released privately (the noisy count and noisy sum of the rows nearest to
    each centre, as in the DPLloyd algorithm of Su et al. 2016), in two
    phases:

    1. *Coreset*: ``n_coreset`` centres drawn uniformly in the bounds,
       without looking at the data, move by ``coreset_iter`` private Lloyd
       steps. Their noisy counts and means are a small weighted summary of
       the data (cells whose noisy count is buried in noise are dropped).
       Weighted k-means++ with several restarts on this summary gives the
       ``n_clusters`` initial centres; it is post-processing and costs
       nothing (the idea of clustering a private summary is Su et al.'s
       (2016) grid-based EUGkM, here with a data-adapted summary that suits
       many features).
    2. *Refinement*: ``max_iter`` private Lloyd steps from those centres.

    All steps share the budget evenly (zCDP composition).

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters, public.
    %(epsilon)s
    delta : float or None, default=None
        Probability with which the epsilon bound may fail, in ``[0, 1)``.
        ``None`` means ``1 / n_samples^2``; a positive value uses Gaussian
        noise with zCDP composition over the steps, ``0`` the Laplace
        mechanism with basic composition (pure epsilon-DP, much more
        noise). The value used is stored in ``delta_``.
    bounds : array-like of shape (2,) or (n_features, 2) or None, default=None
        Public range of the features: one pair ``(low, high)`` for every
        feature, or one pair per feature, chosen without looking at the
        private data. Values outside are clipped. ``None`` reads the range
        from the training data, which leaks it (a
        :class:`~skdp.PrivacyLeakWarning`).
    max_iter : int or "auto", default="auto"
        Private Lloyd steps of the refinement phase. ``"auto"``: from public
        quantities only, through ``r = sigma_7 sqrt(d) k / n``, the typical
        noise (in half-widths of the bounds) on the mean of a cluster of
        average size when 7 steps share the budget (``sigma_7`` the noise on a
        coordinate of a sum then): 5 steps when ``r <= 0.5``, 3 when
        ``r <= 1``, 2 otherwise. Fewer steps mean less noise in each.
    coreset_iter : int or "auto", default="auto"
        Private Lloyd steps of the coreset phase. ``"auto"``: 2 when
        ``r <= 1``, else 1 (``r`` as for ``max_iter``).
    n_coreset : int or "auto", default="auto"
        Number of coreset cells. ``"auto"``: from public quantities only,
        ``n_samples / (sqrt(d) sigma)`` cells (``sigma`` the noise on a
        coordinate of a sum per step), so that the noisy mean of a cell of
        average size is about one half-width of the bounds off in L2 norm,
        kept between ``4 n_clusters`` and ``max(20 n_clusters, 200)``.
        With ``coreset_iter=0`` there is no coreset: the refinement starts
        from centres drawn uniformly in the bounds.
    n_init : int, default=1
        Only 1: every private restart would need its own share of the
        budget and a private choice between restarts. The restarts are
        made instead on the released coreset, where they cost nothing.
    %(random_state)s
    %(accountant)s

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Private centres, within the bounds.
    cluster_count_ : ndarray of shape (n_clusters,)
        Private (noisy) number of training rows of each cluster in the last
        step.
    n_coreset_ : int
        Number of coreset cells used (0 when the coreset was skipped).
    n_iter_ : int
        Number of private Lloyd steps (both phases), fixed in advance.
    labels_ : ndarray of shape (n_samples,)
        Nearest private centre of each training row. *Not private*: it is
        a per-row function of the training rows.
    inertia_ : float
        Sum of squared distances of the (clipped) training rows to their
        nearest centre. *Not private*.
    lower_, upper_ : ndarray of shape (n_features,)
        The bounds used.
    mechanism_ : {"gaussian", "laplace"}
        The noise used.
    noise_scales_ : tuple of float
        Noise on each count and each coordinate of each sum per step (values
        mapped onto ``[-1, 1]``).
    delta_ : float
        The delta used.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta_)``.
    privacy_event_ : dp_accounting.DpEvent
        The ``n_iter_`` Gaussian (Laplace when ``delta=0``) Lloyd steps.
        The event a tight :class:`~skdp.BudgetAccountant` composes.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names, when ``X`` has string column names.

    Privacy
    -------
    ``(epsilon, delta)``-differentially private for replace-one neighbours
    (two data sets of the same public size ``n_samples`` that differ in one
    row): the centres, counts and everything derived from them. Each
    private Lloyd step is one Gaussian release of the per-centre counts and
    sums, of L2 sensitivity ``2 sqrt(d)`` (``lloyd_noise_scales``), with
    ``rho / T``-zCDP for ``T = coreset_iter + max_iter`` steps, composed
    (Bun and Steinke 2016, Lemma 1.7) and converted to ``(epsilon, delta)``
    by Canonne, Kamath and Steinke (2020), Cor. 13; for ``delta = 0`` each
    step is a Laplace release with ``epsilon / T`` (basic composition). The
    initial coreset centres are drawn without the data; the k-means++
    restarts on the coreset, the dropping of noisy cells and the
    centre updates are post-processing. The guarantee needs public
    ``bounds``.
    %(non_private_diagnostics)s

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    sklearn.cluster.KMeans : The non-private model.

    Notes
    -----
    The user guide (Naive Bayes and k-means) has the derivation of the
    defaults and measurements.

    References
    ----------
    D. Su, J. Cao, N. Li, E. Bertino and H. Jin, "Differentially private k-means
    clustering", ACM CODASPY 2016.

    M. Bun and T. Steinke, "Concentrated differential privacy: simplifications,
    extensions, and lower bounds", TCC 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.cluster import DPKMeans
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0.2, 0.05, (5000, 2)), rng.normal(0.8, 0.05, (5000, 2))]
    >>> km = DPKMeans(n_clusters=2, epsilon=1.0, bounds=(0.0, 1.0), random_state=0).fit(X)
    >>> np.round(np.sort(km.cluster_centers_[:, 0]), 1)
    array([0.2, 0.8])
    """

    _non_private_attributes = ("labels_", "inertia_")

    def __init__(self, n_clusters=8, *, epsilon=1.0, delta=None, bounds=None, max_iter="auto",
                 coreset_iter="auto", n_coreset="auto", n_init=1, random_state=None,
                 accountant=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.max_iter = max_iter
        self.coreset_iter = coreset_iter
        self.n_coreset = n_coreset
        self.n_init = n_init
        self.random_state = random_state
        self.accountant = accountant

    def _noise_scales(self, n_features, n_steps, budget):
        """Mechanism and noise scales (a method so tests can under-noise a copy)."""
        return lloyd_noise_scales(n_features, n_steps, budget.epsilon, budget.delta)

    def _check_params(self):
        k = check_positive_int(self.n_clusters, "n_clusters")
        max_iter = (None if _is_auto(self.max_iter)
                    else check_positive_int(self.max_iter, "max_iter"))
        coreset_iter = (None if _is_auto(self.coreset_iter)
                        else check_positive_int(self.coreset_iter, "coreset_iter", low=0))
        if self.n_init != 1 or isinstance(self.n_init, bool):
            raise ValueError(
                f"DPKMeans supports only n_init=1 (got {self.n_init!r}): private restarts "
                "would each need their own budget; the restarts run on the released coreset "
                "instead, at no cost.")
        if not _is_auto(self.n_coreset):
            check_positive_int(self.n_coreset, "n_coreset")
        return k, max_iter, coreset_iter

    def _steps(self, n, d, k, budget, max_iter, coreset_iter):
        """``(coreset_iter, max_iter)``, each given or by the public rule (docstring)."""
        if max_iter is not None and coreset_iter is not None:
            return coreset_iter, max_iter
        # r: noise on the mean of a cluster of n / k rows, in half-widths, with 7 steps.
        sigma_7 = lloyd_noise_scales(d, _REFERENCE_STEPS, budget.epsilon, budget.delta)[2]
        r = sigma_7 * math.sqrt(d) * k / n
        if coreset_iter is None:
            coreset_iter = 2 if r <= 1.0 else 1
        if max_iter is None:
            max_iter = 5 if r <= 0.5 else 3 if r <= 1.0 else 2
        return coreset_iter, max_iter

    def _coreset_size(self, n, d, k, sum_scale):
        """Coreset cells, from public quantities (``n``, ``d``, ``k``, the noise)."""
        if isinstance(self.n_coreset, numbers.Integral):
            return int(self.n_coreset)
        cells = int(n / (_CELL_ROWS_PER_NOISE * math.sqrt(d) * sum_scale))
        return min(max(cells, 4 * k), max(20 * k, 200))

    def fit(self, X, y=None):
        """Spend the budget on private Lloyd steps and keep the centres.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (finite values), clipped to ``bounds``.
        y : None
            Ignored.

        Returns
        -------
        self : DPKMeans
        """
        X = validate_data(self, X, dtype=np.float64)
        k, max_iter, coreset_iter = self._check_params()
        n, d = X.shape
        if n < k:
            raise ValueError(f"n_samples={n} should be >= n_clusters={k}.")
        lower, upper = resolve_bounds(self.bounds, X, type(self).__name__)

        def default_delta(m):
            return 1.0 / m**2

        planned = self._resolve_budget(n, default_delta, allow_zero_delta=True)
        coreset_iter, max_iter = self._steps(n, d, k, planned, max_iter, coreset_iter)
        n_steps = coreset_iter + max_iter
        mechanism, count_scale, sum_scale = self._noise_scales(d, n_steps, planned)
        budget, rng = self._start_private_fit(
            n, default_delta=default_delta,
            event=lloyd_privacy_event(d, n_steps, mechanism, sum_scale))
        draw = rng.normal if mechanism == "gaussian" else rng.laplace

        centre, half_width = (upper + lower) / 2.0, (upper - lower) / 2.0
        Z = np.clip((np.clip(X, lower, upper) - centre) / half_width, -1.0, 1.0)
        min_count = _MIN_COUNT_IN_NOISE * count_scale * (1.0 if mechanism == "gaussian"
                                                         else math.sqrt(2.0))
        cells = self._coreset_size(n, d, k, sum_scale) if coreset_iter else k
        refine_steps = max_iter
        if cells > k:
            # Phase 1: a coreset of `cells` centres from uniform random starts.
            coreset = rng.uniform(-1.0, 1.0, size=(cells, d))
            for _ in range(coreset_iter):
                counts, sums = _noisy_lloyd_step(Z, coreset, count_scale, sum_scale, draw)
                coreset = _updated_centres(coreset, counts, sums, min_count)
            keep = counts >= min_count
            centres = _seed_from_coreset(coreset[keep], counts[keep], k, rng)
            self.n_coreset_ = cells
        else:
            # No room for a coreset: its steps go to the refinement.
            centres = rng.uniform(-1.0, 1.0, size=(k, d))
            refine_steps += coreset_iter
            self.n_coreset_ = 0
        # Phase 2: refinement.
        for _ in range(refine_steps):
            counts, sums = _noisy_lloyd_step(Z, centres, count_scale, sum_scale, draw)
            centres = _updated_centres(centres, counts, sums, min_count)

        self.cluster_centers_ = centre + half_width * centres
        self.cluster_count_ = np.maximum(counts, 0.0)
        self.n_iter_ = n_steps
        self.lower_, self.upper_ = lower, upper
        self.mechanism_ = mechanism
        self.noise_scales_ = (count_scale, sum_scale)
        self.delta_ = budget.delta
        self.privacy_spent_ = budget
        # Not private (per-row functions of the training rows): see the docstring.
        distances = self._squared_distances(X)
        self.labels_ = np.argmin(distances, axis=1)
        self.inertia_ = float(distances[np.arange(n), self.labels_].sum())
        return self

    @property
    def _n_features_out(self):
        return self.cluster_centers_.shape[0]

    def _squared_distances(self, X):
        return _squared_distances(np.clip(X, self.lower_, self.upper_), self.cluster_centers_)

    def _validate(self, X):
        check_is_fitted(self, "cluster_centers_")
        return validate_data(self, X, dtype=np.float64, reset=False)

    def predict(self, X):
        """Index of the nearest private centre of each row (clipped to the bounds).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        return np.argmin(self._squared_distances(self._validate(X)), axis=1)

    def transform(self, X):
        """Euclidean distance of each row (clipped to the bounds) to every centre.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        distances : ndarray of shape (n_samples, n_clusters)
        """
        return np.sqrt(self._squared_distances(self._validate(X)))

    def score(self, X, y=None):
        """Opposite of the k-means objective of ``X`` (clipped) with the private centres.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        score : float
            ``-sum_i min_k ||x_i - c_k||^2``.
        """
        return -float(np.min(self._squared_distances(self._validate(X)), axis=1).sum())


def _is_auto(value):
    return isinstance(value, str) and value == "auto"


def _updated_centres(centres, counts, sums, min_count):
    """Noisy means where the noisy count is above ``min_count``; the old centre elsewhere."""
    ok = counts >= min_count
    new = centres.copy()
    new[ok] = np.clip(sums[ok] / counts[ok, None], -1.0, 1.0)
    return new


def _seed_from_coreset(points, weights, k, rng):
    """``k`` centres by weighted k-means++ (several restarts) on the released coreset."""
    if points.shape[0] < k:
        extra = rng.uniform(-1.0, 1.0, size=(k - points.shape[0], points.shape[1]))
        return np.r_[points, extra]
    seed = int(rng.integers(2**31 - 1))
    km = KMeans(n_clusters=k, n_init=_CORESET_RESTARTS, random_state=seed)
    with warnings.catch_warnings():
        # Fewer distinct coreset points than k: KMeans says so; the padding is its own.
        warnings.simplefilter("ignore", ConvergenceWarning)
        km.fit(points, sample_weight=weights)
    return np.clip(km.cluster_centers_, -1.0, 1.0)
