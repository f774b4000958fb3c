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
