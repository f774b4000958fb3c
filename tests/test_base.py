"""DPEstimatorMixin (skdp/base.py): what a fitted model keeps, clones' random streams, default delta.

Solver diagnostics computed from the private data without noise never leave in a pickle. They
are not covered by the privacy guarantee (e.g. ``n_iter_`` differs between neighbouring datasets
with certainty), so every estimator lists them in ``_non_private_attributes`` and
``DPEstimatorMixin.__getstate__`` drops them.
"""

import copy
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from skdp import BudgetAccountant
from skdp.kernel_methods import PrivateKernelClassifier, PrivateKernelSVC
from skdp.linear_model import (
    DPLogisticRegressionAMP,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
)
from skdp.preprocessing import DPStandardScaler
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF

# The label set is not what these tests are about: fits without classes= are incidental.
pytestmark = pytest.mark.filterwarnings("ignore:classes=None:skdp.exceptions.PrivacyLeakWarning")

X, Y = make_classification(200, 4, n_informative=3, n_redundant=0, random_state=0)
X_PUBLIC = X[:20] + 0.1

CASES = [
    (DPLogisticRegressionAMP(random_state=0), ("gradient_norm_", "n_iter_"), {}),
    (ObjectivePerturbationClassifier(random_state=0), ("gradient_norm_", "n_iter_"), {}),
    (OutputPerturbationClassifier(random_state=0), ("gradient_norm_", "n_iter_"), {}),
    (PrivateLinearSVM(random_state=0), ("certified_distance_", "n_iter_"), {}),
    (PrivateSVMRFF(n_components=20, random_state=0), ("certified_distance_", "n_iter_"), {}),
    (PrivateKernelSVC(random_state=0), ("n_iter_",), {"X_public": X_PUBLIC}),
    (PrivateKernelClassifier(random_state=0), ("n_iter_",), {"X_public": X_PUBLIC}),
]


@pytest.mark.parametrize("estimator, names, fit_params", CASES,
                         ids=[type(c[0]).__name__ for c in CASES])
def test_diagnostics_are_dropped_from_pickles_and_copies(estimator, names, fit_params):
    fitted = estimator.fit(X, Y, **fit_params)
    assert set(names) == set(fitted._non_private_attributes)
    kept = {name: getattr(fitted, name) for name in names}
    for shared in (pickle.loads(pickle.dumps(fitted)), copy.deepcopy(fitted)):
        for name in names:
            assert not hasattr(shared, name), name
        # Everything else survives, and the shared model predicts the same.
        np.testing.assert_array_equal(shared.predict(X), fitted.predict(X))
        assert shared.privacy_spent_ == fitted.privacy_spent_
    # The data holder's own object keeps its diagnostics.
    for name, value in kept.items():
        assert getattr(fitted, name) is value


def test_diagnostics_differ_between_neighbours_which_is_why_they_are_dropped():
    # Same noise (same seed), neighbouring data: the released coefficients are
    # DP, but the iteration count and gradient norm are exact functions of
    # the data. This pair is the reviewer's: one row's features negated.
    X_a = X / 4
    X_b = X_a.copy()
    X_b[0] *= -1
    a = OutputPerturbationClassifier(random_state=0).fit(X_a, Y)
    b = OutputPerturbationClassifier(random_state=0).fit(X_b, Y)
    assert a.gradient_norm_[0] != b.gradient_norm_[0]


X_UNIT = np.random.default_rng(1).uniform(0.0, 1.0, size=(40, 2))


def _scaler(random_state):
    return DPStandardScaler(epsilon=1.0, delta=1e-6, bounds=(0.0, 1.0), random_state=random_state)


def _noisy_mean(est):
    return est.fit(X_UNIT).mean_


@pytest.mark.parametrize("make", [lambda: np.random.default_rng(0), lambda: np.random.RandomState(0)],
                         ids=["Generator", "RandomState"])
