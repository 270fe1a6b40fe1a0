"""Documents of an import held in a scratch SQLite file until the import writes them.

:class:`StagedDocuments` is the :class:`evalcore.io.beir.DocumentSink` a BEIR import streams
``corpus.jsonl`` into, so memory stays bounded however large the corpus: a scratch file (a
private temporary folder, no journal, no fsync) attached to the import's connection and
deleted on exit, whose primary key is the duplicate ``_id`` check. :meth:`write_staged`
writes the documents, invisible, in paced short transactions
(:mod:`evalcore.store.document_imports`)."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import TracebackType

import sqlite_utils

from evalcore.io.errors import InputErrors
from evalcore.store import dialect
from evalcore.store.document_imports import begin_replacements, current, published
from evalcore.store.hashing import content_hash
from evalcore.store.staging import Pacer, bulk_writes, paced_writes

#: Documents per scratch transaction and per batch read back when writing.
BATCH = 2_000
#: The first chunk written (the pacer then sizes them by their hold): smaller than
#: :data:`BATCH`, as a replaced document costs two row writes.
FIRST_CHUNK = 500
_SCHEMA = "staged_import"


class StagedDocuments:
    """A scratch table of documents (``with StagedDocuments(db) as staged: ...``)."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self._db = db
        self._folder: Path | None = None
        self._pending = 0
        #: The owners of the stored documents :meth:`write_staged` staged a replacement for.
        self.replaced_owners: set[str | None] = set()

    def __enter__(self) -> StagedDocuments:
        self._folder = Path(tempfile.mkdtemp(prefix="relevance-ledger-staged-"))
        conn = self._db.conn
        dialect.attach_scratch(conn, _SCHEMA, str(self._folder / "documents.sqlite"))
        conn.execute(
            f"CREATE TABLE {_SCHEMA}.documents (doc_id TEXT PRIMARY KEY, line INTEGER NOT NULL, "
            "title TEXT NOT NULL, text TEXT NOT NULL, content_hash TEXT NOT NULL)"
        )
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        conn = self._db.conn
        try:
            if self._pending and conn.in_transaction:
                conn.execute("COMMIT")
            dialect.detach_scratch(conn, _SCHEMA, ["documents"])
        finally:
            if self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)

    def add(self, line: int, doc_id: str, title: str, text: str) -> int:
        """Keep the document unless its id is already kept; return the line it was first on."""
        conn = self._db.conn
        if not self._pending:
            conn.execute("BEGIN")  # touches only the scratch file: no lock on the store
        cursor = conn.execute(
            f"INSERT INTO {_SCHEMA}.documents VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [doc_id, line, title, text, content_hash(title, text)],
        )
        self._pending += 1
        first = line
        if cursor.rowcount == 0:
            first = conn.execute(f"SELECT line FROM {_SCHEMA}.documents WHERE doc_id = ?",
                                 [doc_id]).fetchone()[0]
        if self._pending >= BATCH:
            self.finish_reading()
        return first

    def finish_reading(self) -> None:
        """Commit what was added (call before the import's write transaction)."""
        if self._pending:
            self._db.conn.execute("COMMIT")
            self._pending = 0

    def count(self) -> int:
        return int(self._db.execute(f"SELECT count(*) FROM {_SCHEMA}.documents").fetchone()[0])

    def present(self, doc_ids: Iterable[str]) -> set[str]:
        """The ids among ``doc_ids`` that are staged."""
        found: set[str] = set()
        for marks, chunk in dialect.in_chunks(doc_ids, 900):
            found.update(r[0] for r in self._db.execute(
                f"SELECT doc_id FROM {_SCHEMA}.documents WHERE doc_id IN ({marks})", chunk))
        return found

    def stored_owner_orgs(self, corpus_id: str) -> set[str | None]:
        """The owners of the stored documents of the corpus that these documents would update."""
        return {r[0] for r in self._db.execute(
            f"SELECT DISTINCT d.owner_org FROM {_SCHEMA}.documents s JOIN main.documents d "
            f"ON d.corpus_id = ? AND d.doc_id = s.doc_id AND {published('d')}", [corpus_id])}

    def write_staged(
        self, import_id: str, corpus_id: str, owner_org: str | None, created_at: str,
        on_chunk: Callable[[int, float], None] | None = None,
    ) -> tuple[int, int]:
        """Write the documents in paced short transactions (:class:`evalcore.store.staging.Pacer`),
        invisible until the import publishes: new ones inserted, the new text of those stored with
        other content staged as a second row (keeping the stored owner, the stored row marked
        ``superseded_by`` the import), the same content left alone; return (new, replacing). A
        document another pending import is writing is refused (InputErrors). The replaced
        documents' owners are kept in :attr:`replaced_owners` for the publishing transaction's
        check; ``on_chunk(rows, held_s)`` is told of each chunk."""
        conn = self._db.conn
        pacer = Pacer(FIRST_CHUNK)
        written = replaced = 0

        def chunks() -> Iterator[list[tuple]]:  # read before the write lock is taken
            after = 0
            while chunk := conn.execute(
                    f"SELECT rowid, doc_id, title, text, content_hash FROM {_SCHEMA}.documents "
                    "WHERE rowid > ? ORDER BY rowid LIMIT ?", [after, pacer.rows]).fetchall():
                yield chunk
                after = chunk[-1][0]

        def write(chunk: list[tuple]) -> None:
            nonlocal written, replaced
            stored = {r[0]: (r[1], r[2], r[3]) for r in conn.execute(
                "SELECT doc_id, content_hash, owner_org, import_id IS NOT NULL AND "
                "import_id IN (SELECT import_id FROM main.pending_imports) "
                f"FROM main.documents WHERE corpus_id = ? AND {current()} "
                "AND doc_id IN (SELECT value FROM json_each(?))",
                [corpus_id, json.dumps([r[1] for r in chunk])])}
            fresh = [(corpus_id, d, title, text, owner_org, created_at, digest, import_id)
                     for _, d, title, text, digest in chunk if d not in stored]
            changed = [(corpus_id, d, title, text, stored[d][1], created_at, digest, import_id)
                       for _, d, title, text, digest in chunk
                       if d in stored and stored[d][0] != digest]
            _refuse_pending_elsewhere(corpus_id, [r[1] for r in changed if stored[r[1]][2]])
            if changed and not replaced:
                begin_replacements(self._db, import_id, corpus_id)
            conn.executemany("UPDATE main.documents SET superseded_by = ? WHERE corpus_id = ? "
                             f"AND doc_id = ? AND {current()}",
                             [(import_id, corpus_id, r[1]) for r in changed])
            conn.executemany(
                "INSERT INTO main.documents (corpus_id, doc_id, title, text, owner_org, "
                "created_at, content_hash, import_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                fresh + changed)
            written += len(fresh)
            replaced += len(changed)
            self.replaced_owners.update(r[4] for r in changed)

        with bulk_writes(self._db):
            paced_writes(self._db, pacer, chunks(), write, on_chunk)
        return written, replaced


def _refuse_pending_elsewhere(corpus_id: str, doc_ids: list[str]) -> None:
    """Two imports may not replace the same document at once (each would hide the other's)."""
    if doc_ids:
        raise InputErrors.one("corpus.jsonl", f"{len(doc_ids)} document(s) of corpus "
                              f"{corpus_id!r} are being written by another import still in "
                              f"progress (first: {doc_ids[:5]})",
                              "import again once the other import has finished", field="_id")
