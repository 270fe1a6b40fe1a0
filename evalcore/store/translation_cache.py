"""The PostgreSQL translations of the store's SQL kept between processes (a fresh process
would otherwise parse every statement again with sqlglot): a SQLite file in the cache
folder (:func:`evalcore.io.cache_folder.cache_folder`), read once on the first lookup.

Every entry belongs to a *namespace*: a hash of everything a translation depends on
besides the SQL text (this code, sqlglot's version, the indexes ``INDEXED BY`` may name), so
no old translation is served; other namespaces' entries are dropped when one starts. An
entry whose checksum (of namespace, SQL and translation) does not match is never used; a
file that is not a database is started anew. Nothing here raises: the cache only saves work.

Processes share the file (write-ahead log, busy timeout, ``INSERT OR IGNORE``; a write
that waits too long is skipped). The folder is 0700, the file 0600."""

import hashlib
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from evalcore.io.atomic import PRIVATE
from evalcore.io.cache_folder import cache_folder

#: The file's name in the cache folder; bump the suffix when its table changes meaning.
FILE_NAME = "sql-translations-1.sqlite"
#: How long a write waits for another process's (seconds) before it is skipped.
BUSY_TIMEOUT_S = 0.5
#: More entries than this in one namespace: the SQL is not the store's fixed text (values
#: written into it); the namespace is cleared rather than grow without bound.
MAX_ENTRIES = 20_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS translations (
    namespace TEXT NOT NULL,
    sql TEXT NOT NULL,
    translated TEXT NOT NULL,
    checksum TEXT NOT NULL,
    PRIMARY KEY (namespace, sql)
) WITHOUT ROWID
"""


def cache_path() -> Path:
    """The cache file (see the module docstring)."""
    return cache_folder("sql-translations") / FILE_NAME


def checksum(namespace: str, sql: str, translated: str) -> str:
    """The hash an entry carries (checked on reading)."""
    return hashlib.sha256("\0".join((namespace, sql, translated)).encode("utf-8")).hexdigest()


class TranslationCache:
    """One process's view of the file: ``get`` a translation, ``put`` a new one. ``namespace`` is
    called on the first lookup (and after :meth:`reset`)."""

    def __init__(self, namespace: Callable[[], str], path: Callable[[], Path] = cache_path):
        self._namespace_of = namespace
        self._path_of = path
        self._lock = threading.Lock()
        self._loaded: dict[str, str] | None = None
        self._namespace = ""
        self._path: Path | None = None
        self._writable = True

    def reset(self) -> None:
        """Forget what was read (the namespace changed): the next lookup reads again."""
        with self._lock:
            self._loaded = None

    def get(self, sql: str) -> str | None:
        """The stored translation of ``sql``, or None."""
        with self._lock:
            return self._entries().get(sql)

    def put(self, sql: str, translated: str) -> None:
        """Keep ``translated`` for ``sql`` here and in the file (when it can be written)."""
        with self._lock:
            self._entries()[sql] = translated
            if not self._writable or self._path is None:
                return
            try:
                with _connect(self._path) as conn:
                    conn.execute("INSERT OR IGNORE INTO translations VALUES (?, ?, ?, ?)",
                                 (self._namespace, sql, translated,
                                  checksum(self._namespace, sql, translated)))
                conn.close()
            except sqlite3.OperationalError as error:  # busy: skipped; anything else: stop
                self._writable = _is_busy(error)
            except (OSError, sqlite3.Error):
                self._writable = False

    def _entries(self) -> dict[str, str]:
        """The namespace's valid entries, read on first need (none when the file cannot be
        read)."""
        if self._loaded is None:
            self._load()
        assert self._loaded is not None
        return self._loaded

    def _load(self) -> None:
        self._loaded = {}
        try:
            self._namespace = self._namespace_of()
            self._path = self._path_of()
        except (OSError, ValueError, ImportError):
            self._writable = False
            return
        try:
            rows = _read(self._path, self._namespace)
        except sqlite3.DatabaseError as error:
            if getattr(error, "sqlite_errorcode", None) not in _DAMAGED:  # busy, read-only
                self._writable = False
                return
            try:  # not a database (any more): start the file anew
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{self._path}{suffix}").unlink(missing_ok=True)
                rows = _read(self._path, self._namespace)
            except (OSError, sqlite3.Error):
                self._writable = False
                return
        except OSError:
            self._writable = False
            return
        self._loaded = {sql: translated for sql, translated, digest in rows
                        if digest == checksum(self._namespace, sql, translated)}


#: SQLite's result codes of a file that is not a database or is damaged.
_DAMAGED = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB


def _is_busy(error: sqlite3.OperationalError) -> bool:
    """Another process held the file too long (the write is only skipped)."""
    return getattr(error, "sqlite_errorcode", None) in (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED


def _read(path: Path, namespace: str) -> list[tuple[str, str, str]]:
    """The entries of ``namespace`` in the file at ``path`` (created when missing; other
    namespaces dropped when this one has no entry, and this one when it has too many)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    conn = _connect(path)
    try:
        with conn:
            conn.execute(_SCHEMA)
        rows = conn.execute("SELECT sql, translated, checksum FROM translations "
                            "WHERE namespace = ?", (namespace,)).fetchall()
        if not rows or len(rows) > MAX_ENTRIES:
            with conn:
                conn.execute("DELETE FROM translations WHERE namespace <> ? OR ? > ?",
                             (namespace, len(rows), MAX_ENTRIES))
            rows = rows if len(rows) <= MAX_ENTRIES else []
        return rows
    finally:
        conn.close()


def _connect(path: Path) -> sqlite3.Connection:
    """A connection to the cache file: write-ahead log (readers never wait for a writer),
    no sync on commit (a lost entry is only translated again). A missing file is created
    the owner's only."""
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE))
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                           check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.isolation_level = "IMMEDIATE"
    except BaseException:
        conn.close()
        raise
    return conn
