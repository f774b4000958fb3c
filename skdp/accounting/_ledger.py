"""Durable budget ledgers that several processes spend from.

A :class:`~skdp.BudgetAccountant` keeps its spends in memory by default, so only
the process that made it can spend (a pickled copy refuses). Given a ledger, it
keeps them in the ledger instead: every copy, in any process that can reach the
ledger, spends from the same total, one atomic check-and-record at a time.
"""

import os
import sqlite3
import time
from abc import ABC, abstractmethod
from fractions import Fraction

__all__ = ["BudgetLedger", "LedgerUnavailableError", "SQLiteLedger"]


class LedgerUnavailableError(RuntimeError):
    """The budget ledger could not be read or written; nothing was spent."""


class BudgetLedger(ABC):
    """What a store must do to hold a shared budget.

    Implement it to back :class:`~skdp.BudgetAccountant` with another store (a
    database server, for accountants on several machines). A spend must be atomic
    across every process that uses the store: the check that it fits and its record
    happen in one transaction, so two processes racing for the last of a budget
    cannot both win, and a recorded spend must survive the process that made it.
    """

    @abstractmethod
    def open(self, epsilon, delta):
        """Create the ledger with this total, or check that an existing one has it."""

    @abstractmethod
    def spend(self, epsilon, delta, by, fits, event=None):
        """Atomically: call ``fits(sum_epsilon, sum_delta, n_spends, records)`` on the
        recorded spends (exact :class:`fractions.Fraction` sums, and the list of
        ``(epsilon, delta, event)`` of every spend, oldest first) and, if it returns
        True, record the spend with its ``event`` (a JSON string or None).

        Returns whether the spend was recorded.
        """

    @abstractmethod
    def records(self):
        """Every recorded spend, oldest first, as ``(epsilon, delta, by, event)`` tuples
        (``event``: the JSON string stored with the spend, or None)."""


def _encode(value):
    return float(value).hex()          # exact: the sums are rational, never rounded


def _decode(text):
    return Fraction(float.fromhex(text))


class SQLiteLedger(BudgetLedger):
    """A budget ledger in an SQLite file, shared by the processes of one machine.

    The file is opened in write-ahead-log mode with full synchronisation, and each
    spend is one ``BEGIN IMMEDIATE`` transaction (SQLite lets one writer in at a
    time), so spends are atomic across processes and a committed spend survives a
    ``kill -9`` of the process that made it and a restart of the program. WAL needs
    shared memory between the processes: the file must live on a local disk, not a
    network file system (for several machines, implement :class:`BudgetLedger` on a
    database server).

    Parameters
    ----------
    path : str or os.PathLike
        The ledger file; created with its directory's permissions when missing.
    timeout : float, default=60.0
        Seconds a spend waits for another process's transaction to finish.
    """

    def __init__(self, path, timeout=60.0):
        self.path = os.fspath(path)
        self.timeout = timeout

    def __repr__(self):
        return f"SQLiteLedger({self.path!r})"

    def _connect(self):
        try:
            con = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=FULL")
        except sqlite3.Error as error:
            raise LedgerUnavailableError(
                f"the budget ledger {self.path!r} cannot be opened ({error}); nothing was "
                "spent.") from error
        return con

    def _transaction(self, work):
        con = self._connect()
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                result = work(con)
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
            return result
        except sqlite3.Error as error:
            raise LedgerUnavailableError(
                f"the budget ledger {self.path!r} could not be updated ({error}); nothing was "
                "spent.") from error
        finally:
            con.close()

    def open(self, epsilon, delta):
        def work(con):
            con.execute("CREATE TABLE IF NOT EXISTS total (id INTEGER PRIMARY KEY CHECK (id = 1), "
                        "epsilon TEXT NOT NULL, delta TEXT NOT NULL)")
            con.execute("CREATE TABLE IF NOT EXISTS spends (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                        "epsilon TEXT NOT NULL, delta TEXT NOT NULL, by TEXT, pid INTEGER, "
                        "at REAL)")
            columns = [r[1] for r in con.execute("PRAGMA table_info(spends)")]
            if "event" not in columns:  # a ledger written before privacy events were kept
                con.execute("ALTER TABLE spends ADD COLUMN event TEXT")
            row = con.execute("SELECT epsilon, delta FROM total").fetchone()
            if row is None:
                con.execute("INSERT INTO total VALUES (1, ?, ?)",
                            (_encode(epsilon), _encode(delta)))
            elif (float.fromhex(row[0]), float.fromhex(row[1])) != (float(epsilon), float(delta)):
                raise ValueError(
                    f"the ledger {self.path!r} holds a total of (epsilon="
                    f"{float.fromhex(row[0]):g}, delta={float.fromhex(row[1]):g}), not "
                    f"(epsilon={epsilon:g}, delta={delta:g}); a ledger's total cannot change. "
                    "Open it with its own total, or start a new ledger file.")
        self._transaction(work)

    def spend(self, epsilon, delta, by, fits, event=None):
        def work(con):
            rows = con.execute("SELECT epsilon, delta, event FROM spends ORDER BY id").fetchall()
            eps = sum((_decode(e) for e, _, _ in rows), Fraction(0))
            dlt = sum((_decode(d) for _, d, _ in rows), Fraction(0))
            records = [(float.fromhex(e), float.fromhex(d), ev) for e, d, ev in rows]
            if not fits(eps, dlt, len(rows), records):
                return False
            con.execute("INSERT INTO spends (epsilon, delta, by, pid, at, event) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (_encode(epsilon), _encode(delta), by, os.getpid(), time.time(), event))
            return True
        return self._transaction(work)

    def records(self):
        con = self._connect()
        try:
            rows = con.execute("SELECT epsilon, delta, by, event FROM spends "
                               "ORDER BY id").fetchall()
        except sqlite3.Error as error:
            raise LedgerUnavailableError(
                f"the budget ledger {self.path!r} cannot be read ({error}).") from error
        finally:
            con.close()
        return [(float.fromhex(e), float.fromhex(d), by, ev) for e, d, by, ev in rows]
