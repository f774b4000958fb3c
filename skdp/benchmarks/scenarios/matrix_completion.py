"""Scenario ``matrix_completion``: Thakkar (2019), Sec. 6.4, synthetic ratings.

Test RMSE against epsilon of private Frank-Wolfe (exact and Oja
eigensolvers), private SVD, private rank-one pursuit and private projected
gradient descent, next to non-private Frank-Wolfe and projected gradient
descent and the per-user mean, with fit+transform time and peak memory; plus
a large catalogue (20,000 items) where only Oja's eigensolver fits in memory.
"""

import math
import time
import tracemalloc
from dataclasses import dataclass

import numpy as np

from skdp.benchmarks._harness import make_row, progress
from skdp.benchmarks._registry import register_scenario
from skdp.datasets import make_low_rank_ratings
from skdp.matrix_completion import DPMatrixCompleter
from skdp.matrix_completion._ratings import ratings_from_input
from skdp.matrix_completion._solvers import (
    frank_wolfe_local,
    nuclear_shrinkage,
    pgd_local,
    private_eigh,
    private_top_eigen,
    step_sizes,
)

SCENARIO = "matrix_completion"
DELTA = 1e-6  # Thakkar (2019), Sec. 6.4
N_RATINGS = 80  # at most 80 ratings per user (Sec. 6.4)
# Frank-Wolfe iterations T, chosen on a separate generator draw (seed 2026,
# m = 500,000, epsilon = 1, one noise draw), never on the draw reported here.
# Private FW (row_norm_bound 0.5 sqrt(80)) / non-private FW at the same T:
#   n = 400: T=3 0.66, T=4 0.72;  n = 900: T=3 0.66, T=4 1.07
# (and, on the reported draw of the first version, T=5: 1.07 and 1.54).
# T = 4 is the largest T tested with private FW within 15% of non-private FW for both n. The
# non-private FW rows at T and 4T show what the fixed, small T costs.
FW_ITER = 4
FW_DRAWS = 3  # noise draws averaged at epsilon = 1 in full mode (Thakkar (2019) averages 10)
# Private PGD (Alg. 16): T and the whole-row bound c sqrt(n) chosen on the same
# tuning draw (seed 2026, epsilon = 1, one noise draw, steps eta = 1):
#   m = 500,000, n = 400, T = 6: c = 0.3 0.151, c = 0.4 0.140, c = 0.5 0.145;
#   c = 0.4, T = 10: 0.101 (fit+transform about 2.5 minutes on the loaded machine);
#   m = 30,000, n = 200, c = 0.4: T = 4 0.120, T = 6 0.110, T = 8 0.110, T = 10 0.112
#   (c = 0.3 and 0.5 worse at T = 4, 6, 8).
PGD_ITER = 10
PGD_BOUND = 0.4  # times sqrt(n_items)


@dataclass(frozen=True)
class _Setting:
    n_users: int
    n_items: int
    epsilons: tuple
    methods: tuple
    block: int = 50_000  # users per transform call
    # PGD is slow (a dense n x n release and dense user rows in every
    # iteration; Thakkar (2019) drops it at n = 900 for that reason): one noise
    # draw, at these epsilons only.
    pgd_epsilons: tuple = ()


def _methods(nuclear_norm, n_items):
    # Bounds scale with sqrt(ratings per user); FW clips targets and iterates,
    # so it needs a larger bound than the methods whose local step is unclipped.
    # The FW bound was compared with 0.35 and 0.7 sqrt(80) on the tuning draw
    # (seed 2026): 0.35 is worse for both n, 0.7 no better.
    fw_bound, local_bound = 0.5 * math.sqrt(N_RATINGS), 0.17 * math.sqrt(N_RATINGS)
    fw = dict(method="frank_wolfe", nuclear_norm=nuclear_norm, max_iter=FW_ITER,
              row_norm_bound=fw_bound)
    return {
        "private FW (exact)": dict(fw, eigensolver="exact"),
        "private FW (Oja)": dict(fw, eigensolver="oja", oja_iter=5),
        "private SVD": dict(method="svd", rank=2, row_norm_bound=local_bound,
                            eigensolver="exact"),
        "private pursuit": dict(method="pursuit", rank=2, row_norm_bound=local_bound,
                                eigensolver="exact"),
        # Whole rows: the bound scales with sqrt(n_items), not with the ratings per user.
        "private PGD": dict(method="pgd", nuclear_norm=nuclear_norm, max_iter=PGD_ITER,
                            row_norm_bound=PGD_BOUND * math.sqrt(n_items)),
    }


def _rmse(pred, test):
    return float(np.sqrt(np.mean((pred - test.data) ** 2)))


