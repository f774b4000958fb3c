"""Scenario ``svm``: private kernel SVMs on random Fourier features (Rubinstein et al. (2012)) vs baselines."""

import time

from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

from skdp.benchmarks._harness import (
    Dataset,
    evaluate_baseline,
    evaluate_private,
    make_row,
    progress,
    timed_fit,
)
from skdp.benchmarks._registry import register_scenario
from skdp.datasets import make_concentric_spheres
from skdp.kernel_approximation import RandomFourierFeatures
from skdp.linear_model import ObjectivePerturbationClassifier
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF

EPSILONS = (0.1, 0.5, 1.0, 5.0)
DELTA = 1e-6


def _spheres(n_train, random_state):
    X, y = make_concentric_spheres(n_train + 5000, n_features=5, noise=0.1,
                                   random_state=random_state)
    return Dataset(f"spheres-5d (n={n_train})", X[:n_train], y[:n_train],
                   X[n_train:], y[n_train:])


def _breast_cancer(random_state):
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=random_state)
    # Standardizing with training statistics is a (common) non-private step,
    # shared by every method; a real release would use public scales.
    scaler = StandardScaler().fit(X_train)
    return Dataset("breast-cancer", scaler.transform(X_train), y_train,
                   scaler.transform(X_test), y_test)


def _best_of(estimator, data, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        clone(estimator).fit(data.X_train, data.y_train)
        best = min(best, time.perf_counter() - start)
    return best


def _run_dataset(data, settings, n_draws, seed, repeats, objective_runs):
    gamma, C, n_components, data_norm, C_linear = settings
    n = len(data.y_train)
    rff = RandomFourierFeatures(gamma=gamma, n_components=n_components, random_state=seed)
    # The non-private linear SVM on the same features and objective (liblinear's
    # C is per sample: C / n); its fit time (features included) is the reference.
    linear_rff = make_pipeline(rff, LinearSVC(loss="hinge", C=C / n, fit_intercept=False))
    rows = []
    row, _ = evaluate_baseline("svm", data, "SVC(kernel='rbf')", SVC(kernel="rbf", gamma=gamma))
    rows.append(row)
    row, _ = evaluate_baseline("svm", data, "RFF + LinearSVC (hinge)", linear_rff)
    reference = _best_of(linear_rff, data, repeats)
    row["fit_seconds"], row["time_ratio"] = reference, 1.0
    rows.append(row)
    common = dict(gamma=gamma, C=C, n_components=n_components)
    candidates = [
        ("PrivateSVMRFF (laplace)", PrivateSVMRFF(**common)),
        ("PrivateSVMRFF (gaussian)", PrivateSVMRFF(mechanism="gaussian", delta=DELTA, **common)),
        # The same releases with exact integer noise on a public grid (floating-point safe).
        ("PrivateSVMRFF (discrete_laplace)", PrivateSVMRFF(mechanism="discrete_laplace",
                                                           **common)),
        ("PrivateSVMRFF (discrete_gaussian)", PrivateSVMRFF(mechanism="discrete_gaussian",
                                                            delta=DELTA, **common)),
        ("PrivateLinearSVM (laplace, raw features)",
         PrivateLinearSVM(data_norm=data_norm, C=C_linear)),
        ("PrivateLinearSVM (gaussian, raw features)",
         PrivateLinearSVM(data_norm=data_norm, C=C_linear, mechanism="gaussian", delta=DELTA)),
    ]
    for method, estimator in candidates:
        rows.extend(evaluate_private("svm", data, method, estimator, EPSILONS, n_draws,
                                     seed=seed, baseline_seconds=reference))
    # Chaudhuri et al.'s (2011) route: objective perturbation in the same random feature space
    # (its Lambda is 1 / C; Huber loss; the features have norm 1).
    objective = make_pipeline(rff, ObjectivePerturbationClassifier(
        loss="huber", data_norm=1.0, alpha=1.0 / C, fit_intercept=False))
    method = "RFF + ObjectivePerturbationClassifier (huber)"
    epsilons, n_draws_objective = objective_runs
    for eps in progress(epsilons, desc=f"{method} on {data.name}"):
        scores, seconds = [], []
        for draw in range(n_draws_objective):
            pipe = clone(objective).set_params(objectiveperturbationclassifier__epsilon=eps,
                                               objectiveperturbationclassifier__random_state=
                                               seed + draw)
            pipe, sec = timed_fit(pipe, data.X_train, data.y_train)
            scores.append(pipe.score(data.X_test, data.y_test))
            seconds.append(sec)
        rows.append(make_row("svm", data.name, method, eps, "accuracy", scores,
                             fit_seconds=sum(seconds) / len(seconds),
                             baseline_seconds=reference))
    return rows


@register_scenario("svm", "private kernel SVM with random Fourier features (Rubinstein et al. (2012)) vs "
                   "SVC, a non-private RFF linear SVM and private linear SVMs")
def run(quick, random_state):
    n_train = 4000 if quick else 20000
    n_draws = 1 if quick else 5
    repeats = 1 if quick else 3
    # (gamma, C, n_components, data_norm of the raw rows with intercept, C of the linear
    # model): fixed before the runs (not tuned privately; see the issue-5 report).
    # Objective perturbation's certified Newton solve is much slower: fewer runs.
    objective_runs = ((1.0,), 1) if quick else (EPSILONS, 2)
    spheres = _run_dataset(_spheres(n_train, random_state),
                           (2.0, 100.0, 200 if quick else 500, 2.0, 1.0),
                           n_draws, random_state, repeats, objective_runs)
    cancer = _run_dataset(_breast_cancer(random_state), (1.0 / 30, 10.0, 100, 3.0, 1.0),
                          n_draws, random_state, repeats, objective_runs)
    return spheres + cancer
