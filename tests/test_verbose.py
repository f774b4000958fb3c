"""``verbose`` of the SVMs, the kernel learners and the parameter selector.

* ``verbose=0`` prints nothing; ``verbose=1`` prints lines prefixed with
  ``[ClassName]`` (scikit-learn's habit, as :class:`DPLogisticRegressionAMP`).
* A bad ``verbose`` is refused before the accountant is charged.
* What is printed is public or a released / declared-not-private attribute:
  the printed numbers are checked against those attributes, and the
  selector never prints a holdout count (the utilities of its exponential
  mechanism), checked with a spy and by changing only the holdout labels.
"""

import re

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from sklearn.tree import DecisionTreeClassifier

from skdp import BudgetAccountant
from skdp.ensemble import ModelAgnosticPrivateClassifier, PrivateQueryAnswerer
from skdp.kernel_methods import (
    InteractiveKernelPredictor,
    PrivateGaussianProcessRegressor,
    PrivateKernelClassifier,
    PrivateKernelNetClassifier,
    PrivateKernelSVC,
)
from skdp.linear_model import (
    DPLogisticRegressionAMP,
    DPSGDClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    PermutationSGDClassifier,
    PrivateFrankWolfeClassifier,
)
from skdp.model_selection import PrivateParameterSelector
from skdp.model_selection import _parameter_tuning
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF
from skdp.utils._random import check_random_state

# Several estimators here are fitted without classes= (incidental: the tests are about verbose).
pytestmark = pytest.mark.filterwarnings("ignore:classes=None:skdp.exceptions.PrivacyLeakWarning")

X3, Y3 = make_classification(240, 3, n_informative=3, n_redundant=0, n_classes=3,
                             n_clusters_per_class=1, random_state=0)
X3 = X3 / 4.0
Y2 = (X3[:, 0] > 0).astype(int)
Y_REG = np.sin(X3[:, 0])

ESTIMATORS = [
    PrivateLinearSVM(data_norm=2.0, C=10.0, classes=[0, 1, 2], random_state=0),
    PrivateSVMRFF(n_components=10, classes=[0, 1, 2], random_state=0),
    PrivateKernelClassifier(gamma=1.0, n_public=20, classes=[0, 1, 2], random_state=0),
    PrivateKernelSVC(gamma=1.0, n_public=20, classes=[0, 1, 2], random_state=0),
    PrivateKernelNetClassifier(gamma=1.0, n_public=20, n_rounds=5, classes=[0, 1, 2],
                               random_state=0),
    PrivateGaussianProcessRegressor(gamma=1.0, random_state=0),
    PrivateParameterSelector(DPLogisticRegressionAMP(delta=1e-6), {"loss": ["logistic", "huber"]},
                             classes=[0, 1, 2], random_state=0),
]
IDS = [type(est).__name__ for est in ESTIMATORS]


def _target(est):
    return Y_REG if isinstance(est, PrivateGaussianProcessRegressor) else Y3


def _service(**params):
    return InteractiveKernelPredictor(gamma=1.0, alpha=1.0, classes=[0, 1], epsilon=10.0,
                                      max_updates=3, random_state=0, **params)


def _numbers(text):
    return {float(tok) for tok in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)}


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_verbose_zero_is_silent_and_one_prints_prefixed_lines(est, capsys):
    name = type(est).__name__
    assert est.get_params()["verbose"] == 0  # the default
    clone(est).fit(X3, _target(est))
    assert capsys.readouterr().out == ""
    clone(est).set_params(verbose=1).fit(X3, _target(est))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 2
    assert all(line.startswith(f"[{name}] ") for line in lines), lines


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("bad, error", [("x", TypeError), (-1, ValueError), (1.5, TypeError),
                                        (True, TypeError)])
def test_bad_verbose_is_refused_before_the_budget_is_charged(est, bad, error, capsys):
    acc = BudgetAccountant(epsilon=1e3, delta=0.5)
    with pytest.raises(error, match="verbose must be"):
        clone(est).set_params(verbose=bad, accountant=acc).fit(X3, _target(est))
    assert acc.spent is None
    assert capsys.readouterr().out == ""


def test_verbose_is_stored_unchanged():
    for est in ESTIMATORS:
        assert clone(est).set_params(verbose="x").get_params()["verbose"] == "x"
    assert _service(verbose="x").verbose == "x"


# ---------------------------------------------------------------- what the lines say


