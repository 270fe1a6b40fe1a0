"""Moving a whole store to another engine or file: ``evalcore migrate-store --from --to``.

:func:`copy_store` copies every table of a store (a SQLite file or a PostgreSQL database)
into an empty one, either way; the source is opened as every command opens it (migrated; a
newer one refused).

* Every row is copied in foreign-key order with its values and identity (integer keys,
  rowids), but the store's own id (:data:`NOT_COPIED`): the target is another store to
  every cache keyed by it.
* The copy, its checks and the re-enabling of the insert triggers (off during the copy:
  their derived rows are copied too) are one transaction on the target: a failure or Ctrl-C
  leaves it empty. The source is read in one snapshot, streamed in batches.
* Per table, the count and order-independent checksum (:func:`row_checksum`) of the rows
  read must equal those read back from the target before the commit.

Whoever can open both stores may run it (as ``evalcore backup``): no study role applies."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from hashlib import blake2b
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evalcore.io.progress import reporter
from evalcore.store import dialect
from evalcore.store.connection import open_store
from evalcore.store.location import describe_store, is_postgres_url
from evalcore.store.schema import SchemaTooNewError, schema_version
from evalcore.store.transaction import read_snapshot, write_transaction

#: Rows per batch read from the source and written to the target.
BATCH_ROWS = 5_000
#: Tables a copy leaves as the target has them: the store's random id, the key of the caches
#: of data derived from a store (:mod:`evalcore.store.store_identity`); two stores sharing it
#: would share cache entries once their contents part.
NOT_COPIED = frozenset({"store_identity"})
#: Checksums are summed modulo this (order-independent; a duplicated row still counts).
_MODULUS = 1 << 128


class StoreCopyRefused(RuntimeError):
    """The copy was refused before writing anything (same store, target not empty, schemas
    that differ)."""


class StoreCopyFailed(RuntimeError):
    """The copy failed (a value the target refused, a verification that did not match);
    nothing was committed to the target."""


class TableCopied(BaseModel):
    """One table of a copy: its rows, their checksum on both sides, and the time it took."""

    table: str
    rows: int
    checksum: str
    seconds: float


class CopySummary(BaseModel):
    source: str
    target: str
    schema_version: int
    tables: list[TableCopied]
    seconds: float

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)


def row_checksum(rows: Iterable[tuple]) -> int:
    """The order-independent checksum of ``rows``: the sum, modulo 2**128, of each row's
    BLAKE2b-128 digest of its ``repr`` (a literal telling apart every value both engines
    return: ``None``, ``int``, ``float`` to its last bit, ``str``, ``bytes``)."""
    total = sum(int.from_bytes(blake2b(repr(row).encode(), digest_size=16).digest(), "little")
                for row in rows)
    return total % _MODULUS


def _same_store(source: str | Path, target: str | Path) -> bool:
    if is_postgres_url(str(source)) or is_postgres_url(str(target)):
        return str(source).rstrip("/") == str(target).rstrip("/")
    return Path(source).expanduser().resolve() == Path(target).expanduser().resolve()



def copy_store(source: str | Path, target: str | Path, *, batch: int = BATCH_ROWS,
               on_table: Callable[[TableCopied], None] | None = None) -> CopySummary:
    """Copy the store at ``source`` into the empty store at ``target`` (see the module
    docstring); ``on_table`` is called as each table is copied (before the commit)."""
    if _same_store(source, target):
        raise StoreCopyRefused(f"--from and --to are the same store ({describe_store(source)}); "
                               "give a new file or an empty database as --to")
    started = time.perf_counter()
    created = not is_postgres_url(str(target)) and not Path(target).exists()
    src = _open(source, "--from")
    dst = None
    committed = False
    try:
        dst = _open(target, "--to")
        summary = _copy(src, dst, source, target, batch, on_table, started)
        committed = True
        return summary
    finally:
        src.conn.close()
        if dst is not None:
            dst.conn.close()
        if created and not committed:  # a file this copy created holds nothing: remove it
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{target}{suffix}").unlink(missing_ok=True)


def _open(location: str | Path, option: str) -> Any:
    """The store at ``location``, migrated; one a newer evalcore wrote is refused, naming
    the option that gave it."""
    try:
        return open_store(location)
    except SchemaTooNewError as error:
        raise StoreCopyRefused(f"cannot open {option} {describe_store(location)}: {error}") from None


def _copy(src: Any, dst: Any, source: str | Path, target: str | Path, batch: int,
          on_table: Callable[[TableCopied], None] | None, started: float) -> CopySummary:
    tables = [t for t in dialect.tables_in_dependency_order(src) if t not in NOT_COPIED]
    target_tables = {t for t in dialect.tables_in_dependency_order(dst) if t not in NOT_COPIED}
    if set(tables) != target_tables:
        raise StoreCopyRefused(
            f"the stores' tables differ (only in the source: {sorted(set(tables) - target_tables)}, "
            f"only in the target: {sorted(target_tables - set(tables))}); both must be opened "
            "by this evalcore")
    occupied = [t for t in tables if dialect.has_rows(dst, t)]
    if occupied:
        shown = ", ".join(f"{t} ({dialect.count_rows(dst, t):,} row(s))" for t in occupied[:6])
        more = f" and {len(occupied) - 6} more table(s)" if len(occupied) > 6 else ""
        raise StoreCopyRefused(
            f"the target {describe_store(target)} is not empty: {shown}{more}; migrate into a new "
            "file or an empty database (createdb), or remove what is there first")
    copied: list[TableCopied] = []
    progress = reporter()
    with read_snapshot(src), write_transaction(dst), dialect.insert_triggers_suspended(dst):
        for table in tables:
            columns = dialect.copy_columns(src, table)
            if set(columns) != set(dialect.copy_columns(dst, table)):
                raise StoreCopyRefused(
                    f"table {table} has other columns in the target ("
                    f"{', '.join(dialect.copy_columns(dst, table))}) than in the source "
                    f"({', '.join(columns)}); both must be at schema version "
                    f"{schema_version(src)}")
            expected = dialect.count_rows(src, table)
            table_started = time.perf_counter()
            progress.stage(f"copying {table}", expected, "rows")
            read = _Tally(report=True)
            try:
                with closing(dialect.read_rows(src, table, columns, batch)) as rows:
                    dialect.write_rows(dst, table, columns, read.batches(rows))
            except dialect.database_errors() as error:
                raise StoreCopyFailed(
                    f"copying table {table} failed after {read.rows:,} of {expected:,} rows: "
                    f"{str(error).strip()}; nothing was written to {describe_store(target)}") from error
            back = _Tally()
            with closing(dialect.read_rows(dst, table, columns, batch)) as rows:
                for _ in back.batches(rows):
                    pass
            if read.rows != expected or (back.rows, back.checksum) != (read.rows, read.checksum):
                raise StoreCopyFailed(
                    f"table {table} did not copy exactly: {expected:,} rows in the source, "
                    f"{read.rows:,} read, {back.rows:,} read back from the target (checksums "
                    f"{read.checksum:032x} / {back.checksum:032x}); nothing was written to "
                    f"{describe_store(target)}")
            done = TableCopied(table=table, rows=read.rows, checksum=f"{read.checksum:032x}",
                               seconds=round(time.perf_counter() - table_started, 3))
            copied.append(done)
            if on_table is not None:
                on_table(done)
        dialect.reset_identities(dst)
    progress.done()
    return CopySummary(source=describe_store(source), target=describe_store(target),
                       schema_version=schema_version(dst), tables=copied,
                       seconds=round(time.perf_counter() - started, 3))


class _Tally:
    """Rows passing through, counted and checksummed as they go."""

    def __init__(self, *, report: bool = False) -> None:
        self.rows = 0
        self._sum = 0
        self._report = report

    @property
    def checksum(self) -> int:
        return self._sum % _MODULUS

    def batches(self, batches: Iterable[list[tuple]]) -> Iterator[list[tuple]]:
        progress = reporter()
        for rows in batches:
            self.rows += len(rows)
            self._sum += row_checksum(rows)
            yield rows
            if self._report:
                progress.advance(len(rows))
