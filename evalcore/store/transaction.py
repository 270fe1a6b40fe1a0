"""Writing to the store safely: every write runs inside ``BEGIN IMMEDIATE``.

Two writers queue instead of failing half-way. ``db.atomic()`` nests a
savepoint inside it: sqlite-utils write methods that fail roll back with it.
"""

from collections.abc import Iterator
from contextlib import contextmanager

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
