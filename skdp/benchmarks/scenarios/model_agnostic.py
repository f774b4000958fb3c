"""Scenario ``model_agnostic``: private learning with any classifier (seed 004, Ch. 5).

Teachers (LogisticRegression, HistGradientBoostingClassifier) are trained once
per base estimator on a large generated problem (timed with ``n_jobs=1``,
``n_jobs=2`` and on a local Dask cluster); their votes on the public points
are then released through the stable-vote answerer at each epsilon and
calibration, exactly as :class:`~skdp.ensemble.ModelAgnosticPrivateClassifier`
does, and a student is trained on the answered points.
"""

import logging
import time
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

from skdp.benchmarks._harness import make_row, progress
from skdp.benchmarks._registry import register_scenario
from skdp.datasets import make_margin_classification
from skdp.ensemble import PrivateQueryAnswerer, unanimous_vote_teachers
from skdp.ensemble._stability import ANSWERED, StableVoteRelease
from skdp.ensemble._teachers import vote_counts

SCENARIO = "model_agnostic"
DELTA = 1e-6
EPSILONS = (1.0, 3.0, 10.0)


@dataclass(frozen=True)
class _Config:
    n_private: int
    n_public: int
    n_test: int
    n_teachers: int
    max_unstable: int
    estimators: tuple
    n_jobs: tuple  # teacher training timed with each of these
    thesis_factor: int  # thesis calibration re-run with this many times more teachers
    dask: bool
    full: bool


def _estimators(quick):
    lr = ("LogisticRegression", LogisticRegression())
    hgb = ("HistGradientBoosting",
           HistGradientBoostingClassifier(max_iter=20, max_leaf_nodes=15, early_stopping=False))
    return (lr,) if quick else (lr, hgb)


_QUICK = _Config(100_000, 500, 10_000, 250, 5, _estimators(True), (1,), 0, False, False)
_FULL = _Config(2_000_000, 2000, 50_000, 1000, 5, _estimators(False), (1, 2), 3, True, True)


def _fit_answerer(base, X, y, cfg, n_teachers, random_state, n_jobs, backend=None):
    answerer = PrivateQueryAnswerer(base, n_teachers=n_teachers, max_unstable=cfg.max_unstable,
                                    max_queries=cfg.n_public, delta=DELTA, n_jobs=n_jobs,
                                    random_state=random_state)
    start = time.perf_counter()
    if backend is None:
        answerer.fit(X, y)
    else:
        import joblib

        with backend() as _, joblib.parallel_backend("dask"):
            answerer.fit(X, y)
    return answerer, time.perf_counter() - start


def _local_dask():
    """A loopback-only local Dask cluster with two single-threaded worker processes."""
    from contextlib import contextmanager

    from dask.distributed import Client, LocalCluster

    @contextmanager
    def cluster():
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None, silence_logs=logging.ERROR) as lc, \
                Client(lc) as client:
            yield client
    return cluster


def _release_and_learn(counts, classes, student, X_pub, X_test, y_test, cfg, epsilon,
                       calibration, rng):
    """What ModelAgnosticPrivateClassifier.fit does after training the teachers."""
    release = StableVoteRelease(epsilon=epsilon, delta=DELTA, max_unstable=cfg.max_unstable,
                                max_queries=cfg.n_public, calibration=calibration,
                                random_state=rng)
    top, status = release.release(counts)
    answered = status == ANSWERED
    labels = classes[top[answered]]
    if np.unique(labels).size < 2:
        return answered.mean(), float("nan")
    model = clone(student).fit(X_pub[answered], labels)
    return answered.mean(), float(np.mean(model.predict(X_test) == y_test))


@register_scenario(SCENARIO, "model-agnostic private learning (teachers + sparse vector + "
                   "student) vs the non-private model; answered fraction per calibration; "
                   "teacher training time with n_jobs=1, 2 and Dask")
