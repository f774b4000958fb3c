import collections
import math
import multiprocessing
import os
import pickle
import warnings

import numpy as np
import pytest
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, cross_val_score

import skdp.accounting._subsampled as subsampled
from _dummy import NoisyCentroidClassifier
from skdp import BudgetAccountant, BudgetExceededError, PrivacyBudget
from skdp.accounting import (
    advanced_composition,
    basic_composition,
    calibrate_subsampled_gaussian,
    dp_to_zcdp,
    gaussian_zcdp,
    subsampled_gaussian_epsilon,
    zcdp_for_dp,
    zcdp_to_dp,
)
from skdp.mechanisms import gaussian_sigma_analytic


# --- PrivacyBudget -----------------------------------------------------------

@pytest.mark.parametrize("epsilon", [0, -1, math.inf, math.nan])
def test_budget_rejects_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        PrivacyBudget(epsilon, 0.0)


@pytest.mark.parametrize("delta", [1.0, -0.1, math.nan, 1.5])
def test_budget_rejects_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        PrivacyBudget(1.0, delta)


@pytest.mark.parametrize("value", ["1", None, True])
def test_budget_rejects_non_numbers(value):
    with pytest.raises(TypeError, match="epsilon"):
        PrivacyBudget(value)


def test_budget_is_immutable_and_adds():
    b = PrivacyBudget(0.5, 1e-6) + PrivacyBudget(0.25, 2e-6)
    assert b == PrivacyBudget(0.75, 3e-6)
    with pytest.raises(AttributeError):
        b.epsilon = 3.0
    eps, delta = b
    assert (eps, delta) == (0.75, 3e-6)
    part = PrivacyBudget(1.0, 1e-5).split(4)
    assert part == PrivacyBudget(0.25, 2.5e-6)
    assert basic_composition([part] * 4).epsilon == pytest.approx(1.0)


# --- composition ---------------------------------------------------------------

def test_advanced_composition_worked_example():
    # k = 1000 mechanisms with epsilon = 0.01 and delta' = 1e-5 (seed 004 Lemma 2.1.6):
    # sum eps^2 = 0.1; drift = 1000 * 0.01 * tanh(0.005) = 0.0499996;
    # 2 * 0.1 * ln(e + sqrt(0.1) / 1e-5) = 0.2 * ln(31625.495) = 2.072342 < 2 * 0.1 * ln(1e5);
    # eps' = 0.0499996 + sqrt(2.072342) = 0.0499996 + 1.439563 = 1.489563, far below the basic 10.
    total = advanced_composition([PrivacyBudget(0.01)] * 1000, 1e-5)
    assert total.epsilon == pytest.approx(1.489563, abs=2e-6)
    assert total.delta == pytest.approx(1e-5)


def test_advanced_composition_never_worse_than_basic():
    total = advanced_composition([PrivacyBudget(0.1, 1e-7)] * 10, 1e-5)
    assert total.epsilon == pytest.approx(1.0)  # basic wins for few mechanisms
    # delta = 1 - (1 - 1e-5)(1 - 1e-7)^10
    assert total.delta == pytest.approx(1 - (1 - 1e-5) * (1 - 1e-7) ** 10, rel=1e-12)


@pytest.mark.parametrize("epsilon", [2.5e-162, 1e-200])
def test_advanced_composition_is_not_understated_by_underflow(epsilon):
    # 100 steps of a tiny epsilon: eps' = drift + eps sqrt(2 T ln(e + sqrt(T) eps / delta'))
    # = eps sqrt(200) (the drift T eps tanh(eps / 2) is negligible). Squaring such an
    # epsilon underflows (2.5e-162^2 = 6.25e-324 rounds to 4.94e-324, 1e-200^2 to 0),
    # which understated eps' by 11% (or made it 0, an error) where it must be exact.
    total = advanced_composition([PrivacyBudget(epsilon)] * 100, 1e-6)
    assert total.epsilon == pytest.approx(epsilon * math.sqrt(200.0), rel=1e-12, abs=0.0)


