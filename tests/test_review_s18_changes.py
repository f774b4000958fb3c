"""Adversarial review of the s18 changes (SGD calibration hand-off, defaults, dict bounds).

Each test pins a property the review re-derived: the multi-class split applied exactly once
after the calibration moved to ``_prepare``, bit-identity of the new defaults with the equal
explicit value, data-independence of the defaults, and the column mapping of name-keyed bounds.
"""

import math
import warnings

import numpy as np
import pytest

from skdp.accounting import BudgetAccountant
from skdp.kernel_methods._density import _box_volume
from skdp.linear_model import (
    DPSGDClassifier,
    PermutationSGDClassifier,
    PrivateFrankWolfeClassifier,
)
from skdp.linear_model._dpsgd import dpsgd_noise_multiplier, dpsgd_schedule
from skdp.linear_model._frank_wolfe import frank_wolfe_noise
from skdp.linear_model._permutation_sgd import (
    permutation_sgd_noise_step,
    permutation_sgd_sensitivity,
    permutation_sgd_sigma,
)
from skdp.matrix_completion import DPMatrixCompleter
from skdp.preprocessing import DPStandardScaler, PublicBoundsScaler
from skdp.svm import PrivateSVMRFF

pd = pytest.importorskip("pandas")


def _data(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), np.arange(n) % k


@pytest.mark.parametrize("k", [2, 3])
def test_dpsgd_split_applied_once(k):
    # Per-class budget (epsilon / P, delta / P) with P = 1 for two classes, K otherwise;
    # calibrated once in _prepare and used unchanged by every class problem.
    X, y = _data(120, 2, k)
    est = DPSGDClassifier(epsilon=1.0, delta=1e-5, batch_size=40, epochs=1,
                          classes=list(range(k)), random_state=0).fit(X, y)
    p = 1 if k == 2 else k
    q, steps = dpsgd_schedule(120, 40, 1)
    assert est.noise_multiplier_ == dpsgd_noise_multiplier(1.0 / p, 1e-5 / p, q, steps)


@pytest.mark.parametrize("k", [2, 3, 20])
def test_permutation_sgd_default_step_split_applied_once(k):
    n, d = 200, 3
    X, y = _data(n, d, k)
    est = PermutationSGDClassifier(epsilon=1.0, delta=1e-5, classes=list(range(k)),
                                   random_state=0).fit(X, y)
    p = 1 if k == 2 else k
    c = permutation_sgd_sigma(1.0, 1.0 / p, 1e-5 / p, "analytic")
    # Default batch 64 (N = 3 minibatches of at least 66) and 50 passes.
    eta = permutation_sgd_noise_step(n, 64, 50, 1.0, d + 1, c, 1.0 / 0.25)
    # Wu et al. Thm. 3 (seed 004 Alg. 2): Delta = 2 k eta R / b with b = n // (n // 64).
    sensitivity = permutation_sgd_sensitivity(n, 64, 50, 1.0, learning_rate=eta)
    assert sensitivity == pytest.approx(2 * 50 * eta / 66, rel=1e-15)
    assert est.learning_rate_ == eta
    assert est.noise_std_ == permutation_sgd_sigma(sensitivity, 1.0 / p, 1e-5 / p, "analytic")


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


def test_frank_wolfe_scale_per_class():
    X, y = _data(80, 3, 3)
    est = PrivateFrankWolfeClassifier(epsilon=1.0, delta=1e-5, classes=[0, 1, 2],
                                      random_state=0).fit(X, y)
    scale = frank_wolfe_noise(80, 1.0, est.l1_radius_, 1.0 / 3, 1e-5 / 3, est.n_iter_,
                              est.accounting)[0]
    assert est.noise_scale_ == scale


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


def test_svm_rff_auto_gamma_public_and_refusal_before_charge():
    X, y = _data(50, 4, 2)
    auto = PrivateSVMRFF(gamma="auto", random_state=0, classes=[0, 1]).fit(X, y)
    explicit = PrivateSVMRFF(gamma=0.25, random_state=0, classes=[0, 1]).fit(X, y)
    assert auto.gamma_ == 0.25
    np.testing.assert_array_equal(auto.coef_, explicit.coef_)
    accountant = BudgetAccountant(epsilon=5.0, delta=1e-3)
    with pytest.raises(ValueError, match="variance"):
        PrivateSVMRFF(gamma="scale", accountant=accountant, classes=[0, 1]).fit(X, y)
    assert accountant.spends == []


