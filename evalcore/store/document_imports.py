"""Staged document imports: a large corpus written in short transactions, visible all at once.

An import registers in ``pending_imports`` and writes its documents in paced chunks with
``import_id`` set; a pending import's rows are invisible to every read (:func:`published`,
the one rule every read of ``documents`` uses). Publishing deletes the pending row: one
small statement whatever the corpus size. Ids are random, never reused.

A document the import *replaces* gets a second row (the new text under the import's id, the
old row marked ``superseded_by`` it; key ``(corpus_id, doc_id, superseded_by)``, ``''`` for a
current row), so a reader sees all old texts or all new ones, never a mix; after publishing,
the superseded rows are deleted (:mod:`evalcore.store.document_replacements`). Two imports
may not replace the same document at once. A failed import discards its rows, a dead
process's are settled by the next ``open_store``; a plain write of a staged id
(:func:`evalcore.store.corpus.upsert_document_rows`) makes the row that writer's."""

from __future__ import annotations

import uuid

import sqlite_utils

from evalcore.io.clock import utc_now_iso
from evalcore.store.staging import delete_in_chunks, repeat_in_chunks, staging_owner
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
    # its new rows are gone: the old ones take their key back
    repeat_in_chunks(db, "UPDATE documents SET superseded_by = '' WHERE rowid IN (SELECT rowid "
                         "FROM documents WHERE superseded_by = ? LIMIT ?)", [import_id])
    with write_transaction(db):
        db.conn.executemany("DELETE FROM pending_imports WHERE import_id = ?",
                            [(import_id,), (replacements_id(import_id),)])