def test_advanced_composition_at_large_epsilon_is_basic_composition():
    # e^eps overflows above eps = 709: the drift must still be eps tanh(eps / 2) = eps.
    total = advanced_composition([PrivacyBudget(800.0), PrivacyBudget(1.0)], 1e-6)
    assert total.epsilon == 801.0


def test_zcdp_conversions_worked_values():
    assert dp_to_zcdp(1.0) == 0.5
    assert gaussian_zcdp(1.0, 2.0) == pytest.approx(1 / 8)
    # Seed 004, Lemma 2.1.13 (conversion="bun-steinke"); the default CKS conversion is
    # tested in test_zcdp_conversion.py.
    # rho = 0.5, delta = 1e-6: 0.5 + 2 sqrt(0.5 * 13.815511) = 0.5 + 2 * 2.628261 = 5.756522
    bs = "bun-steinke"
    assert zcdp_to_dp(0.5, 1e-6, conversion=bs).epsilon == pytest.approx(5.756522, abs=1e-6)
    rho = zcdp_for_dp(5.756522, 1e-6, conversion=bs)
    assert rho == pytest.approx(0.5, rel=1e-6)
    for eps in (0.01, 1.0, 10.0):
        back = zcdp_to_dp(zcdp_for_dp(eps, 1e-8, conversion=bs), 1e-8, conversion=bs)
        assert back.epsilon == pytest.approx(eps, rel=1e-10)


def test_subsampled_gaussian_calibration_round_trip():
    sigma = calibrate_subsampled_gaussian(1.0, 1e-5, sample_rate=0.01, steps=1000)
    eps = subsampled_gaussian_epsilon(sigma, 0.01, 1000, 1e-5)
    assert eps <= 1.0
    assert eps > 0.99  # calibrated, not merely safe
    # Less noise must cost more.
    assert subsampled_gaussian_epsilon(0.8 * sigma, 0.01, 1000, 1e-5) > 1.0


def test_subsampled_gaussian_without_sampling_matches_analytic_gaussian():
    # One full-batch step is the plain Gaussian mechanism: PLD accounting must
    # agree with the exact (analytic) calibration to a few percent, and RDP
    # must be no tighter than exact.
    sigma = gaussian_sigma_analytic(1.0, 1.0, 1e-5)
    pld = subsampled_gaussian_epsilon(sigma, 1.0, 1, 1e-5, accountant="pld")
    rdp = subsampled_gaussian_epsilon(sigma, 1.0, 1, 1e-5, accountant="rdp")
    assert pld == pytest.approx(1.0, rel=0.03)
    assert rdp >= 1.0 - 1e-9


# --- accountant -------------------------------------------------------------------

def test_accountant_records_and_refuses():
    acc = BudgetAccountant(1.0, 1e-5)
    acc.spend(PrivacyBudget(0.25, 2.5e-6), by="a")
    acc.spend(PrivacyBudget(0.25, 2.5e-6), by="b")
    assert acc.spent == PrivacyBudget(0.5, 5e-6)
    assert acc.remaining.epsilon == pytest.approx(0.5)
    with pytest.raises(BudgetExceededError, match="Nothing was spent"):
        acc.spend(PrivacyBudget(0.6, 0.0))
    with pytest.raises(BudgetExceededError):
        acc.spend(PrivacyBudget(0.1, 6e-6))  # delta overrun alone
    assert [s.by for s in acc.spends] == ["a", "b"]
    # Four exact quarters fit despite rounding.
    acc2 = BudgetAccountant(0.3)
    for _ in range(3):
        acc2.spend(PrivacyBudget(0.1))
    assert acc2.remaining is None


def test_clone_shares_the_accountant():
    acc = BudgetAccountant(10.0)
    est = NoisyCentroidClassifier(epsilon=1.0, accountant=acc)
    assert clone(est).accountant is acc
    assert pickle.loads(pickle.dumps(acc)) is not acc  # pickling does copy