def _measure(func):
    """Run ``func()``; return its result, seconds and peak traced memory in MB."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        out = func()
    finally:
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return out, seconds, peak


def _private_predictions(params, epsilon, seed, train, test, block):
    """Fit, then complete users block by block and read the held-out entries."""
    model = DPMatrixCompleter(epsilon=epsilon, delta=DELTA, random_state=seed, **params)
    return _held_out_predictions(model.fit(train), train, test, block)


def _held_out_predictions(model, train, test, block):
    """Complete the users block by block (bounded memory) and read the held-out entries."""
    pred = np.empty(len(test.data))
    for start in range(0, train.shape[0], block):
        sel = (test.row >= start) & (test.row < start + block)
        completed = model.transform(train[start:start + block])
        pred[sel] = completed[test.row[sel] - start, test.col[sel]]
    return pred


def _non_private_frank_wolfe(train, test, nuclear_norm, n_iter, bound=math.inf):
    """Thakkar (2019), Alg. 12 with exact top singular vectors, same centring.

    Unclipped by default; with a finite ``bound`` it clips targets and iterates
    as private FW does (Pi_Delta of Alg. 13), so that noise is the only difference.
    """
    ratings = ratings_from_input(train, center="user")
    rng = np.random.default_rng(0)
    components = []

    def exact_direction(t, A):
        vectors, values = private_top_eigen(A, 0.0, rng)
        components.append(vectors[:, 0])
        return vectors[:, 0], math.sqrt(max(values[0], 0.0))

    coef = frank_wolfe_local(ratings, exact_direction, nuclear_norm=nuclear_norm,
                             bound=bound, etas=step_sizes(n_iter, "standard"),
                             coefficients=True)
    V = np.array(components)
    return np.einsum("et,te->e", coef[test.row], V[:, test.col]) + ratings.means[test.row]


def _non_private_pgd(train, test, nuclear_norm, n_iter, bound):
    """Thakkar (2019), Alg. 16 without noise: private PGD's clipping, projection and steps."""
    ratings = ratings_from_input(train, center="user")
    rng = np.random.default_rng(0)

    def exact_projection(t, gram):
        values, vectors = private_eigh(gram, 0.0, rng)
        keep, factors = nuclear_shrinkage(values, nuclear_norm)
        return vectors[:, keep].T, factors

    coef, V = pgd_local(ratings, exact_projection, bound=bound, etas=np.ones(n_iter), gram=True)
    return np.einsum("er,re->e", coef[test.row], V[:, test.col]) + ratings.means[test.row]


def _user_means(train, test):
    return ratings_from_input(train, center="user").means[test.row]


def _run_setting(setting, random_state, n_draws):
    name = f"synthetic m={setting.n_users:,} n={setting.n_items:,}"
    data = make_low_rank_ratings(setting.n_users, setting.n_items, n_ratings=N_RATINGS,
                                 random_state=random_state)
    test = data.test.tocoo()
    rows = []
    pred, sec, _ = _measure(lambda: _user_means(data.train, test))
    mean_rmse = _rmse(pred, test)
    rows.append(make_row(SCENARIO, name, "per-user mean", math.inf, "test RMSE", [mean_rmse],
                         fit_seconds=sec, note="non-private baseline"))
    baseline_seconds, fw_rmse = None, None
    for n_iter in (FW_ITER, 4 * FW_ITER):
        pred, sec, peak = _measure(
            lambda: _non_private_frank_wolfe(data.train, test, data.nuclear_norm, n_iter))
        baseline_seconds = baseline_seconds or sec
        fw_rmse = fw_rmse or _rmse(pred, test)
        rows.append(make_row(SCENARIO, name, f"non-private FW (T={n_iter})", math.inf,
                             "test RMSE", [_rmse(pred, test)], fit_seconds=sec,
                             baseline_seconds=baseline_seconds,
                             note=f"non-private: exact eigenvectors, no clipping; "
                                  f"k={data.nuclear_norm:.0f}, steps 2/(t+1); peak {peak:.0f} MB"))
    methods = _methods(data.nuclear_norm, setting.n_items)
    fw_bound = methods["private FW (exact)"]["row_norm_bound"]
    pred, sec, peak = _measure(lambda: _non_private_frank_wolfe(
        data.train, test, data.nuclear_norm, FW_ITER, bound=fw_bound))
    clipped_rmse = _rmse(pred, test)
    rows.append(make_row(SCENARIO, name, f"non-private FW (T={FW_ITER}, clipped)", math.inf,
                         "test RMSE", [clipped_rmse], fit_seconds=sec,
                         baseline_seconds=baseline_seconds,
                         note=f"private FW without noise: same clipping to {fw_bound:.2f}, "
                              f"k={data.nuclear_norm:.0f}, steps 2/(t+1); peak {peak:.0f} MB"))
    runs = [(method, setting.epsilons, n_draws) for method in setting.methods]
    if setting.pgd_epsilons:
        runs.append(("private PGD", setting.pgd_epsilons, 1))
        pgd_bound = methods["private PGD"]["row_norm_bound"]
        pred, sec, peak = _measure(lambda: _non_private_pgd(
            data.train, test, data.nuclear_norm, PGD_ITER, pgd_bound))
        pgd_rmse = _rmse(pred, test)
        rows.append(make_row(SCENARIO, name, f"non-private PGD (T={PGD_ITER}, clipped)",
                             math.inf, "test RMSE", [pgd_rmse], fit_seconds=sec,
                             baseline_seconds=baseline_seconds,
                             note=f"private PGD without noise: whole rows clipped to "
                                  f"{pgd_bound:.2f}, k={data.nuclear_norm:.0f}, steps 1; "
                                  f"peak {peak:.0f} MB"))
    for method, epsilons, draws in runs:
        for eps in progress(epsilons, desc=f"{method}, {name}"):
            scores, seconds, peaks = [], [], []
            for draw in range(draws if eps == 1.0 else 1):
                pred, sec, peak = _measure(lambda: _private_predictions(
                    methods[method], eps, random_state + draw, data.train, test,
                    setting.block))
                scores.append(_rmse(pred, test))
                seconds.append(sec)
                peaks.append(peak)
            note = (f"fit+transform; {len(scores)} noise draw(s); peak {max(peaks):.0f} MB; "
                    f"{np.mean(scores) / mean_rmse:.2f}x per-user mean")
            if methods[method]["method"] == "frank_wolfe":
                note += (f"; vs non-private FW at the same T={FW_ITER}, "
                         f"k={data.nuclear_norm:.0f}, steps 2/(t+1): "
                         f"{np.mean(scores) / fw_rmse:.2f}x unclipped, "
                         f"{np.mean(scores) / clipped_rmse:.2f}x clipped")
            elif methods[method]["method"] == "pgd":
                note += (f"; {np.mean(scores) / pgd_rmse:.2f}x non-private PGD (same T, k, "
                         f"clipping, steps); {np.mean(scores) / fw_rmse:.2f}x non-private "
                         f"FW (T={FW_ITER})")
            rows.append(make_row(
                SCENARIO, name, method, eps, "test RMSE", scores,
                fit_seconds=float(np.mean(seconds)), baseline_seconds=baseline_seconds,
                note=note))
    return rows


