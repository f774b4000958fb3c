"""Row weights: validation, the weighted objectives, and DPLogisticRegressionAMP's ``sample_weight``."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import optimize
from scipy.special import expit, logsumexp

from skdp import BudgetAccountant
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.linear_model import _amp
from skdp.linear_model._losses import get_loss
from skdp.linear_model._multinomial import MultinomialObjective
from skdp.linear_model._objective import GLMObjective
from skdp.testing import audit_epsilon
from skdp.utils._validation import check_bounded_sample_weight


# --------------------------------------------------------------------------- validation
def test_weights_above_one_are_clipped():
    w = check_bounded_sample_weight([0.5, 3.0, 0.0, 1.0], 4)
    np.testing.assert_array_equal(w, [0.5, 1.0, 0.0, 1.0])


def test_unit_weights_mean_no_weights():
    assert check_bounded_sample_weight(None, 3) is None
    assert check_bounded_sample_weight(np.ones(3), 3) is None
    assert check_bounded_sample_weight(1, 3) is None
    assert check_bounded_sample_weight([2, 5, 1], 3) is None
    np.testing.assert_array_equal(check_bounded_sample_weight(0.25, 2), [0.25, 0.25])


@pytest.mark.parametrize("weights, match", [
    ([1.0, 1.0], r"shape \(3,\)"),
    (np.ones((3, 1)), r"shape \(3,\)"),
    ([1.0, np.nan, 1.0], "finite"),
    ([1.0, np.inf, 1.0], "finite"),
    ([1.0, -0.1, 1.0], "non-negative"),
])
def test_bad_weights_are_refused(weights, match):
    with pytest.raises(ValueError, match=match):
        check_bounded_sample_weight(weights, 3)


def test_all_zero_weights_are_accepted():
    """Refusing them would be a data-dependent outcome: the weights are protected."""
    np.testing.assert_array_equal(check_bounded_sample_weight(np.zeros(3), 3), np.zeros(3))


# --------------------------------------------------------------------------- objectives
def _glm(X, y, loss, w):
    return GLMObjective(X, y, get_loss(loss, 0.1), 0.3, b=np.array([0.1, -0.2, 0.05]),
                        sample_weight=w)


@pytest.fixture
def weighted_problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) / 2
    y = np.where(rng.random(40) < 0.5, -1.0, 1.0)
    w = rng.uniform(size=40)
    w[:5] = 0.0
    return X, y, w


def test_weighted_logistic_value_by_hand(weighted_problem):
    X, y, w = weighted_problem
    theta = np.array([0.7, -1.2, 0.4])
    b = np.array([0.1, -0.2, 0.05])
    hand = (np.sum(w * np.log1p(np.exp(-y * (X @ theta)))) / 40
            + 0.15 * theta @ theta + b @ theta)
    objective = _glm(X, y, "logistic", w)
    assert objective.value(theta) == pytest.approx(hand, rel=1e-12)
    # The mean is over all 40 rows: dropping the zero-weight rows changes it.
    dropped = _glm(X[5:], y[5:], "logistic", w[5:])
    assert dropped.value(theta) != pytest.approx(hand, rel=1e-6)


@pytest.mark.parametrize("loss", ["logistic", "huber"])
@pytest.mark.parametrize("sparse", [False, True])
def test_weighted_glm_derivatives(weighted_problem, loss, sparse):
    X, y, w = weighted_problem
    objective = _glm(sp.csr_matrix(X) if sparse else X, y, loss, w)
    theta = np.array([0.7, -1.2, 0.4])
    value, grad = objective.value_and_grad(theta)
    assert value == pytest.approx(objective.value(theta), rel=1e-14)
    np.testing.assert_allclose(grad, optimize.approx_fprime(theta, objective.value, 1e-7),
                               atol=1e-6)
    H = objective.hessian(theta)
    numeric = np.array([optimize.approx_fprime(theta, lambda t, j=j:
                                               objective.value_and_grad(t)[1][j], 1e-7)
                        for j in range(3)])
    np.testing.assert_allclose(H, numeric, atol=2e-5)
    matvec, diagonal = objective.hessian_operator(theta)
    v = np.array([0.3, -0.5, 2.0])
    np.testing.assert_allclose(matvec(v), H @ v, rtol=1e-12)
    np.testing.assert_allclose(diagonal, np.diag(H), rtol=1e-12)
    # A subsampled Hessian weights the chosen rows and averages over them.
    rows = np.array([0, 3, 7, 11, 20])
    z = y[rows] * (X[rows] @ theta)
    c = w[rows] * get_loss(loss, 0.1).second_derivative(z) / len(rows)
    hand = (X[rows] * c[:, None]).T @ X[rows] + 0.3 * np.eye(3)
    np.testing.assert_allclose(objective.hessian(theta, rows), hand, rtol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
def test_weighted_softmax_objective(weighted_problem, sparse):
    X, _, w = weighted_problem
    y = np.arange(40) % 3
    K, d = 3, 3
    b = np.linspace(-0.2, 0.2, K * d)
    objective = MultinomialObjective(sp.csr_matrix(X) if sparse else X, y, K, 0.3, b, w)
    theta = np.random.default_rng(1).normal(size=K * d)
    Z = X @ theta.reshape(K, d).T
    hand = (np.sum(w * (logsumexp(Z, axis=1) - Z[np.arange(40), y])) / 40
            + 0.15 * theta @ theta + b @ theta)
    value, grad = objective.value_and_grad(theta)
    assert value == pytest.approx(hand, rel=1e-12)
    np.testing.assert_allclose(grad, optimize.approx_fprime(theta, objective.value, 1e-7),
                               atol=1e-6)
    H = objective.hessian(theta)
    numeric = np.array([optimize.approx_fprime(theta, lambda t, j=j:
                                               objective.value_and_grad(t)[1][j], 1e-7)
                        for j in range(K * d)])
    np.testing.assert_allclose(H, numeric, atol=2e-5)
    matvec, diagonal = objective.hessian_operator(theta)
    v = np.linspace(-1.0, 1.0, K * d)
    np.testing.assert_allclose(matvec(v), H @ v, rtol=1e-10)
    np.testing.assert_allclose(diagonal, np.diag(H), rtol=1e-10)
    rows = np.array([1, 2, 9, 30])
    sub = MultinomialObjective(X[rows], y[rows], K, 0.3, b, w[rows])
    np.testing.assert_allclose(objective.hessian(theta, rows), sub.hessian(theta), rtol=1e-12)


# --------------------------------------------------------------------------- estimator
@pytest.fixture(scope="module")
def binary():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 4))
    y = (X @ np.array([1.0, -1.0, 0.5, 0.0]) + 0.3 * rng.normal(size=3000) > 0).astype(int)
    return X, y


def test_unit_weights_fit_exactly_as_no_weights(binary):
    X, y = binary
    plain = DPLogisticRegressionAMP(epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)
    ones = DPLogisticRegressionAMP(epsilon=1.0, classes=[0, 1], random_state=0)
    ones.fit(X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_array_equal(plain.coef_, ones.coef_)
    np.testing.assert_array_equal(plain.intercept_, ones.intercept_)


def test_weights_steer_the_model(binary):
    """Down-weighting class 0 moves the boundary towards it (more rows called 1)."""
    X, y = binary
    clf = DPLogisticRegressionAMP(epsilon=20.0, classes=[0, 1], random_state=0)
    plain = clf.fit(X, y).predict(X).mean()
    weighted = clf.fit(X, y, sample_weight=np.where(y == 1, 1.0, 0.05)).predict(X).mean()
    assert weighted > plain + 0.05
    # The certified bound is met on the weighted objective.
    assert clf.gradient_norm_[0] <= clf.calibration_.gamma


def test_zero_weight_rows_still_count_in_m(binary):
    X, y = binary
    w = np.ones(len(y))
    w[:1000] = 0.0
    clf = DPLogisticRegressionAMP(epsilon=1.0, classes=[0, 1], random_state=0)
    weighted = clf.fit(X, y, sample_weight=w).calibration_
    assert weighted.n_samples == 3000
    assert clf.delta_ == pytest.approx(1 / 3000**2)
    dropped = clf.fit(X[1000:], y[1000:]).calibration_
    assert dropped.sigma1 > weighted.sigma1  # m = 2000 needs more noise


@pytest.mark.parametrize("multi_class", ["multinomial", "ovr"])
def test_weighted_multiclass_fits(multi_class):
    rng = np.random.default_rng(5)
    centers = np.array([[3.0, 0.0], [-3.0, 0.0], [0.0, 3.0]])
    y = np.arange(1500) % 3
    X = centers[y] + rng.normal(size=(1500, 2))
    w = np.where(y == 2, 0.02, 1.0)
    clf = DPLogisticRegressionAMP(epsilon=30.0, multi_class=multi_class, classes=[0, 1, 2],
                                  random_state=0)
    plain = np.mean(clf.fit(X, y).predict(X) == 2)
    weighted = np.mean(clf.fit(X, y, sample_weight=w).predict(X) == 2)
    assert weighted < plain - 0.02
    assert np.all(clf.gradient_norm_ <= clf.calibration_.gamma)


def test_bad_weights_fail_before_the_budget_is_charged(binary):
    X, y = binary
    accountant = BudgetAccountant(epsilon=5.0, delta=1e-3)
    clf = DPLogisticRegressionAMP(epsilon=1.0, classes=[0, 1], accountant=accountant)
    for bad in (-np.ones(len(y)), np.ones(10), np.full(len(y), np.nan)):
        with pytest.raises(ValueError, match="sample_weight"):
            clf.fit(X, y, sample_weight=bad)
    assert accountant.spent is None  # nothing spent


# --------------------------------------------------------------------------- audit
# The AMP audit's worst case for the Huber loss (tests/linear_model/test_amp.py) with
# weights: the other rows weigh 0.5 and the replaced row asks for 4. Clipped
# to 1 it is the worst case the noise is calibrated for; a copy that skipped
# the clipping would let that row move the gradient four times as far.
_X = np.array([[1.0]] * 5 + [[-1.0]] * 5)
_D0 = (_X, np.array([1] * 5 + [0] * 5))
_D1 = (_X, np.array([1] * 5 + [0] * 4 + [1]))
_W = np.array([0.5] * 9 + [4.0])


def _weighted_audit():
    def mechanism(dataset, rng):
        X, y = dataset
        clf = DPLogisticRegressionAMP(epsilon=1.0, loss="huber", fit_intercept=False,
                                      gamma=1e-9, classes=[0, 1], random_state=rng)
        return clf.fit(X, y, sample_weight=_W).coef_[0, 0]
    return audit_epsilon(mechanism, _D0, _D1, n_runs=2000, delta=1 / 10**2,
                         random_state=12345)


def test_weighted_audit_stays_below_epsilon():
    assert _weighted_audit().epsilon_lower_bound <= 1.0


def test_weighted_audit_catches_unclipped_weights(monkeypatch):
    def unclipped(sample_weight, n_samples):
        return np.asarray(sample_weight, dtype=float)
    monkeypatch.setattr(_amp, "check_bounded_sample_weight", unclipped)
    cheat = _weighted_audit()
    assert cheat.epsilon_lower_bound > 1.0, cheat


# --------------------------------------------------------------------------- class_weight
def test_class_weights_multiply_the_rows_weights():
    from skdp.utils._multiclass import class_row_weights
    classes = np.array(["a", "b", "c"])
    y_index = np.array([0, 1, 2, 1])
    np.testing.assert_array_equal(class_row_weights({"b": 0.5}, classes, y_index),
                                  [1.0, 0.5, 1.0, 0.5])
    np.testing.assert_array_equal(
        class_row_weights({"a": 0.2, "c": 0.0}, classes, y_index, [0.5, 1.0, 1.0, 0.25]),
        [0.1, 1.0, 0.0, 0.25])
    assert class_row_weights(None, classes, y_index) is None


@pytest.mark.parametrize("class_weight, error, match", [
    ("balanced", ValueError, "reads the class counts"),
    ("other", ValueError, "dict or None"),
    ([1.0, 2.0], TypeError, "dict or None"),
    ({"z": 1.0}, ValueError, "not a class"),
    ({"a": -1.0}, ValueError, "class_weight"),
    ({"a": np.nan}, ValueError, "class_weight"),
])
def test_bad_class_weights_are_refused(class_weight, error, match):
    from skdp.utils._multiclass import class_row_weights
    with pytest.raises(error, match=match):
        class_row_weights(class_weight, np.array(["a", "b"]), np.array([0, 1]))


def test_a_non_scalar_class_weight_key_is_not_a_class():
    """A tuple key was compared with the classes element by element: (5, 1) matched
    class 1 (and a key of another length raised numpy's broadcasting error)."""
    from skdp.utils._multiclass import class_row_weights
    for key in [(5, 1), (0, 1, 2)]:
        with pytest.raises(ValueError, match="not a class"):
            class_row_weights({key: 0.5}, np.array([0, 1]), np.array([0, 1]))


def test_class_weights_above_one_warn_whatever_the_labels():
    """A class weight above 1 was clipped (with a warning) only in the rows holding that
    class, so the warning told whether some row had the label; the clip must not depend
    on the private labels."""
    from skdp.utils._multiclass import class_row_weights
    classes = np.array([0, 1, 2])
    for y_index in (np.array([0, 1, 0]), np.array([0, 2, 1])):
        with pytest.warns(UserWarning, match="clipped to 1"):
            weights = class_row_weights({2: 3.0}, classes, y_index)
        np.testing.assert_array_equal(weights, np.ones(3))


def test_class_weight_equals_the_same_sample_weight(binary):
    X, y = binary
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    by_class = DPLogisticRegressionAMP(epsilon=1.0, classes=[0, 1], random_state=0,
                                       class_weight={0: 0.3}).fit(X, y)
    by_row = DPLogisticRegressionAMP(epsilon=1.0, classes=[0, 1], random_state=0).fit(
        X, y, sample_weight=np.where(y == 0, 0.3, 1.0))
    np.testing.assert_array_equal(by_class.coef_, by_row.coef_)
    clf = DPLogisticRegressionAMP(epsilon=1.0, classes=[0, 1], class_weight="balanced",
                                  accountant=accountant)
    with pytest.raises(ValueError, match="balanced"):
        clf.fit(X, y)
    assert accountant.spent is None
    with pytest.warns(UserWarning, match="clipped to 1"):
        clf.set_params(class_weight={1: 5.0}).fit(X, y)


def test_weights_above_one_are_clipped_silently():
    # Whether some record's weight is above 1 is private: a warning only on such data
    # would tell (review s19). The clipping itself is what the audit above relies on.
    from skdp.utils._validation import check_bounded_sample_weight
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = check_bounded_sample_weight([0.5, 3.0, 1.0], 3)
        X, y = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]]), np.array([0, 1, 1, 0])
        DPLogisticRegressionAMP(epsilon=1.0, classes=[0, 1], random_state=0).fit(
            X, y, sample_weight=[1.0, 7.0, 0.2, 1.0])
    np.testing.assert_array_equal(w, [0.5, 1.0, 1.0])