def test_grid_search_spends_once_per_fit_and_is_refused_when_over():
    X, y = make_classification(200, 4, random_state=0)
    acc = BudgetAccountant(epsilon=5.0)
    grid = GridSearchCV(NoisyCentroidClassifier(accountant=acc, random_state=0),
                        {"epsilon": [0.5, 1.0]}, cv=2, refit=True)
    grid.fit(X, y)
    # 2 candidates x 2 folds + 1 refit at the best epsilon.
    assert len(acc.spends) == 5
    assert acc.spent.epsilon == pytest.approx(0.5 * 2 + 1.0 * 2 + grid.best_params_["epsilon"])
    before = len(acc.spends)
    with pytest.raises(BudgetExceededError):
        cross_val_score(NoisyCentroidClassifier(epsilon=1.0, accountant=acc), X, y, cv=5,
                        error_score="raise")
    assert acc.spent.epsilon <= 5.0 * (1 + 1e-9)
    assert len(acc.spends) >= before


def test_refused_fit_draws_no_noise():
    X, y = make_classification(50, 4, random_state=0)
    acc = BudgetAccountant(epsilon=0.5)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    est = NoisyCentroidClassifier(epsilon=1.0, accountant=acc, random_state=rng)
    with pytest.raises(BudgetExceededError):
        est.fit(X, y)
    assert rng.bit_generator.state == state
    assert not hasattr(est, "centroids_")
    assert acc.spends == []


def _spend_in_worker(acc):
    acc.spend(PrivacyBudget(0.1))


def test_accountant_refuses_to_spend_in_another_process():
    acc = BudgetAccountant(1.0)
    with pytest.raises(RuntimeError, match="copy"):
        Parallel(n_jobs=2, backend="loky")(delayed(_spend_in_worker)(acc) for _ in range(2))
    # Threads share the object and are counted.
    Parallel(n_jobs=2, backend="threading")(delayed(_spend_in_worker)(acc) for _ in range(2))
    assert acc.spent.epsilon == pytest.approx(0.2)


def test_a_pickled_copy_cannot_spend_behind_the_original():
    """A copy (pickle, joblib.dump/load, caching) would keep its own total: it must refuse."""
    acc = BudgetAccountant(2.0, 1e-2)
    acc.spend(PrivacyBudget(0.5), by="before the copy")
    X, y = make_classification(50, 4, random_state=0)
    est = NoisyCentroidClassifier(epsilon=1.0, accountant=acc, random_state=0)
    copy = pickle.loads(pickle.dumps(est))
    est.fit(X, y)
    with pytest.raises(RuntimeError, match="copy"):
        copy.fit(X, y)
    with pytest.raises(RuntimeError, match="resume"):
        copy.accountant.spend(PrivacyBudget(0.1))
    assert acc.spent.epsilon == pytest.approx(1.5)
    # The copy still reports what it holds, and the original keeps spending.
    assert copy.accountant.spent.epsilon == pytest.approx(0.5)
    acc.spend(PrivacyBudget(0.5))


def _spend_and_report(acc, results):
    try:
        acc.spend(PrivacyBudget(0.5), by="forked child")
        results.put("spent")
    except RuntimeError:
        results.put("refused")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")
def test_a_forked_copy_cannot_spend_behind_the_original():
    """A forked child (multiprocessing's fork start method, os.fork) holds a copy that was
    never pickled: its spends would never reach the parent, so it must refuse too."""
    acc = BudgetAccountant(1.0)
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() with threads running
        child = context.Process(target=_spend_and_report, args=(acc, results))
        child.start()
    child.join(60)
    assert results.get(timeout=60) == "refused"
    assert acc.spent is None


def test_a_saved_accountant_is_resumed_explicitly():
    acc = BudgetAccountant(1.0)
    acc.spend(PrivacyBudget(0.25), by="yesterday")
    loaded = pickle.loads(pickle.dumps(acc))
    assert loaded.resume() is loaded
    loaded.spend(PrivacyBudget(0.5), by="today")
    assert loaded.spent.epsilon == pytest.approx(0.75)
    with pytest.raises(BudgetExceededError):
        loaded.spend(PrivacyBudget(0.5))
    # A copy of a copy is a copy again.
    with pytest.raises(RuntimeError, match="copy"):
        pickle.loads(pickle.dumps(loaded)).spend(PrivacyBudget(0.1))


