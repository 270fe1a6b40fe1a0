"""Staged runs: a large import written in short transactions, visible all at once.

A run import inserts its ``runs`` row with ``staged_by`` = ``"host:pid"`` (every read of runs
ignores it), writes its results in chunks, each its own short write transaction (annotators'
writes queue for at most one chunk), and publishes with one small commit clearing
``staged_by``. A failed import discards its rows; a dead process's are discarded by the next
:func:`open_store` (:func:`discard_abandoned`).

:func:`bulk_writes` sets the connection for the chunks: ``synchronous = NORMAL`` (an OS
crash may lose the last chunks of a run nobody sees, then discarded whole; the publishing
commit is FULL and its fsync covers every frame before it), no automatic WAL checkpoint in
a chunk's commit (:func:`checkpoint` runs a PASSIVE one between chunks) and a larger page
cache. :class:`Pacer` sizes each chunk to hold the write lock about :data:`TARGET_HOLD_S`
and pauses as long after it, so a writer polling SQLite's busy handler gets the lock."""

import os
import socket
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import sqlite_utils

from evalcore.store import dialect
from evalcore.store.transaction import write_transaction

#: Rows deleted per transaction when a staged run is discarded.
DISCARD_CHUNK = 20_000

#: The write-lock hold a chunk aims at (the target for any hold is 250 ms).
TARGET_HOLD_S = 0.04
#: Chunk sizes (rows) the pacer keeps to; a chunk never splits a query, so one may be larger.
MIN_CHUNK_ROWS, MAX_CHUNK_ROWS = 100, 5_000
#: The longest pause after a chunk.
MAX_PAUSE_S = 0.25
#: Rows written between two WAL checkpoints (about 200 WAL pages: well under the
#: 1,000 at which an annotator's commit would copy the WAL back itself).
CHECKPOINT_ROWS = 10_000


class Pacer:
    """Chunk sizes and pauses for a staged import (see the module docstring)."""

    def __init__(self, rows: int = 2_000) -> None:
        self.rows = min(rows, MAX_CHUNK_ROWS)
        self._since_checkpoint = 0

    def after_chunk(self, db: sqlite_utils.Database, rows: int, held_s: float) -> None:
        """Adapt the next chunk's size to this one's hold, checkpoint when due, then pause."""
        scaled = int(rows * TARGET_HOLD_S / max(held_s, 1e-4))
        self.rows = max(MIN_CHUNK_ROWS, min(MAX_CHUNK_ROWS, 2 * self.rows, scaled))
        self._since_checkpoint += rows
        if self._since_checkpoint >= CHECKPOINT_ROWS:
            checkpoint(db)
            self._since_checkpoint = 0
        time.sleep(min(held_s, MAX_PAUSE_S))


def paced_writes(db: sqlite_utils.Database, pacer: Pacer, chunks: Iterable[Any],
                 write: Callable[[Any], object],
                 on_chunk: Callable[[int, float], None] | None = None) -> int:
    """``write`` each of ``chunks`` (read lazily, before the write lock is taken, so they may
    size themselves by ``pacer.rows``) in its own short write transaction, paced by
    ``pacer``; ``on_chunk(rows, held_s)`` is told of each chunk written. Return the rows."""
    total = 0
    for chunk in chunks:
        with write_transaction(db):
            started = time.perf_counter()  # BEGIN IMMEDIATE returned: the lock is held
            write(chunk)
        held = time.perf_counter() - started
        if on_chunk is not None:
            on_chunk(len(chunk), held)
        pacer.after_chunk(db, len(chunk), held)
        total += len(chunk)
    return total


def whole_query_chunks(rows: Iterator[tuple], pacer: Pacer) -> Iterator[list[tuple]]:
    """A run's results (query id first) in chunks of about ``pacer.rows``, never splitting a
    query (its ranking is packed whole)."""
    chunk: list[tuple] = []
    for row in rows:
        if len(chunk) >= pacer.rows and row[0] != chunk[-1][0]:
            yield chunk
            chunk = []
        chunk.append(row)
    if chunk:
        yield chunk


