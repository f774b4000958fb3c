import numpy as np
import pytest

from skdp.testing import audit_epsilon, clopper_pearson


def test_clopper_pearson_known_values():
    # k = 0: the upper bound solves (1 - p)^n = alpha -> p = 1 - alpha^(1/n).
    lo, hi = clopper_pearson(0, 100, 0.05)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-9)
    lo, hi = clopper_pearson(100, 100, 0.05)
    assert hi == 1.0 and lo == pytest.approx(0.05 ** (1 / 100), rel=1e-9)
    lo, hi = clopper_pearson(50, 100, 0.025)
    assert lo < 0.5 < hi and hi - lo < 0.25


def test_audit_detects_a_non_private_mechanism():
    def leak(d, rng, n):
        return np.full(n, float(d))  # no noise at all

    res = audit_epsilon(leak, 0.0, 1.0, n_runs=2000, vectorized=True, random_state=0)
    assert res.epsilon_lower_bound > 5.0


def test_audit_of_identical_outputs_is_zero():
    def same(d, rng, n):
        return rng.normal(size=n)

    res = audit_epsilon(same, 0.0, 1.0, n_runs=5000, vectorized=True, random_state=0)
    assert res.epsilon_lower_bound < 0.2


def test_audit_loop_and_parallel_agree_in_kind():
    def lap(d, rng):
        return d + rng.laplace(0.0, 0.5)

    res = audit_epsilon(lap, 0.0, 1.0, n_runs=4000, random_state=0, n_jobs=2)
    assert 0.5 < res.epsilon_lower_bound <= 2.0  # true epsilon is 2


def test_audit_validates():
    with pytest.raises(ValueError, match="confidence"):
        audit_epsilon(lambda d, r: 0.0, 0, 1, confidence=1.0)