def _problem_lines(out, name):
    return [line for line in out.splitlines() if line.startswith(f"[{name}] problem ")]


@pytest.mark.parametrize("cls", [PrivateLinearSVM, PrivateSVMRFF])
@pytest.mark.parametrize("y, n_jobs", [(Y3, 2), (Y2, None)], ids=["3 classes", "binary"])
def test_svm_prints_each_problem_with_its_diagnostics(cls, y, n_jobs, capsys):
    est = cls(classes=np.unique(y), loss="huber", n_jobs=n_jobs, random_state=0, verbose=1)
    est.fit(X3, y)
    out = capsys.readouterr().out
    lines = _problem_lines(out, cls.__name__)
    # One line per one-vs-rest problem, printed by the parent even with parallel workers.
    assert len(lines) == (1 if len(np.unique(y)) == 2 else 3)
    steps = [int(re.search(r"in (\d+) Newton steps", line).group(1)) for line in lines]
    distances = [float(re.search(r"within (\S+) of", line).group(1)) for line in lines]
    assert max(steps) == est.n_iter_
    assert max(distances) == pytest.approx(est.certified_distance_, rel=1e-2)
    assert f"noise scale {est.noise_scale_:.4g}" in out
    assert f"sensitivity {est.sensitivity_:.4g}" in out


@pytest.mark.parametrize("cls", [PrivateKernelClassifier, PrivateKernelSVC,
                                 PrivateKernelNetClassifier])
def test_kernel_classifiers_print_calibration_and_iterations(cls, capsys):
    est = cls(gamma=1.0, n_public=20, classes=[0, 1, 2], random_state=0, verbose=1)
    est.fit(X3, Y3)
    out = capsys.readouterr().out
    lines = _problem_lines(out, cls.__name__)
    assert len(lines) == 3
    iters = [int(re.search(r"in (\d+) Newton iterations", line).group(1)) for line in lines]
    assert max(iters) == est.n_iter_
    assert f"noise scale {est.noise_scale_:.4g}" in out
    assert f"sensitivity {est.sensitivity_:.4g}" in out


def test_gp_prints_its_calibration(capsys):
    gp = PrivateGaussianProcessRegressor(gamma=1.0, random_state=0, verbose=1).fit(X3, Y_REG)
    out = capsys.readouterr().out
    assert f"noise scale {gp.noise_scale_:.4g}" in out
    assert f"sensitivity {gp.sensitivity_:.4g}" in out


def test_interactive_predictor_announces_each_paid_answer(capsys):
    quiet = _service().fit(X3, Y2)
    quiet.predict(X3)
    assert capsys.readouterr().out == ""
    service = _service(verbose=1).fit(X3, Y2)
    assert "up to 3 paid answers" in capsys.readouterr().out
    service.predict(X3)
    lines = capsys.readouterr().out.splitlines()
    assert service.n_updates_ == 3  # the test bites: all paid answers were used
    assert len(lines) == service.n_updates_
    assert all(line.startswith("[InteractiveKernelPredictor] query ") for line in lines)
    assert lines[-1].endswith("paid answer 3/3; the model is now frozen")
    # The same noise, hence the same session: verbosity changes no answer.
    np.testing.assert_array_equal(_service(verbose=1).fit(X3, Y2).decision_function(X3[:50]),
                                  _service().fit(X3, Y2).decision_function(X3[:50]))


def test_interactive_predictor_refuses_bad_verbose_before_spending_or_answering(capsys):
    acc = BudgetAccountant(epsilon=100.0, delta=0.5)
    with pytest.raises(ValueError, match="verbose must be"):
        _service(verbose=-1, accountant=acc).fit(X3, Y2)
    assert acc.spent is None
    service = _service().fit(X3, Y2)
    service.verbose = "x"
    with pytest.raises(TypeError, match="verbose must be"):
        service.predict(X3[:5])
    assert service.n_queries_ == 0 and service._sparse_vector.n_queries_ == 0
    assert capsys.readouterr().out == ""


# ---------------------------------------------------------------- the selector's holdout


@pytest.fixture
def utilities(monkeypatch):
    """Spy on the selector's exponential mechanism: record the holdout counts, pick 0."""
    seen = []

    def spy(utility, **kwargs):
        seen.append(np.asarray(utility, dtype=float).copy())
        return 0

    monkeypatch.setattr(_parameter_tuning, "exponential_mechanism", spy)
    return seen


