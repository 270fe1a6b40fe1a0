"""Where a store lives (a SQLite file path or a PostgreSQL URL) and connecting to it.

``--db``, ``RELEVANCE_LEDGER_DB`` and :func:`evalcore.store.connection.open_store` take
either; the checks that only mean something for a file go through these helpers, so a URL
passes them. A connection is opened unmigrated, with a busy timeout (PostgreSQL: a lock
timeout) so writers queue; a SQLite store in WAL mode with ``synchronous = FULL`` (an
acknowledged label survives an OS crash). No store module is imported here, so any may
open a store through it."""

import sqlite3
from pathlib import Path

import sqlite_utils

#: The URL schemes that name a PostgreSQL store.
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(target: object) -> bool:
    """Does ``target`` (a path or a string) name a PostgreSQL database?"""
    return isinstance(target, str) and target.lower().startswith(POSTGRES_SCHEMES)


def store_target(value: str | Path) -> str | Path:
    """A ``--db`` / ``RELEVANCE_LEDGER_DB`` value as :func:`open_store` takes it: a URL
    unchanged, anything else a path (``~`` expanded)."""
    text = str(value)
    if is_postgres_url(text):
        return text
    return Path(text).expanduser()


def store_exists(target: str | Path) -> bool:
    """Is there a store at ``target``? A PostgreSQL URL is taken to exist (the server says
    otherwise when it is opened); a path must be an existing file."""
    return is_postgres_url(str(target)) or Path(target).exists()


def describe_store(target: str | Path) -> str:
    """A store location for messages: a path as given, a URL without its password."""
    text = str(target)
    if is_postgres_url(text) and "@" in text:
        scheme, rest = text.split("://", 1)
        credentials, host = rest.rsplit("@", 1)
        return f"{scheme}://{credentials.split(':', 1)[0]}@{host}"
    return text


BUSY_TIMEOUT_MS = 10_000


def connect_read_write(path: str | Path) -> sqlite_utils.Database:
    """A connection to the store at ``path`` (a file, created if missing, or a
    ``postgresql://`` URL), usable from several threads (``check_same_thread=False``),
    in autocommit mode: writes issue their own ``BEGIN IMMEDIATE``."""
    if is_postgres_url(path):
        return _postgres(path, read_only=False)
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                           isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    if str(path) != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
        # FULL: a commit is on disk (WAL fsynced) before it returns, so an acknowledged label
        # survives an OS crash or power loss, at the cost of one fsync per write transaction.
        conn.execute("PRAGMA synchronous = FULL")
    return sqlite_utils.Database(conn)


def open_read_only(path: str | Path) -> sqlite_utils.Database:
    """Open the store at ``path`` (a file or a ``postgresql://`` URL) for reading only: not
    migrated nor cleaned up, and the engine refuses any write (SQLite's ``mode=ro``, a
    PostgreSQL session whose transactions are read-only). A missing file is
    ``FileNotFoundError`` (nothing is created)."""
    if is_postgres_url(path):
        return _postgres(path, read_only=True)
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(2, "no store file here", str(file))
    conn = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True,
                           timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return sqlite_utils.Database(conn)


def _postgres(url: str | Path, *, read_only: bool) -> sqlite_utils.Database:
    from evalcore.store.postgres import connect

    return connect(str(url), lock_timeout_ms=BUSY_TIMEOUT_MS, read_only=read_only)  # type: ignore[return-value]
