"""Defaults and messages a scikit-learn user trips on (s18): RFF gamma, the matrix
completer's nuclear norm, mechanisms that need delta > 0, benchmark progress bars,
DataFrame bounds."""

import math
import re

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_classification
from sklearn.model_selection import train_test_split

from skdp import BudgetAccountant
from skdp.benchmarks import _harness
from skdp.benchmarks.__main__ import build_parser
from skdp.datasets import make_low_rank_ratings
from skdp.linear_model import OutputPerturbationClassifier
from skdp.matrix_completion import DPMatrixCompleter
from skdp.preprocessing import DPStandardScaler, PublicBoundsScaler
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF


# 1. PrivateSVMRFF gamma="norm" (1 / data_norm**2, public) by default; "auto" is 1 / n_features.

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


# 2. DPMatrixCompleter() fits with its defaults: Frank-Wolfe's public nuclear norm rule.

def test_matrix_completer_fits_with_defaults():
    data = make_low_rank_ratings(2000, 20, n_ratings=5, random_state=0)
    model = DPMatrixCompleter(random_state=0).fit(data.train)
    assert model.nuclear_norm is None
    # row_norm_bound=None: 3 times the half range of the ratings ([-1, 1] by default).
    assert model.nuclear_norm_ == pytest.approx(math.sqrt(2000) * 3.0)
    assert model.transform(data.train[:3]).shape == (3, 20)
    explicit = DPMatrixCompleter(nuclear_norm=7.0, row_norm_bound=2.0, random_state=0)
    assert explicit.fit(data.train).nuclear_norm_ == 7.0
    rule = clone(explicit).set_params(nuclear_norm=None).fit(data.train)
    assert rule.nuclear_norm_ == pytest.approx(math.sqrt(2000) * 2.0)
    assert DPMatrixCompleter(method="pursuit", random_state=0).fit(data.train).nuclear_norm_ \
        is None


def test_matrix_completer_pgd_has_a_default_nuclear_norm():
    data = make_low_rank_ratings(200, 20, n_ratings=5, random_state=0)
    model = DPMatrixCompleter(method="pgd", max_iter=2, random_state=0).fit(data.train)
    # sqrt(n_users) * row_norm_bound, row_norm_bound = 0.4 sqrt(n_items) (half range 1).
    assert model.nuclear_norm_ == pytest.approx(math.sqrt(200) * 0.4 * math.sqrt(20))


# 3. Mechanisms that need delta > 0 say so, with the default delta of 0.

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


# 4. Benchmark progress bars are off when the output is not a terminal.

def test_progress_bar_disabled_when_not_a_terminal():
    pytest.importorskip("tqdm")
    bar = _harness.progress(range(3), desc="x")
    # Under pytest stderr is captured (not a terminal): tqdm(disable=None) turns itself off.
    assert getattr(bar, "disable", True) is True
    assert list(bar) == [0, 1, 2]


def test_quick_help_does_not_promise_two_minutes():
    help_text = " ".join(build_parser().format_help().split())
    assert "two minutes" not in help_text


# 5. DPStandardScaler / PublicBoundsScaler bounds keyed by DataFrame column names.

@pytest.mark.parametrize("make", [
    lambda b: DPStandardScaler(epsilon=1.0, bounds=b, random_state=0),
    lambda b: PublicBoundsScaler(bounds=b),
])
def test_bounds_dict_by_column_name(make):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.uniform(20, 60, 300), "income": rng.uniform(0, 5, 300)})
    by_name = make({"income": (0.0, 5.0), "age": (18.0, 90.0)}).fit(df)
    by_position = make([(18.0, 90.0), (0.0, 5.0)]).fit(df)
    np.testing.assert_array_equal(by_name.lower_, [18.0, 0.0])
    np.testing.assert_array_equal(by_name.upper_, [90.0, 5.0])
    np.testing.assert_array_equal(by_name.lower_, by_position.lower_)
    with pytest.raises(ValueError, match="no bounds for column.*'income'"):
        make({"age": (18.0, 90.0)}).fit(df)
    with pytest.raises(ValueError, match="not columns of X.*'salary'"):
        make({"age": (18.0, 90.0), "income": (0.0, 5.0), "salary": (0, 1)}).fit(df)
    with pytest.raises(ValueError, match="column names"):
        make({"age": (18.0, 90.0), "income": (0.0, 5.0)}).fit(df.to_numpy())
