"""The sparse vector technique (answer-above-threshold, stateful)."""

import functools
import math

from skdp.accounting import PrivacyBudget, advanced_composition
from skdp.base import refuse_unsafe_pickle
from skdp.exceptions import SparseVectorExhaustedError
from skdp.mechanisms._base import _LockedState
from skdp.mechanisms._exponential import check_noise_scale
from skdp.utils._random import check_random_state
from skdp.utils._validation import (
    check_epsilon_delta,
    check_option,
    check_positive_int,
    check_real,
)

__all__ = ["SparseVector", "sparse_vector_scales"]

CALIBRATIONS = ("thesis", "lyu")


def _thesis_calibration_is_proved(epsilon, delta, cutoff):
    """Whether Thakkar's (2019) Thm. 3 holds for Alg. 6's ``lambda`` at these parameters.

    Between two "bottom" answers, Alg. 6 is AboveThreshold with threshold noise
    ``Lap(lambda)`` and query noise ``Lap(2 lambda)``, which is
    ``eps0 = 2 / lambda = epsilon / sqrt(8 T ln(1/delta))``-DP (Dwork and Roth
    2014, Sec. 3.6, AboveThreshold with ``lambda = 2 / eps0``), and there are at
    most ``T`` such runs. Basic composition (Thakkar 2019, Lemma 2.1.5) gives
    ``T eps0 = epsilon sqrt(T / (8 ln(1/delta)))``: enough for every epsilon when
    ``T <= 8 ln(1/delta)``. Otherwise advanced composition (Lemma 2.1.6, at
    ``delta' = delta``) gives ``epsilon / 2 + T eps0 tanh(eps0 / 2)``, which is
    ``<= epsilon`` iff ``epsilon <= sqrt(8 T ln(1/delta)) ln((1 + s) / (1 - s))``
    with ``s = sqrt(2 ln(1/delta) / T)``: about ``8 ln(1/delta)`` (110 at
    ``delta = 1e-6``) for large ``T``. Above it the claim is not proved, and it
    is false far above (see ``tests/mechanisms/test_mechanisms.py``).
    """
    eps0 = epsilon / math.sqrt(-8.0 * cutoff * math.log(delta))
    if cutoff * eps0 <= epsilon:
        return True
    if eps0 > 700.0:  # exp would overflow; the bound is then basic composition, > epsilon
        return False
    bound = advanced_composition([PrivacyBudget(eps0, 0.0)] * cutoff, delta).epsilon
    return bound <= epsilon


@functools.lru_cache(maxsize=256)  # pure; called on every query
def sparse_vector_scales(epsilon, delta, cutoff, sensitivity=1.0, calibration="lyu"):
    """Laplace scales of the sparse vector technique under a calibration.

    Parameters
    ----------
    epsilon : float
        Total privacy parameter, > 0.
    delta : float
        In ``(0, 1)`` for ``"thesis"``; unused by ``"lyu"`` (pure DP).
    cutoff : int
        ``T`` (Lyu et al.'s ``c``): the number of below-threshold answers allowed.
    sensitivity : float, default=1.0
        Global sensitivity ``Delta`` of every query.
    calibration : {"lyu", "thesis"}, default="lyu"
        See :class:`SparseVector`.

    Returns
    -------
    threshold_scale : float
        Scale of the Laplace noise added to the threshold.
    query_scale : float
        Scale of the Laplace noise added to each query value.
    redraw : bool
        Whether the threshold noise is drawn again after each below-threshold answer.

    Raises
    ------
    ValueError
        If a scale is 0, subnormal or infinite (``epsilon`` too large or too
        small for ``sensitivity``): the comparison would be (nearly)
        deterministic, which no finite epsilon covers.

    Examples
    --------
    >>> from skdp.mechanisms import sparse_vector_scales
    >>> thr, query, redraw = sparse_vector_scales(1.0, 0.0, 1, calibration="lyu")
    >>> round(thr, 3), round(query, 3), redraw
    (2.587, 3.26, False)
    """
    calibration = check_option(calibration, "calibration", CALIBRATIONS)
    epsilon, delta = check_epsilon_delta(epsilon, delta, allow_zero_delta=calibration == "lyu")
    cutoff = check_positive_int(cutoff, "cutoff")
    # Checked here, not only in SparseVector.__init__: the scales are recomputed from the
    # object's attributes on every query (0 would mean no noise at all).
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False)
    threshold_scale, query_scale, redraw = _scales(epsilon, delta, cutoff, sensitivity,
                                                   calibration)
    return check_noise_scale(threshold_scale), check_noise_scale(query_scale), redraw


