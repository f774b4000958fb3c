"""The stable-vote release calibrations (Lyu and thesis thresholds) at extreme budgets."""

import pytest

from skdp.ensemble._stability import laplace_difference_sf, release_calibration


@pytest.mark.parametrize("epsilon", [1e-300, 1e-200, 1e200, 1e300])
def test_lyu_release_threshold_scales_as_one_over_epsilon_at_extremes(epsilon):
    # The Lyu threshold solves P[Lap(q) - Lap(t) > w] = delta / m~ with both scales
    # proportional to 1 / epsilon, so w * epsilon is the same at every epsilon. The closed
    # form squared the scales (overflow at 1e-200: brentq saw NaN; underflow at 1e200:
    # ZeroDivisionError), so valid budgets crashed with an unclear error.
    from skdp.ensemble._stability import laplace_difference_sf, release_calibration
    _, thr_1, query_1, w_1 = release_calibration(1.0, 1e-6, 10, 1000, "lyu")
    _, thr, query, w = release_calibration(epsilon, 1e-6, 10, 1000, "lyu")
    assert w * epsilon == pytest.approx(w_1, rel=1e-9)
    assert laplace_difference_sf(w, query, thr) <= 1e-9
    assert laplace_difference_sf(w / (1 + 1e-6), query, thr) > 1e-9  # tight, not just large


def test_thesis_release_threshold_is_finite_at_tiny_delta():
    # w = 2 lambda ln(2 m~ / delta) (seed 004, Alg. 8 line 1): 2 m~ / delta overflowed to
    # inf at delta = 1e-320, so w = inf (no vote could ever be answered) and "auto" failed
    # with "cannot convert float infinity to integer".
    import math
    from skdp.ensemble._stability import release_calibration
    _, thr, _, w = release_calibration(1.0, 1e-320, 10, 1000, "thesis")
    assert w == pytest.approx(2 * thr * (math.log(2000) - math.log(1e-320)), rel=1e-12)


@pytest.mark.parametrize("epsilon, delta, cutoff, max_queries",
                         [(1.0, 1e-30, 3, 10), (0.3, 1e-6, 1, 1), (10.0, 1e-12, 100, 10**6),
                          (1e-6, 1e-2, 3, 10)])
def test_lyu_release_threshold_is_never_below_its_quantile(epsilon, delta, cutoff, max_queries):
    # The threshold w must satisfy P[Lap(query) - Lap(threshold) > w] <= delta / m~.
    # Before the fix it came from brentq's tolerance on either side of the root:
    # 1 + 1.6e-8 times delta / m~ at (1, 1e-30, 3, 10).
    _, thr, query, w = release_calibration(epsilon, delta, cutoff, max_queries, "lyu")
    # With these scales (ratio >= 2^(1/3)) the closed form is accurate to ~1e-14.
    assert laplace_difference_sf(w, query, thr) <= delta / max_queries * (1 + 1e-12)
