"""random_state="secure": a cryptographically secure noise source, fresh for every fit."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from skdp.linear_model import DPLogisticRegressionAMP
from skdp.utils._random import check_random_state, spawn_random_states

pytest.importorskip("randomgen")


def test_secure_uses_chacha20_keyed_from_the_os():
    rng = check_random_state("secure")
    assert type(rng.bit_generator).__name__ == "ChaCha"
    assert rng.bit_generator.state["state"]["rounds"] == 20
    # Two secure generators never share a key.
    assert not np.array_equal(check_random_state("secure").standard_normal(4),
                              check_random_state("secure").standard_normal(4))


def test_children_of_a_secure_generator_are_secure():
    children = spawn_random_states(check_random_state("secure"), 3)
    assert all(type(c.bit_generator).__name__ == "ChaCha" for c in children)


def test_estimators_accept_secure_and_draw_fresh_noise():
    X, y = make_classification(300, 4, random_state=0)
    est = DPLogisticRegressionAMP(1.0, classes=[0, 1], random_state="secure")
    a = clone(est).fit(X, y).coef_
    b = clone(est).fit(X, y).coef_
    assert not np.array_equal(a, b)


def test_other_strings_are_refused():
    with pytest.raises(TypeError, match="'secure'"):
        check_random_state("os")
