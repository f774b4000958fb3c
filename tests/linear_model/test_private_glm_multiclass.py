"""One-vs-rest budgets: Gaussian-type noise of the K class problems is one release.

One record is a row of every class problem, so it moves all K weight vectors at once:
the K vectors are one Gaussian release of L2 sensitivity sqrt(K) Delta at the whole
(epsilon, delta) (DP-SGD: K T subsampled-Gaussian steps under one account; Frank-Wolfe:
rho / K of the zCDP budget each), not K releases at (epsilon / K, delta / K). Pure-DP
noise keeps the even split. The binary case is unchanged.
"""

import math

import numpy as np
import pytest

from skdp import PrivacyBudget
from skdp.linear_model import (
    DPSGDClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    PermutationSGDClassifier,
    PrivateFrankWolfeClassifier,
)
from skdp.linear_model._dpsgd import dpsgd_noise_multiplier, dpsgd_schedule
from skdp.linear_model._frank_wolfe import frank_wolfe_noise
from skdp.linear_model._permutation_sgd import permutation_sgd_sigma
from skdp.mechanisms import discrete_gaussian_sigma2, gaussian_sigma_analytic
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF
from skdp.svm._base import svm_noise_scale
from skdp.testing import audit_epsilon
from skdp.utils._multiclass import OneVsRestBudget, one_vs_rest_noise_ratios


def _data(n, k, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) / 3.0, np.arange(n) % k


def _split(cls):
    """The same estimator with the even split of earlier versions (basic composition)."""
    return type(f"Split{cls.__name__}", (cls,), {"_multiclass_accounting": "split"})


# --- the budget object ---------------------------------------------------------------------------

def test_one_problem_is_the_plain_budget_either_way():
    total = PrivacyBudget(1.0, 1e-6)
    for joint in (True, False):
        share = OneVsRestBudget(total, 1, joint)
        assert share.gaussian() == (1.0, 1.0, 1e-6)
        assert share.composed_steps(7) == (1.0, 1e-6, 7)
        assert (share.epsilon, share.delta) == (1.0, 1e-6)


@pytest.mark.parametrize("k", [3, 10])
def test_joint_and_split_shares_by_hand(k):
    total = PrivacyBudget(1.0, 1e-8)
    joint, split = OneVsRestBudget(total, k), OneVsRestBudget(total, k, joint=False)
    assert joint.gaussian() == (math.sqrt(k), 1.0, 1e-8)
    assert split.gaussian() == (1.0, 1.0 / k, 1e-8 / k)
    assert joint.composed_steps(5) == (1.0, 1e-8, 5 * k)
    assert split.composed_steps(5) == (1.0 / k, 1e-8 / k, 5)
    # Pure-DP noise reads the even share in both.
    assert (joint.epsilon, joint.delta) == (split.epsilon, split.delta) == (1.0 / k, 1e-8 / k)


def test_noise_ratios_at_ten_classes():
    # n = 1e4, epsilon = 1, delta = 1 / n^2: the split's noise is 3.1 times the joint's.
    r = one_vs_rest_noise_ratios(10, 10_000, 1.0, epochs=2)  # (few DP-SGD steps: fast)
    split, joint = r["gaussian"]
    assert split == pytest.approx(gaussian_sigma_analytic(1.0, 0.1, 1e-9))
    assert joint == pytest.approx(gaussian_sigma_analytic(math.sqrt(10), 1.0, 1e-8))
    assert (round(split, 1), round(joint, 1)) == (50.2, 16.1)
    for name in ("gaussian", "discrete_gaussian", "dpsgd", "frank_wolfe"):
        split, joint = r[name]
        assert 3.0 < split / joint < 3.2, name


# --- each estimator: hand-computed scales, K = 3 and 10 -----------------------------------------

@pytest.mark.parametrize("k", [3, 10])
def test_permutation_sgd_output_noise_is_one_release(k):
    X, y = _data(200, k)
    kw = dict(epsilon=1.0, delta=1e-6, learning_rate=0.1, multi_class="ovr",
              classes=list(range(k)), random_state=0)
    est = PermutationSGDClassifier(**kw).fit(X, y)
    old = _split(PermutationSGDClassifier)(**kw).fit(X, y)
    sens = est.sensitivity_
    assert est.noise_std_ == permutation_sgd_sigma(math.sqrt(k) * sens, 1.0, 1e-6, "analytic")
    assert old.noise_std_ == permutation_sgd_sigma(sens, 1.0 / k, 1e-6 / k, "analytic")
    assert old.noise_std_ / est.noise_std_ > (1.6 if k == 3 else 2.8)
    assert est.privacy_spent_ == PrivacyBudget(1.0, 1e-6)


