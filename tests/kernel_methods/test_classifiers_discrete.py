"""Exact discrete Laplace noise (mechanism='discrete_laplace') for seed 000's kernel learners:
PrivateKernelClassifier (TDDL), PrivateKernelNetClassifier (TDIL), InteractiveKernelPredictor."""

import math
import pickle
import warnings
from fractions import Fraction

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_moons
from sklearn.model_selection import GridSearchCV

import skdp.kernel_methods._classifiers as classifiers_module
import skdp.kernel_methods._idc as idc_module
from _kernel_audit import erm_pair
from skdp import BudgetAccountant, PrivacyBudget
from skdp.accounting import advanced_composition
from skdp.kernel_methods import (
    InteractiveKernelPredictor,
    PrivateKernelClassifier,
    PrivateKernelNetClassifier,
)
from skdp.kernel_methods._classifiers import (
    tddl_discrete_laplace,
    tddl_laplace_scale,
    tddl_query_epsilon,
)
from skdp.testing import audit_epsilon

DL = dict(mechanism="discrete_laplace")


# --- the calibration, by hand --------------------------------------------------------------------

def test_discrete_laplace_basic_composition_by_hand():
    # 50 values of sensitivity 0.01 at epsilon = 2, delta = 0: the continuous scale is
    # 50 * 0.01 / 2 = 0.25 = 2**-2, so g = 2**-32 (value bound 8 needs only 2**-49).
    scale = tddl_laplace_scale(0.01, 50, 2.0, 0.0)
    assert scale == 0.25
    g, t, noise_scale = tddl_discrete_laplace(scale, 0.01, 50, 2.0, 0.0, 8.0)
    assert g == 2.0**-32
    # One rounded value moves by ceil(0.01 (1 + 2**-40) 2**32) steps; t = 50 that / 2,
    # rounded up to 24 significant bits.
    steps = math.ceil(Fraction(0.01 * (1 + 2.0**-40)) * 2**32)
    assert 42_949_672 < steps <= 42_949_674
    assert Fraction(50 * steps, 2) <= t <= Fraction(50 * steps, 2) * (1 + Fraction(1, 2**23))
    assert noise_scale == pytest.approx(0.25, rel=1e-7)


def test_discrete_laplace_advanced_composition_by_hand():
    # 200 values at (1, 1e-6): the per-query epsilon of the advanced composition
    # (checked: it composes to at most epsilon), and t = ceil(Delta / g) / epsilon_0.
    eps0 = tddl_query_epsilon(200, 1.0, 1e-6)
    assert 1.0 / 200 < eps0 < 1.0 / math.sqrt(400)
    # Seed 004, Lemma 2.1.6 (KOV form) with delta' = 1e-6, the whole delta:
    # T eps0 tanh(eps0 / 2) + sqrt(T) eps0 sqrt(2 min(ln(e + sqrt(T) eps0 / delta'), ln(1 / delta'))).
    norm = math.sqrt(200) * eps0
    composed = 200 * eps0 * math.tanh(eps0 / 2) + norm * math.sqrt(
        2 * min(math.log(math.e + norm / 1e-6), math.log(1e6)))
    assert 1.0 - 1e-9 < composed <= 1.0
    scale = tddl_laplace_scale(0.01, 200, 1.0, 1e-6)
    assert scale == 0.01 / eps0
    g, t, _ = tddl_discrete_laplace(scale, 0.01, 200, 1.0, 1e-6, 1.0)
    assert g == 2.0 ** (math.floor(math.log2(scale)) - 30)
    steps = math.ceil(Fraction(0.01 * (1 + 2.0**-40)) / Fraction(g))
    target = Fraction(steps) / Fraction(eps0)
    assert target <= t <= target * (1 + Fraction(1, 2**23))


def test_rounding_step_counts_when_the_grid_is_coarse():
    # A value bound of 2**60 (in [2**60, 2**61)) forces g = 2**(61 - 52) = 512 (so that
    # 2**52 g > the bound), far coarser than the sensitivity 0.1: one rounded value still
    # moves by up to one whole step (ceil(0.1 / 512) = 1), so t = 1 / epsilon = 10 steps,
    # not 0.1 / (512 epsilon).
    g, t, noise_scale = tddl_discrete_laplace(1.0, 0.1, 1, 0.1, 0.0, 2.0**60)
    assert g == 512.0
    assert t == 10
    assert noise_scale == 5120.0


