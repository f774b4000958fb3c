"""What the teachers of the ensembles print, and what ``verbose`` says about it."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from skdp import BudgetAccountant
from skdp.ensemble import ModelAgnosticPrivateClassifier, PrivateQueryAnswerer
from skdp.exceptions import PrivacyLeakWarning

RNG = np.random.default_rng(0)
X = RNG.normal(size=(120, 2))
Y = (X[:, 0] > 0).astype(int)


def _fit(cls, estimator, **kw):
    est = cls(estimator, n_teachers=4, epsilon=5.0, delta=1e-3, classes=[0, 1],
              random_state=0, **kw)
    args = (X[:90], Y[:90]) + ((X[90:],) if cls is ModelAgnosticPrivateClassifier else ())
    return est.fit(*args)


@pytest.mark.filterwarnings("ignore::skdp.exceptions.FallbackModelWarning")
@pytest.mark.parametrize("cls", [ModelAgnosticPrivateClassifier, PrivateQueryAnswerer])
@pytest.mark.parametrize("teacher, part", [
    (LogisticRegression(verbose=1), "the estimator itself"),
    (make_pipeline(StandardScaler(), DecisionTreeClassifier(), verbose=True),
     "the estimator itself"),
])
def test_verbose_teachers_are_flagged_before_the_charge(cls, teacher, part):
    # A teacher set to print (a solver's progress, a pipeline's step timings) prints facts
    # about its own private rows, which no noise covers: warned before anything is spent,
    # as PrivateParameterSelector does for its candidates.
    acc = BudgetAccountant(epsilon=1e3, delta=0.5)
    with pytest.warns(PrivacyLeakWarning, match="teachers") as record:
        _fit(cls, teacher, accountant=acc)
    assert any(part in str(w.message) for w in record)


@pytest.mark.filterwarnings("ignore::skdp.exceptions.FallbackModelWarning")
@pytest.mark.parametrize("cls", [ModelAgnosticPrivateClassifier, PrivateQueryAnswerer])
def test_quiet_teachers_are_not_flagged(cls, recwarn):
    _fit(cls, make_pipeline(StandardScaler(), DecisionTreeClassifier(max_depth=2)))
    assert not [w for w in recwarn if issubclass(w.category, PrivacyLeakWarning)]


@pytest.mark.parametrize("cls", [ModelAgnosticPrivateClassifier, PrivateQueryAnswerer])
def test_verbose_docstring_says_the_output_is_not_private(cls):
    doc = cls.__doc__
    start = doc.index("verbose : int")
    entry = doc[start:doc.index("\n    ", doc.index("\n", start) + 1) + 400]
    assert "non-private diagnostics" in entry