def _selector():
    # Epsilons that are not integers, so that no count can coincide with one.
    grid = {"loss": ["logistic", "huber"], "epsilon": [2.5, 25.5]}
    return PrivateParameterSelector(DPLogisticRegressionAMP(delta=1e-6), grid, epsilon=1.0,
                                    classes=[0, 1, 2], random_state=0, verbose=1)


def test_selector_never_prints_a_holdout_count(utilities, capsys):
    sel = _selector().fit(X3, Y3)
    out = capsys.readouterr().out
    (counts,) = utilities
    assert np.all(counts > 0)  # real counts, not a degenerate case
    assert _numbers(out).isdisjoint(counts), (out, counts)
    # One line per candidate, with its public part size, and the released choice.
    fitting = [line for line in out.splitlines() if "fitting candidate" in line]
    assert len(fitting) == len(sel.candidate_params_) == 4
    assert "(48 rows)" in fitting[0]  # 240 rows in 5 parts
    assert f"best_index_={sel.best_index_}" in out


def test_selector_output_does_not_depend_on_the_holdout(utilities, capsys):
    """Neighbours that differ only in holdout labels print the same text."""
    k = 4
    holdout = np.array_split(check_random_state(0).permutation(len(Y3)), k + 1)[-1]
    y_changed = Y3.copy()
    y_changed[holdout] = (Y3[holdout] + 1) % 3
    _selector().fit(X3, Y3)
    first = capsys.readouterr().out
    _selector().fit(X3, y_changed)
    second = capsys.readouterr().out
    assert not np.array_equal(utilities[0], utilities[1])  # the counts did change
    assert first == second


def test_selector_does_not_pass_its_verbosity_on(capsys):
    sel = _selector().fit(X3, Y3)
    assert sel.best_estimator_.get_params()["verbose"] == 0
    out = capsys.readouterr().out
    assert "[DPLogisticRegressionAMP]" not in out


def test_interactive_session_pickled_without_verbose_still_answers(capsys):
    service = _service().fit(X3, Y2)
    del service.verbose  # as a session pickled before the parameter existed
    service.predict(X3[:20])
    assert service.n_queries_ == 20
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("cls", [ModelAgnosticPrivateClassifier, PrivateQueryAnswerer])
@pytest.mark.parametrize("bad, error", [("x", TypeError), (-1, ValueError)])
def test_ensemble_refuses_bad_verbose_before_the_budget_is_charged(cls, bad, error, capsys):
    # joblib refused "x" only inside the teachers' loop, after the charge, and printed
    # progress lines for -1.
    acc = BudgetAccountant(epsilon=1e3, delta=0.5)
    est = cls(DecisionTreeClassifier(max_depth=2), epsilon=5.0, delta=1e-3, n_teachers=4,
              classes=[0, 1], verbose=bad, accountant=acc, random_state=0)
    fit_args = (X3[:60], Y2[:60]) + ((X3[60:90],) if cls is ModelAgnosticPrivateClassifier else ())
    with pytest.raises(error, match="verbose must be"):
        est.fit(*fit_args)
    assert acc.spent is None
    assert capsys.readouterr().out == ""


GLM_ESTIMATORS = [
    ObjectivePerturbationClassifier(random_state=0),
    OutputPerturbationClassifier(random_state=0),
    PrivateFrankWolfeClassifier(max_iter=5, random_state=0),
    DPSGDClassifier(epochs=1, random_state=0),
    PermutationSGDClassifier(epochs=1, random_state=0),
]


@pytest.mark.parametrize("est", GLM_ESTIMATORS, ids=[type(e).__name__ for e in GLM_ESTIMATORS])
def test_glm_family_prints_its_budget_and_refuses_bad_verbose_before_spending(est, capsys):
    clone(est).fit(X3, Y3)
    assert capsys.readouterr().out == ""
    fitted = clone(est).set_params(verbose=1).fit(X3, Y3)
    lines = capsys.readouterr().out.strip().splitlines()
    name = type(est).__name__
    assert lines and all(line.startswith(f"[{name}] ") for line in lines)
    assert f"spent {fitted.privacy_spent_}" in lines[-1]
    acc = BudgetAccountant(epsilon=1e3, delta=0.5)
    with pytest.raises(ValueError, match="verbose must be"):
        clone(est).set_params(verbose=-1, accountant=acc).fit(X3, Y3)
    assert acc.spent is None