def test_estimator_noise_parameters_by_hand():
    X, y = make_moons(400, noise=0.1, random_state=0)
    Z, _ = make_moons(30, noise=0.1, random_state=1)
    est = PrivateKernelClassifier(gamma=2.0, alpha=0.1, classes=[0, 1], epsilon=2.0, delta=0.0,
                                  random_state=0, **DL).fit(X, y, X_public=Z)
    # RBF: kappa = 1; Delta = R_phi^2 (2 / (lambda n)) (1 + 1e-3) with the certificate term.
    value_sens = 2.0 / (0.1 * 400) * (1 + 1e-3)
    assert est.prediction_sensitivity_ == pytest.approx(value_sens, rel=1e-12)
    scale = 30 * est.prediction_sensitivity_ / 2.0  # basic composition over T = 30
    g = est.noise_granularity_
    assert g == 2.0 ** (math.floor(math.log2(scale)) - 30)
    steps = math.ceil(Fraction(est.prediction_sensitivity_ * (1 + 2.0**-40)) / Fraction(g))
    t = Fraction(est.noise_scale_) / Fraction(g)
    assert Fraction(30 * steps, 2) <= t <= Fraction(30 * steps, 2) * (1 + Fraction(1, 2**23))
    assert est.privacy_spent_ == PrivacyBudget(2.0, 0.0)


# --- the releases are exact grid multiples with the calibrated spread --------------------------------

def test_tddl_noisy_predictions_are_grid_multiples_with_the_calibrated_spread(monkeypatch):
    # Rows at 0 and 2000 public points far away (k = 0 between them): every prediction
    # is 0, so the noisy targets are g Z exactly.
    (X, y), _ = erm_pair(10)
    Z = np.linspace(100.0, 10**5, 2000)[:, None]
    seen = []
    real = classifiers_module.ball_least_squares
    monkeypatch.setattr(classifiers_module, "ball_least_squares",
                        lambda K, target, radius: seen.append(target) or real(K, target, radius))
    est = PrivateKernelClassifier(alpha=10.0, loss="huber", epsilon=1.0, delta=0.0,
                                  classes=[0, 1], random_state=3, **DL).fit(X, y, X_public=Z)
    z = seen[0] / est.noise_granularity_
    assert np.array_equal(z, np.round(z))
    # E|Z| of a discrete Laplace of scale t ~ 2**30 steps is t (within 1e-9): rel. s.e. 1/sqrt(N).
    ratio = np.mean(np.abs(z)) * est.noise_granularity_ / est.noise_scale_
    assert abs(ratio - 1.0) <= 5.5 / math.sqrt(z.size)


def test_interactive_paid_answers_are_grid_multiples():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 2))
    y = (X[:, 0] > 0).astype(int)
    service = InteractiveKernelPredictor(gamma=0.5, alpha=1.0, classes=[0, 1], epsilon=5.0,
                                         max_updates=10, random_state=0, **DL).fit(X, y)
    answers = service.decision_function(rng.normal(size=(100, 2)))
    g = service.noise_granularity_
    on_grid = np.sum(answers / g == np.round(answers / g))
    assert service.n_updates_ >= 1 and on_grid >= service.n_updates_
    assert service.noise_scale_ == pytest.approx(
        tddl_laplace_scale(service.sensitivity_, 10, 2.5, 5e-7), rel=1e-6)


# --- audits ---------------------------------------------------------------------------------------

def _quarter(monkeypatch, module):
    real = module.tddl_discrete_laplace

    def shrunk(*args, **kwargs):
        g, t, scale = real(*args, **kwargs)
        return g, t / 4, scale / 4

    monkeypatch.setattr(module, "tddl_discrete_laplace", shrunk)


def _tddl_mechanism(dataset, rng):
    # One public point at the data (Huber, alpha n = 100: the prediction moves by the full
    # sensitivity, see erm_pair); pure DP, so the single noisy prediction spends epsilon.
    est = PrivateKernelClassifier(alpha=10.0, loss="huber", epsilon=1.0, delta=0.0,
                                  classes=[0, 1], random_state=rng, **DL)
    return est.fit(*dataset, X_public=[[0.0]]).dual_coef_[0, 0]


def _net_mechanism(dataset, rng):
    # TDIL's Laplace step (as tests/kernel_methods/test_kernel_methods_audit.py::test_audit_tdil): one
    # round on a 2-point net, threshold at D1's value.
    est = PrivateKernelNetClassifier(alpha=10.0, loss="huber", bounds=(-50.0, 50.0),
                                     n_public=2, n_rounds=1, threshold=0.02, epsilon=1.0,
                                     delta=0.0, classes=[0, 1], random_state=rng, **DL)
    return est.fit(*dataset).dual_coef_[0, 0]


