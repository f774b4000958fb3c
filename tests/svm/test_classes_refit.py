"""A failed refit of the private SVMs leaves the previous model whole
(``classes_`` is not replaced before the new fit succeeds)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

import common_instances.svm

# Estimators here are fitted without classes= (incidental: these tests are about validation order).
pytestmark = pytest.mark.filterwarnings("ignore:classes=None:skdp.exceptions.PrivacyLeakWarning")


def _data(n_classes):
    X, y = make_classification(300, 4, n_informative=3, n_redundant=0, n_classes=n_classes,
                               random_state=0)
    return X / 10.0, y


def _refit_keeps_the_model(est, bad_params):
    X, y = _data(2)
    est = clone(est).fit(X, y)
    classes, coef, pred = est.classes_.copy(), est.coef_.copy(), est.predict(X)
    est.set_params(**bad_params)
    with pytest.raises((ValueError, TypeError)):
        est.fit(X, np.array(["no", "yes"])[y])
    assert est.classes_.tolist() == classes.tolist() == [0, 1]
    assert np.array_equal(est.coef_, coef)
    assert np.array_equal(est.predict(X), pred)


_SVMS = [e for e in common_instances.svm.INSTANCES if hasattr(e, "C")]


@pytest.mark.parametrize("est", _SVMS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("bad_params", [dict(C=-1.0), dict(loss="squared"),
                                        dict(mechanism="laplace", delta=1e-5)])
def test_failed_svm_refit_leaves_the_previous_model(est, bad_params):
    _refit_keeps_the_model(est, bad_params)


def test_failed_svm_refit_on_a_feature_parameter_leaves_the_previous_model():
    rff = next(e for e in _SVMS if "n_components" in e.get_params())
    _refit_keeps_the_model(rff, dict(n_components=0))
