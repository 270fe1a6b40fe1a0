"""The store on PostgreSQL: a connection with the surface the store uses of SQLite's.

:class:`PgDatabase` offers what the store calls on a ``sqlite_utils.Database`` over one
psycopg 3 connection, so the store keeps one set of queries, each translated by
:func:`evalcore.store.dialect.to_postgres`. The connection is in autocommit mode and the
store issues ``BEGIN`` / ``COMMIT`` itself, as on SQLite. Values come back as SQLite returns
them (numeric sums and comparisons as integers; a ``bool`` parameter is sent as an integer),
and ``cursor.lastrowid`` after an ``INSERT`` is the row's integer key (``RETURNING`` it).
:meth:`PgConnection.batched` sends a write transaction's unread statements with its
``COMMIT`` (pipeline mode). psycopg is imported only when a PostgreSQL store is opened."""

import contextlib
import re
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from evalcore.store.dialect import numbered_to_named, schema_to_postgres, to_postgres

_INSERT_INTO = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)", re.IGNORECASE)
#: Transaction control, sent as written (PostgreSQL's own syntax).
#: Schema statements: translated as the migrations' are (types, rowid, triggers).
_DDL = re.compile(r"^\s*(CREATE|ALTER|DROP)\b", re.IGNORECASE)
_CONTROL = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|SET)\b", re.IGNORECASE)


class PgCursor:
    """The result of one statement: rows as tuples, ``description``, ``rowcount``, ``lastrowid``."""

    def __init__(self, cursor: Any, lastrowid: int | None = None, hide_rows: bool = False,
                 returns_key: bool = False, pipeline: Any = None):
        self._cursor = cursor
        self._lastrowid = lastrowid
        self._hide_rows = hide_rows
        self._returns_key = returns_key  # the key is the row the statement returns: read it late
        self._pipeline = pipeline  # the batch the statement was queued in, if any

    def _settled(self) -> Any:
        """The psycopg cursor, its result received (a queued statement is sent now, with
        every statement queued before it: one round trip)."""
        if self._pipeline is not None:
            if self._cursor.pgresult is None:
                self._pipeline.sync()
            self._pipeline = None
        return self._cursor

    @property
    def lastrowid(self) -> int | None:
        if self._returns_key:
            self._returns_key = False
            cursor = self._settled()
            row = cursor.fetchone() if cursor.description is not None else None
            self._lastrowid = None if row is None else row[0]
        return self._lastrowid

    @property
    def description(self) -> Any:
        return None if self._hide_rows else self._settled().description

    @property
    def rowcount(self) -> int:
        return self._settled().rowcount

    def _has_rows(self) -> bool:
        return not self._hide_rows and self._settled().description is not None

    def fetchone(self) -> tuple | None:
        return self._cursor.fetchone() if self._has_rows() else None

    def fetchall(self) -> list[tuple]:
        return self._cursor.fetchall() if self._has_rows() else []

    def fetchmany(self, size: int = 1) -> list[tuple]:
        return self._cursor.fetchmany(size) if self._has_rows() else []

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.fetchall())

    def close(self) -> None:
        self._cursor.close()


class PgConnection:
    """``execute`` / ``executemany`` / ``in_transaction`` / ``commit`` / ``close`` over one
    psycopg connection."""

    dialect = "postgresql"

    def __init__(self, raw: Any):
        self.raw = raw
        self._keys: dict[str, str] | None = None
        self._trace: Callable[[str], object] | None = None
        self._batched: Any = None  # the psycopg pipeline of a batch

    def set_trace_callback(self, trace: Callable[[str], object] | None) -> None:
        """As sqlite3's: ``trace(sql)`` is called with each statement the store executes
        (in SQLite's dialect, as the store wrote it); None stops it."""
        self._trace = trace

    def execute(self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] | None = None
                ) -> PgCursor:
        if self._trace is not None:
            self._trace(sql)
        if _CONTROL.match(sql):
            return PgCursor(self.raw.execute(sql))
        if _DDL.match(sql) and not parameters:
            cursor = self.raw.cursor()
            for statement in schema_to_postgres(sql):
                cursor.execute(statement)
            self.forget_schema()
            return PgCursor(cursor)
        sql, parameters = numbered_to_named(sql, parameters)
        translated = to_postgres(sql)
        params = _parameters(parameters)
        cursor = self.raw.cursor()
        insert = _INSERT_INTO.match(sql)
        key = self._row_keys().get(insert.group(1).lower()) if insert else None
        if key is not None and "RETURNING" not in translated.upper():
            cursor.execute(f"{translated} RETURNING {key}", params)
            return PgCursor(cursor, hide_rows=True, returns_key=True, pipeline=self._batched)
        cursor.execute(translated, params)
        return PgCursor(cursor, pipeline=self._batched)

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any]) -> PgCursor:
        if self._trace is not None:
            self._trace(sql)
        cursor = self.raw.cursor()
        cursor.executemany(to_postgres(sql), [_parameters(p) for p in seq_of_parameters])
        return PgCursor(cursor)

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        # in a batch the server's status arrives late: a batch is one write transaction
        return (self._batched is not None
                or self.raw.info.transaction_status != TransactionStatus.IDLE)

    @contextlib.contextmanager
    def batched(self) -> Iterator[None]:
        """Pipeline mode for one write transaction (``BEGIN`` ... ``COMMIT`` inside the block): the
        queued statements are sent when a result is asked for and when the block ends. An
        exception leaves the transaction for a ``ROLLBACK``; a refused statement raises when its
        batch returns."""
        try:
            with self.raw.pipeline() as self._batched:
                yield
        finally:
            self._batched = None

    def commit(self) -> None:
        """Commit the open transaction, if any (as ``sqlite3.Connection.commit``: in
        autocommit mode a statement outside ``BEGIN`` is committed already)."""
        if self.in_transaction:
            self.raw.execute("COMMIT")

    def close(self) -> None:
        self.raw.close()

    def forget_schema(self) -> None:
        """Read the tables' integer keys again (after a migration changed them)."""
        self._keys = None

    def know_schema(self) -> None:
        """Read the tables' integer keys now if they are not known (a catalog read of some
        milliseconds): called before the write lock is taken, so no writer waits for it."""
        if self._keys is None and not self.in_transaction:
            self._row_keys()

    def _row_keys(self) -> dict[str, str]:
        """Table -> the integer key an insert's ``lastrowid`` reports (identity columns)."""
        if self._keys is None:
            rows = self.raw.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND is_identity = 'YES' "
                "ORDER BY column_name <> 'rowid'").fetchall()  # a table's own key wins
            self._keys = dict(rows)
        return self._keys


