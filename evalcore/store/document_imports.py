"""Staged document imports: a large corpus written in short transactions, visible all at once.

A BEIR import registers itself in ``pending_imports`` (``import_id``, the
corpus, ``staged_by`` = ``"host:pid"`` of the importing process), writes its new
documents in paced chunks (:class:`evalcore.store.staging.Pacer`, each chunk its
own short write transaction) with ``documents.import_id`` set, and publishes
them by deleting its ``pending_imports`` row inside its final transaction: one
small statement, whatever the corpus size. A document row whose ``import_id`` is
pending is invisible to every read (:func:`published`: every read of
``documents`` in ``evalcore.store`` filters on it, and so does
:class:`evalcore.store.visibility.Visibility`, which search, pins and the lexical
workflow use). After publishing, the rows keep their ``import_id``: an id that is
not pending means nothing, and ids are random, never reused.

Why a pending table rather than a flag on each row: clearing a flag on 1.7M rows
is itself a long write; deleting one row of ``pending_imports`` is not.

A document the import *replaces* (same id, other content) cannot be staged
beside the visible one (``documents`` is keyed by corpus and id), so its new
text is kept in the import's scratch file and written by the final transaction,
with the publishing statement: that transaction's hold grows with the number of
replaced documents (none when a corpus is imported for the first time).

A failed import discards its rows (chunked deletes, then the pending row); a
process that died mid-import leaves them, invisible, and the next
:func:`evalcore.store.connection.open_store` (:func:`discard_abandoned_imports`)
removes those of dead processes on this host. A plain document write
(:func:`evalcore.store.corpus.upsert_document_rows`) of a staged id clears its
``import_id``: the row is then that writer's, visible, and no discard removes it.
"""

from __future__ import annotations

import uuid

import sqlite_utils

from evalcore.io.clock import utc_now_iso
from evalcore.store.staging import delete_in_chunks, discard_abandoned, staging_owner
from evalcore.store.transaction import write_transaction


def published(alias: str = "") -> str:
    """SQL condition: the ``documents`` row (aliased ``alias``) is not part of a pending import."""
    column = f"{alias}.import_id" if alias else "import_id"
    return f"({column} IS NULL OR {column} NOT IN (SELECT import_id FROM pending_imports))"


def begin_import(db: sqlite_utils.Database, corpus_id: str) -> str:
    """Register a pending import of documents into ``corpus_id``; return its id."""
    import_id = uuid.uuid4().hex
    with write_transaction(db):
        db.execute(
            "INSERT INTO pending_imports (import_id, corpus_id, staged_by, started_at) "
            "VALUES (?, ?, ?, ?)",
            [import_id, corpus_id, staging_owner(), utc_now_iso()],
        )
    return import_id


def publish_import(db: sqlite_utils.Database, import_id: str) -> None:
    """Make the import's documents visible (inside the caller's final write transaction)."""
    db.execute("DELETE FROM pending_imports WHERE import_id = ?", [import_id])


def discard_import(db: sqlite_utils.Database, import_id: str) -> None:
    """Delete a pending import's documents, a chunk per short transaction, then its pending row."""
    delete_in_chunks(db, "documents", "rowid", "import_id", import_id)
    with write_transaction(db):
        db.execute("DELETE FROM pending_imports WHERE import_id = ?", [import_id])


def discard_abandoned_imports(db: sqlite_utils.Database) -> int:
    """Discard pending imports whose importing process is gone; return how many."""
    return discard_abandoned(db, "SELECT import_id, staged_by FROM pending_imports",
                             discard_import)