def test_refusal_explains_an_accountant_without_delta():
    acc = BudgetAccountant(5.0)
    with pytest.raises(BudgetExceededError, match=r"BudgetAccountant\(epsilon, delta="):
        acc.spend(PrivacyBudget(1.0, 1e-6))


def test_accountant_type_is_checked_before_spending():
    X, y = make_classification(50, 4, random_state=0)
    with pytest.raises(TypeError, match="BudgetAccountant"):
        NoisyCentroidClassifier(accountant=3.0).fit(X, y)


def test_nan_input_is_refused_before_spending():
    X, y = make_classification(50, 4, random_state=0)
    X[0, 0] = np.nan
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match="NaN"):
        NoisyCentroidClassifier(accountant=acc).fit(X, y)
    assert acc.spends == []


def test_pld_calibration_is_tighter_than_rdp_and_safe():
    rdp = calibrate_subsampled_gaussian(1.0, 1e-5, sample_rate=0.02, steps=200)
    pld = calibrate_subsampled_gaussian(1.0, 1e-5, sample_rate=0.02, steps=200, accountant="pld")
    assert pld <= rdp
    assert subsampled_gaussian_epsilon(pld, 0.02, 200, 1e-5, accountant="pld") <= 1.0


@pytest.mark.parametrize("neighbours", ["replace-one", "add-remove"])
@pytest.mark.parametrize("epsilon, sample_rate, steps", [(1.0, 256 / 8000, 157), (8.0, 0.1, 50)])
def test_pld_calibration_is_the_least_safe_multiplier(neighbours, epsilon, sample_rate, steps):
    # The search is bracketed from the RDP side and stopped at dp-accounting's tolerance:
    # the multiplier returned meets the target and one 1e-5 smaller does not.
    sigma = calibrate_subsampled_gaussian(epsilon, 1e-5, sample_rate, steps, accountant="pld",
                                          neighbours=neighbours)
    spent = subsampled_gaussian_epsilon(sigma, sample_rate, steps, 1e-5, accountant="pld",
                                        neighbours=neighbours)
    assert spent <= epsilon
    assert subsampled_gaussian_epsilon(sigma * (1 - 1e-5), sample_rate, steps, 1e-5,
                                       accountant="pld", neighbours=neighbours) > epsilon


def test_calibration_prints_no_rdp_order_notes(capfd, caplog):
    # dp-accounting logs (absl) each RDP order it leaves out at small noise multipliers.
    calibrate_subsampled_gaussian(8.0, 1e-5, 0.1, 50, accountant="pld", neighbours="replace-one")
    assert "Excluding this order" not in capfd.readouterr().err
    assert not [r for r in caplog.records if "Excluding this order" in r.getMessage()]


@pytest.mark.parametrize("neighbours, epsilon", [("add-remove", 0.3), ("replace-one", 0.6)])
def test_pld_calibration_where_pld_is_looser_than_rdp(neighbours, epsilon):
    # Many steps at a small rate (50 epochs of batch 64 among 64000 rows): the discretized PLD
    # (interval 1e-3) certifies a larger epsilon than RDP (0.40 against 0.28 at multiplier 3,
    # add/remove), so the RDP multiplier does not meet the target by PLD and cannot be the
    # upper end of the PLD search. The search still finds the PLD multiplier, and the
    # calibration returns the smaller of it and the RDP one (each a valid certificate).
    # The coarse grid's pessimism is large here, so the calibration is finished on the
    # fine grid (1e-4): the result meets the target there, and not on the coarse grid
    # (it is below what the coarse grid alone could certify).
    from skdp.accounting._subsampled import _calibrate_rdp, _pld_bracket, _pld_epsilon

    sample_rate, steps = 0.001, 50000
    sigma = calibrate_subsampled_gaussian(epsilon, 1e-5, sample_rate, steps, accountant="pld",
                                          neighbours=neighbours)
    if neighbours == "replace-one":  # group privacy: add/remove at (eps/2, delta/(1+e^(eps/2)))
        rdp_args = (epsilon / 2, 1e-5 / (1 + math.exp(epsilon / 2)))
    else:
        rdp_args = (epsilon, 1e-5)
    by_rdp = subsampled_gaussian_epsilon(sigma, sample_rate, steps, rdp_args[1]) <= rdp_args[0]
    by_pld = _pld_epsilon(sigma, sample_rate, steps, 1e-5, neighbours, 1e-4) <= epsilon
    assert by_pld and not by_rdp
    assert subsampled_gaussian_epsilon(sigma, sample_rate, steps, 1e-5, accountant="pld",
                                       neighbours=neighbours) > epsilon
    # Within 1e-4 of the least multiplier on the fine grid.
    assert _pld_epsilon(sigma * (1 - 1e-3), sample_rate, steps, 1e-5, neighbours, 1e-4) > epsilon
    upper = _calibrate_rdp(*rdp_args, sample_rate, steps, tol=1e-2)
    low, high = _pld_bracket(upper, epsilon, 1e-5, sample_rate, steps, neighbours)
    assert subsampled_gaussian_epsilon(low, sample_rate, steps, 1e-5, accountant="pld",
                                       neighbours=neighbours) > epsilon
    assert subsampled_gaussian_epsilon(high, sample_rate, steps, 1e-5, accountant="pld",
                                       neighbours=neighbours) <= epsilon
    assert sigma <= high


