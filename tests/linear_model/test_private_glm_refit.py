"""A failed refit of the private GLM classifiers leaves the previous model whole
(``classes_`` is not replaced before the new fit succeeds)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

import common_instances.convex

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


@pytest.mark.parametrize("est", common_instances.convex.INSTANCES, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("bad_params", [dict(data_norm=-1.0), dict(loss="squared"),
                                        dict(fit_intercept="yes"), dict(epsilon=-1.0)])
def test_failed_glm_refit_leaves_the_previous_model(est, bad_params):
    _refit_keeps_the_model(est, bad_params)


def test_failed_frank_wolfe_refit_on_its_own_parameter_leaves_the_previous_model():
    fw = next(e for e in common_instances.convex.INSTANCES if "l1_radius" in e.get_params())
    _refit_keeps_the_model(fw, dict(l1_radius=-1.0))
