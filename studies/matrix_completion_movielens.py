"""DPMatrixCompleter on movielens: per-user 20% test split, baselines, eps 1/10/1e6 (user guide).

``python -m studies.matrix_completion_movielens [derive|check|all] [n_seeds]``: the
defaults were derived on the "derive" half of the users (and on generated data); the
user guide reports the "check" half, the users the rules never saw.
"""
import sys
import time

import numpy as np
import scipy.sparse as sp
from skdp.datasets import load_real_dataset

def movielens_split(seed=0, users="all", test_frac=0.2):
    d = load_real_dataset("movielens")
    rng = np.random.default_rng(seed)
    u, i, r = d.user_ids, d.item_ids, d.ratings
    n_u = d.n_users
    if users != "all":
        perm = np.random.default_rng(12345).permutation(n_u)
        keep_users = np.sort(perm[: n_u // 2] if users == "derive" else perm[n_u // 2:])
        mask = np.isin(u, keep_users)
        remap = -np.ones(n_u, int); remap[keep_users] = np.arange(len(keep_users))
        u, i, r = remap[u[mask]], i[mask], r[mask]
        n_u = len(keep_users)
    test = np.zeros(len(r), bool)
    for user in range(n_u):
        idx = np.flatnonzero(u == user)
        k = int(round(test_frac * len(idx)))
        test[rng.choice(idx, k, replace=False)] = True
    tr = sp.csr_matrix((r[~test], (u[~test], i[~test])), shape=(n_u, d.n_items))
    te = (u[test], i[test], r[test])
    return tr, te, d.rating_bounds

def rmse(pred, te):
    u, i, r = te
    return float(np.sqrt(np.mean((pred - r) ** 2)))

def baselines(tr, te):
    u, i, r = te
    coo = tr.tocoo(); mu = coo.data.mean()
    out = {"global": rmse(np.full(len(r), mu), te)}
    cnt_u = np.bincount(coo.row, minlength=tr.shape[0]); s_u = np.bincount(coo.row, coo.data, tr.shape[0])
    um = np.where(cnt_u > 0, s_u / np.maximum(cnt_u, 1), mu)
    out["user_mean"] = rmse(um[u], te)
    cnt_i = np.bincount(coo.col, minlength=tr.shape[1]); s_i = np.bincount(coo.col, coo.data, tr.shape[1])
    im = np.where(cnt_i > 0, s_i / np.maximum(cnt_i, 1), mu)
    out["item_mean"] = rmse(im[i], te)
    # regularised biases (alternating)
    bu = np.zeros(tr.shape[0]); bi = np.zeros(tr.shape[1]); lam = 10.0
    for _ in range(20):
        res = coo.data - mu - bu[coo.row]
        bi = np.bincount(coo.col, res, tr.shape[1]) / (cnt_i + lam)
        res = coo.data - mu - bi[coo.col]
        bu = np.bincount(coo.row, res, tr.shape[0]) / (cnt_u + lam)
    out["biases"] = rmse(mu + bu[u] + bi[i], te)
    # ALS on bias residuals
    best = 9
    for k, reg in ((5, 10.0), (10, 15.0), (20, 20.0)):
        res = sp.csr_matrix((coo.data - mu - bu[coo.row] - bi[coo.col], (coo.row, coo.col)), shape=tr.shape)
        rng = np.random.default_rng(0)
        P = 0.1 * rng.standard_normal((tr.shape[0], k)); Q = 0.1 * rng.standard_normal((tr.shape[1], k))
        resc = res.tocsc()
        for _ in range(10):
            for a in range(tr.shape[0]):
                lo, hi = res.indptr[a], res.indptr[a + 1]; J = res.indices[lo:hi]
                P[a] = np.linalg.solve(Q[J].T @ Q[J] + reg * np.eye(k), Q[J].T @ res.data[lo:hi])
            for b in range(tr.shape[1]):
                lo, hi = resc.indptr[b], resc.indptr[b + 1]; I = resc.indices[lo:hi]
                Q[b] = np.linalg.solve(P[I].T @ P[I] + reg * np.eye(k), P[I].T @ resc.data[lo:hi])
        sc = rmse(mu + bu[u] + bi[i] + np.einsum("ek,ek->e", P[u], Q[i]), te)
        best = min(best, sc)
    out["als"] = best
    return out

def score_model(model, tr, te):
    t = time.time(); model.fit(tr); ft = time.time() - t
    u, i, r = te
    Y = model.transform(tr)
    return rmse(Y[u, i], te), ft
from skdp.matrix_completion import DPMatrixCompleter

METHODS = ("svd", "frank_wolfe", "pursuit")
EPSILONS = (1, 10, 1e6)


def main(users="check", n_seeds=3):
    rows = {}
    for seed in range(n_seeds):
        tr, te, b = movielens_split(seed, users)
        for name, value in baselines(tr, te).items():
            rows.setdefault(name, []).append([value] * len(EPSILONS))
        for m in METHODS:
            scores, fits = [], []
            for eps in EPSILONS:
                model = DPMatrixCompleter(epsilon=eps, method=m, rating_bounds=b, random_state=seed)
                s, ft = score_model(model, tr, te)
                scores.append(s)
                fits.append(ft)
            rows.setdefault(m, []).append(scores)
            print(f"  seed {seed} {m}: {np.round(scores, 4)} fit {max(fits):.2f}s", flush=True)
    print(f"{users} users, test RMSE, mean of {n_seeds} splits (eps {EPSILONS}):")
    for name, values in rows.items():
        mean = np.mean(values, axis=0)
        print(f"  {name:12s}", " / ".join(f"{v:.4f}" for v in mean))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "check",
         int(sys.argv[2]) if len(sys.argv) > 2 else 3)
