"""DP-SGD's calibration runs once per fit (not in every class problem), and
PermutationSGDClassifier's default step minimizes an excess-risk bound."""

import math

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from skdp.linear_model import DPSGDClassifier, PermutationSGDClassifier
from skdp.linear_model import _dpsgd, _permutation_sgd
from skdp.linear_model._dpsgd import dpsgd_noise_multiplier, dpsgd_schedule
from skdp.linear_model._permutation_sgd import (
    permutation_sgd_default_step,
    permutation_sgd_noise_step,
    permutation_sgd_sensitivity,
    permutation_sgd_sigma,
)
from skdp.mechanisms import gaussian_sigma_analytic


@pytest.fixture(scope="module")
def three_classes():
    return make_classification(600, 5, n_informative=3, n_classes=3, random_state=0)


def _counting(monkeypatch, module, name):
    calls = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


# --- 1. one calibration per fit -----------------------------------------------------------------

@pytest.mark.parametrize("backend", [None, "threading"])
def test_dpsgd_class_problems_do_not_recalibrate(three_classes, monkeypatch, backend):
    # Before: _prepare calibrated, then each of the 3 class problems called the
    # calibration again (4 calls; in a fresh loky worker, a cold-cache PLD run each).
    X, y = three_classes
    _dpsgd.dpsgd_noise_multiplier.cache_clear()
    calls = _counting(monkeypatch, _dpsgd, "dpsgd_noise_multiplier")
    est = DPSGDClassifier(epsilon=1.3, classes=[0, 1, 2], epochs=1, random_state=0,
                          multi_class="ovr", n_jobs=None if backend is None else 2)
    with joblib.parallel_config(backend=backend or "loky"):
        est.fit(X, y)
    assert len(calls) == 1
    # The 3 runs' 3 T steps under one account at the whole budget.
    assert est.noise_multiplier_ == _dpsgd.dpsgd_noise_multiplier(
        1.3, 1 / 600**2, est.sample_rate_, 3 * est.n_iter_)


def test_dpsgd_parallel_fit_is_bit_identical_to_serial(three_classes):
    X, y = three_classes
    est = DPSGDClassifier(epsilon=1.0, classes=[0, 1, 2], epochs=1, random_state=7)
    serial = clone(est).fit(X, y)
    parallel = clone(est).set_params(n_jobs=2).fit(X, y)  # loky processes
    assert np.array_equal(serial.coef_, parallel.coef_)
    assert np.array_equal(serial.intercept_, parallel.intercept_)
    assert serial.noise_multiplier_ == parallel.noise_multiplier_


@pytest.mark.parametrize("learning_rate, expected_calls", [(None, 2), (0.5, 1)])
def test_permutation_sgd_class_problems_do_not_recalibrate(three_classes, monkeypatch,
                                                           learning_rate, expected_calls):
    # _prepare: the default step's noise per unit sensitivity (when learning_rate=None),
    # then the output noise; nothing in the class problems.
    X, y = three_classes
    calls = _counting(monkeypatch, _permutation_sgd, "permutation_sgd_sigma")
    with joblib.parallel_config(backend="threading"):
        est = PermutationSGDClassifier(epsilon=1.0, classes=[0, 1, 2], n_jobs=2,
                                       learning_rate=learning_rate, multi_class="ovr",
                                       random_state=0).fit(X, y)
    assert len(calls) == expected_calls
    assert calls[-1][0] == math.sqrt(3) * est.sensitivity_  # the 3 vectors' joint release
    serial = clone(est).set_params(n_jobs=None).fit(X, y)
    assert np.array_equal(serial.coef_, est.coef_)


# --- 2. the default step -------------------------------------------------------------------------

def test_default_step_by_hand():
    # n = 1000, b = 64: N = 15 minibatches of at least 66; k = min(50, max(5, ceil(20000 /
    # 15))) = 50 passes; R = 2; d = 4 + 1 coefficients; one problem at (1, 1e-6): c = sigma
    # of sensitivity 1. The step puts the output noise's norm 2 c k eta R sqrt(d) / b at
    # 4 / R: eta = 4 b / (2 c k R^2 sqrt(d)) (below 1 / beta = 1).
    X, y = make_classification(1000, 4, random_state=1)
    est = PermutationSGDClassifier(epsilon=1.0, delta=1e-6, data_norm=2.0, classes=[0, 1],
                                   random_state=0).fit(X, y)
    c = gaussian_sigma_analytic(1.0, 1.0, 1e-6)
    assert est.epochs_ == 50 and est.n_iter_ == 50 * 15
    eta = 4.0 * 66 / (2.0 * c * 50 * 2.0**2 * math.sqrt(5))
    assert est.learning_rate_ == pytest.approx(eta, rel=1e-12)
    assert est.sensitivity_ == pytest.approx(2 * 50 * eta * 2.0 / 66, rel=1e-12)
    assert est.noise_std_ == pytest.approx(c * est.sensitivity_, rel=1e-9)
    # The expected noise norm is about 4 / R = 2 (the rule's target).
    assert est.noise_std_ * math.sqrt(5) == pytest.approx(4.0 / 2.0, rel=1e-9)