def _large_catalogue(n_users, n_items, random_state):
    """Oja's eigensolver on a catalogue where the exact one needs an n x n matrix."""
    name = f"synthetic m={n_users:,} n={n_items:,}"
    data = make_low_rank_ratings(n_users, n_items, n_ratings=N_RATINGS,
                                 random_state=random_state)
    test = data.test.tocoo()
    params = dict(_methods(data.nuclear_norm, n_items)["private FW (Oja)"])
    model = DPMatrixCompleter(epsilon=1.0, delta=DELTA, random_state=random_state, **params)
    block = 1_000
    _, fit_sec, fit_peak = _measure(lambda: model.fit(data.train))
    pred, transform_sec, peak = _measure(
        lambda: _held_out_predictions(model, data.train, test, block))
    nnz_mb = data.train.nnz * 12 / 2**20  # float64 value + int32 index per rating
    dense_mb = n_items**2 * 8 / 2**20
    note = (f"nnz={data.train.nnz:,} ({nnz_mb:.0f} MB as CSR); one {n_items}x{n_items} "
            f"float64 matrix would be {dense_mb:,.0f} MB")
    mean_rmse = _rmse(_user_means(data.train, test), test)
    return [
        make_row(SCENARIO, name, "per-user mean", math.inf, "test RMSE", [mean_rmse],
                 note="non-private baseline"),
        make_row(SCENARIO, name, "private FW (Oja)", 1.0, "test RMSE", [_rmse(pred, test)],
                 fit_seconds=fit_sec + transform_sec, note="fit+transform"),
        make_row(SCENARIO, name, "private FW (Oja)", 1.0, "fit peak memory (MB)", [fit_peak],
                 fit_seconds=fit_sec, note=note),
        make_row(SCENARIO, name, "private FW (Oja)", 1.0, "transform peak memory (MB)",
                 [peak], fit_seconds=transform_sec,
                 note=f"blocks of {block:,} users: the dense output block is "
                      f"{block * n_items * 8 / 2**20:.0f} MB"),
    ]


@register_scenario(SCENARIO, "user-level joint-DP matrix completion (Thakkar (2019), Sec. 6.4 "
                             "synthetic ratings): test RMSE, time and memory vs epsilon")
def run(quick, random_state):
    all_methods = ("private FW (exact)", "private FW (Oja)", "private SVD", "private pursuit")
    if quick:
        settings = [_Setting(30_000, 200, (1.0, 5.0), all_methods, block=30_000,
                             pgd_epsilons=(1.0, 5.0))]
        rows = []
        for setting in settings:
            rows += _run_setting(setting, random_state, n_draws=1)
        return rows
    settings = [
        _Setting(500_000, 400, (0.1, 0.5, 1.0, 2.0, 5.0), all_methods,
                 pgd_epsilons=(1.0, 5.0)),
        _Setting(500_000, 900, (1.0,), all_methods),
    ]
    rows = []
    for setting in settings:
        rows += _run_setting(setting, random_state, n_draws=FW_DRAWS)
    rows += _large_catalogue(100_000, 20_000, random_state)
    return rows
