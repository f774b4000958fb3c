"""Scenario ``kernel_methods``: functional perturbation and Jain-Thakurta learners vs scikit-learn.

Three generated problems, each swept over epsilon against its non-private
counterpart fitted in the same run:

* density: a two-component Gaussian mixture in 1-D; mean test
  log-likelihood of :class:`PrivateKernelDensity` and :class:`PrivateHistogram`
  vs :class:`sklearn.neighbors.KernelDensity` (same bandwidth);
* regression: a noisy sine; test RMSE of
  :class:`PrivateGaussianProcessRegressor` vs
  :class:`sklearn.gaussian_process.GaussianProcessRegressor` (same fixed kernel
  and noise level, no hyperparameter tuning);
* classification: two moons; test accuracy of :class:`PrivateKernelClassifier`
  (Jain and Thakurta (2013) TDDL, public sample of the test distribution),
  :class:`PrivateKernelNetClassifier` (Jain and Thakurta (2013) TDIL, no public data) and
  :class:`PrivateKernelSVC` (functional perturbation) vs :class:`sklearn.svm.SVC`
  with the same kernel (``C = 1 / (alpha n)``, ``alpha = 0.01``). Each private
  learner uses the regularization that suits its noise (TDDL and TDIL
  ``alpha = 0.5``, functional ``alpha = 0.05``; found on this generated problem, so treat the
  comparison as an illustration, not a tuned-private result).
"""

import math

import numpy as np
from sklearn.base import clone
from sklearn.datasets import make_moons
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF
from sklearn.neighbors import KernelDensity
from sklearn.svm import SVC

from skdp.benchmarks._harness import make_row, progress, timed_fit
from skdp.benchmarks._registry import register_scenario
from skdp.kernel_methods import (
    PrivateGaussianProcessRegressor,
    PrivateHistogram,
    PrivateKernelClassifier,
    PrivateKernelDensity,
    PrivateKernelNetClassifier,
    PrivateKernelSVC,
)

SCENARIO = "kernel_methods"


def _sweep(dataset, method, estimator, epsilons, n_draws, seed, score, baseline_seconds,
           fit_params=None, note=""):
    rows = []
    for eps in progress(epsilons, desc=method):
        values, seconds = [], []
        for draw in range(n_draws):
            est = clone(estimator).set_params(epsilon=eps, random_state=seed + draw)
            est, sec = timed_fit(est, *dataset[:2], **(fit_params or {}))
            values.append(score(est))
            seconds.append(sec)
        rows.append(make_row(SCENARIO, dataset[2], method, eps, dataset[3], values,
                             fit_seconds=float(np.mean(seconds)),
                             baseline_seconds=baseline_seconds, note=note))
    return rows


def _baseline(dataset, method, estimator, score):
    est, sec = timed_fit(clone(estimator), *dataset[:2])
    row = make_row(SCENARIO, dataset[2], method, math.inf, dataset[3], [score(est)],
                   fit_seconds=sec, baseline_seconds=sec, note="non-private")
    return row, sec


def _density(rng, quick, seed, n_draws):
    n = 2000 if quick else 5000

    def sample(m):
        comp = rng.random(m) < 0.3
        return np.where(comp, rng.normal(-1.5, 0.5, m), rng.normal(1.0, 1.0, m))[:, None]

    X, X_test = sample(n), sample(2000)
    X_test = X_test[np.abs(X_test[:, 0]) < 5]  # inside the public box
    data = (X, None, f"gaussian mixture (n={n})", "mean test log-likelihood")

    def loglik(est):
        return float(np.mean(est.score_samples(X_test)))

    rows = []
    base_row, base_sec = _baseline(data, "sklearn KernelDensity", KernelDensity(bandwidth=0.3),
                                   loglik)
    rows.append(base_row)
    epsilons = [0.1, 0.5, 1.0, 5.0] if quick else [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
    rows += _sweep(data, "PrivateKernelDensity", PrivateKernelDensity(bandwidth=0.3, bounds=(-5, 5)),
                   epsilons, n_draws, seed, loglik, base_sec)
    rows += _sweep(data, "PrivateHistogram (30 bins)",
                   PrivateHistogram(bins=30, bounds=(-5, 5)), epsilons, n_draws, seed, loglik,
                   base_sec)
    return rows


def _regression(rng, quick, seed, n_draws):
    n = 300 if quick else 600
    X, X_test = rng.uniform(-4, 4, size=(n, 1)), rng.uniform(-4, 4, size=(1000, 1))
    y = np.sin(X[:, 0]) + 0.2 * rng.normal(size=n)
    y_test = np.sin(X_test[:, 0])
    data = (X, y, f"noisy sine (n={n})", "test RMSE")

    def rmse(est):
        return float(np.sqrt(np.mean((est.predict(X_test) - y_test) ** 2)))

    base_row, base_sec = _baseline(
        data, "sklearn GaussianProcessRegressor",
        GaussianProcessRegressor(RBF(1.0), alpha=1.0, optimizer=None), rmse)
    epsilons = [5.0, 100.0] if quick else [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
    est = PrivateGaussianProcessRegressor(gamma=0.5, alpha=1.0, y_bounds=(-2.0, 2.0))
    return [base_row] + _sweep(data, "PrivateGaussianProcessRegressor", est, epsilons, n_draws,
                               seed, rmse, base_sec, note="labels private, inputs public")


def _classification(quick, seed, n_draws):
    n = 500 if quick else 1500
    X, y = make_moons(n, noise=0.2, random_state=seed)
    X_test, y_test = make_moons(2000, noise=0.2, random_state=seed + 1)
    Z = X_test[:100]  # public unlabeled sample of the test distribution
    data = (X, y, f"two moons (n={n})", "test accuracy")
    alpha, gamma = 0.01, 2.0

    def accuracy(est):
        return float(est.score(X_test, y_test))

    base_row, base_sec = _baseline(data, "sklearn SVC (C = 1/(alpha n))",
                                   SVC(gamma=gamma, C=1.0 / (alpha * n)), accuracy)
    epsilons = [1.0, 5.0, 20.0] if quick else [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0]
    rows = [base_row]
    rows += _sweep(data, "PrivateKernelClassifier (TDDL)",
                   PrivateKernelClassifier(gamma=gamma, alpha=0.5), epsilons, n_draws, seed,
                   accuracy, base_sec, fit_params={"X_public": Z}, note="100 public test points")
    rows += _sweep(data, "PrivateKernelNetClassifier (TDIL)",
                   PrivateKernelNetClassifier(gamma=gamma, alpha=0.5, bounds=(-1.5, 2.5)),
                   epsilons, n_draws, seed, accuracy, base_sec, note="no public data; 400-point net")
    rows += _sweep(data, "PrivateKernelSVC (functional)",
                   PrivateKernelSVC(gamma=gamma, alpha=0.05), epsilons, n_draws, seed, accuracy,
                   base_sec, fit_params={"X_public": Z}, note="100 public test points")
    return rows


@register_scenario(SCENARIO, "private vs non-private KDE/histogram log-likelihood, GP regression "
                   "RMSE and kernel classifier accuracy over epsilon")
def run(quick, random_state):
    rng = np.random.default_rng(random_state)
    n_draws = 2 if quick else 5
    return (_density(rng, quick, random_state, n_draws)
            + _regression(rng, quick, random_state, n_draws)
            + _classification(quick, random_state, n_draws))