def test_default_step_is_clamped_to_one_over_beta():
    # Huber (h = 0.1): beta = R^2 / (2 h) = 5, 1 / beta = 0.2, while the bound's minimizer
    # for n = 100, b = 50 (N = 2), one pass at epsilon = 100 is about 0.7.
    c = permutation_sgd_sigma(1.0, 100.0, 1e-4)
    assert permutation_sgd_default_step(100, 50, 1, 1.0, 3, c, math.inf) > 0.6
    X, y = make_classification(100, 2, n_redundant=0, random_state=0)
    est = PermutationSGDClassifier(epsilon=100.0, delta=1e-4, loss="huber", epochs=1,
                                   classes=[0, 1], random_state=0).fit(X, y)
    assert est.learning_rate_ == 0.2


def test_default_step_follows_the_budget_and_the_classes(three_classes):
    X, y = three_classes
    steps = {(eps, k): PermutationSGDClassifier(epsilon=eps, classes=list(range(k)),
                                                random_state=0).fit(X, y % k).learning_rate_
             for eps in (0.3, 3.0) for k in (2, 3)}
    assert steps[0.3, 2] < steps[3.0, 2] and steps[0.3, 3] < steps[3.0, 3]
    assert steps[0.3, 3] < steps[0.3, 2]  # the budget split by 3: more noise per unit step


def test_default_is_an_explicit_step_bit_for_bit(three_classes):
    X, y = three_classes
    default = PermutationSGDClassifier(epsilon=1.0, classes=[0, 1, 2], random_state=4).fit(X, y)
    explicit = PermutationSGDClassifier(epsilon=1.0, classes=[0, 1, 2], random_state=4,
                                        learning_rate=default.learning_rate_).fit(X, y)
    assert np.array_equal(default.coef_, explicit.coef_)
    assert explicit.learning_rate_ == default.learning_rate_
    assert explicit.sensitivity_ == default.sensitivity_


@pytest.mark.parametrize("n_classes, floor", [(2, 0.55), (3, 0.7)])
def test_default_step_beats_one_over_beta(n_classes, floor):
    # Unit-norm generated rows, epsilon = 1. Measured (3 draws): 0.59 / 0.73 for the
    # noise-norm default step (0.70 / 0.76 for the earlier excess-risk step, which
    # collapsed on real tables), 0.37 / 0.24 for 1 / beta = 4.
    X, y = make_classification(6000, 5, n_informative=3, n_classes=n_classes, random_state=0)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    X_tr, X_te, y_tr, y_te = X[:4800], X[4800:], y[:4800], y[4800:]

    def score(**kw):
        return np.mean([PermutationSGDClassifier(epsilon=1.0, classes=list(range(n_classes)),
                                                 random_state=s, **kw)
                        .fit(X_tr, y_tr).score(X_te, y_te) for s in range(3)])

    new, old = score(), score(learning_rate=4.0)
    assert new > floor
    assert new > old + 0.1


def _data(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), np.arange(n) % k


@pytest.mark.parametrize("k", [2, 3])
def test_dpsgd_joint_account_applied_once(k):
    # P = 1 problem for two classes, K otherwise: the P T steps are accounted for together
    # at the whole (epsilon, delta), calibrated once in _prepare and used unchanged by
    # every class problem.
    X, y = _data(120, 2, k)
    est = DPSGDClassifier(epsilon=1.0, delta=1e-5, batch_size=40, epochs=1,
                          classes=list(range(k)), multi_class="ovr", random_state=0).fit(X, y)
    p = 1 if k == 2 else k
    q, steps = dpsgd_schedule(120, 40, 1)
    assert est.noise_multiplier_ == dpsgd_noise_multiplier(1.0, 1e-5, q, p * steps)


