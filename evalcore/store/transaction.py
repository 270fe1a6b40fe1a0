"""Writing to the store safely: every write runs inside ``BEGIN IMMEDIATE``.

Two writers queue instead of failing half-way. A nested
:func:`write_transaction` is a savepoint (``db.atomic()``): a failure inside it
that the caller catches rolls back only the nested part.

Waiting for the write lock (:func:`begin_immediate`): SQLite's busy handler sleeps ever
longer between tries, so a waiter may get the lock long after its release; for ``BEGIN
IMMEDIATE`` alone it is turned off and the begin tried again every :data:`POLL_S` or so
(jittered, so waiters do not retry in step) until the busy timeout has passed.

On PostgreSQL the same rule holds: a write transaction is ``BEGIN`` and then
``pg_advisory_xact_lock`` on one constant key (:data:`WRITE_LOCK_KEY`), so writers
take turns exactly as SQLite's single write lock makes them (no lost or doubled
label between processes), waiting up to the connection's ``lock_timeout``; a read
snapshot is ``BEGIN ISOLATION LEVEL REPEATABLE READ``.

A short write that every click waits for (a label) asks for ``batched=True``: on
PostgreSQL each statement is a client round trip made while the lock is held, so
the statements are batched (:meth:`evalcore.store.postgres.PgConnection.batched`):
``BEGIN`` and the lock travel with the first statement whose rows are read, and the
statements whose results are not read before the end travel with the ``COMMIT``. The
writer reads rows (or a rowcount) as late as it can: a statement sent before another's
rows are read shares their round trip. SQLite runs the same statements as written
(in-process: no round trips).
"""

import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import sqlite_utils

from evalcore.store import dialect


@contextmanager
def write_transaction(db: sqlite_utils.Database, *, batched: bool = False
                      ) -> Iterator[sqlite_utils.Database]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; any exception rolls everything back.

    Nested use joins the outer transaction through a savepoint. ``batched``: few round
    trips on PostgreSQL (see the module docstring).
    """
    if db.conn.in_transaction:
        if dialect.is_postgres(db):  # joined from a read snapshot too: writes still take turns
            db.conn.raw.execute(_TAKE_WRITE_LOCK)
        with db.atomic():
            yield db
        return
    if batched and dialect.is_postgres(db):
        with _batched_write(db.conn):
            yield db
        return
    begin_immediate(db.conn)
    try:
        yield db  # no savepoint: a failure rolls the whole transaction back below
    except BaseException:
        if db.conn.in_transaction:
            db.conn.execute("ROLLBACK")
        raise
    else:
        db.conn.execute("COMMIT")


@contextmanager
def _batched_write(conn: sqlite3.Connection) -> Iterator[None]:
    """A PostgreSQL write transaction in one batch: ``BEGIN``, the write lock and the
    ``COMMIT`` are sent with the statements around them; any exception rolls back."""
    conn.know_schema()
    try:
        with conn.batched():
            conn.raw.execute("BEGIN")
            conn.raw.execute(_TAKE_WRITE_LOCK)
            yield
            conn.raw.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.raw.execute("ROLLBACK")
        raise


#: The pause between two tries for the write lock (jittered by half either way).
POLL_S = 0.002


#: The advisory lock every PostgreSQL write transaction holds: the store's one write lock.
WRITE_LOCK_KEY = 0x7265_6C65_6467_6572  # "reledger" in ASCII
_TAKE_WRITE_LOCK = f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})"


def begin_immediate(conn: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE``, trying every ~:data:`POLL_S` while another writer holds the lock,
    for as long as the connection's busy timeout (see the module docstring); the last
    busy error is raised. On PostgreSQL: ``BEGIN`` and the advisory write lock."""
    if dialect.is_postgres(conn):
        conn.know_schema()
        try:  # one round trip for both (a simple query: no parameters)
            conn.raw.execute(f"BEGIN; {_TAKE_WRITE_LOCK}")
        except BaseException:
            if conn.in_transaction:
                conn.raw.execute("ROLLBACK")
            raise
        return
    timeout_ms = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    if not timeout_ms:
        conn.execute("BEGIN IMMEDIATE")
        return
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                if not is_busy(error) or time.monotonic() >= deadline:
                    raise
            time.sleep(POLL_S * random.uniform(0.5, 1.5))
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout_ms)}")


def in_transaction(db: sqlite_utils.Database) -> bool:
    """Is a transaction open on the connection?"""
    return db.conn.in_transaction


@contextmanager
def read_snapshot(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """``BEGIN`` ... ``COMMIT``: one consistent read view for several reads.

    Call it outside any transaction; it ends (``COMMIT``) whatever happens inside. The
    engine refuses a write inside it (a read-only transaction; on SQLite ``query_only``):
    a write made from reads of an older view could undo another writer's work, and the
    engines would not agree on when (SQLite refuses the write only if another writer
    committed since the view was taken).
    """
    if dialect.is_postgres(db.conn):
        db.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            yield db
        finally:
            db.conn.execute("COMMIT")
        return
    db.conn.execute("BEGIN")
    db.conn.execute("PRAGMA query_only = ON")
    try:
        yield db
    finally:
        db.conn.execute("PRAGMA query_only = OFF")
        db.conn.execute("COMMIT")


T = TypeVar("T")


is_busy = dialect.is_busy


def retry_busy(write: Callable[[], T], *, attempts: int = 3, backoff_s: float = 0.25) -> T:
    """Run ``write`` (a whole write transaction); on a busy store, try again with backoff.

    Each attempt already waits up to the busy timeout for the lock; a write that
    still finds the store busy is retried ``attempts - 1`` more times (waiting
    ``backoff_s``, then twice that, ...). The last busy error is raised: the
    caller says the write was not saved and keeps what the person typed. A
    write transaction that fails is rolled back, so a retry never writes twice.
    """
    for attempt in range(attempts):
        try:
            return write()
        except dialect.operational_errors() as error:
            if not is_busy(error) or attempt == attempts - 1:
                raise
            time.sleep(backoff_s * (2 ** attempt))
    raise AssertionError("unreachable")
