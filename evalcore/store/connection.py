"""Opening the evidence store and writing to it safely.

Every store is opened in WAL mode with ``synchronous = FULL`` and a busy
timeout, and every write runs
inside ``BEGIN IMMEDIATE`` so two writers queue instead of failing half-way.
``db.atomic()`` nests a savepoint inside it: sqlite-utils write methods that
fail roll back with it.
"""

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils

BUSY_TIMEOUT_MS = 10_000


def open_store(path: str | Path, *, migrate: bool = True) -> sqlite_utils.Database:
    """Open (creating if needed) the store at ``path``, migrated to the current schema.

    The connection may be used from several threads (``check_same_thread=False``);
    a Streamlit session keeps one of its own.
    """
    conn = sqlite3.connect(
        str(path),
        timeout=BUSY_TIMEOUT_MS / 1000,
        check_same_thread=False,
        isolation_level=None,  # autocommit: we issue BEGIN IMMEDIATE ourselves
    )
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    if str(path) != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
        # FULL: a commit is on disk (WAL fsynced) before it returns, so an acknowledged label
        # survives an OS crash or power loss (NORMAL may lose the last commits). Costs one
        # fsync per write transaction; see benchmarks/bench_store.py for the click latency.
        conn.execute("PRAGMA synchronous = FULL")
    db = sqlite_utils.Database(conn)
    if migrate:
        from evalcore.store.schema import migrate as run_migrations

        run_migrations(db)
    return db


@contextmanager
def write_transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; any exception rolls everything back.

    Nested use joins the outer transaction through a savepoint.
    """
    if db.conn.in_transaction:
        with db.atomic():
            yield db
        return
    db.conn.execute("BEGIN IMMEDIATE")
    try:
        with db.atomic():
            yield db
    except BaseException:
        if db.conn.in_transaction:
            db.conn.execute("ROLLBACK")
        raise
    else:
        db.conn.execute("COMMIT")
