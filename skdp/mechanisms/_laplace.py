"""The Laplace mechanism."""

import dp_accounting

from skdp.mechanisms._base import _AdditiveNoiseMechanism
from skdp.mechanisms._exponential import check_noise_scale
from skdp.utils._validation import check_real

__all__ = ["LaplaceMechanism", "laplace_scale"]


def laplace_scale(sensitivity, epsilon):
    """Scale of Laplace noise for epsilon-DP.

    Thakkar (2019), Lemma 2.1.8 (Dwork et al. 2006): a query with L1 sensitivity
    ``Delta`` plus i.i.d. ``Lap(b)`` noise with ``b = Delta / epsilon`` is
    epsilon-DP.

    Parameters
    ----------
    sensitivity : float
        L1 sensitivity, > 0.
    epsilon : float
        Privacy parameter, > 0.

    Returns
    -------
    scale : float
        The Laplace scale ``b``.

    Raises
    ------
    ValueError
        If ``b`` is not a positive normal float: a scale that rounds to 0 or
        to a subnormal makes the output (nearly) deterministic, and an
        infinite one gives NaN; no finite epsilon covers either.
    """
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False)
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    return check_noise_scale(sensitivity / epsilon)


class LaplaceMechanism(_AdditiveNoiseMechanism):
    """Add Laplace noise calibrated to an L1 sensitivity (pure epsilon-DP).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, > 0.
    sensitivity : float, default=1.0
        L1 sensitivity of the query, > 0.
    random_state : int, numpy.random.Generator or None, default=None
        Noise source; ``None`` (OS entropy) for real releases.

    Notes
    -----
    **Privacy.** ``epsilon``-DP for any neighbouring relation under which the
    query's L1 sensitivity is at most ``sensitivity`` (Thakkar (2019), Lemma 2.1.8).

    References
    ----------
    C. Dwork, F. McSherry, K. Nissim and A. Smith, "Calibrating noise to
    sensitivity in private data analysis", TCC 2006.

    O. Thakkar, "Advances in Privacy-Preserving Machine Learning", PhD thesis,
    Boston University, 2019.

    Examples
    --------
    >>> from skdp.mechanisms import LaplaceMechanism
    >>> mech = LaplaceMechanism(epsilon=1.0, sensitivity=2.0, random_state=0)
    >>> mech.scale
    2.0
    """

    @property
    def scale(self):
        """The Laplace scale ``sensitivity / epsilon``."""
        return laplace_scale(self._checked_sensitivity(), self.epsilon)

    @property
    def privacy_event(self):
        """What one call releases, as a ``dp_accounting.LaplaceDpEvent``.

        Its noise multiplier is ``scale / sensitivity`` (``1 / epsilon``). Pass
        it as the ``event`` of :meth:`skdp.BudgetAccountant.spend` so that a
        tight accountant composes the calls.
        """
        return dp_accounting.LaplaceDpEvent(self.scale / self._checked_sensitivity())

    def _noise(self, shape):
        return self._rng.laplace(0.0, self.scale, size=shape)
