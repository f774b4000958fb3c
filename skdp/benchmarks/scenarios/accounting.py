"""Scenario ``accounting``: basic vs tight composition of repeated fits, and the noise saved
by releasing the K one-vs-rest models of a multi-class problem jointly."""

import math
import warnings

import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, cross_val_score

from skdp.accounting import (
    BudgetAccountant,
    EpsilonDeltaDpEvent,
    PrivacyBudget,
    compose_events,
    zcdp_for_dp,
)
from skdp.accounting._subsampled import subsampled_gaussian_event
from skdp.benchmarks._harness import make_row
from skdp.benchmarks._registry import register_scenario
from skdp.linear_model._dpsgd import (
    dpsgd_default_batch_size,
    dpsgd_noise_multiplier,
    dpsgd_schedule,
)
from skdp.mechanisms import gaussian_sigma_analytic
from skdp.naive_bayes import DPGaussianNB

_NAME = "accounting"
# Delta at which the composed totals are reported (each fit spends 1 / n_train^2).
_TOTAL_DELTA = 1e-5


def _repeated_fits(quick, random_state):
    """A 5-fold cross-validation and a grid of 10 fits of DPGaussianNB, epsilon = 1 each."""
    n = 2000 if quick else 10000
    X, y = make_classification(n, 8, n_informative=5, random_state=random_state)
    X = np.clip(X, -4.0, 4.0)
    rows = []
    q, steps = dpsgd_schedule(10_000, dpsgd_default_batch_size(10_000, 20), 20)
    dpsgd = subsampled_gaussian_event(dpsgd_noise_multiplier(1.0, 1e-8, q, steps), q, steps)

    def estimator(acc):
        return DPGaussianNB(epsilon=1.0, bounds=[(-4.0, 4.0)] * 8, classes=[0, 1],
                            accountant=acc, random_state=random_state)

    runs = {
        "5-fold CV": lambda acc: cross_val_score(estimator(acc), X, y, cv=5),
        "grid of 10 fits": lambda acc: GridSearchCV(
            estimator(acc), {"var_smoothing": [1e-3, 1e-2]}, cv=5, refit=False).fit(X, y),
    }
    for dataset, run in runs.items():
        basic = None
        for composition in ("basic", "rdp", "pld"):
            acc = BudgetAccountant(math.inf, _TOTAL_DELTA, composition=composition)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                run(acc)
            total = acc.spent.epsilon
            basic = total if composition == "basic" else basic
            note = (f"{len(acc.spends)} fits"
                    if composition == "basic" else f"{basic / total:.2f}x less")
            rows.append(make_row(_NAME, dataset, f"DPGaussianNB, {composition}", 1.0,
                                 f"total eps at delta={_TOTAL_DELTA:g}", [total], note=note))
        k = len(acc.spends)
        # As many DP-SGD fits with the defaults at n = 1e4 (replace-one PLD calibration), each
        # T Poisson-sampled Gaussian steps: what the GLM family's events will compose to.
        sgd_basic = compose_events([(PrivacyBudget(1.0, 1e-8), dpsgd)] * k, _TOTAL_DELTA, "basic")
        sgd_pld = compose_events([(PrivacyBudget(1.0, 1e-8), dpsgd)] * k, _TOTAL_DELTA, "pld")
        rows.append(make_row(_NAME, dataset, "DP-SGD events, basic", 1.0,
                             f"total eps at delta={_TOTAL_DELTA:g}", [sgd_basic]))
        rows.append(make_row(_NAME, dataset, "DP-SGD events, pld", 1.0,
                             f"total eps at delta={_TOTAL_DELTA:g}", [sgd_pld],
                             note=f"{sgd_basic / sgd_pld:.2f}x less"))
        # The same number of fits of an estimator that records only its (1, 1e-7) budget.
        records = [(PrivacyBudget(1.0, 1e-7), EpsilonDeltaDpEvent(1.0, 1e-7))] * k
        for composition in ("basic", "pld"):
            total = compose_events(records, _TOTAL_DELTA, composition)
            rows.append(make_row(_NAME, dataset, f"plain (1, 1e-7) events, {composition}", 1.0,
                                 f"total eps at delta={_TOTAL_DELTA:g}", [total],
                                 note="Kairouz et al. (2015)" if composition == "pld" else ""))
    return rows


def _multiclass_ratios():
    """Noise of K one-vs-rest releases at (eps / K, delta / K) each vs one joint release."""
    n, eps = 10_000, 1.0
    delta = 1.0 / n**2
    epochs = 20
    batch = dpsgd_default_batch_size(n, epochs)
    q, steps = dpsgd_schedule(n, batch, epochs)
    rho = zcdp_for_dp(eps, delta)
    rows = []
    for k in (3, 5, 10):
        dataset = f"K={k}, n=1e4, delta=1/n^2"
        # Gaussian output noise per unit of sensitivity. Split: each class's vector is an
        # analytic Gaussian release (Balle and Wang 2018, Thm. 8) at (eps / K, delta / K).
        # Joint: one record moves all K vectors, one release of L2 sensitivity sqrt(K); or
        # each vector at rho / K of the zCDP budget (Bun and Steinke 2016, Prop. 1.6).
        split = gaussian_sigma_analytic(1.0, eps / k, delta / k)
        joint = gaussian_sigma_analytic(math.sqrt(k), eps, delta)
        zcdp = 1.0 / math.sqrt(2.0 * rho / k)
        for method, value, note in (
                ("Gaussian split, (eps/K, delta/K)", split, "old"),
                ("Gaussian joint, sensitivity sqrt(K)", joint, f"{split / joint:.2f}x less"),
                ("Gaussian joint, rho/K zCDP each", zcdp, f"{split / zcdp:.2f}x less")):
            rows.append(make_row(_NAME, dataset, method, eps, "sigma / sensitivity", [value],
                                 note=note))
        # DP-SGD noise multiplier (replace-one PLD accountant): T steps per class at
        # (eps / K, delta / K), against the K T steps composed at (eps, delta).
        old = dpsgd_noise_multiplier(eps / k, delta / k, q, steps)
        new = dpsgd_noise_multiplier(eps, delta, q, k * steps)
        dataset = f"K={k}, n=1e4, delta=1/n^2, q={q:g}, T={steps}"
        rows.append(make_row(_NAME, dataset, "DP-SGD split, T steps per class", eps,
                             "noise multiplier", [old], note="old"))
        rows.append(make_row(_NAME, dataset, f"DP-SGD joint, K T = {k * steps} steps", eps,
                             "noise multiplier", [new], note=f"{old / new:.2f}x less"))
    return rows


@register_scenario(_NAME, "basic vs RDP/PLD totals of 5 and 10 fits; multi-class noise, "
                   "split vs joint")
def run(quick, random_state):
    return _repeated_fits(quick, random_state) + _multiclass_ratios()
