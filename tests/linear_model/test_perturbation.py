"""Default regularization of objective and output perturbation (Chaudhuri et al. 2011)."""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer

from skdp import BudgetAccountant
from skdp.linear_model import ObjectivePerturbationClassifier, OutputPerturbationClassifier
from skdp.mechanisms import gaussian_sigma_analytic


def _data(n=400, d=3, n_classes=2, seed=0):
    X, y = make_classification(n, d, n_informative=d, n_redundant=0, n_classes=n_classes,
                               n_clusters_per_class=1, random_state=seed)
    return X, y


@pytest.mark.parametrize("epsilon, data_norm, n_classes, expected", [
    (1.0, 1.0, 2, 0.4 * 2 / 1.0 / 400),  # 0.4 sqrt(F) / epsilon, F = 3 + 1
    (1e6, 1.0, 2, 0.5 / 400),  # the non-private limit LogisticRegression(C=1) on [x, 1]
    (1.0, 2.0, 2, 4 * 0.8 / 400),  # scales with data_norm^2
    (3.0, 1.0, 3, 0.4 * 2 / 1.0 / 400),  # one class problem's epsilon: 3 / 3
])
def test_objective_alpha_auto_rule(epsilon, data_norm, n_classes, expected):
    X, y = _data(n_classes=n_classes)
    est = ObjectivePerturbationClassifier(epsilon=epsilon, data_norm=data_norm,
                                          classes=list(range(n_classes)), random_state=0)
    assert est.alpha == "auto"
    assert est.fit(X, y).alpha_ == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("mechanism, delta, ratio", [
    ("l2_laplace", 0.0, 2.0),  # sqrt(F) / epsilon
    ("discrete_laplace", 0.0, 2.0),
    ("discrete_gaussian", 1e-6, gaussian_sigma_analytic(1.0, 1.0, 1e-6)),
])
def test_output_alpha_auto_rule(mechanism, delta, ratio):
    X, y = _data()
    est = OutputPerturbationClassifier(epsilon=1.0, delta=delta, mechanism=mechanism,
                                       classes=[0, 1], random_state=0).fit(X, y)
    assert est.alpha_ == pytest.approx(4.0 * ratio / 400, rel=1e-12)
    assert est.alpha == "auto"


@pytest.mark.parametrize("cls", [ObjectivePerturbationClassifier, OutputPerturbationClassifier])
def test_alpha_auto_enters_the_calibration_like_a_given_alpha(cls):
    # The privacy constants are those of the explicit value: same noise, same release.
    X, y = _data()
    auto = cls(epsilon=1.0, classes=[0, 1], random_state=3).fit(X, y)
    given = cls(epsilon=1.0, alpha=auto.alpha_, classes=[0, 1], random_state=3).fit(X, y)
    assert given.alpha_ == auto.alpha_
    assert auto.noise_scale_ == given.noise_scale_
    np.testing.assert_array_equal(auto.coef_, given.coef_)
    np.testing.assert_array_equal(auto.intercept_, given.intercept_)


@pytest.mark.parametrize("cls", [ObjectivePerturbationClassifier, OutputPerturbationClassifier])
def test_alpha_auto_reads_no_data_values(cls):
    X, y = _data()
    a = cls(classes=[0, 1], random_state=0).fit(X, y)
    b = cls(classes=[0, 1], random_state=0).fit(5.0 * X - 2.0, 1 - y)
    assert a.alpha_ == b.alpha_


@pytest.mark.parametrize("cls", [ObjectivePerturbationClassifier, OutputPerturbationClassifier])
def test_bad_alpha_string_refused_before_the_charge(cls):
    X, y = _data()
    acc = BudgetAccountant(epsilon=5.0)
    with pytest.raises(ValueError, match="alpha must be 'auto'"):
        cls(alpha="scale", classes=[0, 1], accountant=acc).fit(X, y)
    assert acc.spent is None


@pytest.mark.parametrize("cls", [ObjectivePerturbationClassifier, OutputPerturbationClassifier])
def test_default_at_huge_epsilon_matches_logistic_regression_on_unit_rows(cls):
    # Rows scaled to unit norm (data_norm=1): the old alpha=0.01 scored 0.82, 5 points below.
    X, y = make_classification(3000, 20, n_informative=5, weights=[0.75], flip_y=0.01,
                               random_state=2)
    X_tr, X_te, y_tr, y_te = X[:2000], X[2000:], y[:2000], y[2000:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        private = make_pipeline(Normalizer(), cls(epsilon=1e6, classes=[0, 1], random_state=0))
        twin = make_pipeline(Normalizer(), LogisticRegression())
        p = private.fit(X_tr, y_tr).score(X_te, y_te)
        t = twin.fit(X_tr, y_tr).score(X_te, y_te)
    majority = max(np.mean(y_te), 1 - np.mean(y_te))
    assert t > majority + 0.05  # the table is not trivial
    assert p >= t - 0.015


def test_tiny_epsilon_auto_alpha_still_refused_or_finite():
    # n alpha / data_norm^2 is capped at 1e12: the minimizer stays in the normal range.
    X, y = _data()
    est = OutputPerturbationClassifier(epsilon=1e-300, classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            est.fit(X, y)
        except ValueError as error:
            assert "Nothing was spent" in str(error)
            return
    assert est.alpha_ == pytest.approx(1e12 / 400)
    assert np.all(np.isfinite(est.coef_))
    assert math.isfinite(est.noise_scale_)