@pytest.mark.parametrize("n_users", [1, 30])
def test_matrix_completion_default_nuclear_norm(n_users):
    rng = np.random.default_rng(0)
    R = rng.normal(size=(n_users, 6))
    R[rng.random(R.shape) < 0.5] = np.nan
    kw = dict(epsilon=1.0, delta=1e-3, random_state=0, method="frank_wolfe")
    default = DPMatrixCompleter(**kw).fit(R)
    assert default.nuclear_norm_ == math.sqrt(n_users) * default.row_norm_bound
    explicit = DPMatrixCompleter(nuclear_norm=default.nuclear_norm_, **kw).fit(R)
    np.testing.assert_array_equal(default.components_, explicit.components_)
    np.testing.assert_array_equal(default.transform(R), explicit.transform(R))


def test_dict_bounds_follow_column_names():
    df = pd.DataFrame({"a": [0.0, 5.0, 10.0], "b": [100.0, 150.0, 200.0]})
    bounds = {"b": (100.0, 200.0), "a": (0.0, 10.0)}
    for frame in (df, df[["b", "a"]]):
        scaler = PublicBoundsScaler(bounds=bounds).fit(frame)
        np.testing.assert_array_equal(scaler.transform(frame), [[-1, -1], [0, 0], [1, 1]])
    dp = DPStandardScaler(epsilon=1.0, bounds=bounds, random_state=0).fit(df[["b", "a"]])
    np.testing.assert_array_equal(dp.lower_, [100.0, 0.0])
    np.testing.assert_array_equal(dp.upper_, [200.0, 10.0])


@pytest.mark.parametrize("make_bounds", [
    # one (low, high) pair per row, rows labelled by column name, in another order
    lambda: pd.DataFrame({"low": [100.0, 0.0], "high": [200.0, 10.0]}, index=["b", "a"]),
    # one pair per column, columns labelled by column name, in another order
    lambda: pd.DataFrame({"b": [0.0, 10.0], "a": [5.0, 20.0]}),
])
def test_labelled_pandas_bounds_are_not_read_by_position(make_bounds):
    # A pandas object labelled by X's column names was read by position, ignoring its
    # labels: under another column order the bounds were silently swapped (or mixed).
    df = pd.DataFrame({"a": [0.0, 5.0, 10.0], "b": [100.0, 150.0, 200.0]})
    for cls, kw in ((PublicBoundsScaler, {}), (DPStandardScaler, dict(epsilon=1.0))):
        with pytest.raises(ValueError, match="dict"):
            cls(bounds=make_bounds(), **kw).fit(df)


def test_unlabelled_pandas_bounds_still_positional():
    df = pd.DataFrame({"a": [0.0, 5.0, 10.0], "b": [100.0, 150.0, 200.0]})
    bounds = pd.DataFrame([[0.0, 10.0], [100.0, 200.0]])  # RangeIndex: positional as before
    scaler = PublicBoundsScaler(bounds=bounds).fit(df)
    np.testing.assert_array_equal(scaler.lower_, [0.0, 100.0])


def test_box_volume_order_independent():
    sides = np.array([1e200, 1e200, 1e-200, 1e-200, 3.0, 0.1])
    rng = np.random.default_rng(0)
    values = {_box_volume(rng.permutation(sides)) for _ in range(20)}
    assert len(values) == 1
    assert values.pop() == pytest.approx(0.3, rel=1e-14)


def test_no_new_fitted_attribute_reads_data_values():
    # The new defaults read shapes only: two datasets of the same shape (and labels) give
    # the same public attributes.
    X, y = _data(60, 3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = PrivateSVMRFF(gamma="auto", random_state=0, classes=[0, 1]).fit(X, y)
        b = PrivateSVMRFF(gamma="auto", random_state=0, classes=[0, 1]).fit(7.0 * X + 3.0, y)
        c = PrivateSVMRFF(random_state=0, classes=[0, 1]).fit(X, y)
        d = PrivateSVMRFF(random_state=0, classes=[0, 1]).fit(7.0 * X + 3.0, y)
    assert a.gamma_ == b.gamma_ == 1.0 / 3
    assert c.gamma_ == d.gamma_ == 1.0 and c.C_ == d.C_


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