def test_rdp_notes_silencing_interleaved_in_two_threads_restores_the_level():
    # Two calibrations in threads (joblib's threading backend, GridSearchCV) enter and leave
    # the silencing interleaved: the second one saved ERROR as "the user's level" and left
    # the absl logger at ERROR for good, while its own calibration ran unsilenced.
    import logging

    from skdp.accounting._subsampled import _quiet_rdp

    logger = logging.getLogger("absl")
    original = logger.level
    first, second = _quiet_rdp(), _quiet_rdp()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert logger.level == logging.ERROR  # the second calibration is still running
    second.__exit__(None, None, None)
    assert logger.level == original


# The PLD calibration evaluates no (multiplier, grid) pair twice
def test_pld_calibration_evaluates_each_point_once(monkeypatch):
    calls = collections.Counter()
    original = subsampled._epsilon

    def counting(noise_multiplier, sample_rate, steps, delta, accountant, neighbours,
                 interval=subsampled._PLD_COARSE):
        calls[(noise_multiplier, interval)] += 1
        return original(noise_multiplier, sample_rate, steps, delta, accountant, neighbours,
                        interval)

    monkeypatch.setattr(subsampled, "_epsilon", counting)
    sigma = calibrate_subsampled_gaussian(0.1, 1e-5, 0.05, 1000, accountant="pld",
                                          neighbours="replace-one")
    assert max(calls.values()) == 1, calls
    # The refinement still runs (a fine-grid evaluation) and the result still meets the target.
    assert any(interval == subsampled._PLD_FINE for _, interval in calls)
    monkeypatch.setattr(subsampled, "_epsilon", original)
    assert subsampled._pld_epsilon(sigma, 0.05, 1000, 1e-5, "replace-one",
                                   subsampled._PLD_FINE) <= 0.1


def test_accountant_refuses_overruns_beyond_rounding():
    # Before the fix a relative slack of 1e-9 let a spend overrun the total.
    acc = BudgetAccountant(1.0, 1e-5)
    with pytest.raises(BudgetExceededError):
        acc.spend(PrivacyBudget(1.0 + 5e-10))
    with pytest.raises(BudgetExceededError):
        acc.spend(PrivacyBudget(0.5, 1e-5 * (1 + 5e-10)))
    for _ in range(999):
        acc.spend(PrivacyBudget(1e-3, 1e-8))
    with pytest.raises(BudgetExceededError):
        acc.spend(PrivacyBudget(1e-3 * (1 + 1e-7)))
    # What rounding alone explains still fits: the last thousandth, decimal tenths, split parts.
    acc.spend(PrivacyBudget(1e-3, 1e-8))
    tenths = BudgetAccountant(0.3)
    for _ in range(3):
        tenths.spend(PrivacyBudget(0.1))
    total = PrivacyBudget(0.7, 3e-7)
    for k in (3, 7, 49, 1000):
        parts = BudgetAccountant(total.epsilon, total.delta)
        for _ in range(k):
            parts.spend(total.split(k))
