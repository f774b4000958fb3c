"""Shared plumbing of the noise-adding mechanisms."""

import threading

import numpy as np

from skdp.utils._random import check_random_state
from skdp.utils._validation import check_real

__all__ = ["_AdditiveNoiseMechanism", "_LockedState"]


class _LockedState:
    """Holds a ``threading.Lock`` in ``_lock``; pickles and copies get a fresh one.

    For stateful mechanisms whose allowance check and count must be one step
    when several threads query them (an online service).
    """

    def _init_lock(self):
        self._lock = threading.Lock()

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_lock", None)  # a lock does not pickle
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._init_lock()


class _AdditiveNoiseMechanism:
    """Base of mechanisms that release ``value + noise``.

    Parameters are stored unchanged and every derived quantity (the noise
    scale) is a property recomputed on access, so changing ``epsilon`` after
    construction can never leave a stale, smaller noise scale behind.
    """

    def __init__(self, *, epsilon, sensitivity=1.0, random_state=None):
        self.epsilon = epsilon
        self.sensitivity = sensitivity
        self.random_state = random_state
        self._rng = check_random_state(random_state)

    def __getstate__(self):
        state = self.__dict__.copy()
        if self.random_state is None:
            # A copy (pickle, deepcopy, joblib worker) must not replay this generator's
            # noise: equal noise on two releases gives away the exact difference of the
            # two answers. It draws fresh OS entropy instead.
            state.pop("_rng", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if "_rng" not in state:
            self._rng = check_random_state(None)

    def _checked_sensitivity(self):
        return check_real(self.sensitivity, "sensitivity", low=0.0, low_inclusive=False)

    def _noise(self, shape):
        raise NotImplementedError

    def __call__(self, value):
        """Return ``value`` plus freshly drawn noise (same shape as ``value``).

        Parameters
        ----------
        value : float or array-like
            The exact query answer.

        Returns
        -------
        noisy : float or ndarray
            The released, noisy answer.
        """
        value = np.asarray(value, dtype=float)
        noisy = value + self._noise(value.shape)
        return float(noisy) if noisy.ndim == 0 else noisy