@pytest.mark.parametrize("mechanism, module, at", [
    (_tddl_mechanism, classifiers_module, 0.0),
    (_net_mechanism, classifiers_module, None),
], ids=["tddl", "tdil"])
def test_audit_passes_and_catches_quarter_noise(monkeypatch, mechanism, module, at):
    if at is None:  # the net's first point (scrambled Halton over the box)
        from skdp.kernel_methods._functional import public_support
        at = public_support((-50.0, 50.0), 2, 1)[0, 0]
    d0, d1 = erm_pair(10, at=at)

    def bound(seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return audit_epsilon(mechanism, d0, d1, n_runs=600, n_select=200,
                                 random_state=seed).epsilon_lower_bound

    assert bound(0) <= 1.0
    _quarter(monkeypatch, module)
    assert bound(1) > 1.0


# --- utility --------------------------------------------------------------------------------------

def test_accuracy_matches_the_laplace_mechanism():
    X, y = make_moons(1500, noise=0.1, random_state=0)
    Z, _ = make_moons(60, noise=0.1, random_state=1)
    X_te, y_te = make_moons(1000, noise=0.1, random_state=2)
    scores = {
        mechanism: np.mean([
            PrivateKernelClassifier(gamma=2.0, alpha=0.1, classes=[0, 1], epsilon=3.0,
                                    mechanism=mechanism, random_state=s)
            .fit(X, y, X_public=Z).score(X_te, y_te) for s in range(5)])
        for mechanism in ("laplace", "discrete_laplace")}
    assert min(scores.values()) > 0.8, scores
    assert abs(scores["discrete_laplace"] - scores["laplace"]) < 0.05, scores


# --- API ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: PrivateKernelClassifier(gamma=2.0, alpha=0.1, bounds=(-1.5, 2.5), n_public=30,
                                    epsilon=20.0, classes=[0, 1], random_state=4, **DL),
    lambda: PrivateKernelNetClassifier(gamma=2.0, alpha=0.5, bounds=(-1.5, 2.5), n_public=50,
                                       n_rounds=20, epsilon=20.0, classes=[0, 1],
                                       random_state=4, **DL),
], ids=["tddl", "tdil"])
def test_pickle_clone_and_grid_search(make):
    X, y = make_moons(600, noise=0.1, random_state=0)
    est = make().fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    assert np.array_equal(again.dual_coef_, est.dual_coef_)
    assert np.array_equal(clone(est).fit(X, y).dual_coef_, est.dual_coef_)  # same exact draws
    grid = GridSearchCV(clone(est), {"mechanism": ["laplace", "discrete_laplace"]},
                        cv=2).fit(X, y)
    assert grid.cv_results_["mean_test_score"].min() > 0.7
    best = grid.best_estimator_
    assert (best.noise_granularity_ is None) == (best.mechanism == "laplace")


@pytest.mark.parametrize("cls", [PrivateKernelClassifier, PrivateKernelNetClassifier,
                                 InteractiveKernelPredictor])
@pytest.mark.parametrize("params, match", [
    ({"mechanism": "gaussian"}, "mechanism"),
    ({"mechanism": "discrete"}, "mechanism"),
    # t beyond 2**52 grid steps: refused before the charge.
    ({"mechanism": "discrete_laplace", "epsilon": 1e-20}, "too small"),
])
def test_bad_mechanism_fails_before_spending(cls, params, match):
    X, y = make_moons(60, noise=0.1, random_state=0)
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    est = cls(classes=[0, 1], accountant=accountant, delta=1e-6, **params)
    if cls is not InteractiveKernelPredictor:
        est.set_params(n_public=20)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)
    assert accountant.spent is None


def test_default_keeps_the_float_laplace_release():
    X, y = make_moons(300, noise=0.1, random_state=0)
    for est in (PrivateKernelClassifier(n_public=20, classes=[0, 1], random_state=0),
                PrivateKernelNetClassifier(n_public=20, n_rounds=5, classes=[0, 1],
                                           random_state=0)):
        est.fit(X, y)
        assert est.noise_granularity_ is None
        assert est.noise_scale_ == tddl_laplace_scale(
            est.kappa_ * est.sensitivity_,
            # TDDL: one query per public point; TDIL: two per round (not per net point).
            20 if isinstance(est, PrivateKernelClassifier) else 2 * 5,
            1.0, est.delta_)


def test_net_discrete_scale_follows_its_composition():
    # TDIL composes 2 B n_functions mechanisms (B = n_rounds), whatever the net size: at
    # delta = 0 the discrete scale is 2 * 5 * Delta / epsilon up to the grid's 2**-30.
    X, y = make_moons(300, noise=0.1, random_state=0)
    est = PrivateKernelNetClassifier(n_public=20, n_rounds=5, epsilon=2.0, delta=0.0,
                                     classes=[0, 1], random_state=0, **DL).fit(X, y)
    assert est.noise_scale_ == pytest.approx(10 * est.kappa_ * est.sensitivity_ / 2.0,
                                             rel=1e-6)


