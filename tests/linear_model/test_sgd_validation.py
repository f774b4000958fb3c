"""Degenerate public parameters of the iterative linear models (PermutationSGDClassifier, DPSGDClassifier, PrivateFrankWolfeClassifier): a clear error before the charge, or a correct fit."""

import math

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.linear_model import (
    DPSGDClassifier,
    PermutationSGDClassifier,
    PrivateFrankWolfeClassifier,
)
from skdp.linear_model._dpsgd import dpsgd_weight_growth


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return X, (X[:, 0] > 0).astype(int)


# Degenerate but valid-looking public parameters: a clear ValueError before
# the accountant is charged, or a correct fit.
REFUSED = [
    # beta = data_norm^2 / 4 underflows to 0: the default step 1 / beta is infinite
    (PermutationSGDClassifier, {"data_norm": 1e-300}, "learning_rate"),
    (PermutationSGDClassifier, {"data_norm": 1e-170}, "learning_rate"),
    # beta = data_norm^2 / 4 overflows (was an OverflowError)
    (PermutationSGDClassifier, {"data_norm": 1e300}, "data_norm"),
    (PermutationSGDClassifier, {"data_norm": 1e300, "strongly_convex": True, "alpha": 0.1},
     "data_norm"),
    # Huber smoothness data_norm^2 / (2 h) overflows: was "use a smaller epsilon"
    (PermutationSGDClassifier, {"loss": "huber", "huber_h": 1e-300, "data_norm": 1e10},
     "data_norm"),
    # the sensitivity 2 R / (alpha b N) overflows: was "use a smaller epsilon"
    (PermutationSGDClassifier, {"strongly_convex": True, "alpha": 1e-310}, "sensitivity"),
    # the sensitivity 2 k eta R / b underflows to 0
    (PermutationSGDClassifier, {"data_norm": 1e-300, "learning_rate": 1e-300}, "sensitivity"),
    # DP-SGD: a weight decay factor 1 - learning_rate * alpha < -1 diverges (NaN weights)
    (DPSGDClassifier, {"learning_rate": 1e300, "alpha": 1e-4}, "alpha"),
    (DPSGDClassifier, {"learning_rate": 10.0, "alpha": 1.0,
                       "learning_rate_schedule": "constant"}, "alpha"),
    # a step learning_rate * data_norm that overflows (NaN weights)
    (DPSGDClassifier, {"learning_rate": 1e300, "data_norm": 1e300}, "learning_rate"),
    # Frank-Wolfe: the vertex-score sensitivity 2 C R / n overflows (noise scale inf)
    (PrivateFrankWolfeClassifier, {"data_norm": 1e300, "l1_radius": 1e300}, "sensitivity"),
    # ... or underflows to 0 (was "float division by zero")
    (PrivateFrankWolfeClassifier, {"data_norm": 1e-300, "l1_radius": 1e-300}, "sensitivity"),
]


@pytest.mark.parametrize("cls, params, word", REFUSED,
                         ids=[f"{c.__name__}-{p}" for c, p, _ in REFUSED])
def test_degenerate_parameters_refused_before_charge(data, cls, params, word):
    X, y = data
    accountant = BudgetAccountant(epsilon=100.0, delta=0.5)
    est = cls(classes=[0, 1], random_state=0, accountant=accountant, **params)
    with pytest.raises(ValueError, match=word) as info:
        est.fit(X, y)
    assert "Nothing was spent" in str(info.value)
    assert accountant.spent is None
    assert not hasattr(est, "coef_")


@pytest.mark.parametrize("cls", [PermutationSGDClassifier, DPSGDClassifier,
                                 PrivateFrankWolfeClassifier])
def test_integer_beyond_float_range_refused(data, cls):
    # float(10**400) is an OverflowError: now the ValueError of any infinite bound.
    X, y = data
    accountant = BudgetAccountant(epsilon=100.0, delta=0.5)
    with pytest.raises(ValueError, match="data_norm must be finite"):
        cls(data_norm=10**400, classes=[0, 1], accountant=accountant).fit(X, y)
    assert accountant.spent is None


WORKING = [
    # 2 / beta overflows to inf: any explicit step is allowed, and the sensitivity is tiny
    (PermutationSGDClassifier, {"data_norm": 1e-300, "learning_rate": 1.0}),
    (PermutationSGDClassifier, {"data_norm": 1e-300, "strongly_convex": True, "alpha": 0.1}),
    (PermutationSGDClassifier, {"epsilon": 1e-300}),
    (PermutationSGDClassifier, {"epsilon": 1e300}),
    (DPSGDClassifier, {"data_norm": 1e-300}),
    (DPSGDClassifier, {"learning_rate": 2.0, "alpha": 1.0}),
    (PrivateFrankWolfeClassifier, {"epsilon": 1e-300}),
    (PrivateFrankWolfeClassifier, {"epsilon": 1e300}),
]


@pytest.mark.parametrize("cls, params", WORKING, ids=[f"{c.__name__}-{p}" for c, p in WORKING])
def test_extreme_but_workable_parameters_fit(data, cls, params):
    X, y = data
    est = cls(classes=[0, 1], random_state=0, **params).fit(X, y)
    assert np.all(np.isfinite(est.coef_)) and np.all(np.isfinite(est.intercept_))


@pytest.mark.parametrize("cls", [PermutationSGDClassifier, DPSGDClassifier,
                                 PrivateFrankWolfeClassifier])
