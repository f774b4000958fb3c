"""PrivateGaussianProcessRegressor."""

import inspect

import numpy as np
import pytest
from sklearn.utils.validation import has_fit_parameter

from skdp.kernel_methods import PrivateGaussianProcessRegressor


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return X, (X[:, 0] > 0).astype(int)


# PrivateGaussianProcessRegressor and sample weights
def test_gp_regressor_documents_and_refuses_sample_weight(data):
    X, y = data
    gp = PrivateGaussianProcessRegressor(epsilon=1.0, random_state=0)
    assert not has_fit_parameter(gp, "sample_weight")
    with pytest.raises(TypeError, match="sample_weight"):
        gp.fit(X, np.tanh(X[:, 0]), sample_weight=np.ones(len(y)))
    privacy = inspect.getdoc(PrivateGaussianProcessRegressor).split("Privacy\n-------")[1]
    assert "sample_weight" in privacy.split("\n\n\n")[0].split("See Also")[0]


def test_labels_outside_y_bounds_are_clipped_silently():
    # The count of labels outside y_bounds is data: a warning carrying it changes when one
    # label moves, so the clip is silent, like every other per-record clip of the package.
    import warnings

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.clip(rng.normal(scale=0.3, size=30), -0.9, 0.9)
    y[0] = 5.0
    gp = PrivateGaussianProcessRegressor(epsilon=1.0, delta=1e-5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gp.fit(X, y)
    y_in = y.copy()
    y_in[0] = 1.0
    same = PrivateGaussianProcessRegressor(epsilon=1.0, delta=1e-5, random_state=0).fit(X, y_in)
    np.testing.assert_allclose(gp.predict(X), same.predict(X))
