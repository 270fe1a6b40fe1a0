"""Backing up and checking a store: consistent copies while annotators label.

Every backup is a SQLite store file, whatever the engine it copies, checked by
:func:`verify_store`: a store file is copied with SQLite's online backup API in one read
transaction (one instant, WAL included, writers not blocked); a PostgreSQL store at this
evalcore's schema version table by table (:func:`evalcore.store.store_copy.copy_store`: one
snapshot, each table checked; restored with ``evalcore migrate-store``). The copy is written
beside ``out``, checked and renamed into place (never over a file), with the store file's
permission bits or 0600, whichever is stricter.

:func:`verify_store` reports, in one read-only snapshot, the engine's integrity check, rows
referencing a missing row, the schema version, missing or disabled triggers guarding the
append-only history, the rows per table and whether every frozen reference version still
matches its content hash. Restoring a store file's backup is copying it over the store's
path while nothing has it open (see the README)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import sqlite_utils
from pydantic import BaseModel, Field

from evalcore.io.atomic import PRIVATE, atomic_path, private_mode
from evalcore.io.progress import counted, reporter
from evalcore.store import dialect
from evalcore.store.location import describe_store, is_postgres_url, open_read_only
from evalcore.store.references import altered_references
from evalcore.store.schema import SCHEMA_VERSION, current_triggers, schema_version
from evalcore.store.transaction import read_snapshot


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


def verify_store(location: str | Path) -> StoreCheck:
    """Check the store at ``location`` (a file or a ``postgresql://`` URL) without changing
    it (see the module docstring)."""
    db = open_read_only(location)
    shown = describe_store(location)
    try:
        with read_snapshot(db):  # one snapshot for every check below
            progress = reporter()
            progress.stage(f"checking the integrity of {Path(shown).name or shown}")
            integrity = dialect.integrity_check(db)
            fk = dialect.foreign_key_violations(db)
            version = schema_version(db)
            names = dialect.store_tables(db)
            progress.stage("counting rows", len(names), "tables")
            tables = {n: dialect.count_rows(db, n) for n in counted(names, every=1)}
            check = StoreCheck(path=shown, schema_version=version, integrity=integrity,
                               foreign_key_violations=fk, tables=tables)
            _check_schema(db, check)
            if integrity == ["ok"] and version == SCHEMA_VERSION and "reference_versions" in tables:
                _check_references(db, check)
        return check
    finally:
        db.conn.close()


def _check_schema(db: sqlite_utils.Database, check: StoreCheck) -> None:
    version = check.schema_version
    if check.integrity != ["ok"]:
        check.problems.append("integrity check: " + "; ".join(check.integrity[:20]))
    if check.foreign_key_violations:
        check.problems.append(f"{check.foreign_key_violations} row(s) break a foreign key "
                              "(they reference a row that does not exist)")
    if version == 0 or "studies" not in check.tables:
        check.problems.append("not an evidence store (no schema version or studies table); "
                              "create one with `evalcore init`")
    elif version > SCHEMA_VERSION:
        check.problems.append(f"schema version {version} is newer than this evalcore's "
                              f"{SCHEMA_VERSION}; upgrade relevance-ledger to use it")
    elif version < SCHEMA_VERSION:
        check.problems.append(f"schema version {version} is older than {SCHEMA_VERSION}: "
                              "`evalcore init --db` migrates it (after a backup)")
    else:
        missing = sorted(current_triggers() - set(dialect.active_triggers(db)))
        if missing:
            check.problems.append(
                f"{len(missing)} trigger(s) guarding the store's rules are missing or disabled "
                f"({', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}): the "
                "append-only history is not protected; restore a backup")


def _check_references(db: sqlite_utils.Database, check: StoreCheck) -> None:
    check.references_checked += db.execute("SELECT count(*) FROM reference_versions").fetchone()[0]
    for study_id, name in altered_references(db):
        check.problems.append(
            f"reference {name!r} of study {study_id!r} no longer matches "
            "its content hash (altered outside evalcore)"
        )


def backup_store(source: str | Path, out: str | Path) -> BackupSummary:
    """Copy the store at ``source`` (a file or a ``postgresql://`` URL) to the new SQLite store
    file ``out`` (see the module docstring). FileExistsError if ``out`` exists,
    FileNotFoundError if the source file does not, ValueError if a database is not at this
    evalcore's schema version or the copy fails its check (the temporary copy removed)."""
    out = Path(out)
    if out.exists() or out.is_symlink():
        raise FileExistsError(17, "already exists; choose a new file name (a backup never "
                                  "overwrites a file)", str(out))
    shown = describe_store(source)
    postgres = is_postgres_url(str(source))
    if not postgres and not Path(source).is_file():
        raise FileNotFoundError(2, "no store file here", str(source))
    with atomic_path(out, mode=PRIVATE if postgres else private_mode(source)) as tmp:
        reporter().stage(f"copying {Path(shown).name if not postgres else shown}")
        if postgres:
            _copy_database(str(source), tmp)
        else:
            _copy_file(Path(source), tmp)
        with closing(sqlite3.connect(tmp)) as conn:
            conn.execute("PRAGMA journal_mode = DELETE")  # a single self-contained file
        check = verify_store(tmp)
        if not check.ok:
            raise ValueError(f"the copy of {shown} failed its check: {'; '.join(check.problems)}")
    return BackupSummary(source=shown, out=str(out), bytes=out.stat().st_size,
                         check=check.model_copy(update={"path": str(out)}))


def _copy_file(source: Path, tmp: Path) -> None:
    """The store file ``source`` into ``tmp`` with SQLite's online backup API (one snapshot)."""
    with closing(open_read_only(source).conn) as src, closing(sqlite3.connect(tmp)) as dst:
        src.backup(dst)  # all pages in one step: one consistent snapshot


def _copy_database(url: str, tmp: Path) -> None:
    """The PostgreSQL store at ``url`` into the new SQLite store file ``tmp`` (copy_store),
    refusing a database at another schema version than this evalcore's (a backup migrates
    nothing)."""
    from evalcore.store.store_copy import copy_store

    with closing(open_read_only(url).conn) as conn:
        version = schema_version(conn)
    if version != SCHEMA_VERSION:
        raise ValueError(
            f"{describe_store(url)} is at schema version {version}, this evalcore writes "
            f"backups at {SCHEMA_VERSION} and migrates nothing while backing up: back it up "
            "with the evalcore that uses it (or pg_dump), then upgrade")
    copy_store(url, tmp)
