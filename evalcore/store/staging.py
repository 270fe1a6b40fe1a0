"""Staged runs: a large import written in short transactions, visible all at once.

A run import inserts its ``runs`` row with ``staged_by`` = ``"host:pid"`` of the
importing process, writes its results in chunks (each its own short write
transaction, so annotators' writes queue for at most one chunk), and becomes
visible with one small final commit that clears ``staged_by``. Every read of
runs ignores staged rows. A failed import discards its staged rows; a process
that died mid-import leaves them behind, and the next :func:`open_store`
(:func:`discard_abandoned_runs`) removes those of dead processes on this host.
"""

import os
import socket

import sqlite_utils

from evalcore.store.transaction import write_transaction

#: Rows deleted per transaction when a staged run is discarded.
DISCARD_CHUNK = 20_000


def staging_owner() -> str:
    """This process, as recorded in ``runs.staged_by``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _alive(owner: str) -> bool:
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True  # another machine's import: not ours to judge
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def discard_staged_run(db: sqlite_utils.Database, run_id: int) -> None:
    """Delete a staged run's rows, a chunk per short transaction, then the run row."""
    for table in ("results", "run_rankings"):
        key = "run_id, query_id, rank" if table == "results" else "run_id, query_id"
        while True:
            with write_transaction(db):
                deleted = db.execute(
                    f"DELETE FROM {table} WHERE ({key}) IN (SELECT {key} FROM {table} "
                    f"WHERE run_id = ? LIMIT {DISCARD_CHUNK})",
                    [run_id],
                ).rowcount
            if deleted < DISCARD_CHUNK:
                break
    with write_transaction(db):
        db.execute("DELETE FROM runs WHERE run_id = ? AND staged_by IS NOT NULL", [run_id])


def discard_abandoned_runs(db: sqlite_utils.Database) -> int:
    """Discard staged runs whose importing process is gone; return how many."""
    abandoned = [
        run_id for run_id, owner in db.execute(
            "SELECT run_id, staged_by FROM runs WHERE staged_by IS NOT NULL"
        ).fetchall()
        if not _alive(owner)
    ]
    for run_id in abandoned:
        discard_staged_run(db, run_id)
    return len(abandoned)
