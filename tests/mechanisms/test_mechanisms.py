import math
import warnings

import dp_accounting
import numpy as np
import pytest

from _delta_reference import log_shifted_delta_by_quadrature
from skdp.exceptions import SparseVectorExhaustedError
from skdp.mechanisms import (
    GaussianMechanism,
    LaplaceMechanism,
    SparseVector,
    exponential_mechanism,
    gaussian_delta_analytic,
    gaussian_sigma,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
    gaussian_sigma_thesis,
    laplace_scale,
    report_noisy_max,
    sparse_vector_scales,
)
from skdp.testing import audit_epsilon, mechanism_audit_cases


def test_laplace_scale_hand_computed():
    assert laplace_scale(2.0, 0.5) == 4.0
    mech = LaplaceMechanism(epsilon=0.5, sensitivity=2.0, random_state=0)
    assert mech.scale == 4.0
    # The scale is never cached: changing epsilon changes the noise.
    mech.epsilon = 2.0
    assert mech.scale == 1.0
    draws = LaplaceMechanism(epsilon=1.0, sensitivity=3.0, random_state=1)(np.zeros(200_000))
    assert np.mean(np.abs(draws)) == pytest.approx(3.0, rel=0.02)  # E|Lap(b)| = b


@pytest.mark.parametrize("sensitivity, epsilon", [(1e-20, 1e300), (1e300, 1e-300), (1.0, 1e308 * 10)])
def test_laplace_scale_out_of_the_normal_floats_is_refused(sensitivity, epsilon):
    # A scale that rounds to 0 or a subnormal gives (nearly) deterministic output, and an
    # infinite one NaN: no finite epsilon covers either (review s19).
    with pytest.raises(ValueError):
        laplace_scale(sensitivity, epsilon)
    with pytest.raises(ValueError):
        LaplaceMechanism(epsilon=epsilon, sensitivity=sensitivity, random_state=0)(np.zeros(3))


def test_gaussian_calibrations_hand_computed():
    # classic: sqrt(2 ln(1.25 / 1e-5)) / 0.5 = sqrt(23.47242) * 2 = 9.689611
    assert gaussian_sigma_classic(1.0, 0.5, 1e-5) == pytest.approx(9.689611, abs=1e-6)
    # thesis (seed 004 Lemma 2.1.9): 2 * (1 + sqrt(2 ln 1e6)) / 1 = 2 * 6.256522 = 12.513044
    assert gaussian_sigma_thesis(2.0, 1.0, 1e-6) == pytest.approx(12.513044, abs=1e-6)
    with pytest.raises(ValueError, match="epsilon < 1"):
        gaussian_sigma_classic(1.0, 1.0, 1e-5)
    assert gaussian_sigma(1.0, 0.5, 1e-5, "classic") == gaussian_sigma_classic(1.0, 0.5, 1e-5)
    with pytest.raises(ValueError, match="calibration"):
        gaussian_sigma(1.0, 0.5, 1e-5, "loose")


@pytest.mark.parametrize("epsilon,delta", [(0.05, 1e-5), (0.5, 1e-6), (1.0, 1e-5),
                                           (4.0, 1e-3), (20.0, 1e-10)])
def test_analytic_gaussian_matches_dp_accounting(epsilon, delta):
    ours = gaussian_sigma_analytic(1.0, epsilon, delta)
    theirs = dp_accounting.get_sigma_gaussian(epsilon, delta)
    assert ours == pytest.approx(theirs, rel=1e-6)
    assert gaussian_sigma_analytic(3.0, epsilon, delta) == pytest.approx(3 * ours, rel=1e-12)
    # Never under-shoots: the exact delta at the returned sigma is <= the target.
    assert gaussian_delta_analytic(1.0, ours, epsilon) <= delta
    assert gaussian_delta_analytic(1.0, 0.99 * ours, epsilon) > delta


@pytest.mark.parametrize("epsilon", [1e-14, 1e-10, 1e-6, 1e-4, 0.01, 1.0, 100.0])
@pytest.mark.parametrize("delta", [1e-20, 1e-10, 1e-3])
def test_analytic_gaussian_never_under_noises_through_rounding(epsilon, delta):
    # Balle and Wang's delta = Phi(a) - e^eps Phi(b) loses its digits where the two
    # terms nearly cancel (small epsilon); an under-stated delta means too little
    # noise. The true delta at the returned sigma, computed without cancellation,
    # must not exceed the target (it was 31 times it at epsilon = 1e-14), and the
    # calibration must stay tight (within 1e-5) where it is meaningful.
    sigma = gaussian_sigma_analytic(2.0, epsilon, delta)
    u = 2.0 / sigma
    ratio = math.exp(log_shifted_delta_by_quadrature(u, u * u / 2, epsilon) - math.log(delta))
    assert ratio <= 1 + 1e-11
    if epsilon >= 1e-4:
        assert ratio >= 1 - 1e-5
    assert gaussian_delta_analytic(2.0, sigma, epsilon) >= delta * ratio * (1 - 1e-12)


