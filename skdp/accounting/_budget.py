"""The privacy budget value."""

from dataclasses import dataclass

from skdp.utils._validation import check_epsilon_delta

__all__ = ["PrivacyBudget"]


@dataclass(frozen=True)
class PrivacyBudget:
    """An immutable, validated ``(epsilon, delta)`` differential privacy budget.

    Adding two budgets is basic composition (Thakkar (2019), Lemma 2.1.5): running
    an ``(e1, d1)``-DP and an ``(e2, d2)``-DP mechanism on the same data is
    ``(e1 + e2, d1 + d2)``-DP.

    Parameters
    ----------
    epsilon : float
        Finite and > 0.
    delta : float, default=0.0
        In ``[0, 1)``.

    Examples
    --------
    >>> from skdp import PrivacyBudget
    >>> PrivacyBudget(0.5, 1e-6) + PrivacyBudget(0.25)
    PrivacyBudget(epsilon=0.75, delta=1e-06)
    """

    epsilon: float
    delta: float = 0.0

    def __post_init__(self):
        epsilon, delta = check_epsilon_delta(self.epsilon, self.delta)
        object.__setattr__(self, "epsilon", epsilon)
        object.__setattr__(self, "delta", delta)

    def __add__(self, other):
        if not isinstance(other, PrivacyBudget):
            return NotImplemented
        return PrivacyBudget(self.epsilon + other.epsilon, self.delta + other.delta)

    def __iter__(self):
        # Allows ``epsilon, delta = budget``.
        yield self.epsilon
        yield self.delta

    def split(self, k):
        """Divide the budget evenly into ``k`` parts that compose back to it.

        Parameters
        ----------
        k : int
            Number of parts, >= 1.

        Returns
        -------
        part : PrivacyBudget
            ``(epsilon / k, delta / k)``.
        """
        if int(k) != k or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}.")
        return PrivacyBudget(self.epsilon / k, self.delta / k)