def run(quick, random_state):
    cfg = _QUICK if quick else _FULL
    rows = []
    m = cfg.max_unstable
    for cal in ("lyu", "thesis"):
        b = unanimous_vote_teachers(1.0, DELTA, m, 1000, calibration=cal)
        rows.append(make_row(SCENARIO, "analytic", f"{cal}: unanimous vote answered "
                             f"(p=0.99, T={m}, 1000 queries)", 1.0, "teachers needed", [b]))
    X, y = make_margin_classification(cfg.n_private, margin=0.2, random_state=random_state)
    X_pub, _ = make_margin_classification(cfg.n_public, margin=0.2, random_state=random_state + 1)
    X_test, y_test = make_margin_classification(cfg.n_test, margin=0.2,
                                                random_state=random_state + 2)
    dataset = f"margin 0.2, {cfg.n_private:,} x {X.shape[1]}"
    rng = np.random.default_rng(random_state)

    for name, base in progress(cfg.estimators, desc=SCENARIO):
        start = time.perf_counter()
        reference = clone(base).fit(X, y)
        base_seconds = time.perf_counter() - start
        base_acc = float(np.mean(reference.predict(X_test) == y_test))
        rows.append(make_row(SCENARIO, dataset, f"{name} (non-private, all data)", np.inf,
                             "accuracy", [base_acc], fit_seconds=base_seconds,
                             baseline_seconds=base_seconds, note="non-private"))

        runs = [(f"n_jobs={n_jobs}", n_jobs, None) for n_jobs in cfg.n_jobs]
        if cfg.dask:
            runs.append(("Dask LocalCluster (2 workers)", 2, _local_dask()))
        votes = []
        for label, n_jobs, backend in runs:
            answerer, seconds = _fit_answerer(base, X, y, cfg, cfg.n_teachers, random_state,
                                              n_jobs, backend)
            votes.append(vote_counts(answerer.teachers_, X_pub, answerer.classes_))
            same = "same votes as n_jobs=1" if np.array_equal(votes[0], votes[-1]) else \
                "VOTES DIFFER from n_jobs=1"
            rows.append(make_row(SCENARIO, dataset, f"{name}: train {cfg.n_teachers} teachers, "
                                 f"{label}", np.nan, "seconds", [seconds], fit_seconds=seconds,
                                 baseline_seconds=base_seconds, note=same))
        counts, classes = votes[0], answerer.classes_

        for cal in ("lyu", "thesis"):
            for eps in EPSILONS:
                frac, acc = _release_and_learn(counts, classes, base, X_pub, X_test, y_test, cfg,
                                               eps, cal, rng)
                method = f"{name}, {cfg.n_teachers} teachers, {cal}"
                note = ""
                if cfg.full and cal == "lyu" and eps == 1.0:
                    met = frac >= 0.9 and acc >= base_acc - 0.02
                    note = ("target (>= 90% answered, within 2 points) "
                            + ("met" if met else "NOT met"))
                rows.append(make_row(SCENARIO, dataset, method, eps, "answered fraction", [frac]))
                rows.append(make_row(SCENARIO, dataset, method, eps, "accuracy", [acc],
                                     note=note))

        if cfg.thesis_factor and name == "LogisticRegression":
            big = cfg.thesis_factor * cfg.n_teachers
            answerer, seconds = _fit_answerer(base, X, y, cfg, big, random_state, 2)
            counts_big = vote_counts(answerer.teachers_, X_pub, answerer.classes_)
            frac, acc = _release_and_learn(counts_big, answerer.classes_, base, X_pub, X_test,
                                           y_test, cfg, 1.0, "thesis", rng)
            rows.append(make_row(SCENARIO, dataset, f"{name}, {big} teachers, thesis", 1.0,
                                 "answered fraction", [frac], fit_seconds=seconds,
                                 note=f"{cfg.thesis_factor}x the teachers of the lyu rows"))

    if cfg.full:
        # The same problem without the empty band: more votes are split near the boundary.
        Xn, yn = make_margin_classification(cfg.n_private, margin=0.0, random_state=random_state)
        Xn_pub, _ = make_margin_classification(cfg.n_public, margin=0.0,
                                               random_state=random_state + 1)
        Xn_test, yn_test = make_margin_classification(cfg.n_test, margin=0.0,
                                                      random_state=random_state + 2)
        answerer, _ = _fit_answerer(LogisticRegression(), Xn, yn, cfg, cfg.n_teachers,
                                    random_state, 2)
        counts = vote_counts(answerer.teachers_, Xn_pub, answerer.classes_)
        method = f"LogisticRegression, {cfg.n_teachers} teachers, lyu"
        for eps in EPSILONS:
            frac, acc = _release_and_learn(counts, answerer.classes_, LogisticRegression(),
                                           Xn_pub, Xn_test, yn_test, cfg, eps, "lyu", rng)
            for metric, value in (("answered fraction", frac), ("accuracy", acc)):
                rows.append(make_row(SCENARIO, f"no margin, {cfg.n_private:,} x {Xn.shape[1]}",
                                     method, eps, metric, [value]))
    return rows
