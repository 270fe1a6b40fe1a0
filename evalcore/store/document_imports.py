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

A document the import *replaces* (same id, other content) gets a second row: the new
text is staged as a row of the corpus with the import's ``import_id`` (invisible while
pending), and the old row is marked ``superseded_by`` the import (visible while the import
is pending, invisible once it is not). Deleting the pending row therefore switches every
replaced document at once, in the same small statement that shows the new ones: a reader
sees all the old texts or all the new ones, never a mix (:func:`published` is the one rule
every read uses). The key is ``(corpus_id, doc_id, superseded_by)``, ``''`` for a current
row. After publishing, the superseded rows, invisible, are deleted in paced
chunks under the import's ``:replacements`` marker (:func:`replacements_id`, pending until
they are gone; :mod:`evalcore.store.document_replacements`); neither moves the corpus
generation. Two imports may not replace the same document at once (the second is refused).

A failed import discards its rows (chunked deletes of its rows, then its superseded rows
made current again, then the pending rows); a
process that died mid-import leaves them, invisible, and the next
:func:`evalcore.store.connection.open_store`
(:func:`evalcore.store.document_replacements.settle_abandoned_imports`) removes
those of dead processes on this host, or, when the import had published,
finishes deleting its superseded rows. A plain document write
(:func:`evalcore.store.corpus.upsert_document_rows`) of a staged id clears its
``import_id`` and deletes the superseded row: the row is then that writer's, visible, and no
discard removes it.
"""

from __future__ import annotations

import uuid

import sqlite_utils

from evalcore.io.clock import utc_now_iso
from evalcore.store.staging import DISCARD_CHUNK, delete_in_chunks, staging_owner
from evalcore.store.transaction import write_transaction


def published(alias: str = "") -> str:
    """SQL condition: the ``documents`` row (aliased ``alias``) is what readers see: not part
    of a pending import, and not superseded by a published one. The one place that says
    which text of a document is current."""
    at = f"{alias}." if alias else ""
    return (f"(({at}import_id IS NULL OR {at}import_id NOT IN (SELECT import_id FROM "
            f"pending_imports)) AND ({at}superseded_by = '' OR {at}superseded_by IN "
            "(SELECT import_id FROM pending_imports)))")


def current(alias: str = "") -> str:
    """SQL condition: the row is a document's current row (the one a plain write updates;
    visible or pending), not a superseded one."""
    return f"{alias}.superseded_by = ''" if alias else "superseded_by = ''"


#: The end of the pending id of an import's staged replacements.
REPLACEMENTS = ":replacements"


def replacements_id(import_id: str) -> str:
    """The pending id of the import's staged replacement texts (pending until applied)."""
    return import_id + REPLACEMENTS


def begin_import(db: sqlite_utils.Database, corpus_id: str) -> str:
    """Register a pending import of documents into ``corpus_id``; return its id."""
    import_id = uuid.uuid4().hex
    _register(db, import_id, corpus_id)
    return import_id


def begin_replacements(db: sqlite_utils.Database, import_id: str, corpus_id: str) -> None:
    """Register the import's ``:replacements`` marker (once; inside its first chunk that
    supersedes a document): who must delete the superseded rows once it publishes."""
    _register(db, replacements_id(import_id), corpus_id)


def _register(db: sqlite_utils.Database, pending_id: str, corpus_id: str) -> None:
    with write_transaction(db):
        db.execute(
            "INSERT INTO pending_imports (import_id, corpus_id, staged_by, started_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [pending_id, corpus_id, staging_owner(), utc_now_iso()],
        )


def publish_import(db: sqlite_utils.Database, import_id: str) -> None:
    """Make the import's documents visible and the ones they replace invisible, all at once
    (inside the caller's final write transaction); the superseded rows stay until deleted."""
    db.execute("DELETE FROM pending_imports WHERE import_id = ?", [import_id])


def discard_import(db: sqlite_utils.Database, import_id: str) -> None:
    """Delete a pending import's documents, make the rows it superseded current again, a
    chunk per short transaction, then drop its pending rows."""
    delete_in_chunks(db, "documents", "rowid", "import_id", import_id)
    while True:  # its new rows are gone: the old ones take their key back
        with write_transaction(db):
            restored = db.execute(
                "UPDATE documents SET superseded_by = '' WHERE rowid IN (SELECT rowid FROM "
                f"documents WHERE superseded_by = ? LIMIT {DISCARD_CHUNK})", [import_id],
            ).rowcount
        if restored < DISCARD_CHUNK:
            break
    with write_transaction(db):
        db.conn.executemany("DELETE FROM pending_imports WHERE import_id = ?",
                            [(import_id,), (replacements_id(import_id),)])
