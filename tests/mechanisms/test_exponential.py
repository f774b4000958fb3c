"""The exponential mechanism at extreme budgets."""

import pytest


def test_exponential_mechanism_refuses_a_factor_that_underflows_to_zero():
    # epsilon / (2 sensitivity) = 0 (1e-300 / 2e30): checking 1 / factor divided by zero.
    from skdp.mechanisms import exponential_mechanism
    with pytest.raises(ValueError, match="noise scale"):
        exponential_mechanism([1.0, 0.0], epsilon=1e-300, sensitivity=1e30, random_state=0)
