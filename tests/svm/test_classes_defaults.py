"""Defaults of PrivateLinearSVM / PrivateSVMRFF: RFF gamma="auto" (public), and the mechanisms that need delta > 0."""

import math
import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_classification
from sklearn.model_selection import train_test_split

from skdp import BudgetAccountant
from skdp.linear_model import OutputPerturbationClassifier
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF


def test_rff_gamma_norm_is_the_default_and_resolved_in_gamma_():
    X, y = make_blobs(60, n_features=4, centers=2, random_state=0)
    est = PrivateSVMRFF(n_components=10, classes=[0, 1], random_state=0)
    assert est.gamma == "norm"
    est.fit(X, y)
    assert est.gamma_ == 1.0
    assert est.random_fourier_features_.gamma == 1.0
    assert est.get_params()["gamma"] == "norm"  # the parameter is never overwritten
    wide = PrivateSVMRFF(data_norm=2.0, n_components=10, classes=[0, 1], random_state=0)
    assert wide.fit(X, y).gamma_ == 0.25
    auto = PrivateSVMRFF(gamma="auto", n_components=10, classes=[0, 1], random_state=0)
    assert auto.fit(X, y).gamma_ == 0.25
    fixed = PrivateSVMRFF(gamma=0.3, n_components=10, classes=[0, 1], random_state=0).fit(X, y)
    assert fixed.gamma_ == 0.3 and fixed.gamma == 0.3


def test_rff_default_gamma_beats_chance_on_ordinary_data():
    # make_classification(2000, 10): gamma=1.0 on the raw rows (norm about sqrt(10)) scored
    # 0.50-0.54 held out; data_norm=sqrt(10) gives gamma = 1/10, as gamma="auto".
    X, y = make_classification(2000, 10, random_state=7)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0)
    scores = [PrivateSVMRFF(data_norm=math.sqrt(10), classes=[0, 1], random_state=s)
              .fit(X_tr, y_tr).score(X_te, y_te) for s in range(3)]
    assert np.mean(scores) > 0.7


@pytest.mark.parametrize("gamma, error, match", [
    ("scale", ValueError, "variance of the private training data"),
    ("median", ValueError, "gamma must be 'norm', 'auto' or a real number"),
    (0.0, ValueError, "gamma must be > 0"),
])
def test_rff_bad_gamma_refused_before_spending(gamma, error, match):
    X, y = make_blobs(40, centers=2, random_state=0)
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(error, match=match):
        PrivateSVMRFF(gamma=gamma, n_components=5, classes=[0, 1], accountant=acc).fit(X, y)
    assert acc.spent is None


@pytest.mark.parametrize("est, mechanism", [
    (PrivateLinearSVM(mechanism="gaussian"), "gaussian"),
    (PrivateLinearSVM(mechanism="discrete_gaussian"), "discrete_gaussian"),
    (PrivateSVMRFF(mechanism="discrete_gaussian", n_components=5), "discrete_gaussian"),
    (OutputPerturbationClassifier(mechanism="discrete_gaussian"), "discrete_gaussian"),
])
def test_default_delta_message_names_the_mechanism(est, mechanism):
    X, y = make_blobs(40, centers=2, random_state=0)
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match=f"mechanism='{mechanism}' is .*needs delta > 0") as info:
        est.set_params(accountant=acc, classes=[0, 1]).fit(X, y)
    assert "default delta is 0" in str(info.value)
    assert acc.spent is None


@pytest.mark.parametrize("cls", [PrivateLinearSVM, PrivateSVMRFF])
def test_svm_delta_docstring_names_discrete_gaussian(cls):
    entry = re.search(r"\n    delta : .*?(?=\n    \w+ : )", cls.__doc__, re.S).group()
    assert "discrete_gaussian" in entry


def _data(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), np.arange(n) % k


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