@pytest.mark.parametrize("k", [3, 10])
def test_dpsgd_steps_of_all_classes_share_one_account(k):
    X, y = _data(100, k)
    # Full batches (q = 1, one step each) keep the accountant fast.
    kw = dict(epsilon=1.0, delta=1e-5, batch_size=100, epochs=1, classes=list(range(k)),
              multi_class="ovr", random_state=0)
    est = DPSGDClassifier(**kw).fit(X, y)
    old = _split(DPSGDClassifier)(**kw).fit(X, y)
    q, steps = dpsgd_schedule(100, 100, 1)
    assert est.noise_multiplier_ == dpsgd_noise_multiplier(1.0, 1e-5, q, k * steps)
    assert old.noise_multiplier_ == dpsgd_noise_multiplier(1.0 / k, 1e-5 / k, q, steps)
    assert old.noise_multiplier_ / est.noise_multiplier_ > (1.5 if k == 3 else 2.5)


@pytest.mark.parametrize("k", [3, 10])
def test_frank_wolfe_splits_rho_not_epsilon(k):
    X, y = _data(500, k)
    X = np.abs(X)
    kw = dict(epsilon=1.0, delta=1e-6, max_iter=20, l1_radius=5.0, classes=list(range(k)),
              random_state=0)
    est = PrivateFrankWolfeClassifier(**kw).fit(X, y)
    old = _split(PrivateFrankWolfeClassifier)(**kw).fit(X, y)
    # zCDP (Cesar and Rogers 2021): k T steps of eps0^2 / 8 each spend rho(1, 1e-6).
    assert est.noise_scale_ == frank_wolfe_noise(500, 1.0, 5.0, 1.0, 1e-6, 20,
                                                 n_problems=k)[0]
    from skdp.accounting import zcdp_for_dp
    assert est.step_epsilon_ == pytest.approx(math.sqrt(8 * zcdp_for_dp(1.0, 1e-6) / (k * 20)))
    assert old.noise_scale_ == frank_wolfe_noise(500, 1.0, 5.0, 1.0 / k, 1e-6 / k, 20)[0]
    assert old.noise_scale_ / est.noise_scale_ > (1.5 if k == 3 else 2.5)


@pytest.mark.parametrize("k", [3, 10])
@pytest.mark.parametrize("cls", [PrivateLinearSVM, PrivateSVMRFF])
def test_svm_gaussian_noise_is_one_release(cls, k):
    X, y = _data(300, k)
    kw = dict(epsilon=1.0, delta=1e-6, mechanism="gaussian", C=1.0, classes=list(range(k)),
              random_state=0)
    est = cls(**kw).fit(X, y)
    old = _split(cls)(**kw).fit(X, y)
    sens = est.sensitivity_
    assert est.noise_scale_ == pytest.approx(gaussian_sigma_analytic(math.sqrt(k) * sens,
                                                                     1.0, 1e-6))
    assert old.noise_scale_ == pytest.approx(gaussian_sigma_analytic(sens, 1.0 / k, 1e-6 / k))


@pytest.mark.parametrize("k", [3, 10])
def test_discrete_gaussian_sigma2_is_k_times_one_vectors(k):
    # CKS: squared grid shifts add over the K vectors, sigma^2 = K Delta_g^2 / (2 rho).
    X, y = _data(300, k)
    est = PrivateLinearSVM(epsilon=1.0, delta=1e-6, mechanism="discrete_gaussian", C=1.0,
                           classes=list(range(k)), random_state=0).fit(X, y)
    g = est.noise_granularity_
    sigma2 = discrete_gaussian_sigma2(est.sensitivity_ * (1 + 2.0**-40), 1.0, 1e-6, g,
                                      X.shape[1] + 1)
    assert est.noise_scale_ == pytest.approx(math.sqrt(float(k * sigma2)) * g)
    out = OutputPerturbationClassifier(epsilon=1.0, delta=1e-6, mechanism="discrete_gaussian",
                                       alpha=0.1, multi_class="ovr", classes=list(range(k)),
                                       random_state=0).fit(X, y)
    old = _split(OutputPerturbationClassifier)(**out.get_params()).fit(X, y)
    assert old.noise_scale_ / out.noise_scale_ > (1.6 if k == 3 else 2.8)


