"""A re-imported document's old text: invisible once the import publishes, then deleted.

An import stages each replaced document's new text as a second row and marks the old row
``superseded_by`` it (:meth:`evalcore.store.staged_documents.StagedDocuments.write_staged`);
publishing switches them all at once. :func:`remove_superseded` then deletes the invisible
superseded rows in paced short transactions, and the import's ``:replacements`` marker: no
reader sees a change and the corpus generation does not move, so a pin taken just after
publishing stays valid without a scan. The next ``open_store`` settles an import whose
process died (:func:`settle_abandoned_imports`): discarded unless it had published."""

from collections.abc import Callable

import sqlite_utils

from evalcore.store.document_imports import REPLACEMENTS, discard_import, replacements_id
from evalcore.store.staged_documents import FIRST_CHUNK
from evalcore.store.staging import Pacer, alive, bulk_writes, repeat_in_chunks
from evalcore.store.transaction import write_transaction


def remove_superseded(db: sqlite_utils.Database, import_id: str,
                      on_chunk: Callable[[int, float], None] | None = None) -> int:
    """Delete the rows the published import superseded (already invisible), a paced chunk
    per short transaction, then its ``:replacements`` marker; return how many.
    ``on_chunk(rows, held_s)`` is told of each chunk (tests, benchmarks)."""
    with bulk_writes(db):  # safe: a lost chunk's rows are still there to delete again
        removed = repeat_in_chunks(
            db, "DELETE FROM documents WHERE rowid IN (SELECT rowid FROM documents "
            "WHERE superseded_by = ? LIMIT ?)", [import_id], Pacer(FIRST_CHUNK), on_chunk)
    with write_transaction(db):
        db.execute("DELETE FROM pending_imports WHERE import_id = ?", [replacements_id(import_id)])
    return removed


def settle_abandoned_imports(db: sqlite_utils.Database) -> int:
    """Settle the pending document imports whose importing process is gone (discard the
    unpublished, finish deleting the published one's superseded rows); return how many."""
    pending = {i: owner for i, owner in db.execute(
        "SELECT import_id, staged_by FROM pending_imports").fetchall()}
    settled = 0
    for pending_id, owner in pending.items():
        if alive(owner):
            continue
        settled += 1
        if not pending_id.endswith(REPLACEMENTS):
            discard_import(db, pending_id)
            continue
        import_id = pending_id.removesuffix(REPLACEMENTS)
        if import_id not in pending:  # it had published: finish it
            remove_superseded(db, import_id)
        else:
            discard_import(db, import_id)
    return settled
