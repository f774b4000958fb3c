"""A CertificationError is raised after the budget is charged: its message must not carry data.

The event itself depends on the data (one bit, as any post-charge failure), but the numbers a
solver reached (gradient norms, duality gaps, iteration counts before a stall) are real-valued
functions of the private rows. Two neighbouring datasets must give the same message.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skdp.exceptions import CertificationError
from skdp.kernel_methods._erm import fit_kernel_erm
from skdp.linear_model import DPLogisticRegressionAMP
from skdp.linear_model._losses import get_loss
from skdp.svm._solver import solve_svm_certified

# Fits without classes= are incidental: these tests are about the CertificationError message.
pytestmark = pytest.mark.filterwarnings("ignore:classes=None:skdp.exceptions.PrivacyLeakWarning")


def _neighbours():
    X, y = make_classification(200, 5, flip_y=0.2, random_state=0)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    X2 = X.copy()
    X2[0] = -X2[0]  # replace one row
    return X, X2, y


def _message(fit):
    with pytest.raises(CertificationError) as info:
        fit()
    return str(info.value)


@pytest.mark.parametrize("solver", ["newton", "l-bfgs-b"])
def test_amp_message_is_data_independent(solver):
    X, X2, y = _neighbours()
    messages = {_message(lambda A=A: DPLogisticRegressionAMP(max_iter=1, solver=solver,
                                                             random_state=0).fit(A, y))
                for A in (X, X2)}
    assert len(messages) == 1, messages
    (message,) = messages
    assert "nothing was released" in message and "gamma" in message


@pytest.mark.parametrize("loss", ["hinge", "huber"])
def test_svm_message_is_data_independent(loss):
    X, X2, y = _neighbours()
    ypm = 2.0 * y - 1.0
    messages = {_message(lambda A=A: solve_svm_certified(A, ypm, 100.0, loss=loss, radius=1e-8,
                                                         max_iter=1))
                for A in (X, X2)}
    assert len(messages) == 1, messages


def test_kernel_erm_message_is_data_independent():
    X, X2, y = _neighbours()
    ypm = 2.0 * y - 1.0
    messages = {_message(lambda A=A: fit_kernel_erm(A @ A.T, ypm, get_loss("logistic"), 1e-3, 1e-12,
                                                    max_iter=1))
                for A in (X, X2)}
    assert len(messages) == 1, messages
