"""A re-imported document's new text: written over the visible one after the import publishes.

:class:`evalcore.store.staged_documents.StagedDocuments` stages the new text of every
document an import replaces as a row of a hidden corpus
(:func:`evalcore.store.document_imports.replacement_corpus`), pending under
:func:`evalcore.store.document_imports.replacements_id`, in the import's paced chunks.
Once the import has published (one small statement), :func:`apply_replacements`
writes them over the visible documents in paced short transactions
(:class:`evalcore.store.staging.Pacer`), each also deleting the staged rows it
applied, so a chunk is applied exactly once whatever happens; the last one drops
the pending row. No write lock is held longer than a chunk, whatever the number of
documents replaced (before: all of them inside the publishing transaction, 41.8 s
for 200,000 at load 9).

An import whose process died is settled by the next ``open_store``
(:func:`settle_abandoned_imports`): discarded if it had not published, its
replacements applied if it had (a published import is never half-applied for long).
"""

import time
from collections.abc import Callable

import sqlite_utils

from evalcore.store.corpus import upsert_document_rows
from evalcore.store.document_imports import (
    REPLACEMENTS,
    discard_import,
    replacement_corpus,
    replacements_id,
)
from evalcore.store.staging import Pacer, alive, bulk_writes
from evalcore.store.transaction import write_transaction


def apply_replacements(
    db: sqlite_utils.Database, import_id: str, corpus_id: str,
    on_chunk: Callable[[int, float], None] | None = None,
) -> int:
    """Write the published import's staged replacement texts over the corpus's documents
    (each keeps its owner), a paced chunk per short transaction; return how many.
    ``on_chunk(rows, held_s)`` is told of each chunk (tests, benchmarks)."""
    hidden = replacement_corpus(corpus_id, import_id)
    pacer = Pacer()
    applied = 0
    after = ""
    with bulk_writes(db):  # safe: a lost chunk's staged rows are still there to apply again
        while True:
            rows = db.execute(
                "SELECT doc_id, title, text, owner_org, created_at, content_hash FROM documents "
                "WHERE corpus_id = ? AND doc_id > ? ORDER BY doc_id LIMIT ?",
                [hidden, after, pacer.rows]).fetchall()
            if not rows:
                break
            started = time.perf_counter()
            with write_transaction(db):
                upsert_document_rows(db, ((corpus_id, *r) for r in rows), keep_owner=True)
                db.execute("DELETE FROM documents WHERE corpus_id = ? AND doc_id >= ? "
                           "AND doc_id <= ?", [hidden, rows[0][0], rows[-1][0]])
            held = time.perf_counter() - started
            applied += len(rows)
            after = rows[-1][0]
            if on_chunk is not None:
                on_chunk(len(rows), held)
            pacer.after_chunk(db, len(rows), held)
    with write_transaction(db):
        db.execute("DELETE FROM pending_imports WHERE import_id = ?", [replacements_id(import_id)])
    return applied


def settle_abandoned_imports(db: sqlite_utils.Database) -> int:
    """Settle the pending document imports whose importing process is gone (discard the
    unpublished, finish applying the published one's replacements); return how many."""
    pending = {i: (corpus, owner) for i, corpus, owner in db.execute(
        "SELECT import_id, corpus_id, staged_by FROM pending_imports").fetchall()}
    settled = 0
    for pending_id, (corpus_id, owner) in pending.items():
        if alive(owner):
            continue
        settled += 1
        if not pending_id.endswith(REPLACEMENTS):
            discard_import(db, pending_id)
            continue
        import_id = pending_id.removesuffix(REPLACEMENTS)
        if import_id not in pending:  # it had published: finish it
            apply_replacements(db, import_id, corpus_id)
        else:
            discard_import(db, import_id)
    return settled