def test_one_row(cls):
    # n = 1 with a public label set and an explicit delta: a valid (noisy) fit.
    est = cls(classes=[0, 1], delta=1e-3, random_state=0).fit([[0.5, -0.5]], [1])
    assert np.all(np.isfinite(est.coef_))
    # With the default delta = 1 / n^2 = 1: a clear error, nothing spent.
    accountant = BudgetAccountant(epsilon=10.0, delta=0.5)
    with pytest.raises(ValueError, match="delta"):
        cls(classes=[0, 1], accountant=accountant).fit([[0.5, -0.5]], [1])
    assert accountant.spent is None


@pytest.fixture(scope="module")
def rows_200():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    return X, (X[:, 0] > 0).astype(int)


# DP-SGD: learning_rate * alpha > 2 is refused only when the schedule's own
# steps diverge (privacy does not depend on the step size).
def test_weight_growth_hand_computed():
    # sqrt schedule, eta_0 alpha = 3: factors |1 - 3/sqrt(t)| = 2, 1.1213, 0.7321, ...
    growth, last = dpsgd_weight_growth(3.0, 1.0, "sqrt", 10)
    assert growth == pytest.approx(2.0 * (3.0 / math.sqrt(2.0) - 1.0), rel=1e-12)
    assert last == pytest.approx(3.0 / math.sqrt(10.0), rel=1e-12)
    # constant schedule: the same factor every step
    growth, last = dpsgd_weight_growth(3.0, 1.0, "constant", 4)
    assert growth == pytest.approx(2.0**4) and last == 3.0
    assert dpsgd_weight_growth(1.0, 1.0, "constant", 50) == (1.0, 1.0)


def test_sqrt_schedule_transient_large_step_is_fitted(rows_200):
    X, y = rows_200
    # eta_0 alpha = 10: eta_t alpha > 2 only for t < 25; the run has 40 steps.
    clf = DPSGDClassifier(epsilon=1.0, delta=1e-5, batch_size=20, epochs=4, learning_rate=10.0,
                          alpha=1.0, learning_rate_schedule="sqrt", classes=[0, 1],
                          random_state=0).fit(X, y)
    assert clf.n_iter_ == 40
    assert np.all(np.isfinite(clf.coef_))


@pytest.mark.parametrize("params", [
    # constant step: every step expands the weights
    {"learning_rate": 10.0, "alpha": 1.0, "learning_rate_schedule": "constant"},
    # linear schedule that starts expanding and whose transient overflows
    {"learning_rate": 1e4, "alpha": 1.0, "learning_rate_schedule": "linear", "epochs": 400},
    # sqrt schedule that ends while still expanding (eta_40 alpha = 20 / sqrt(40) > 2)
    {"learning_rate": 20.0, "alpha": 1.0, "learning_rate_schedule": "sqrt"},
    # sqrt schedule whose transient would overflow the weights (growth about 1e837)
    {"learning_rate": 100.0, "alpha": 1.0, "learning_rate_schedule": "sqrt", "epochs": 400},
])
def test_diverging_schedules_still_refused(data, params):
    X, y = data
    kwargs = {"epsilon": 1.0, "delta": 1e-5, "batch_size": 20, "epochs": 4, "classes": [0, 1],
              "random_state": 0, **params}
    with pytest.raises(ValueError, match="learning_rate.*alpha"):
        DPSGDClassifier(**kwargs).fit(X, y)


# A noise scale that over- or underflows is refused before the charge, by a
# message that names the public parameters behind it (it was "use a smaller
# epsilon", or no refusal at all and inf / NaN / noiseless weights after the
# charge).
SCALE_REFUSED = [
    # sensitivity 2 k eta R / b = 2.5e-301: the Gaussian noise underflows to 0
    # (was: "use a smaller epsilon" only)
    (PermutationSGDClassifier, {"epsilon": 1e300, "data_norm": 1e-150, "learning_rate": 1e-150},
     "smallest normal float", ["data_norm", "learning_rate"]),
    # sensitivity 2 R / (alpha b N) = 1e303 at epsilon = 1e-6: the noise overflows
    # (was: accepted, inf weights after the charge)
    (PermutationSGDClassifier, {"epsilon": 1e-6, "strongly_convex": True, "alpha": 1e-305,
                                "calibration": "thesis"}, "overflows", ["alpha", "data_norm"]),
    # z data_norm overflows (was: accepted, NaN weights after the charge)
    (DPSGDClassifier, {"epsilon": 1e-6, "delta": 1e-5, "data_norm": 1e305}, "overflows",
     ["data_norm"]),
    # the selection noise 2 s / epsilon_0 underflows to 0 (was: accepted, noiseless selection)
    (PrivateFrankWolfeClassifier, {"epsilon": 1e300, "delta": 0.0, "data_norm": 1e-300,
                                   "l1_radius": 1e-5}, "underflows", ["data_norm", "l1_radius"]),
    # ... or overflows (was: accepted, infinite noise on every score)
    (PrivateFrankWolfeClassifier, {"epsilon": 1e-2, "delta": 0.0, "data_norm": 1e300,
                                   "l1_radius": 1e6, "max_iter": 100}, "overflows",
     ["data_norm", "l1_radius"]),
]


@pytest.mark.parametrize("cls, params, how, names", SCALE_REFUSED)
def test_noise_scale_out_of_range_names_its_parameters(rows_200, cls, params, how, names):
    X, y = rows_200
    accountant = BudgetAccountant(epsilon=1e301, delta=0.5)
    est = cls(classes=[0, 1], random_state=0, accountant=accountant, **params)
    with pytest.raises(ValueError, match=how) as info:
        est.fit(X, y)
    message = str(info.value)
    for name in names:
        assert f"{name}=" in message
    assert "Nothing was spent" in message
    assert accountant.spent is None