def _scales(epsilon, delta, cutoff, sensitivity, calibration):
    """The scales of :func:`sparse_vector_scales`, for validated parameters."""
    if calibration == "thesis":
        if not _thesis_calibration_is_proved(epsilon, delta, cutoff):
            raise ValueError(
                f"calibration='thesis' is not proved (epsilon, delta)-DP at epsilon={epsilon}, "
                f"delta={delta} with cutoff={cutoff} > 8 ln(1/delta): the composition bound "
                "over its cutoff segments exceeds epsilon (Thakkar 2019, Thm. 3 rests on advanced "
                "composition). Use calibration='lyu' (pure epsilon-DP for every epsilon), a "
                "smaller epsilon or a smaller cutoff."
            )
        # Thakkar (2019), Alg. 6, line 1: lambda = sqrt(32 T log(1/delta)) / epsilon; threshold
        # noise Lap(lambda), query noise Lap(2 lambda) (line 3), threshold re-drawn (line 4).
        lam = sensitivity * math.sqrt(-32.0 * cutoff * math.log(delta)) / epsilon
        return lam, 2.0 * lam, True
    # Lyu, Su and Li (2017), Sec. 4, Alg. 7 (non-monotonic queries): threshold noise
    # Lap(Delta / eps1) drawn once, query noise Lap(2 c Delta / eps2), eps1 + eps2 = epsilon,
    # with the split eps1 : eps2 = 1 : (2c)^(2/3) that minimises the comparison noise.
    eps1 = epsilon / (1.0 + (2.0 * cutoff) ** (2.0 / 3.0))
    eps2 = epsilon - eps1
    return sensitivity / eps1, 2.0 * cutoff * sensitivity / eps2, False


