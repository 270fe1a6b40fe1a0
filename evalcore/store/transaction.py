"""Writing to the store safely: every write runs inside ``BEGIN IMMEDIATE``.

Two writers queue instead of failing half-way. ``db.atomic()`` nests a
savepoint inside it: sqlite-utils write methods that fail roll back with it.
"""

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import sqlite_utils


@contextmanager
def write_transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; any exception rolls everything back.

    Nested use joins the outer transaction through a savepoint.
    """
    if db.conn.in_transaction:
        with db.atomic():
            yield db
        return
    db.conn.execute("BEGIN IMMEDIATE")
    try:
        with db.atomic():
            yield db
    except BaseException:
        if db.conn.in_transaction:
            db.conn.execute("ROLLBACK")
        raise
    else:
        db.conn.execute("COMMIT")


def in_transaction(db: sqlite_utils.Database) -> bool:
    """Is a transaction open on the connection?"""
    return db.conn.in_transaction


@contextmanager
def read_snapshot(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """``BEGIN`` ... ``COMMIT``: one consistent read view for several reads (writes nothing).

    Call it outside any transaction; it ends (``COMMIT``) whatever happens inside.
    """
    db.conn.execute("BEGIN")
    try:
        yield db
    finally:
        db.conn.execute("COMMIT")


T = TypeVar("T")


def is_busy(error: BaseException) -> bool:
    """Is ``error`` SQLite's "database is locked / busy" (another writer held the lock too long)?"""
    return isinstance(error, sqlite3.OperationalError) and (
        "locked" in str(error) or "busy" in str(error)
    )


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
        except sqlite3.OperationalError as error:
            if not is_busy(error) or attempt == attempts - 1:
                raise
            time.sleep(backoff_s * (2 ** attempt))
    raise AssertionError("unreachable")