@pytest.mark.parametrize("epsilon", [1e12, 1e30, 1e153, 1e154, 1e200,
                                     1e300, np.finfo(float).max])
@pytest.mark.parametrize("delta", [1e-300, 1e-5, 0.5 - 1e-12, 0.5, 0.5 + 1e-12, 0.9])
def test_analytic_gaussian_at_huge_epsilon(epsilon, delta):
    # Balle and Wang's delta(s) <= Q(epsilon s - 1/(2 s)) for s = sigma / Delta (the
    # subtracted term is >= 0). The returned sigma must satisfy it, with the margin
    # computed exactly (rational arithmetic: the two terms of z cancel to ~1e-300
    # relative at epsilon = 1e300), and stay within 1e-11 of the asymptote
    # 1 / sqrt(2 epsilon) (the exact root is above it by a relative |z_delta| / sqrt(2 eps)).
    # The root finder used to overflow (NaN) from epsilon ~ 1e154.
    from fractions import Fraction
    from scipy import special

    sigma = gaussian_sigma_analytic(1.0, epsilon, delta)
    s = Fraction(sigma)
    z = float(Fraction(epsilon) * s - 1 / (2 * s))
    assert special.log_ndtr(-z) <= math.log(delta)
    asymptote = 1.0 / (math.sqrt(2.0) * math.sqrt(epsilon))
    assert sigma / asymptote - 1 < 1e-11 + 40 * asymptote
    assert gaussian_sigma_analytic(4.0, epsilon, delta) == pytest.approx(4 * sigma, rel=1e-15)


def test_analytic_gaussian_is_continuous_across_its_large_epsilon_switch():
    # Below 1e12 the exact root finder, from 1e12 the tail bound: the two agree to 1e-12.
    below = gaussian_sigma_analytic(1.0, math.nextafter(1e12, 0.0), 1e-5)
    assert gaussian_sigma_analytic(1.0, 1e12, 1e-5) == pytest.approx(below, rel=2e-12)
    assert gaussian_sigma_analytic(1.0, 1e12, 1e-5) >= below


def test_analytic_gaussian_refuses_a_sigma_that_underflows():
    with pytest.raises(ValueError, match="smallest normal float"):
        gaussian_sigma_analytic(1e-300, 1e300, 1e-5)
    with pytest.raises(ValueError, match="smallest normal float"):
        gaussian_sigma_analytic(1e-307, 1e3, 1e-5)


@pytest.mark.parametrize("epsilon", [1e100, 1e160, 1e300])
def test_gaussian_profile_stays_defined_at_huge_epsilon(epsilon):
    # log delta used to be NaN (inf - inf) or raise OverflowError (scale**2) there, so the
    # thesis calibration's own check could not refuse an under-noised sigma.
    with pytest.raises(ValueError, match="analytic"):
        gaussian_sigma_thesis(1.0, epsilon, 1e-5)
    sigma = gaussian_sigma_analytic(1.0, epsilon, 1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gaussian_delta_analytic(1.0, 1e-3 * sigma, epsilon) == 1.0
        assert gaussian_delta_analytic(1.0, 2.0 * sigma, epsilon) == 0.0


def test_thesis_calibration_refuses_where_lemma_2_1_9_fails():
    # At epsilon = 20, delta = 1e-4 the thesis sigma (1 + sqrt(2 ln 1e4)) / 20 = 0.26459
    # has an exact delta above 1e-4.
    sigma = (1 + math.sqrt(2 * math.log(1e4))) / 20
    assert gaussian_delta_analytic(1.0, sigma, 20.0) > 1e-4
    with pytest.raises(ValueError, match="analytic"):
        gaussian_sigma_thesis(1.0, 20.0, 1e-4)
    assert gaussian_sigma_thesis(1.0, 10.0, 1e-4) == pytest.approx(
        (1 + math.sqrt(2 * math.log(1e4))) / 10)


def test_analytic_is_tighter_than_the_bounds():
    for eps in (0.1, 0.5, 0.9):
        a = gaussian_sigma_analytic(1.0, eps, 1e-5)
        assert a < gaussian_sigma_classic(1.0, eps, 1e-5)
        assert a < gaussian_sigma_thesis(1.0, eps, 1e-5)


def test_gaussian_mechanism_noise_has_the_right_spread():
    mech = GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=2.0, random_state=0)
    draws = mech(np.zeros(200_000))
    assert np.std(draws) == pytest.approx(mech.sigma, rel=0.01)
    assert isinstance(mech(0.0), float)


