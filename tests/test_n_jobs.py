"""``n_jobs`` is checked (``None`` or a nonzero int) before the accountant is charged, by every
estimator that has it."""

import inspect

import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

import common_instances.convex
import common_instances.svm
from common_instances import amp, ensemble, kernel_methods, model_selection, trees
from skdp import BudgetAccountant
from skdp.linear_model import ObjectivePerturbationClassifier
from skdp.model_selection import PrivateParameterSelector
from skdp.utils import all_estimators

# Estimators here are fitted without classes= (incidental: these tests are about validation order).
pytestmark = pytest.mark.filterwarnings("ignore:classes=None:skdp.exceptions.PrivacyLeakWarning")

_INSTANCES = {}
for _module in (amp, common_instances.convex, ensemble, kernel_methods, model_selection,
                common_instances.svm, trees):
    for _est in _module.INSTANCES:
        _INSTANCES.setdefault(type(_est).__name__, _est)
# The selector hands its n_jobs to candidates that have one (its common instance's has none).
_INSTANCES["PrivateParameterSelector"] = PrivateParameterSelector(
    ObjectivePerturbationClassifier(random_state=0), {"epsilon": [5.0, 10.0]}, epsilon=5.0,
    random_state=0)

_WITH_N_JOBS = sorted(name for name, cls in all_estimators()
                      if "n_jobs" in inspect.signature(cls).parameters)


def _data(n_classes):
    X, y = make_classification(300, 4, n_informative=3, n_redundant=0, n_classes=n_classes,
                               random_state=0)
    return X / 10.0, y


def test_every_estimator_with_n_jobs_has_an_instance():
    assert len(_WITH_N_JOBS) >= 12  # the list below is not vacuous
    assert [name for name in _WITH_N_JOBS if name not in _INSTANCES] == []


@pytest.mark.filterwarnings("ignore::skdp.exceptions.FallbackModelWarning")
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", _WITH_N_JOBS)
def test_invalid_n_jobs_is_refused_before_the_budget_is_charged(name, n_classes):
    X, y = _data(n_classes)
    # The same instance with a valid n_jobs reaches the charge (so the checks below bite).
    acc = BudgetAccountant(epsilon=1e5, delta=0.5)
    clone(_INSTANCES[name]).set_params(n_jobs=1, accountant=acc).fit(X, y)
    assert acc.spent is not None
    for bad, error in [("two", TypeError), (1.5, TypeError), (True, TypeError),
                       (0, ValueError)]:
        acc = BudgetAccountant(epsilon=1e5, delta=0.5)
        est = clone(_INSTANCES[name]).set_params(n_jobs=bad, accountant=acc)
        if name == "PrivateParameterSelector":
            error = ValueError  # it wraps a candidate's error, checked before its charge
        with pytest.raises(error, match="n_jobs must be"):
            est.fit(X, y)
        assert acc.spent is None, (name, bad)
