"""Connecting to a store's engine, a SQLite file or a PostgreSQL database, without
migrating or cleaning it up (that is :func:`evalcore.store.connection.open_store`).

Every connection has a busy timeout (PostgreSQL: a lock timeout of the same length), so
two writers queue instead of failing. A SQLite store is opened in WAL mode with
``synchronous = FULL``: an acknowledged label survives an OS crash.

This module imports no store module, so any of them may open a store through it.
"""

import sqlite3
from pathlib import Path

import sqlite_utils

from evalcore.store.location import is_postgres_url

BUSY_TIMEOUT_MS = 10_000


def connect_read_write(path: str | Path) -> sqlite_utils.Database:
    """A connection to the store at ``path`` (a file, created if missing, or a
    ``postgresql://`` URL), usable from several threads (``check_same_thread=False``),
    in autocommit mode: writes issue their own ``BEGIN IMMEDIATE``."""
    if is_postgres_url(path):
        from evalcore.store.postgres import connect

        return connect(str(path), lock_timeout_ms=BUSY_TIMEOUT_MS)  # type: ignore[return-value]
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
        # survives an OS crash or power loss (NORMAL may lose the last commits), at the cost
        # of one fsync per write transaction.
        conn.execute("PRAGMA synchronous = FULL")
    return sqlite_utils.Database(conn)


def open_read_only(path: str | Path) -> sqlite_utils.Database:
    """Open the store at ``path`` (a file or a ``postgresql://`` URL) for reading only: not
    migrated nor cleaned up, and the engine refuses any write (SQLite's ``mode=ro``, a
    PostgreSQL session whose transactions are read-only). A missing file is
    ``FileNotFoundError`` (nothing is created)."""
    if is_postgres_url(path):
        from evalcore.store.postgres import connect

        return connect(str(path), lock_timeout_ms=BUSY_TIMEOUT_MS,
                       read_only=True)  # type: ignore[return-value]
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(2, "no store file here", str(file))
    conn = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True,
                           timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return sqlite_utils.Database(conn)
