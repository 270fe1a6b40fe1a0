"""Which store this is: a key for caches of data derived from the store's content.

A store holds one random id (``store_identity``, written with its schema; a copy has the
same id), to which the identity adds where it is kept (:func:`store_place`): a file's path
and inode (a copy elsewhere, or a file restored in place, is another store to a cache), a
PostgreSQL server, database and schema with their object ids (a database copied or made
again under the same name is another store). A store in memory is its id alone."""

import os
from pathlib import Path

import sqlite_utils

from evalcore.store import dialect


def store_file(db: sqlite_utils.Database) -> Path | None:
    """The file of the store's main database, or None for an in-memory or PostgreSQL store."""
    path = dialect.main_file(db)
    return Path(path) if path else None


def store_location(db: sqlite_utils.Database) -> str:
    """Where to open the store again (another connection to it): its PostgreSQL URL, or
    its file's path; "" for a store in memory."""
    if dialect.is_postgres(db):
        return str(db.url)  # type: ignore[attr-defined]
    path = store_file(db)
    return str(path) if path else ""


def store_identity(db: sqlite_utils.Database) -> str:
    """The store's id, with its file's path and inode when it has a file."""
    row = None
    if dialect.has_table(db, "store_identity"):  # not in an older store opened without migrating
        row = db.execute("SELECT store_id FROM store_identity").fetchone()
    if row is None:
        raise LookupError("the store has no identity (its schema is older than this "
                          "evalcore's): open it with open_store, which migrates it")
    place = store_place(db)
    return str(row[0]) if place is None else f"{row[0]}:{place}"


def store_place(db: sqlite_utils.Database) -> str | None:
    """Where the store is kept, as a key for caches shared by every connection to it: the
    file's resolved path and inode, or on PostgreSQL the server, database and schema with
    the database's and schema's object ids (no password); None for a store in memory."""
    server = dialect.server_place(db)
    if server:
        return server
    path = store_file(db)
    if path is None:
        return None
    try:
        inode = os.stat(path).st_ino
    except OSError:
        inode = 0
    return f"{path.resolve()}:{inode}"