#: The page cache of an importing connection (KiB; SQLite's default is 2,000).
BULK_CACHE_KIB = 64 * 1024


@contextmanager
def bulk_writes(db: sqlite_utils.Database) -> Iterator[None]:
    """The connection set for writing staged chunks (see the module docstring), restored after:
    around the chunks only, the publishing commit keeps ``synchronous = FULL``. Nothing on
    PostgreSQL."""
    if dialect.is_postgres(db):
        yield
        return
    pragmas = ("synchronous", "wal_autocheckpoint", "cache_size")
    saved = {name: db.conn.execute(f"PRAGMA {name}").fetchone()[0] for name in pragmas}
    db.conn.execute("PRAGMA synchronous = NORMAL")
    db.conn.execute("PRAGMA wal_autocheckpoint = 0")
    db.conn.execute(f"PRAGMA cache_size = -{BULK_CACHE_KIB}")
    try:
        yield
    finally:
        for name, value in saved.items():
            db.conn.execute(f"PRAGMA {name} = {int(value)}")


def checkpoint(db: sqlite_utils.Database) -> None:
    """A PASSIVE WAL checkpoint (outside any transaction): copies what it can, blocks no writer.
    (PostgreSQL checkpoints by itself.)"""
    if dialect.is_postgres(db):
        return
    db.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()


def staging_owner() -> str:
    """This process, as recorded in ``runs.staged_by``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def alive(owner: str) -> bool:
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


def delete_in_chunks(db: sqlite_utils.Database, table: str, key: str, column: str,
                     value: object) -> None:
    """Delete the rows of ``table`` whose ``column`` is ``value``, :data:`DISCARD_CHUNK` per
    short write transaction (``key``: ``rowid`` or the primary key's columns)."""
    repeat_in_chunks(db, f"DELETE FROM {table} WHERE ({key}) IN (SELECT {key} FROM {table} "
                         f"WHERE {column} = ? LIMIT ?)", [value])


def repeat_in_chunks(db: sqlite_utils.Database, sql: str, parameters: list[object],
                     pacer: Pacer | None = None,
                     on_chunk: Callable[[int, float], None] | None = None) -> int:
    """Run ``sql`` (a write of at most ``LIMIT ?`` rows, its last parameter) in short write
    transactions until it writes fewer; return the rows written. ``pacer``: chunks sized and
    paced by it (else :data:`DISCARD_CHUNK` rows); ``on_chunk(rows, held_s)`` is told of each."""
    total = 0
    while True:
        size = pacer.rows if pacer is not None else DISCARD_CHUNK
        with write_transaction(db):
            started = time.perf_counter()  # BEGIN IMMEDIATE returned: the lock is held
            rows = db.execute(sql, [*parameters, size]).rowcount
        held = time.perf_counter() - started
        total += rows
        if rows and on_chunk is not None:
            on_chunk(rows, held)
        if rows < size:
            return total
        if pacer is not None:
            pacer.after_chunk(db, rows, held)


def discard_staged_run(db: sqlite_utils.Database, run_id: int) -> None:
    """Delete a staged run's rows, a chunk per short transaction, then the run row."""
    delete_in_chunks(db, "results", "run_id, query_id, rank", "run_id", run_id)
    delete_in_chunks(db, "run_rankings", "run_id, query_id", "run_id", run_id)
    with write_transaction(db):
        db.execute("DELETE FROM runs WHERE run_id = ? AND staged_by IS NOT NULL", [run_id])


def discard_abandoned(db: sqlite_utils.Database, table: str, key: str,
                      discard: Callable[[sqlite_utils.Database, Any], None]) -> int:
    """``discard`` each staged row of ``table`` (by its ``key``: a run, a study, an automatic
    import) whose importing process is gone; return how many."""
    gone = [row_key for row_key, owner in db.execute(
        f"SELECT {key}, staged_by FROM {table} WHERE staged_by IS NOT NULL").fetchall()
        if not alive(owner)]
    for row_key in gone:
        discard(db, row_key)
    return len(gone)
