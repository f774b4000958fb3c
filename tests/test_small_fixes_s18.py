"""Small correctness fixes (s18): DP-SGD's step-size check follows the schedule,
the density estimators' volume check does not depend on the feature order,
refusal messages name their real cause, and the selector's post-charge holdout
evaluation prints nothing that depends on the data."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _dummy import NoisyCentroidClassifier

from skdp import BudgetAccountant
from skdp.kernel_methods import PrivateHistogram, PrivateKernelDensity
from skdp.linear_model import (
    DPSGDClassifier,
    PermutationSGDClassifier,
    PrivateFrankWolfeClassifier,
)
from skdp.model_selection import PrivateParameterSelector
from skdp.linear_model._dpsgd import dpsgd_weight_growth


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    return X, (X[:, 0] > 0).astype(int)


# --------------------------------------------------------------------------
# 1. DP-SGD: learning_rate * alpha > 2 is refused only when the schedule's own
#    steps diverge (privacy does not depend on the step size).
# --------------------------------------------------------------------------
def test_weight_growth_hand_computed():
    # sqrt schedule, eta_0 alpha = 3: factors |1 - 3/sqrt(t)| = 2, 1.1213, 0.7321, ...
    growth, last = dpsgd_weight_growth(3.0, 1.0, "sqrt", 10)
    assert growth == pytest.approx(2.0 * (3.0 / math.sqrt(2.0) - 1.0), rel=1e-12)
    assert last == pytest.approx(3.0 / math.sqrt(10.0), rel=1e-12)
    # constant schedule: the same factor every step
    growth, last = dpsgd_weight_growth(3.0, 1.0, "constant", 4)
    assert growth == pytest.approx(2.0**4) and last == 3.0
    assert dpsgd_weight_growth(1.0, 1.0, "constant", 50) == (1.0, 1.0)


def test_sqrt_schedule_transient_large_step_is_fitted(data):
    X, y = data
    # eta_0 alpha = 10: eta_t alpha > 2 only for t < 25; the run has 40 steps.
    clf = DPSGDClassifier(epsilon=1.0, delta=1e-5, batch_size=20, epochs=4, learning_rate=10.0,
                          alpha=1.0, learning_rate_schedule="sqrt", classes=[0, 1],
                          random_state=0).fit(X, y)
    assert clf.n_iter_ == 40
    assert np.all(np.isfinite(clf.coef_))


@pytest.mark.parametrize("params", [
    # constant step: every step expands the weights
    {"learning_rate": 10.0, "alpha": 1.0, "learning_rate_schedule": "constant"},
    # linear schedule that starts expanding and whose transient overflows
    {"learning_rate": 1e4, "alpha": 1.0, "learning_rate_schedule": "linear", "epochs": 400},
    # sqrt schedule that ends while still expanding (eta_40 alpha = 20 / sqrt(40) > 2)
    {"learning_rate": 20.0, "alpha": 1.0, "learning_rate_schedule": "sqrt"},
    # sqrt schedule whose transient would overflow the weights (growth about 1e837)
    {"learning_rate": 100.0, "alpha": 1.0, "learning_rate_schedule": "sqrt", "epochs": 400},
])
def test_diverging_schedules_still_refused(data, params):
    X, y = data
    kwargs = {"epsilon": 1.0, "delta": 1e-5, "batch_size": 20, "epochs": 4, "classes": [0, 1],
              "random_state": 0, **params}
    with pytest.raises(ValueError, match="learning_rate.*alpha"):
        DPSGDClassifier(**kwargs).fit(X, y)


# --------------------------------------------------------------------------
# 2. The density estimators' box / bin volume check does not depend on the
#    order of the features (it used a running float product that overflowed
#    on the way for one order and not for another).
# --------------------------------------------------------------------------
_SIDES = np.array([1e200, 1e200, 1e-200, 1e-200])  # volume 1 in exact arithmetic
DENSITIES = [
    lambda bounds: PrivateHistogram(bins=1, bounds=bounds, epsilon=1.0, random_state=0),
    lambda bounds: PrivateKernelDensity(bandwidth=1.0, bounds=bounds, n_public=20, epsilon=1.0,
                                        random_state=0),
]


@pytest.mark.parametrize("make", DENSITIES)
def test_volume_check_is_order_independent(make):
    X = np.random.default_rng(0).uniform(size=(50, 4)) * _SIDES
    scores = []
    for order in ([0, 1, 2, 3], [0, 2, 1, 3], [2, 3, 0, 1]):
        bounds = np.column_stack([np.zeros(4), _SIDES])[order]
        est = make(bounds).fit(X[:, order])  # every order accepted (was: only the 2nd)
        scores.append(est.score_samples(X[:5, order]))
        # the score after the charge uses the same order-independent volume
        assert np.all(np.isfinite(scores[-1]))
    if isinstance(est, PrivateHistogram):
        # one bin, the same noise draw: the same density whatever the order
        np.testing.assert_array_equal(scores[0], scores[1])
        np.testing.assert_array_equal(scores[0], scores[2])


@pytest.mark.parametrize("make", DENSITIES)
@pytest.mark.parametrize("sides", [[1e200, 1e200, 1e-10], [1e-200, 1e-200, 1e10]])
def test_volume_out_of_range_refused_in_every_order(make, sides):
    sides = np.array(sides)
    X = np.random.default_rng(0).uniform(size=(20, 3)) * sides
    for order in ([0, 1, 2], [0, 2, 1], [2, 0, 1]):
        bounds = np.column_stack([np.zeros(3), sides])[order]
        with pytest.raises(ValueError, match="volume"):
            make(bounds).fit(X[:, order])


# --------------------------------------------------------------------------
# 3. A noise scale that over- or underflows is refused before the charge, by a
#    message that names the public parameters behind it (it was "use a smaller
#    epsilon", or no refusal at all and inf / NaN / noiseless weights after the
#    charge).
# --------------------------------------------------------------------------
SCALE_REFUSED = [
    # sensitivity 2 k eta R / b = 2.5e-301: the Gaussian noise underflows to 0
    # (was: "use a smaller epsilon" only)
    (PermutationSGDClassifier, {"epsilon": 1e300, "data_norm": 1e-150, "learning_rate": 1e-150},
     "smallest normal float", ["data_norm", "learning_rate"]),
    # sensitivity 2 R / (alpha b N) = 1e303 at epsilon = 1e-6: the noise overflows
    # (was: accepted, inf weights after the charge)
    (PermutationSGDClassifier, {"epsilon": 1e-6, "strongly_convex": True, "alpha": 1e-305,
                                "calibration": "thesis"}, "overflows", ["alpha", "data_norm"]),
    # z data_norm overflows (was: accepted, NaN weights after the charge)
    (DPSGDClassifier, {"epsilon": 1e-6, "delta": 1e-5, "data_norm": 1e305}, "overflows",
     ["data_norm"]),
    # the selection noise 2 s / epsilon_0 underflows to 0 (was: accepted, noiseless selection)
    (PrivateFrankWolfeClassifier, {"epsilon": 1e300, "delta": 0.0, "data_norm": 1e-300,
                                   "l1_radius": 1e-5}, "underflows", ["data_norm", "l1_radius"]),
    # ... or overflows (was: accepted, infinite noise on every score)
    (PrivateFrankWolfeClassifier, {"epsilon": 1e-2, "delta": 0.0, "data_norm": 1e300,
                                   "l1_radius": 1e6, "max_iter": 100}, "overflows",
     ["data_norm", "l1_radius"]),
]


@pytest.mark.parametrize("cls, params, how, names", SCALE_REFUSED)
def test_noise_scale_out_of_range_names_its_parameters(data, cls, params, how, names):
    X, y = data
    accountant = BudgetAccountant(epsilon=1e301, delta=0.5)
    est = cls(classes=[0, 1], random_state=0, accountant=accountant, **params)
    with pytest.raises(ValueError, match=how) as info:
        est.fit(X, y)
    message = str(info.value)
    for name in names:
        assert f"{name}=" in message
    assert "Nothing was spent" in message
    assert accountant.spent is None


# --------------------------------------------------------------------------
# 5. PrivateParameterSelector: predicting on the holdout after the charge
#    prints nothing that depends on the holdout rows (numerical warnings of a
#    candidate's predict were shown or not depending on the data).
# --------------------------------------------------------------------------
def _selector_warnings(X, y):
    selector = PrivateParameterSelector(NoisyCentroidClassifier(), {"epsilon": [0.5, 1.0]},
                                        epsilon=1.0, classes=[0, 1], random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        selector.fit(X, y)
    return [(w.category, str(w.message)) for w in caught]


def test_selector_holdout_evaluation_prints_nothing_data_dependent():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] > 0).astype(int)
    X_large = X.copy()
    X_large[::7] *= 1e200  # the centroid distances overflow in the candidates' predict
    assert _selector_warnings(X_large, y) == _selector_warnings(X, y) == []


def test_clipping_ignores_a_global_floating_point_error_mode():
    # Under np.seterr(all="raise") the expected under/overflow of the squares (handled by
    # rescaling) raised FloatingPointError inside a private fit, after the charge, for rows
    # such as [1e300, 1e-310]: a data-dependent failure. Clipping must not depend on it.
    from skdp.utils import clip_rows_l2

    X = np.array([[1e300, 1e-310], [3.0, 4.0], [1e-200, 1e-200]])
    expected = clip_rows_l2(X, 1.0)
    with np.errstate(all="raise"):
        clipped = clip_rows_l2(X, 1.0)
        clipped_sparse = clip_rows_l2(sp.csr_matrix(X), 1.0)
    np.testing.assert_array_equal(clipped, expected)
    np.testing.assert_array_equal(clipped_sparse.toarray(), expected)
    assert np.linalg.norm(clipped[0]) == pytest.approx(1.0)
