"""Opening the evidence store: WAL mode, a busy timeout, migrated to the current schema.

The store is a SQLite file or a PostgreSQL database (``postgresql://...`` URL,
:mod:`evalcore.store.postgres`); both are migrated and cleaned up the same way.

Every store is opened in WAL mode with ``synchronous = FULL`` (an acknowledged label
survives an OS crash) and a busy timeout. Writes run in
:func:`evalcore.store.transaction.write_transaction` (``BEGIN IMMEDIATE``, so two
writers queue instead of failing half-way).
"""

import sqlite3
from pathlib import Path

import sqlite_utils

from evalcore.store.automatic_labels import discard_abandoned_automatic_imports
from evalcore.store.document_replacements import settle_abandoned_imports
from evalcore.store.location import is_postgres_url
from evalcore.store.schema import migrate as run_migrations
from evalcore.store.staged_studies import discard_abandoned_studies
from evalcore.store.staging import discard_abandoned_runs

BUSY_TIMEOUT_MS = 10_000


def open_store(path: str | Path, *, migrate: bool = True) -> sqlite_utils.Database:
    """Open (creating if needed) the store at ``path``, migrated to the current schema.

    ``path`` is a file or a ``postgresql://`` URL (the database must exist; its tables
    are created). The connection may be used from several threads
    (``check_same_thread=False``); a Streamlit session keeps one of its own.
    """
    if is_postgres_url(path):
        from evalcore.store.postgres import connect

        return _prepared(connect(str(path), lock_timeout_ms=BUSY_TIMEOUT_MS),
                         migrate=migrate)  # type: ignore[arg-type]
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
        # fsync per write transaction: a label click (label_as_shown, one process) took p50
        # 4.4 ms / p99 70 ms with FULL vs 0.1 / 24 ms with NORMAL (load ~17, 2026-12).
        conn.execute("PRAGMA synchronous = FULL")
    return _prepared(sqlite_utils.Database(conn), migrate=migrate)


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


def _prepared(db: sqlite_utils.Database, *, migrate: bool) -> sqlite_utils.Database:
    """``db`` migrated and rid of the imports a killed process abandoned."""
    if migrate:
        run_migrations(db)
        discard_abandoned_runs(db)  # a run import killed mid-way leaves nothing visible
        discard_abandoned_studies(db)  # a study import
        discard_abandoned_automatic_imports(db)  # an import of automatic judgments
        settle_abandoned_imports(db)  # and a document import (finished if it had published)
    return db
