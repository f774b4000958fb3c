"""Privacy events of fits, and the tight compositions of BudgetAccountant."""

import math
import os
import sqlite3
import subprocess
import sys
import textwrap

import dp_accounting
import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV

from skdp import BudgetAccountant, BudgetExceededError, PrivacyBudget
from skdp.accounting import (
    EpsilonDeltaDpEvent,
    compose_events,
    event_from_json,
    event_to_json,
    zcdp_to_dp,
)
from skdp.base import DPEstimatorMixin
from skdp.mechanisms import GaussianMechanism, LaplaceMechanism, gaussian_delta_analytic
from skdp.naive_bayes import DPGaussianNB
from skdp.preprocessing import DPFeatureClipper, DPNormClipper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _gaussian_budget(z, delta):
    """The (epsilon, delta) of one Gaussian release of noise multiplier z (zCDP, CKS)."""
    return zcdp_to_dp(0.5 / z**2, delta)


# --- hand-computed totals ---------------------------------------------------------

def test_k_gaussians_compose_to_the_closed_form_zcdp_total():
    z, k, delta = 4.0, 8, 1e-5
    acc = BudgetAccountant(100.0, delta, composition="rdp")
    for _ in range(k):
        acc.spend(_gaussian_budget(z, 1e-6), event=dp_accounting.GaussianDpEvent(z))
    rho = k / (2 * z**2)  # 0.25: zCDP adds (Bun and Steinke 2016, Lemma 1.7)
    assert acc.spent.epsilon == pytest.approx(zcdp_to_dp(rho, delta).epsilon, rel=1e-12)
    # Lemma 2.1.13's conversion by hand: 0.25 + 2 sqrt(0.25 ln 1e5) = 3.6431; CKS is tighter.
    bun_steinke = 0.25 + 2 * math.sqrt(0.25 * math.log(1e5))
    assert bun_steinke == pytest.approx(3.6431, abs=1e-4)
    assert acc.spent.epsilon < bun_steinke
    assert acc.spent.delta == delta


def test_basic_composition_is_the_sum_whatever_the_events():
    acc = BudgetAccountant(100.0, 1e-3)
    for _ in range(5):
        acc.spend(PrivacyBudget(0.5, 1e-6), event=dp_accounting.GaussianDpEvent(8.0))
    assert acc.spent.epsilon == pytest.approx(2.5, rel=1e-15)
    assert acc.spent.delta == pytest.approx(5e-6, rel=1e-15)
    assert compose_events([(PrivacyBudget(0.5, 1e-6), None)] * 5, 1e-3, "basic") == 2.5


def test_rdp_of_k_identical_laplace_events_is_k_times_one():
    # Mironov (2017), Prop. 6 at alpha = 2, b = 1: ln(2/3 e + 1/3 e^-2) = 0.619124...
    from skdp.accounting._events import _rdp
    orders = np.array([2.0])
    one = _rdp(dp_accounting.LaplaceDpEvent(1.0), orders)
    assert one[0] == pytest.approx(math.log(2 / 3 * math.e + 1 / 3 * math.exp(-2)), rel=1e-12)
    assert one[0] == pytest.approx(0.619124, abs=1e-6)
    k = _rdp(dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(1.0), 7), orders)
    assert k[0] == pytest.approx(7 * one[0], rel=1e-12)


def test_pld_of_k_gaussians_is_the_exact_gaussian_of_sqrt_k_sensitivity():
    # k Gaussian releases of multiplier z are one Gaussian of sensitivity sqrt(k) (Dong, Roth
    # and Su 2022, Cor. 3.3): its exact delta (Balle and Wang 2018) at the PLD epsilon is
    # at most the target, and a 1% smaller epsilon misses it (the PLD is tight).
    z, k, delta = 3.0, 10, 1e-5
    eps = compose_events([(PrivacyBudget(10.0, 1e-6), dp_accounting.GaussianDpEvent(z))] * k,
                         delta, "pld")
    assert gaussian_delta_analytic(math.sqrt(k), z, eps) <= delta * (1 + 1e-6)
    assert gaussian_delta_analytic(math.sqrt(k), z, 0.99 * eps) > delta