def test_interactive_paid_answers_have_the_calibrated_spread():
    # Balanced labels on rows at 0: w* = 0 there, and query points 100 apart (RBF: k = 0
    # between them) make both w* and the public model 0 at every query, so each paid
    # answer is g Z (the public range 1 / alpha is ~60 noise scales: clipping is negligible).
    X, y = np.zeros((500, 1)), np.arange(500) % 2
    queries = 100.0 * np.arange(1, 81)[:, None]
    paid, scale = [], None
    for seed in range(8):
        service = InteractiveKernelPredictor(loss="huber", alpha=1.0, max_updates=20,
                                             threshold=1e-9, epsilon=10.0, classes=[0, 1],
                                             random_state=seed, **DL).fit(X, y)
        answers = service.decision_function(queries)
        paid.extend(answers[answers != 0.0])
        scale = service.noise_scale_
    paid = np.asarray(paid)
    assert paid.size >= 100
    # E|Z| = t within 1e-9 for t ~ 2**30 steps; the mean of |Z| has rel. s.e. 1 / sqrt(N).
    assert abs(np.mean(np.abs(paid)) / scale - 1.0) <= 5.5 / math.sqrt(paid.size)


@pytest.mark.parametrize("n_queries, epsilon, delta", [
    # Basic composition beats advanced here: the bisection never moves lo = eps / n,
    # whose float rounds up (3 * fl(eps / 3) summed in floats is one ulp above eps).
    (3, 0.9061385527067806, 3.915988251408464e-06),
    (5, 1.2757460824280014, 1e-6),
])
def test_query_epsilon_composes_within_epsilon_when_basic_composition_wins(n_queries, epsilon,
                                                                           delta):
    eps0 = tddl_query_epsilon(n_queries, epsilon, delta)
    composed = advanced_composition([PrivacyBudget(eps0)] * n_queries, delta).epsilon
    assert composed <= epsilon
    assert eps0 >= epsilon / n_queries * (1.0 - 1e-15)  # at most an ulp or so given up


def test_discrete_laplace_grid_and_scale_by_hand():
    # scale 0.5 -> g = 2**-31 (largest power of two <= 0.5 * 2**-30; the bound 1 asks only
    # 2**-51); Delta / g = 0.05 * 2**31 = 107374182.4 -> 107374183 steps; basic composition
    # over 10 values at epsilon 1: t = 1073741830, rounded up to 24 bits (multiples of 64):
    # 16777217 * 64 = 1073741888.
    g, t, noise_scale = tddl_discrete_laplace(0.5, 0.05, 10, 1.0, 0.0, 1.0)
    assert g == 2.0**-31
    assert t == Fraction(1073741888)
    assert noise_scale == 1073741888 * 2.0**-31
    assert 10 * Fraction(107374183) / t <= 1  # the exact per-value epsilon composes to <= 1


@pytest.mark.parametrize("cls, params", [
    (PrivateKernelClassifier, {"n_public": 5}),
    (PrivateKernelNetClassifier, {"n_public": 5, "n_rounds": 2}),
    (InteractiveKernelPredictor, {"max_updates": 2}),
])
def test_grid_out_of_range_fails_before_the_charge(cls, params):
    # alpha = 1e300: the noise scale, and the grid 2**-30 times it, fall below 2**-900, the
    # finest grid the release accepts. That is public: refuse before the budget is spent.
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    accountant = BudgetAccountant(epsilon=10.0, delta=0.5)
    est = cls(alpha=1e300, mechanism="discrete_laplace", classes=[0, 1], random_state=0,
              accountant=accountant, **params)
    with pytest.raises(ValueError, match="granularity"):
        est.fit(X, y)
    assert accountant.spent is None
    with pytest.raises(ValueError, match="granularity"):
        tddl_discrete_laplace(1e-302, 1e-303, 1, 1.0, 0.0, 1e-302)


@pytest.mark.parametrize("mechanism", ["laplace", "discrete_laplace"])
@pytest.mark.parametrize("cls, params", [
    (PrivateKernelClassifier, {"n_public": 5}),
    (PrivateKernelNetClassifier, {"n_public": 5, "n_rounds": 2}),
    (InteractiveKernelPredictor, {"max_updates": 2}),
])
@pytest.mark.parametrize("setting", [{"epsilon": 1e-308}, {"alpha": 5e-324}])
def test_overflowing_noise_scale_fails_before_the_charge(cls, params, mechanism, setting):
    # The Laplace scale (epsilon = 1e-308) or the sensitivity (alpha = 5e-324) overflows:
    # public, so a clear ValueError before the charge (the float path failed after it, the
    # discrete one raised OverflowError).
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    accountant = BudgetAccountant(epsilon=10.0, delta=0.5)
    est = cls(mechanism=mechanism, classes=[0, 1], random_state=0, accountant=accountant,
              **params, **setting)
    with pytest.raises(ValueError):
        est.fit(X, y)
    assert accountant.spent is None
