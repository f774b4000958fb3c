"""The sparse vector technique (answer-above-threshold, stateful)."""

import math

from skdp.exceptions import SparseVectorExhaustedError
from skdp.utils._random import check_random_state
from skdp.utils._validation import (
    check_epsilon_delta,
    check_option,
    check_positive_int,
    check_real,
)

__all__ = ["SparseVector"]

CALIBRATIONS = ("thesis",)


class SparseVector:
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
        In ``(0, 1)`` for ``calibration='thesis'``.
    threshold : float
        The public threshold ``w``.
    cutoff : int
        ``T``, the number of below-threshold answers allowed, >= 1.
    sensitivity : float, default=1.0
        Global sensitivity of every query, > 0.
    calibration : {"thesis"}, default="thesis"
        ``"thesis"``: seed 004, Alg. 6 with ``lambda = sqrt(32 T ln(1/delta)) / epsilon``
        (times ``sensitivity``), threshold noise ``Lap(lambda)`` re-drawn after
        each below-threshold answer, query noise ``Lap(2 lambda)``.
    random_state : int, numpy.random.Generator or None, default=None
        Noise source; ``None`` (OS entropy) for real releases.

    Attributes
    ----------
    n_queries_ : int
        Queries answered so far.
    n_below_ : int
        Below-threshold answers given so far.

    Notes
    -----
    **Privacy.** ``(epsilon, delta)``-DP for the whole (adaptive) sequence of
    answers (seed 004, Thm. 3; Dwork, Rothblum and Vadhan 2010; Hardt and
    Rothblum 2010). The thesis' loop condition ``c <= T`` would allow a
    ``(T+1)``-th below-threshold answer; this class stops after ``T``, which is
    never less private.

    Examples
    --------
    >>> from skdp.mechanisms import SparseVector
    >>> sv = SparseVector(epsilon=1.0, delta=1e-6, threshold=0.0, cutoff=2, random_state=0)
    >>> sv.query(1e6)
    True
    """

    def __init__(self, *, epsilon, delta, threshold, cutoff, sensitivity=1.0,
                 calibration="thesis", random_state=None):
        self.epsilon, self.delta = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
        self.threshold = check_real(threshold, "threshold")
        self.cutoff = check_positive_int(cutoff, "cutoff")
        self.sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False)
        self.calibration = check_option(calibration, "calibration", CALIBRATIONS)
        self._rng = check_random_state(random_state)
        self.n_queries_ = 0
        self.n_below_ = 0
        self._noisy_threshold = self._draw_threshold()

    @property
    def noise_scale(self):
        """``lambda`` of seed 004, Alg. 6 line 1 (threshold scale; queries use ``2 lambda``)."""
        # Seed 004, Alg. 6, line 1: lambda = sqrt(32 T log(1/delta)) / epsilon.
        return self.sensitivity * math.sqrt(32.0 * self.cutoff * math.log(1.0 / self.delta)) / self.epsilon

    @property
    def exhausted(self):
        """Whether the below-threshold allowance is used up."""
        return self.n_below_ >= self.cutoff

    def _draw_threshold(self):
        return self.threshold + self._rng.laplace(0.0, self.noise_scale)

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
        if self.exhausted:
            raise SparseVectorExhaustedError(
                f"the sparse vector has given its {self.cutoff} below-threshold answers "
                "and refuses further queries."
            )
        value = check_real(value, "value")
        self.n_queries_ += 1
        # Seed 004, Alg. 6, line 3: query noise Lap(2 lambda).
        if value + self._rng.laplace(0.0, 2.0 * self.noise_scale) > self._noisy_threshold:
            return True
        self.n_below_ += 1
        # Alg. 6, line 4: re-draw the threshold noise after each "bottom".
        self._noisy_threshold = self._draw_threshold()
        return False