def test_pure_dp_noise_keeps_the_even_split():
    # Laplace-type noise: a joint release of K vectors has K times the L1 sensitivity, so it
    # costs exactly the even split of epsilon.
    k = 3
    X, y = _data(300, k)
    svm = PrivateLinearSVM(epsilon=1.5, C=1.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert svm.noise_scale_ == pytest.approx(svm_noise_scale("laplace", svm.sensitivity_,
                                                             X.shape[1] + 1, 0.5, 0.0))
    out = OutputPerturbationClassifier(epsilon=1.5, alpha=0.1, multi_class="ovr",
                                       classes=[0, 1, 2], random_state=0).fit(X, y)
    assert out.noise_scale_ == pytest.approx(out.sensitivity_ / 0.5)
    for cls in (OutputPerturbationClassifier, ObjectivePerturbationClassifier):
        kw = dict(multi_class="ovr") if cls is OutputPerturbationClassifier else {}
        a = cls(epsilon=1.5, alpha=0.1, classes=[0, 1, 2], random_state=0, **kw).fit(X, y)
        b = _split(cls)(epsilon=1.5, alpha=0.1, classes=[0, 1, 2], random_state=0,
                        **kw).fit(X, y)
        np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("make", [
    lambda: PermutationSGDClassifier(epsilon=1.0, delta=1e-6, learning_rate=0.1),
    lambda: DPSGDClassifier(epsilon=1.0, delta=1e-5, batch_size=200, epochs=1),
    lambda: PrivateFrankWolfeClassifier(epsilon=1.0, delta=1e-6, max_iter=20, l1_radius=5.0),
    lambda: PrivateLinearSVM(epsilon=1.0, delta=1e-6, mechanism="gaussian", C=1.0),
    lambda: OutputPerturbationClassifier(epsilon=1.0, delta=1e-6, alpha=0.1,
                                         mechanism="discrete_gaussian"),
])
def test_binary_fits_are_unchanged(make):
    # Two classes are one problem: both accountings give the same release, bit for bit.
    X, y = _data(200, 2)
    X = np.abs(X)
    est = make().set_params(classes=[0, 1], random_state=0).fit(X, y)
    old = _split(type(est))(**est.get_params()).fit(X, y)
    np.testing.assert_array_equal(est.coef_, old.coef_)


# --- audit: the joint release keeps its claim, and a quarter-noise copy is caught --------------

def _three_class_pair(n=9):
    """Rows x = 0 (no gradient) plus a row x = +1 or -1 of class 0: every problem moves."""
    X = np.zeros((n, 1))
    X[-1, 0] = 1.0
    y = np.arange(n) % 3
    y[-1] = 0
    return (X, y), (-X, y)


class _QuarterJointPSGD(PermutationSGDClassifier):
    def _noise_std(self, settings, budget):
        return super()._noise_std(settings, budget) / 4


class _QuarterJointDPSGD(DPSGDClassifier):
    def _noise_multiplier(self, settings, budget):
        return super()._noise_multiplier(settings, budget) / 4


def _audit_joint(cls, scale=1.0, **kw):
    # Every class problem moves by the same amount along (1, -1, -1) (class 0 is +1, the
    # others -1): the three vectors move by sqrt(3) times one problem's sensitivity, the
    # joint sensitivity. The statistic projects the release on that direction.
    (X, y), _ = _three_class_pair()
    d0, d1 = (scale * X, y), (-scale * X, y)
    direction = np.array([1.0, -1.0, -1.0]) / math.sqrt(3)
    kw.update(fit_intercept=False, classes=[0, 1, 2])

    def mechanism(data, rng):
        return float(direction @ cls(**kw, random_state=rng).fit(*data).coef_[:, 0])

    return audit_epsilon(mechanism, d0, d1, n_runs=500, n_select=150, delta=kw["delta"],
                         random_state=12345).epsilon_lower_bound


def test_audit_joint_multiclass_output_release():
    # One pass, b = 1, eta = 0.1, Huber (l'(0) = -1): problem k outputs eta y_k x exactly,
    # so each moves by 2 eta, the sensitivity of one problem.
    kw = dict(epsilon=2.0, delta=1e-5, loss="huber", learning_rate=0.1, batch_size=1,
              epochs=1)
    assert _audit_joint(PermutationSGDClassifier, **kw) < 2.0
    assert _audit_joint(_QuarterJointPSGD, **kw) > 2.0


def test_audit_joint_multiclass_dpsgd_steps():
    # One full-batch step per class: the row x = +-10 has its gradient clipped to norm 1
    # with opposite signs, so each class's gradient sum moves by 2 C; the three steps are
    # accounted for as one composition.
    kw = dict(epsilon=2.0, delta=1e-5, batch_size=9, epochs=1, multi_class="ovr")
    assert _audit_joint(DPSGDClassifier, 10.0, **kw) < 2.0
    assert _audit_joint(_QuarterJointDPSGD, 10.0, **kw) > 2.0


@pytest.mark.parametrize("n_classes", [2, 3])
def test_dpsgd_event_is_its_calibrated_release_and_composes_below_basic(n_classes):
    import dp_accounting

    from skdp.accounting import BudgetAccountant
    from skdp.accounting._events import compose_events

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.arange(600) % n_classes
    classes = list(range(n_classes))
    model = DPSGDClassifier(1.0, 1e-6, classes=classes, multi_class="ovr",
                            random_state=0).fit(X, y)
    event = model.privacy_event_
    assert isinstance(event, dp_accounting.SelfComposedDpEvent)
    assert isinstance(event.event, dp_accounting.PoissonSampledDpEvent)
    # K class runs of T steps each, at the calibrated multiplier.
    problems = 1 if n_classes == 2 else n_classes
    assert event.count == problems * model.n_iter_
    assert event.event.event.noise_multiplier == pytest.approx(model.noise_multiplier_)
    # The event alone is the fit's budget (up to the accountant's discretization) ...
    assert 0.9 < compose_events([(model.privacy_spent_, event)], 1e-6, "pld") <= 1.0 + 1e-9
    # ... and five fits compose far below basic composition's 5.
    acc = BudgetAccountant(10.0, 1e-5, composition="pld")
    for seed in range(5):
        DPSGDClassifier(1.0, 1e-6, classes=classes, accountant=acc, random_state=seed).fit(X, y)
    assert acc.spent.epsilon < 3.0


def test_gaussian_svm_event_composes_to_its_budget():
    from skdp.accounting._events import compose_events

    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.arange(400) % 3
    model = PrivateLinearSVM(1.0, 1e-6, mechanism="gaussian", classes=[0, 1, 2],
                             random_state=0).fit(X, y)
    event = model.privacy_event_
    assert event.count == 3  # the three class vectors, one joint Gaussian release
    assert event.event.noise_multiplier == pytest.approx(
        model.noise_scale_ / model.sensitivity_)
    # Exactly the budget it was calibrated to (the analytic Gaussian mechanism).
    assert compose_events([(model.privacy_spent_, event)], 1e-6, "pld") == pytest.approx(
        1.0, abs=0.02)


@pytest.mark.parametrize("cls,kw", [
    (DPSGDClassifier, dict(loss="huber")), (DPSGDClassifier, dict(clipping="data")),
    (DPSGDClassifier, dict(multi_class="softmax")),
    (OutputPerturbationClassifier, dict(loss="huber")),
    (OutputPerturbationClassifier, dict(multi_class="softmax")),
    (PermutationSGDClassifier, dict(loss="huber", delta=1e-6)),
    (PermutationSGDClassifier, dict(multi_class="softmax", delta=1e-6)),
    (PermutationSGDClassifier, dict(learning_rate=5.0, delta=1e-6))])  # > 2 / beta = 4
def test_impossible_softmax_is_refused_before_the_charge(cls, kw):
    from skdp.accounting import BudgetAccountant

    X, y = _data(300, 4)
    acc = BudgetAccountant(10.0, 1e-3)
    params = {"multi_class": "multinomial", "classes": [0, 1, 2, 3], "accountant": acc, **kw}
    with pytest.raises(ValueError, match="multi_class"):
        cls(epsilon=1.0, **params).fit(X, y)
    assert acc.spent is None or acc.spent.epsilon == 0.0  # nothing charged


@pytest.mark.parametrize("cls", [DPSGDClassifier, OutputPerturbationClassifier,
                                 PermutationSGDClassifier])
def test_auto_is_one_vs_rest_for_huber_and_binary_ignores_multi_class(cls):
    X, y = _data(300, 4)
    huber = cls(epsilon=1.0, loss="huber", classes=[0, 1, 2, 3], random_state=0).fit(X, y)
    assert huber.multi_class_ == "ovr" and huber.coef_.shape == (4, 3)
    fits = [cls(epsilon=1.0, multi_class=mc, classes=[0, 1], random_state=0).fit(X, y % 2)
            for mc in ("auto", "ovr", "multinomial")]
    assert {f.multi_class_ for f in fits} == {"binary"}
    for f in fits[1:]:
        np.testing.assert_array_equal(f.coef_, fits[0].coef_)
        np.testing.assert_array_equal(f.intercept_, fits[0].intercept_)


@pytest.mark.parametrize("cls", [DPSGDClassifier, OutputPerturbationClassifier,
                                 PermutationSGDClassifier])
def test_an_underflow_after_the_charge_never_raises(cls):
    # The softmax's exp underflows on rows with large score gaps: harmless, and no global
    # floating-point setting may turn it into an error that depends on the rows. The
    # subclass underflows inside the fit, after the charge, as such rows would.
    class Underflowing(cls):
        def _fit_multinomial(self, *args, **kwargs):
            np.exp(np.array([-1000.0]))
            return super()._fit_multinomial(*args, **kwargs)

    X, y = _data(300, 4)
    model = Underflowing(epsilon=1.0, classes=[0, 1, 2, 3], random_state=0)
    model.fit(X, y)  # the (cached, data-independent) calibrations run once outside
    with np.errstate(all="raise"):
        model.fit(X, y)
    assert model.multi_class_ == "multinomial" and np.all(np.isfinite(model.coef_))