@pytest.mark.parametrize("k", [2, 3, 20])
def test_permutation_sgd_default_step_joint_release_applied_once(k):
    n, d = 200, 3
    X, y = _data(n, d, k)
    est = PermutationSGDClassifier(epsilon=1.0, delta=1e-5, classes=list(range(k)),
                                   multi_class="ovr", random_state=0).fit(X, y)
    p = 1 if k == 2 else k
    # The P vectors are one Gaussian release of sensitivity sqrt(P) Delta.
    c = permutation_sgd_sigma(math.sqrt(p), 1.0, 1e-5, "analytic")
    # Default batch 64 (N = 3 minibatches of at least 66) and 50 passes; the noise target
    # is 4 for two classes, min(4, 0.3 sqrt(d + 1)) = 0.6 otherwise.
    target = 4.0 if k == 2 else 0.3 * math.sqrt(d + 1)
    eta = permutation_sgd_noise_step(n, 64, 50, 1.0, d + 1, c, 1.0 / 0.25, noise_norm=target)
    # Wu et al. Thm. 3 (seed 004 Alg. 2): Delta = 2 k eta R / b with b = n // (n // 64).
    sensitivity = permutation_sgd_sensitivity(n, 64, 50, 1.0, learning_rate=eta)
    assert sensitivity == pytest.approx(2 * 50 * eta / 66, rel=1e-15)
    assert est.learning_rate_ == eta
    assert est.noise_std_ == permutation_sgd_sigma(math.sqrt(p) * sensitivity, 1.0, 1e-5,
                                                   "analytic")


def test_permutation_sgd_default_equals_explicit_and_ignores_values():
    X, y = _data(100, 3, 3)
    kw = dict(epsilon=1.0, delta=1e-5, classes=[0, 1, 2], random_state=0)
    default = PermutationSGDClassifier(**kw).fit(X, y)
    explicit = PermutationSGDClassifier(learning_rate=default.learning_rate_, **kw).fit(X, y)
    assert explicit.noise_std_ == default.noise_std_
    np.testing.assert_array_equal(explicit.coef_, default.coef_)
    other = PermutationSGDClassifier(**kw).fit(1e3 * X[::-1], y)  # other values, same shape
    assert (other.learning_rate_, other.noise_std_) == (default.learning_rate_,
                                                        default.noise_std_)


@pytest.mark.parametrize("cls, kw", [
    (DPSGDClassifier, dict(delta=1e-5, batch_size=20, epochs=1)),
    (PermutationSGDClassifier, dict(delta=1e-5)),
])
def test_sgd_workers_match_serial(cls, kw):
    # The calibration travels in ``settings``: the joblib workers use the parent's value.
    X, y = _data(60, 3, 3)
    serial = cls(epsilon=1.0, classes=[0, 1, 2], random_state=0, n_jobs=1, **kw).fit(X, y)
    parallel = cls(epsilon=1.0, classes=[0, 1, 2], random_state=0, n_jobs=2, **kw).fit(X, y)
    np.testing.assert_array_equal(serial.coef_, parallel.coef_)


@pytest.mark.parametrize("n", [1, 2])
def test_tiny_n_and_batch_larger_than_n(n):
    X = np.array([[1.0, 0.0], [0.0, 1.0]])[:n]
    y = np.arange(n) % 2
    est = PermutationSGDClassifier(epsilon=1.0, delta=0.1, batch_size=500, epochs=1,
                                   classes=[0, 1], random_state=0).fit(X, y)
    # One minibatch of all n rows: Delta = 2 eta R / n.
    assert est.sensitivity_ == pytest.approx(2 * est.learning_rate_ / n, rel=1e-15)
    dp = DPSGDClassifier(epsilon=1.0, delta=0.1, batch_size=500, epochs=1, classes=[0, 1],
                         random_state=0).fit(X, y)
    assert (dp.sample_rate_, dp.n_iter_) == (1.0, 1)


class _QuarterPSGD(PermutationSGDClassifier):
    def _noise_std(self, settings, budget):
        return super()._noise_std(settings, budget) / 4


def test_audit_permutation_sgd_default_step():
    # The default step is resolved in _prepare and the sensitivity 2 k eta R / b is computed
    # from it: on rows x = 0 plus one row x = 1 whose label flips (Huber, margin 0 in the
    # linear zone), one pass with b = 1 releases exactly +-eta + noise, attaining 2 eta.
    from skdp.testing import audit_epsilon

    n = 10
    X = np.zeros((n, 1))
    X[-1, 0] = 1.0
    y0 = np.array([0, 1] * (n // 2))
    y0[-1] = 1
    y1 = y0.copy()
    y1[-1] = 0
    kw = dict(epsilon=2.0, delta=1e-5, loss="huber", batch_size=1, epochs=1,
              fit_intercept=False, classes=[0, 1])
    fitted = PermutationSGDClassifier(**kw, random_state=0).fit(X, y0)
    assert fitted.sensitivity_ == pytest.approx(2 * fitted.learning_rate_, rel=1e-15)

    def audit(cls):
        def mechanism(data, rng):
            return cls(**kw, random_state=rng).fit(*data).coef_[0, 0]
        return audit_epsilon(mechanism, (X, y0), (X, y1), n_runs=500, n_select=150,
                             delta=1e-5, random_state=12345).epsilon_lower_bound

    assert audit(PermutationSGDClassifier) < 2.0
    assert audit(_QuarterPSGD) > 2.0