def _parameters(parameters: Any) -> Any:
    """SQLite's parameters as psycopg takes them (a list for ``?``, a dict for ``:name``)."""
    if parameters is None:
        return None
    if isinstance(parameters, Mapping):
        return dict(parameters)
    return list(parameters)


class PgDatabase:
    """What the store uses of ``sqlite_utils.Database``, on PostgreSQL."""

    dialect = "postgresql"

    def __init__(self, raw: Any, url: str):
        self.conn = PgConnection(raw)
        self.url = url

    def execute(self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] | None = None
                ) -> PgCursor:
        return self.conn.execute(sql, parameters)

    @contextlib.contextmanager
    def atomic(self) -> Iterator["PgDatabase"]:
        """A savepoint inside a transaction, else ``BEGIN`` ... ``COMMIT`` (as sqlite_utils)."""
        raw = self.conn.raw
        if self.conn.in_transaction:
            name = f"sp_{secrets.token_hex(8)}"
            begin, undo, end = (f"SAVEPOINT {name}", [f"ROLLBACK TO SAVEPOINT {name}",
                                f"RELEASE SAVEPOINT {name}"], f"RELEASE SAVEPOINT {name}")
        else:
            begin, undo, end = "BEGIN", ["ROLLBACK"], "COMMIT"
        raw.execute(begin)
        try:
            yield self
        except BaseException:
            for statement in undo:
                raw.execute(statement)
            raise
        raw.execute(end)

    def table_names(self) -> list[str]:
        """The store's tables, as ``sqlite_utils.Database.table_names`` lists them."""
        from evalcore.store.dialect import store_tables

        return store_tables(self)

    def close(self) -> None:
        self.conn.close()


def connect(url: str, *, lock_timeout_ms: int, read_only: bool = False) -> PgDatabase:
    """Open ``url`` (``postgresql://...``) in autocommit mode with SQLite's value types; a
    statement waits ``lock_timeout_ms`` for a lock before it fails as busy; ``read_only``: the
    server refuses every write of the session."""
    import psycopg
    from psycopg.adapt import Dumper, Loader
    from psycopg.types.string import TextLoader

    class _IntFromNumeric(Loader):
        def load(self, data: Any) -> Any:
            text = bytes(data).decode()
            if "." in text or "e" in text.lower() or text in ("NaN", "Infinity", "-Infinity"):
                return float(text)
            return int(text)

    class _IntFromBool(Loader):
        def load(self, data: Any) -> int:
            return 1 if bytes(data) == b"t" else 0

    class _BoolAsInt(Dumper):
        oid = psycopg.adapters.types["int8"].oid

        def dump(self, obj: Any) -> bytes:
            return b"1" if obj else b"0"

    raw = psycopg.connect(url, autocommit=True)
    raw.execute(f"SET lock_timeout = {int(lock_timeout_ms)}")
    if read_only:
        raw.execute("SET default_transaction_read_only = on")
    raw.adapters.register_loader("numeric", _IntFromNumeric)
    raw.adapters.register_loader("bool", _IntFromBool)
    raw.adapters.register_dumper(bool, _BoolAsInt)
    for json_type in ("json", "jsonb"):  # SQLite's JSON functions return text
        raw.adapters.register_loader(json_type, TextLoader)
    return PgDatabase(raw, url)