def test_plain_events_compose_below_the_sum_under_pld():
    # A hundred (0.1, 0)-DP releases at delta = 1e-5: the advanced bound (Thakkar (2019),
    # Lemma 2.1.6) is 100 (0.1) tanh(0.05) + sqrt(2 (100) 0.1^2 ln 1e5) = 5.298; the optimal
    # composition (Kairouz, Oh and Viswanath 2017) is below it.
    records = [(PrivacyBudget(0.1), EpsilonDeltaDpEvent(0.1, 0.0))] * 100
    advanced = 10 * math.tanh(0.05) + math.sqrt(2 * 100 * 0.01 * math.log(1e5))
    assert advanced == pytest.approx(5.298, abs=1e-3)
    assert compose_events(records, 1e-5, "pld") < advanced
    assert compose_events(records, 1e-5, "basic") == pytest.approx(10.0)
    # By Renyi DP (eps^2 / 2-zCDP each): the CKS conversion of rho = 0.5.
    assert compose_events(records, 1e-5, "rdp") == pytest.approx(zcdp_to_dp(0.5, 1e-5).epsilon,
                                                                rel=1e-12)


def test_tight_is_never_above_basic():
    # One (1, 1e-6) release measured at delta = 1e-6: RDP is looser than the exact budget.
    records = [(PrivacyBudget(1.0, 1e-6), EpsilonDeltaDpEvent(1.0, 1e-6))]
    assert compose_events(records, 1e-6, "rdp") == 1.0
    assert compose_events(records, 1e-6, "pld") == 1.0


# --- refusal ------------------------------------------------------------------------

def test_a_spend_is_refused_exactly_where_the_tight_total_would_pass_the_budget():
    z, delta = 2.0, 1e-5
    budget = _gaussian_budget(z, 1e-7)
    event = dp_accounting.GaussianDpEvent(z)
    total = zcdp_to_dp(4 * 0.5 / z**2, delta).epsilon  # four releases
    assert total < 4 * budget.epsilon  # basic would refuse the fourth
    acc = BudgetAccountant(total, delta, composition="rdp")
    for _ in range(4):
        acc.spend(budget, event=event)
    with pytest.raises(BudgetExceededError, match="rdp composition.*Nothing was spent"):
        acc.spend(budget, event=event)
    assert len(acc.spends) == 4
    basic = BudgetAccountant(total, delta)
    basic.spend(budget, event=event)
    with pytest.raises(BudgetExceededError):
        for _ in range(3):
            basic.spend(budget, event=event)


def test_events_are_checked():
    acc = BudgetAccountant(1.0, composition="pld")
    with pytest.raises(TypeError, match="DpEvent"):
        acc.spend(PrivacyBudget(0.1), event=(0.1, 0.0))
    with pytest.raises(ValueError, match="composition"):
        BudgetAccountant(1.0, composition="advanced")


# --- ledger -------------------------------------------------------------------------

def test_events_round_trip_through_json():
    event = dp_accounting.ComposedDpEvent([
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1)), 300),
        dp_accounting.LaplaceDpEvent(0.1 + 0.2), EpsilonDeltaDpEvent(1.0 / 3, 1e-7),
        dp_accounting.ZCDpEvent(0.05)])
    assert event_from_json(event_to_json(event)) == event
    with pytest.raises(ValueError, match="unknown privacy event"):
        event_from_json('{"__event__": "os.system"}')


