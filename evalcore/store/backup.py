"""Backing up and checking a store file: consistent copies while annotators label.

* :func:`backup_store` copies a live store with SQLite's online backup API
  (``sqlite3.Connection.backup``) in one step, i.e. inside one read
  transaction: the copy is the store as of one instant, including what is
  still in the write-ahead log (a plain ``cp`` of a live store can miss it),
  and writers are not blocked (WAL). The copy is written to a temporary file
  beside ``out``, checked with ``PRAGMA integrity_check`` and renamed into
  place; an existing ``out`` is never overwritten. The copy gets the store
  file's permission bits or 0600, whichever is stricter (a backup is never
  readable by more people than the store), and a backup killed before its
  rename leaves a hidden temporary file that the next one removes
  (:mod:`evalcore.io.atomic`).
* :func:`verify_store` opens a store read-only (nothing is migrated or
  written) and reports ``integrity_check``, ``foreign_key_check``, the schema
  version and whether this evalcore can open it, the rows per table, and
  whether every frozen reference version still matches its content hash. A
  PostgreSQL store (a URL) is checked the same way inside one read snapshot; the
  server enforces its foreign keys and keeps no ``integrity_check``, so those two
  report "ok" and 0.

Restoring is copying a backup over the store's path while nothing has it open
(see the README).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlite_utils
from pydantic import BaseModel, Field

from evalcore.io.atomic import atomic_path, private_mode
from evalcore.io.progress import counted, reporter
from evalcore.store.connection import BUSY_TIMEOUT_MS
from evalcore.store.location import is_postgres_url
from evalcore.store.references import altered_references
from evalcore.store.schema import SCHEMA_VERSION


class StoreCheck(BaseModel):
    """What :func:`verify_store` found; ``problems`` is empty for a sound store."""

    path: str
    schema_version: int
    integrity: list[str]
    foreign_key_violations: int
    tables: dict[str, int] = Field(default_factory=dict)
    references_checked: int = 0
    problems: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


class BackupSummary(BaseModel):
    source: str
    out: str
    bytes: int
    check: StoreCheck


def _read_only(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise FileNotFoundError(2, "no store file here", str(path))
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                           timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return conn


def verify_store(path: str | Path) -> StoreCheck:
    """Check the store file (or PostgreSQL URL) at ``path`` without changing it (see the
    module docstring)."""
    if is_postgres_url(str(path)):
        return _verify_postgres(str(path))
    path = Path(path)
    conn = _read_only(path)
    try:
        conn.execute("BEGIN")  # one snapshot for every check below
        progress = reporter()
        progress.stage(f"checking the integrity of {path.name}")
        integrity = [r[0] for r in conn.execute("PRAGMA integrity_check")]
        fk = len(conn.execute("PRAGMA foreign_key_check").fetchall())
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name")]
        progress.stage("counting rows", len(names), "tables")
        tables = {n: conn.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0]
                  for n in counted(names, every=1)}
        check = StoreCheck(path=str(path), schema_version=version, integrity=integrity,
                           foreign_key_violations=fk, tables=tables)
        _judge(check, sqlite_utils.Database(conn))
        return check
    finally:
        conn.close()


def _verify_postgres(url: str) -> StoreCheck:
    """:func:`verify_store` of a PostgreSQL store, inside one read snapshot."""
    from evalcore.store.connection import open_store
    from evalcore.store.dialect import store_tables
    from evalcore.store.schema import schema_version
    from evalcore.store.transaction import read_snapshot

    db = open_store(url, migrate=False)
    try:
        with read_snapshot(db):
            names = store_tables(db)
            reporter().stage("counting rows", len(names), "tables")
            tables = {n: int(db.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0])
                      for n in counted(names, every=1)}
            check = StoreCheck(path=url, schema_version=schema_version(db), integrity=["ok"],
                               foreign_key_violations=0, tables=tables)
            _judge(check, db)
        return check
    finally:
        db.close()


def _judge(check: StoreCheck, db: sqlite_utils.Database) -> None:
    """The problems of what :func:`verify_store` read (appended to ``check.problems``)."""
    integrity, fk, version, tables = (check.integrity, check.foreign_key_violations,
                                      check.schema_version, check.tables)
    if integrity != ["ok"]:
        check.problems.append("integrity_check: " + "; ".join(integrity[:20]))
    if fk:
        check.problems.append(f"{fk} row(s) break a foreign key (PRAGMA foreign_key_check)")
    if version == 0 or "studies" not in tables:
        check.problems.append("not an evidence store (no schema version or studies table); "
                              "create one with `evalcore init`")
    elif version > SCHEMA_VERSION:
        check.problems.append(f"schema version {version} is newer than this evalcore's "
                              f"{SCHEMA_VERSION}; upgrade relevance-ledger to use it")
    elif version < SCHEMA_VERSION:
        check.problems.append(f"schema version {version} is older than {SCHEMA_VERSION}: "
                              "`evalcore init --db` migrates it (after a backup)")
    if not check.problems and "reference_versions" in tables:
        _check_references(db, check)


def _check_references(db: sqlite_utils.Database, check: StoreCheck) -> None:
    check.references_checked += db.execute("SELECT count(*) FROM reference_versions").fetchone()[0]
    for study_id, name in altered_references(db):
        check.problems.append(
            f"reference {name!r} of study {study_id!r} no longer matches "
            "its content hash (altered outside evalcore)"
        )


def backup_store(source: str | Path, out: str | Path) -> BackupSummary:
    """Copy the store at ``source`` to the new file ``out`` (see the module docstring).

    Raises ``FileExistsError`` if ``out`` exists, ``ValueError`` if the copy
    fails its check (the temporary copy is removed then).
    """
    source, out = Path(source), Path(out)
    if out.exists() or out.is_symlink():
        raise FileExistsError(17, "already exists; choose a new file name (a backup never "
                                  "overwrites a file)", str(out))
    src = _read_only(source)
    try:
        with atomic_path(out, mode=private_mode(source)) as tmp:
            dst = sqlite3.connect(tmp)
            try:
                reporter().stage(f"copying {source.name}")
                src.backup(dst)  # all pages in one step: one consistent snapshot
                dst.execute("PRAGMA journal_mode = DELETE")  # a single self-contained file
            finally:
                dst.close()
            src.close()
            check = verify_store(tmp)
            if not check.ok:
                raise ValueError(
                    f"the copy of {source} failed its check: {'; '.join(check.problems)}")
    finally:
        src.close()
    return BackupSummary(source=str(source), out=str(out), bytes=out.stat().st_size,
                         check=check.model_copy(update={"path": str(out)}))
