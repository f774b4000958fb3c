"""Scenario ``matrix_completion_discrete``: continuous against discrete Gaussian noise.

``DPMatrixCompleter(noise="discrete_gaussian")`` (exact discrete Gaussian on
a public grid, zCDP accounting) next to the default ``noise="gaussian"``
(floating-point Gaussian, exact GDP composition) on Thakkar's (2019) synthetic
ratings: test RMSE, fit time (``time_ratio`` = discrete / continuous, both
measured in this run, best of the draws) and the noise ratio ``sigma_``
discrete / continuous, for Frank-Wolfe (exact and Oja eigensolvers) and
rank-one pursuit at 500 and 2000 items (full mode).
"""

import math
import time

import numpy as np

from skdp.benchmarks._harness import make_row, progress
from skdp.benchmarks._registry import register_scenario
from skdp.datasets import make_low_rank_ratings
from skdp.matrix_completion import DPMatrixCompleter

SCENARIO = "matrix_completion_discrete"
DELTA = 1e-6
N_RATINGS = 40


def _methods(n_users, n_items):
    fw = dict(method="frank_wolfe", max_iter=4, row_norm_bound=0.5 * math.sqrt(N_RATINGS),
              nuclear_norm=0.5 * math.sqrt(n_users * n_items))
    return {
        "FW (exact)": dict(fw, eigensolver="exact"),
        "FW (Oja)": dict(fw, eigensolver="oja"),
        "pursuit (exact)": dict(method="pursuit", rank=2, eigensolver="exact",
                                row_norm_bound=0.17 * math.sqrt(N_RATINGS)),
    }


def _fit(params, noise, seed, data):
    model = DPMatrixCompleter(epsilon=1.0, delta=DELTA, noise=noise, random_state=seed, **params)
    start = time.perf_counter()
    model.fit(data.train)
    seconds = time.perf_counter() - start
    test = data.test.tocoo()
    completed = model.transform(data.train)
    rmse = float(np.sqrt(np.mean((completed[test.row, test.col] - test.data) ** 2)))
    return rmse, seconds, model.sigma_


@register_scenario(SCENARIO, "matrix completion: exact discrete Gaussian (floating-point safe) "
                             "against the continuous Gaussian: RMSE, fit time, noise ratio")
def run(quick, random_state):
    settings = [(10_000, 200)] if quick else [(50_000, 500), (50_000, 2000)]
    n_draws = 1 if quick else 3
    rows = []
    for n_users, n_items in settings:
        data = make_low_rank_ratings(n_users, n_items, n_ratings=N_RATINGS,
                                     random_state=random_state)
        name = f"synthetic m={n_users} n={n_items}"
        for method, params in progress(_methods(n_users, n_items).items(), desc=name):
            result = {}
            for noise in ("gaussian", "discrete_gaussian"):
                draws = [_fit(params, noise, random_state + seed, data) for seed in range(n_draws)]
                result[noise] = ([d[0] for d in draws], min(d[1] for d in draws), draws[0][2])
            (cont, cont_s, cont_sigma), (disc, disc_s, disc_sigma) = (
                result["gaussian"], result["discrete_gaussian"])
            rows.append(make_row(SCENARIO, name, f"{method}, gaussian", 1.0, "rmse", cont,
                                 fit_seconds=cont_s, baseline_seconds=cont_s))
            rows.append(make_row(SCENARIO, name, f"{method}, discrete_gaussian", 1.0, "rmse",
                                 disc, fit_seconds=disc_s, baseline_seconds=cont_s,
                                 note=f"sigma ratio {disc_sigma / cont_sigma:.3f} "
                                      f"(zCDP vs exact GDP); time_ratio vs gaussian"))
    return rows
