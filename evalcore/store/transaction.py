"""Writing to the store safely: every write runs inside ``BEGIN IMMEDIATE``.

Two writers queue instead of failing half-way; a nested :func:`write_transaction` is a
savepoint (``db.atomic()``). SQLite's busy handler sleeps ever longer between tries, so
:func:`begin_immediate` turns it off and tries again every :data:`POLL_S` (jittered) until
the busy timeout has passed: a waiter gets the lock soon after its release.

On PostgreSQL a write transaction is ``BEGIN`` and ``pg_advisory_xact_lock`` on one key
(:data:`WRITE_LOCK_KEY`), so writers take turns as under SQLite's single write lock; a read
snapshot is ``BEGIN ISOLATION LEVEL REPEATABLE READ``. A short write every click waits for
(a label) asks for ``batched=True``: its statements travel in few round trips while the
lock is held (:meth:`evalcore.store.postgres.PgConnection.batched`), the writer reading rows
as late as it can; SQLite runs the same statements as written.
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
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; any exception rolls everything back. Nested use
    joins the outer transaction through a savepoint; ``batched``: see the module docstring."""
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
    """``BEGIN IMMEDIATE`` (see the module docstring; the last busy error is raised). On
    PostgreSQL: ``BEGIN`` and the advisory write lock."""
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
    """``BEGIN`` ... ``COMMIT`` (outside any transaction): one consistent read view for
    several reads. A write inside is refused: made from an older view it could undo another
    writer's work, and the engines would not agree on when."""
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
    """Run ``write`` (a whole write transaction, rolled back when it fails: a retry never
    writes twice); on a busy store try again ``attempts - 1`` times, waiting ``backoff_s``,
    then twice that, ... The last busy error is raised (the caller keeps what was typed)."""
    for attempt in range(attempts):
        try:
            return write()
        except dialect.operational_errors() as error:
            if not is_busy(error) or attempt == attempts - 1:
                raise
            time.sleep(backoff_s * (2 ** attempt))
    raise AssertionError("unreachable")