def test_a_reopened_ledger_recomposes_tightly_in_another_process(tmp_path):
    path = tmp_path / "budget.db"
    acc = BudgetAccountant(5.0, 1e-5, ledger=path, composition="rdp")
    for _ in range(6):
        acc.spend(_gaussian_budget(4.0, 1e-7), event=dp_accounting.GaussianDpEvent(4.0))
    code = textwrap.dedent(f"""
        from skdp import BudgetAccountant
        acc = BudgetAccountant(5.0, 1e-5, ledger={str(path)!r}, composition="rdp")
        print(repr(acc.spent.epsilon), len(acc.events), acc.events[0].noise_multiplier)
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    assert float(out[0]) == acc.spent.epsilon == pytest.approx(
        zcdp_to_dp(6 * 0.5 / 16, 1e-5).epsilon, rel=1e-12)
    assert out[1:] == ["6", "4.0"]
    # The basic sum (6 x 1.2) is over the total: only the stored events make these spends fit.
    assert 6 * _gaussian_budget(4.0, 1e-7).epsilon > 5.0
    with pytest.raises(BudgetExceededError):
        BudgetAccountant(5.0, 1e-5, ledger=path).spend(PrivacyBudget(0.1))


def test_a_ledger_from_before_events_opens_and_composes_its_spends_plainly(tmp_path):
    path = tmp_path / "old.db"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE total (id INTEGER PRIMARY KEY CHECK (id = 1), epsilon TEXT NOT NULL, "
        "delta TEXT NOT NULL);"
        "CREATE TABLE spends (id INTEGER PRIMARY KEY AUTOINCREMENT, epsilon TEXT NOT NULL, "
        "delta TEXT NOT NULL, by TEXT, pid INTEGER, at REAL);"
        f"INSERT INTO total VALUES (1, '{(2.0).hex()}', '{(1e-5).hex()}');"
        f"INSERT INTO spends (epsilon, delta, by) VALUES ('{(0.5).hex()}', '{(1e-6).hex()}', 'x');")
    con.commit()
    con.close()
    acc = BudgetAccountant(2.0, 1e-5, ledger=path, composition="pld")
    assert acc.events == [EpsilonDeltaDpEvent(0.5, 1e-6)]
    acc.spend(PrivacyBudget(0.5, 1e-6), event=dp_accounting.GaussianDpEvent(6.0))
    assert [s.event for s in acc.spends] == [None, dp_accounting.GaussianDpEvent(6.0)]


# --- estimators ----------------------------------------------------------------------

def _data(n=600):
    X, y = make_classification(n, 4, n_informative=3, n_redundant=0, random_state=0)
    return np.clip(X, -3, 3), y


def test_every_fit_records_its_event_and_charges_the_accountant_with_it():
    X, y = _data()
    acc = BudgetAccountant(float("inf"), 0.5, composition="rdp")
    nb = DPGaussianNB(epsilon=1.0, delta=1e-6, bounds=[(-3, 3)] * 4, classes=[0, 1],
                      accountant=acc, random_state=0).fit(X, y)
    clip = DPNormClipper(epsilon=0.5, accountant=acc, random_state=0).fit(X)
    feat = DPFeatureClipper(epsilon=4.0, accountant=acc, random_state=0).fit(X)
    assert acc.events == [nb.privacy_event_, clip.privacy_event_, feat.privacy_event_]
    # One analytic Gaussian release of L2 sensitivity 2 sqrt(d): multiplier sigma / (2 sqrt(d)).
    assert nb.privacy_event_ == dp_accounting.GaussianDpEvent(nb.noise_scales_[1] / 4.0)
    assert clip.privacy_event_ == EpsilonDeltaDpEvent(0.5, 0.0)  # the default: plain
    assert feat.privacy_event_ == dp_accounting.SelfComposedDpEvent(
        EpsilonDeltaDpEvent(4.0 / 8, 0.0), 8)


def test_an_under_noised_copy_shows_in_its_event():
    X, y = _data()

    class QuarterNoise(DPGaussianNB):
        def _noise_scales(self, n_features, budget):
            mechanism, *scales = super()._noise_scales(n_features, budget)
            return (mechanism, *(s / 4 for s in scales))

    honest = DPGaussianNB(epsilon=1.0, delta=1e-6, bounds=[(-3, 3)] * 4, classes=[0, 1]).fit(X, y)
    cheat = QuarterNoise(epsilon=1.0, delta=1e-6, bounds=[(-3, 3)] * 4, classes=[0, 1]).fit(X, y)
    from skdp.accounting._events import _compose_pld
    assert _compose_pld([(honest.privacy_spent_, honest.privacy_event_)], 1e-6) <= 1.0 + 1e-3
    assert _compose_pld([(cheat.privacy_spent_, cheat.privacy_event_)], 1e-6) > 3.0


def test_mechanisms_describe_one_call():
    g = GaussianMechanism(epsilon=1.0, delta=1e-6, sensitivity=2.0)
    assert g.privacy_event == dp_accounting.GaussianDpEvent(g.sigma / 2.0)
    lap = LaplaceMechanism(epsilon=0.5, sensitivity=3.0)
    assert lap.privacy_event == dp_accounting.LaplaceDpEvent(2.0)  # scale 6 / sensitivity 3


def test_grid_search_charges_less_under_the_tight_accountant():
    X, y = _data()
    grid = {"var_smoothing": [1e-3, 1e-2]}  # 2 x 3 folds + the refit: 7 fits

    def search(acc):
        est = DPGaussianNB(epsilon=1.0, delta=1e-7, bounds=[(-3, 3)] * 4, classes=[0, 1],
                           accountant=acc, random_state=0)
        return GridSearchCV(est, grid, cv=3, error_score="raise").fit(X, y)

    basic = BudgetAccountant(float("inf"), 1e-5)
    tight = BudgetAccountant(float("inf"), 1e-5, composition="rdp")
    search(basic)
    search(tight)
    assert len(basic.spends) == len(tight.spends) == 7
    assert basic.spent.epsilon == pytest.approx(7.0)
    z = tight.events[0].noise_multiplier
    assert tight.spent.epsilon == pytest.approx(zcdp_to_dp(7 * 0.5 / z**2, 1e-5).epsilon)
    assert tight.spent.epsilon < 4.0
    # With a total of 4: the basic accountant stops the search, the tight one lets it finish.
    with pytest.raises(BudgetExceededError):
        search(BudgetAccountant(4.0, 1e-5))
    search(BudgetAccountant(4.0, 1e-5, composition="rdp"))


def test_grid_search_in_process_workers_is_charged_its_tight_total(tmp_path):
    from joblib import parallel_backend
    X, y = _data(400)
    acc = BudgetAccountant(4.0, 1e-5, ledger=tmp_path / "g.db", composition="rdp")
    est = DPGaussianNB(epsilon=1.0, delta=1e-7, bounds=[(-3, 3)] * 4, classes=[0, 1],
                       accountant=acc)
    with parallel_backend("loky"):
        GridSearchCV(est, {"var_smoothing": [1e-3, 1e-2]}, cv=5, refit=False, n_jobs=2,
                     error_score="raise").fit(X, y)
    # Ten fits in the workers: 10 by basic composition, over the total of 4.
    assert len(acc.spends) == 10
    z = acc.events[0].noise_multiplier
    assert all(e == acc.events[0] for e in acc.events)
    assert acc.spent.epsilon == pytest.approx(zcdp_to_dp(10 * 0.5 / z**2, 1e-5).epsilon)
    assert acc.spent.epsilon < 4.0


def test_dpsgd_events_compose_under_replace_one_as_they_were_calibrated():
    from skdp.accounting import calibrate_subsampled_gaussian
    from skdp.accounting._events import _compose_pld
    q, steps, delta = 0.05, 200, 1e-6
    z = calibrate_subsampled_gaussian(1.0, delta, q, steps, accountant="pld",
                                      neighbours="replace-one")
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), steps)
    budget = PrivacyBudget(1.0, delta)
    # One fit: its own budget, not the half that add/remove neighbours would report.
    assert 0.95 < _compose_pld([(budget, event)], delta) <= 1.0 + 1e-9
    # Five fits (a 5-fold cross-validation) at delta = 1e-5: far below the basic 5.
    acc = BudgetAccountant(3.0, 1e-5, composition="pld")
    for _ in range(5):
        acc.spend(budget, event=event)
    assert acc.spent.epsilon < 3.0
    assert compose_events([(budget, event)] * 5, 1e-5, "rdp") == pytest.approx(5.0)  # no RDP here


class _Release(DPEstimatorMixin, BaseEstimator):
    """A minimal estimator that declares its event in one of three ways."""

    def __init__(self, epsilon=1.0, delta=1e-6, accountant=None, event="override"):
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.event = event

    def _privacy_event(self, budget, n_samples=None):
        return dp_accounting.GaussianDpEvent(5.0)

    def fit(self, X, y=None):
        event = {"override": None, "callable": lambda b: EpsilonDeltaDpEvent(b.epsilon, 0.0),
                 "bad": (1.0, 0.0)}[self.event]
        self._start_private_fit(len(X), event=event)
        return self


def test_the_hook_takes_an_override_a_function_of_the_budget_and_refuses_a_bad_event():
    acc = BudgetAccountant(10.0, 1e-5, composition="rdp")
    X = np.zeros((10, 1))
    assert _Release(accountant=acc).fit(X).privacy_event_ == dp_accounting.GaussianDpEvent(5.0)
    assert (_Release(accountant=acc, event="callable").fit(X).privacy_event_
            == EpsilonDeltaDpEvent(1.0, 0.0))
    with pytest.raises(TypeError, match="must be a dp_accounting.DpEvent"):
        _Release(accountant=acc, event="bad").fit(X)
    assert acc.events == [dp_accounting.GaussianDpEvent(5.0), EpsilonDeltaDpEvent(1.0, 0.0)]
