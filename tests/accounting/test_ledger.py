"""The durable budget ledger: atomic spends across real processes, crash safety, restarts."""

import multiprocessing
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from joblib import parallel_backend
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV

from skdp import BudgetAccountant, BudgetExceededError, PrivacyBudget
from skdp.accounting import LedgerUnavailableError, SQLiteLedger
from skdp.linear_model import DPLogisticRegressionAMP

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_spends_survive_a_restart(tmp_path):
    path = tmp_path / "budget.db"
    acc = BudgetAccountant(1.0, 1e-5, ledger=path)
    acc.spend(PrivacyBudget(0.25, 1e-6), by="first")
    del acc
    again = BudgetAccountant(1.0, 1e-5, ledger=str(path))
    assert [(s.budget, s.by) for s in again.spends] == [(PrivacyBudget(0.25, 1e-6), "first")]
    assert again.remaining == PrivacyBudget(0.75, 9e-6)
    with pytest.raises(BudgetExceededError, match="Nothing was spent"):
        again.spend(PrivacyBudget(0.8))
    assert len(again.spends) == 1


def test_a_ledger_keeps_its_total(tmp_path):
    BudgetAccountant(1.0, ledger=tmp_path / "b.db")
    with pytest.raises(ValueError, match="cannot change"):
        BudgetAccountant(2.0, ledger=tmp_path / "b.db")


def test_copies_spend_from_the_same_ledger(tmp_path):
    acc = BudgetAccountant(1.0, ledger=tmp_path / "b.db")
    copy = pickle.loads(pickle.dumps(acc))
    copy.spend(PrivacyBudget(0.6))
    with pytest.raises(BudgetExceededError):
        acc.spend(PrivacyBudget(0.6))
    assert acc.spent == copy.spent == PrivacyBudget(0.6, 0.0)


def _race(path, barrier, results):
    acc = BudgetAccountant(1.0, ledger=path)
    barrier.wait()
    try:
        acc.spend(PrivacyBudget(0.2), by=str(os.getpid()))
        results.put(True)
    except BudgetExceededError:
        results.put(False)


def test_eight_processes_racing_for_five_spends_get_exactly_five(tmp_path):
    path = str(tmp_path / "race.db")
    BudgetAccountant(1.0, ledger=path)
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(8), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(path, barrier, results)) for _ in range(8)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert sum(outcomes) == 5
    spends = BudgetAccountant(1.0, ledger=path).spends
    assert len(spends) == 5 and len({s.by for s in spends}) == 5


def _child(code):
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)


def test_a_spend_survives_kill_9_of_its_process(tmp_path):
    path = str(tmp_path / "k.db")
    child = _child(f"""
        import time
        from skdp import BudgetAccountant, PrivacyBudget
        acc = BudgetAccountant(1.0, ledger={path!r})
        acc.spend(PrivacyBudget(0.3), by="child")
        print("spent", flush=True)
        time.sleep(60)
    """)
    assert child.stdout.readline().strip() == "spent"
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    acc = BudgetAccountant(1.0, ledger=path)
    assert [s.by for s in acc.spends] == ["child"]
    assert acc.remaining.epsilon == pytest.approx(0.7)


def test_a_process_killed_inside_a_spend_leaves_a_consistent_ledger(tmp_path):
    path = str(tmp_path / "m.db")
    BudgetAccountant(1.0, ledger=path)
    # The child opens the spend's transaction, writes its record and dies before committing.
    child = _child(f"""
        import sqlite3, time
        con = sqlite3.connect({path!r}, isolation_level=None)
        con.execute("BEGIN IMMEDIATE")
        con.execute("INSERT INTO spends (epsilon, delta, by) VALUES (?, ?, 'dead')",
                    ((0.9).hex(), (0.0).hex()))
        print("inside", flush=True)
        time.sleep(60)
    """)
    assert child.stdout.readline().strip() == "inside"
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    acc = BudgetAccountant(1.0, ledger=path)
    assert acc.spends == []                       # the uncommitted record is gone
    acc.spend(PrivacyBudget(1.0), by="after")     # and the lock with it
    assert [s.by for s in acc.spends] == ["after"]


def test_an_unreachable_ledger_refuses_before_any_noise(tmp_path):
    folder = tmp_path / "gone"
    folder.mkdir()
    acc = BudgetAccountant(1.0, ledger=folder / "b.db")
    for name in os.listdir(folder):
        os.remove(folder / name)
    folder.rmdir()
    X, y = make_classification(100, 3, n_informative=2, n_redundant=0, random_state=0)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    est = DPLogisticRegressionAMP(1.0, classes=[0, 1], accountant=acc, random_state=rng)
    with pytest.raises(LedgerUnavailableError, match="nothing was spent"):
        est.fit(X, y)
    assert rng.bit_generator.state == state and not hasattr(est, "coef_")


def _grid(acc):
    return GridSearchCV(DPLogisticRegressionAMP(classes=[0, 1], accountant=acc),
                        {"epsilon": [0.5, 1.0]}, cv=2, n_jobs=2)


def test_grid_search_in_process_workers_spends_exactly_the_sum(tmp_path):
    X, y = make_classification(300, 4, random_state=0)
    acc = BudgetAccountant(10.0, 1e-3, ledger=tmp_path / "g.db")
    with parallel_backend("loky"):
        grid = _grid(acc).fit(X, y)
    spends = acc.spends
    # 2 candidates x 2 folds in the workers, then the refit in this process.
    assert len(spends) == 5
    assert sum(s.budget.epsilon for s in spends) == pytest.approx(
        2 * 0.5 + 2 * 1.0 + grid.best_params_["epsilon"])
    assert len({s.budget.delta for s in spends}) >= 1 and acc.spent.delta <= 1e-3


def test_grid_search_on_a_dask_cluster_spends_from_the_ledger(tmp_path):
    distributed = pytest.importorskip("distributed")
    X, y = make_classification(300, 4, random_state=0)
    acc = BudgetAccountant(10.0, 1e-3, ledger=tmp_path / "d.db")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster), parallel_backend("dask"):
        grid = _grid(acc).fit(X, y)
    assert len(acc.spends) == 5
    assert acc.spent.epsilon == pytest.approx(3.0 + grid.best_params_["epsilon"])
    pids = {r[0] for r in sqlite3.connect(tmp_path / "d.db").execute("SELECT pid FROM spends")}
    assert len(pids) >= 2                          # spent from more than one process


def test_ledger_type_is_checked():
    with pytest.raises(TypeError, match="ledger"):
        BudgetAccountant(1.0, ledger=3)
    assert "ledger=SQLiteLedger" in repr(BudgetAccountant(1.0, ledger=SQLiteLedger(":memory:")))
