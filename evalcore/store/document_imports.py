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
beside the visible one (``documents`` is keyed by corpus and id). Its new text
is staged, in the same paced chunks, as a row of a hidden corpus
(:func:`replacement_corpus`) under a second pending id (:func:`replacements_id`),
and written over the visible row *after* publishing, again in paced chunks
(:mod:`evalcore.store.document_replacements`): the publishing transaction stays
one small statement whatever the number replaced. Until the last chunk is
applied a reader may find some replaced documents with their new text and others
with their old one (each document is either, never half); a truly atomic switch
needs a key that admits two versions of a document (a schema change).

A failed import discards its rows (chunked deletes, then the pending rows); a
process that died mid-import leaves them, invisible, and the next
:func:`evalcore.store.connection.open_store`
(:func:`evalcore.store.document_replacements.settle_abandoned_imports`) removes
those of dead processes on this host, or, when the import had published,
finishes applying its replacements. A plain document write
(:func:`evalcore.store.corpus.upsert_document_rows`) of a staged id clears its
``import_id``: the row is then that writer's, visible, and no discard removes it.
"""

from __future__ import annotations

import uuid

import sqlite_utils

from evalcore.io.clock import utc_now_iso
from evalcore.store.staging import delete_in_chunks, staging_owner
from evalcore.store.transaction import write_transaction


def published(alias: str = "") -> str:
    """SQL condition: the ``documents`` row (aliased ``alias``) is not part of a pending import."""
    column = f"{alias}.import_id" if alias else "import_id"
    return f"({column} IS NULL OR {column} NOT IN (SELECT import_id FROM pending_imports))"


#: The end of the pending id of an import's staged replacements.
REPLACEMENTS = ":replacements"


def replacements_id(import_id: str) -> str:
    """The pending id of the import's staged replacement texts (pending until applied)."""
    return import_id + REPLACEMENTS


def replacement_corpus(corpus_id: str, import_id: str) -> str:
    """The hidden corpus id the import's replacement texts are staged under."""
    return f"{corpus_id}\x00{import_id}"


def begin_import(db: sqlite_utils.Database, corpus_id: str) -> str:
    """Register a pending import of documents into ``corpus_id``; return its id."""
    import_id = uuid.uuid4().hex
    _register(db, import_id, corpus_id)
    return import_id


def begin_replacements(db: sqlite_utils.Database, import_id: str, corpus_id: str) -> None:
    """Register the import's replacements as pending (once; inside its first chunk that stages
    one)."""
    _register(db, replacements_id(import_id), corpus_id)


def _register(db: sqlite_utils.Database, pending_id: str, corpus_id: str) -> None:
    with write_transaction(db):
        db.execute(
            "INSERT OR IGNORE INTO pending_imports (import_id, corpus_id, staged_by, started_at) "
            "VALUES (?, ?, ?, ?)",
            [pending_id, corpus_id, staging_owner(), utc_now_iso()],
        )


def publish_import(db: sqlite_utils.Database, import_id: str) -> None:
    """Make the import's documents visible (inside the caller's final write transaction); its
    replacements, if it staged any, stay pending until applied."""
    db.execute("DELETE FROM pending_imports WHERE import_id = ?", [import_id])


def discard_import(db: sqlite_utils.Database, import_id: str) -> None:
    """Delete a pending import's documents and staged replacements, a chunk per short
    transaction, then its pending rows."""
    for pending in (import_id, replacements_id(import_id)):
        delete_in_chunks(db, "documents", "rowid", "import_id", pending)
    with write_transaction(db):
        db.conn.executemany("DELETE FROM pending_imports WHERE import_id = ?",
                            [(import_id,), (replacements_id(import_id),)])