class SparseVector(_LockedState):
    """Online sparse vector technique: pay only for below-threshold answers.

    Each call to :meth:`query` compares a noisy query value with a noisy
    threshold and returns ``True`` (above, "top") or ``False`` (below,
    "bottom"). Only "bottom" answers cost privacy: after ``cutoff`` of them the
    object refuses every further query with
    :class:`~skdp.exceptions.SparseVectorExhaustedError`.

    Parameters
    ----------
    epsilon : float
        Total privacy parameter, > 0.
    delta : float
        In ``(0, 1)`` for ``calibration='thesis'``; unused (may be 0) for
        ``calibration='lyu'``, which is pure DP.
    threshold : float
        The public threshold ``w``.
    cutoff : int
        ``T``, the number of below-threshold answers allowed, >= 1.
    sensitivity : float, default=1.0
        Global sensitivity of every query, > 0.
    calibration : {"lyu", "thesis"}, default="lyu"
        ``"lyu"``: Lyu, Su and Li (2017), Alg. 7, pure ``epsilon``-DP. The
        threshold noise ``Lap(sensitivity / eps1)`` is drawn once, each query
        gets ``Lap(2 T sensitivity / eps2)``, with ``eps1 + eps2 = epsilon``
        split ``1 : (2T)^(2/3)``; ``delta`` is unused.
        ``"thesis"``: Thakkar (2019), Alg. 6 with ``lambda = sqrt(32 T ln(1/delta)) / epsilon``
        (times ``sensitivity``), threshold noise ``Lap(lambda)`` re-drawn after
        each below-threshold answer, query noise ``Lap(2 lambda)``;
        ``(epsilon, delta)``-DP. Refused (``ValueError``) where that is not
        proved: ``cutoff > 8 ln(1/delta)`` and ``epsilon`` above about
        ``8 ln(1/delta)`` (110 at ``delta = 1e-6``), see Notes.
        The ``"lyu"`` noise grows like ``T`` instead of
        ``sqrt(T ln(1/delta))``, but without the constant 32: at
        ``delta = 1e-6`` its query noise is the smaller one up to ``T`` of
        about 400 (5.9 times smaller at ``T = 10``, 13 times at ``T = 1``;
        see :func:`sparse_vector_scales`).
    random_state : int, numpy.random.Generator or None, default=None
        Noise source; ``None`` (OS entropy) for real releases.
    allow_pickle : bool, default=False
        Whether the object may be pickled or copied (``pickle``,
        ``joblib.dump``, ``copy.copy``, ``copy.deepcopy``). A copy holds the
        secret noisy threshold and the generator's state, and gets its own
        allowance of ``cutoff`` below-threshold answers: two copies would
        answer ``2 cutoff`` of them with correlated noise, beyond the
        guarantee. Refused unless this is the bool ``True``, which may be set
        on the object at any time (to persist a session in storage as private
        as the data, resumed from one copy only).

    Attributes
    ----------
    n_queries_ : int
        Queries answered so far.
    n_below_ : int
        Below-threshold answers given so far.

    Notes
    -----
    **Privacy.** ``"thesis"``: ``(epsilon, delta)``-DP for the whole (adaptive)
    sequence of answers (Thakkar 2019, Thm. 3; Dwork, Rothblum and Vadhan 2010;
    Hardt and Rothblum 2010). Thakkar's (2019) loop condition ``c <= T`` would allow
    a ``(T+1)``-th below-threshold answer; this class stops after ``T``, which
    is never less private. Thm. 3 rests on advanced composition over the
    ``T`` AboveThreshold runs, each ``eps0 = 2 / lambda``-DP; its drift term
    ``T eps0 tanh(eps0 / 2)`` stays below ``epsilon / 2`` only up to
    ``epsilon = sqrt(8 T L) ln((1 + s) / (1 - s))``, ``L = ln(1/delta)``,
    ``s = sqrt(2 L / T)``, unless ``T <= 8 L`` (then basic composition covers
    every epsilon). Beyond it the calibration is refused: the claim is
    unproved there and false far beyond (at ``epsilon = 1e4``, ``delta = 0.1``,
    ``T = 1000``, ``T`` bottoms have probability 0.89 on one neighbour and
    ``e^-10168`` on the other). ``"lyu"``: ``epsilon``-DP (Lyu, Su and Li 2017,
    privacy theorem of Alg. 7, proved for any sequence of adaptively chosen
    queries of sensitivity ``Delta``, counting at most ``c`` answers of one
    kind; here the counted kind is "below", which is the same algorithm
    applied to the negated queries and threshold).

    References
    ----------
    M. Lyu, D. Su and N. Li. Understanding the sparse vector technique for
    differential privacy. Proc. VLDB Endowment 10(6), 637-648, 2017.

    Examples
    --------
    >>> from skdp.mechanisms import SparseVector
    >>> sv = SparseVector(epsilon=1.0, delta=1e-6, threshold=0.0, cutoff=2, random_state=0)
    >>> sv.query(1e6)
    True
    """

    def __init__(self, *, epsilon, delta, threshold, cutoff, sensitivity=1.0,
                 calibration="lyu", random_state=None, allow_pickle=False):
        self.calibration = check_option(calibration, "calibration", CALIBRATIONS)
        self.epsilon, self.delta = check_epsilon_delta(
            epsilon, delta, allow_zero_delta=self.calibration == "lyu")
        self.threshold = check_real(threshold, "threshold")
        self.cutoff = check_positive_int(cutoff, "cutoff")
        self.sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False)
        self._rng = check_random_state(random_state)
        self.allow_pickle = allow_pickle
        self.n_queries_ = 0
        self.n_below_ = 0
        self._noisy_threshold = self._draw_threshold()
        self._init_lock()

    def __getstate__(self):
        # Also reached by copy.copy, copy.deepcopy and joblib.dump: a copy would fork the
        # session (same noisy threshold and noise stream, a fresh allowance).
        refuse_unsafe_pickle(self, "the secret noisy threshold and the noise generator's "
                                   "state")
        return super().__getstate__()

    def _scales(self):
        return sparse_vector_scales(self.epsilon, self.delta, self.cutoff, self.sensitivity,
                                    self.calibration)

    @property
    def threshold_scale(self):
        """Scale of the threshold's Laplace noise."""
        return self._scales()[0]

    @property
    def query_scale(self):
        """Scale of each query's Laplace noise."""
        return self._scales()[1]

    @property
    def noise_scale(self):
        """Thakkar's (2019) ``lambda`` (Alg. 6, line 1): the threshold scale."""
        return self.threshold_scale

    @property
    def exhausted(self):
        """Whether the below-threshold allowance is used up."""
        return self.n_below_ >= self.cutoff

    def _draw_threshold(self):
        return self.threshold + self._rng.laplace(0.0, self.threshold_scale)

    def query(self, value):
        """Answer whether ``value`` (an exact query answer) is above the threshold.

        Parameters
        ----------
        value : float
            The exact value of a query with the declared sensitivity.

        Returns
        -------
        above : bool
            ``True`` for "top" (free), ``False`` for "bottom" (spends budget).
        """
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"value must be finite, got {value}.")
        # The allowance check and the count are one step: concurrent queries (an online
        # service) all passed the check before any counted, giving more than cutoff bottoms.
        with self._lock:
            return self._query(value)

    def _query(self, value):
        if self.exhausted:
            raise SparseVectorExhaustedError(
                f"the sparse vector has given its {self.cutoff} below-threshold answers "
                "and refuses further queries."
            )
        redraw = self._scales()[2]  # also validates the parameters, before the query counts
        self.n_queries_ += 1
        if value + self._rng.laplace(0.0, self.query_scale) > self._noisy_threshold:
            return True
        self.n_below_ += 1
        if redraw:
            # Thakkar (2019), Alg. 6, line 4: re-draw the threshold noise after each "bottom"
            # (Lyu et al.'s Alg. 7 keeps its single threshold draw).
            self._noisy_threshold = self._draw_threshold()
        return False