def test_clones_of_a_generator_draw_independent_noise(make):
    # clone() deep-copied a Generator (or RandomState) parameter, so every clone (each fit
    # of cross_validate, GridSearchCV, OneVsRestClassifier...) drew the *same* noise: the
    # noise cancels between two released fits on overlapping data (their difference is
    # the exact difference of the private statistics), and basic composition, which the
    # accountant charges, assumes independent noise.
    est = _scaler(make())
    a, b = _noisy_mean(clone(est)), _noisy_mean(clone(est))
    assert not np.allclose(a, b)
    # ... also when each clone is shipped to a worker process (pickled, as loky does).
    c, d = (_noisy_mean(pickle.loads(pickle.dumps(clone(est)))) for _ in range(2))
    assert not np.allclose(c, d)
    # Still reproducible from the same user generator.
    est2 = _scaler(make())
    assert np.array_equal(_noisy_mean(clone(est2)), a)
    assert np.array_equal(_noisy_mean(clone(est2)), b)


def test_clones_of_an_int_seed_stay_identical():
    # An int seed is a reproducibility tool (documented as unsafe for releases): unchanged.
    est = _scaler(3)
    assert clone(est).random_state == 3
    assert np.array_equal(_noisy_mean(clone(est)), _noisy_mean(clone(est)))


def test_generator_that_cannot_spawn_is_not_a_crash_after_the_charge():
    # A Generator over a legacy-seeded bit generator has no SeedSequence to spawn from:
    # a one-vs-rest fit charged the accountant, then raised TypeError in spawn.
    from skdp import BudgetAccountant
    from skdp.linear_model import OutputPerturbationClassifier
    from skdp.utils import spawn_random_states

    legacy = np.random.Generator(np.random.RandomState(0)._bit_generator)
    children = spawn_random_states(legacy, 3)
    draws = [child.random(4) for child in children]
    assert len({tuple(d) for d in draws}) == 3
    rows = np.random.default_rng(0).normal(size=(30, 2))
    acc = BudgetAccountant(10.0)
    legacy = np.random.Generator(np.random.RandomState(0)._bit_generator)
    clf = OutputPerturbationClassifier(epsilon=1.0, classes=[0, 1, 2], accountant=acc,
                                       random_state=legacy)
    clf.fit(rows, np.arange(30) % 3)
    assert clf.coef_.shape == (3, 2)


def test_clones_inside_a_teacher_fit_do_not_depend_on_earlier_clones():
    # Teachers of subsample-and-aggregate are cloned (inside spending_refused) only when
    # their rows hold two classes: a child spawned per clone would make teacher j's noise
    # depend on how many earlier teachers had two classes, so one record could change
    # many teachers (seed 004, Sec. 5.1 needs one). There each clone keeps a copy, as before.
    from skdp.accounting._accountant import spending_refused

    est = _scaler(np.random.default_rng(0))
    with spending_refused():
        first = _noisy_mean(clone(est))
        clone(est)
        third = _noisy_mean(clone(est))
    assert np.array_equal(first, third)
    assert est.random_state.bit_generator.seed_seq.n_children_spawned == 0


def test_data_size_default_delta_out_of_range_says_so():
    from skdp.linear_model import DPLogisticRegressionAMP
    X, y = make_classification(n_samples=20, n_features=3, n_informative=2, n_redundant=0,
                               random_state=0)
    accountant = BudgetAccountant(epsilon=10.0, delta=0.5)
    est = DPLogisticRegressionAMP(epsilon=1.0, classes=[0, 1], accountant=accountant)
    with pytest.raises(ValueError, match=r"delta=None .* 1 for n_samples=1, outside \(0, 1\)"):
        est.fit(X[:1], y[:1])
    assert accountant.spent is None
    # An explicit delta is used as given.
    est.set_params(delta=1e-3).fit(X[:2], y[:2])
    assert est.privacy_spent_.delta == 1e-3


def test_delta_of_one_over_n_or_more_warns():
    """delta >= 1 / n allows publishing a random record outright: the user is told."""
    from skdp import WeakPrivacyWarning
    from skdp.linear_model import DPLogisticRegressionAMP
    X, y = make_classification(n_samples=200, n_features=3, n_informative=2, n_redundant=0,
                               random_state=0)
    est = DPLogisticRegressionAMP(epsilon=1.0, classes=[0, 1], random_state=0)
    for delta in (0.1, 1 / 200):
        with pytest.warns(WeakPrivacyWarning, match=r"delta=.* >= 1 / n_samples = 0.005"):
            est.set_params(delta=delta).fit(X, y)
        assert est.privacy_spent_.delta == delta  # a warning, not a change
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeakPrivacyWarning)
        est.set_params(delta=0.99 / 200).fit(X, y)
        est.set_params(delta=None).fit(X[:2], y[:2])  # the default 1 / n^2 is below 1 / n