@pytest.mark.parametrize("kwargs,match", [
    (dict(epsilon=0.0, delta=1e-5), "epsilon"),
    (dict(epsilon=-1.0, delta=1e-5), "epsilon"),
    (dict(epsilon=math.inf, delta=1e-5), "epsilon"),
    (dict(epsilon=math.nan, delta=1e-5), "epsilon"),
    (dict(epsilon=1.0, delta=0.0), "delta"),
    (dict(epsilon=1.0, delta=1.0), "delta"),
    (dict(epsilon=1.0, delta=-0.1), "delta"),
])
def test_gaussian_rejects_bad_budgets(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GaussianMechanism(sensitivity=1.0, **kwargs).sigma


def test_exponential_mechanism_samples_the_exact_distribution():
    rng = np.random.default_rng(0)
    u = np.array([0.0, 1.0, 2.0])
    picks = np.bincount([exponential_mechanism(u, epsilon=2.0, random_state=rng)
                         for _ in range(30_000)], minlength=3) / 30_000
    expected = np.exp(u * 2.0 / 2.0) / np.exp(u * 2.0 / 2.0).sum()
    np.testing.assert_allclose(picks, expected, atol=0.012)
    # monotonic=True doubles the exponent.
    picks_mono = np.bincount([exponential_mechanism(u, epsilon=1.0, monotonic=True,
                                                    random_state=rng)
                              for _ in range(30_000)], minlength=3) / 30_000
    np.testing.assert_allclose(picks_mono, np.exp(u) / np.exp(u).sum(), atol=0.012)


def test_selection_is_exact_for_large_scores():
    # Only differences of scores matter. Noise added to scores of size 2^53 was rounded to
    # their spacing (2): ties went to the first index, e.g. 0.31 / 0.55 / 0.14 for
    # exponential_mechanism([C, C + 2, C], epsilon=1) instead of 0.21 / 0.58 / 0.21.
    rng = np.random.default_rng(1)
    big = 2.0**53
    u = np.array([0.0, 2.0, 0.0])
    picks = np.bincount([exponential_mechanism(big + u, epsilon=1.0, random_state=rng)
                         for _ in range(6000)], minlength=3) / 6000
    np.testing.assert_allclose(picks, np.exp(u / 2) / np.exp(u / 2).sum(), atol=0.03)
    picks = np.bincount([report_noisy_max([big, big], epsilon=2.0, random_state=rng)
                         for _ in range(6000)], minlength=2) / 6000
    np.testing.assert_allclose(picks, [0.5, 0.5], atol=0.03)


def test_selection_rejects_bad_scores():
    with pytest.raises(ValueError, match="finite"):
        report_noisy_max([0.0, np.nan], epsilon=1.0)
    with pytest.raises(ValueError, match="1-D"):
        exponential_mechanism([], epsilon=1.0)


def test_report_noisy_max_picks_a_clear_winner():
    assert report_noisy_max([0.0, 1000.0, 0.0], epsilon=1.0, random_state=0) == 1


def test_sparse_vector_scale_and_cutoff():
    sv = SparseVector(epsilon=2.0, delta=1e-6, threshold=0.0, cutoff=4, calibration="thesis",
                      random_state=0)
    # Seed 004 Alg. 6: lambda = sqrt(32 * 4 * ln(1e6)) / 2 = sqrt(1768.385) / 2 = 21.0261
    assert sv.noise_scale == pytest.approx(21.0261, abs=1e-4)
    assert sv.query(1e9) is True  # far above: free
    assert sv.n_below_ == 0
    answers = [sv.query(-1e9) for _ in range(4)]  # far below: each costs
    assert answers == [False] * 4
    assert sv.exhausted
    with pytest.raises(SparseVectorExhaustedError):
        sv.query(1e9)
    assert sv.n_queries_ == 5


def test_sparse_vector_validates():
    with pytest.raises(ValueError, match="cutoff"):
        SparseVector(epsilon=1.0, delta=1e-6, threshold=0.0, cutoff=0)
    with pytest.raises(ValueError, match="delta"):
        SparseVector(epsilon=1.0, delta=0.0, threshold=0.0, cutoff=1, calibration="thesis")


def test_sparse_vector_checks_its_sensitivity_on_every_query():
    # Parameters are re-read on every query (no stale noise scale), so they must be checked
    # there too: sensitivity = 0 gave noise scale 0, a noiseless comparison with the threshold.
    with pytest.raises(ValueError, match="sensitivity"):
        sparse_vector_scales(1.0, 0.0, 1, sensitivity=0.0, calibration="lyu")
    sv = SparseVector(epsilon=1.0, delta=1e-6, threshold=0.0, cutoff=2, random_state=0)
    sv.sensitivity = 0.0
    with pytest.raises(ValueError, match="sensitivity"):
        sv.query(0.0)
    assert sv.n_queries_ == 0  # refused before it counts


def test_sparse_vector_lyu_scales_and_single_threshold():
    sv = SparseVector(epsilon=2.0, delta=0.0, threshold=0.0, cutoff=4, calibration="lyu",
                      random_state=0)
    # Lyu, Su and Li (2017), Alg. 7 with eps1 : eps2 = 1 : (2c)^(2/3):
    # eps1 = 2 / (1 + 8^(2/3)) = 0.4, eps2 = 1.6: threshold Lap(2.5), queries Lap(2*4/1.6) = Lap(5)
    assert sv.threshold_scale == pytest.approx(2.5)
    assert sv.query_scale == pytest.approx(5.0)
    noisy = sv._noisy_threshold
    assert sv.query(-1e9) is False
    assert sv._noisy_threshold == noisy  # Lyu et al. draw the threshold once
    thesis = SparseVector(epsilon=2.0, delta=1e-6, threshold=0.0, cutoff=4, calibration="thesis",
                      random_state=0)
    noisy = thesis._noisy_threshold
    assert thesis.query(-1e9) is False
    assert thesis._noisy_threshold != noisy  # seed 004, Alg. 6 line 4: re-drawn


def _thesis_bottom_sf(a, lam):
    # P[Lap(lam) - Lap(2 lam) >= a]: a "bottom" answer of Alg. 6 for a query at w + a.
    tail = lambda x: (4.0 * math.exp(-x / (2 * lam)) - math.exp(-x / lam)) / 6.0  # noqa: E731
    return tail(a) if a >= 0 else 1.0 - tail(-a)


def test_sparse_vector_thesis_calibration_is_false_far_beyond_its_proof():
    # Seed 004, Alg. 6 at epsilon = 1e4, delta = 0.1, T = 1000: lambda = sqrt(32 T ln 10) / 1e4.
    # T identical queries at w + 0.53 on D and w - 0.47 on D'; S = "T bottoms" (each bottom
    # re-draws the threshold, each query has fresh noise, so P(S) = sf^T exactly).
    eps, delta, T = 1e4, 0.1, 1000
    lam = math.sqrt(32 * T * math.log(1 / delta)) / eps
    log_p_d = T * math.log(_thesis_bottom_sf(0.53, lam))  # -10168.02
    p_d_prime = _thesis_bottom_sf(-0.47, lam) ** T  # 0.8906
    assert p_d_prime - math.exp(eps + log_p_d) > delta + 0.7  # not (1e4, 0.1)-DP
    with pytest.raises(ValueError, match="calibration='lyu'"):
        SparseVector(epsilon=eps, delta=delta, threshold=0.0, cutoff=T, calibration="thesis")


def test_sparse_vector_thesis_guard_threshold_hand_computed():
    # T = 200 > 8 ln(1e6) = 110.52: advanced composition (seed 004, Lemma 2.1.6) proves the
    # claim up to sqrt(8 T L) ln((1 + s) / (1 - s)), L = ln(1e6), s = sqrt(2 L / T):
    # 148.6769 * ln(1.371692 / 0.628308) = 148.6769 * 0.780774 = 116.0825.
    SparseVector(epsilon=116.0, delta=1e-6, threshold=0.0, cutoff=200, calibration="thesis")
    with pytest.raises(ValueError, match="not proved"):
        SparseVector(epsilon=116.2, delta=1e-6, threshold=0.0, cutoff=200,
                     calibration="thesis")
    # T = 110 <= 8 ln(1e6): basic composition (Lemma 2.1.5) covers every epsilon.
    sv = SparseVector(epsilon=1e6, delta=1e-6, threshold=0.0, cutoff=110, calibration="thesis")
    assert sv.noise_scale == pytest.approx(math.sqrt(32 * 110 * math.log(1e6)) / 1e6)
    # The pure-DP calibration has no such limit.
    SparseVector(epsilon=1e4, delta=0.0, threshold=0.0, cutoff=1000, calibration="lyu")


@pytest.mark.parametrize("case", mechanism_audit_cases(), ids=lambda c: c.name)
def test_mechanism_audit(case):
    """The real mechanism stays under its claim; the under-noised copy is caught."""
    n_runs = case.n_runs // 2
    honest = audit_epsilon(case.make(1.0), case.dataset_0, case.dataset_1, n_runs=n_runs,
                           delta=case.delta, vectorized=case.vectorized, random_state=1)
    assert honest.epsilon_lower_bound <= case.epsilon, honest
    cheat = audit_epsilon(case.make(case.catch_factor), case.dataset_0, case.dataset_1,
                          n_runs=n_runs, delta=case.delta, vectorized=case.vectorized,
                          random_state=2)
    assert cheat.epsilon_lower_bound > case.epsilon, cheat
