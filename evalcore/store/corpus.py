"""The corpus: documents with their owner organisation, creation time and content hash."""

from collections.abc import Iterable
from datetime import datetime
from typing import Annotated

import sqlite_utils
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from evalcore.contract.frozen import FrozenModel
from evalcore.contract.limits import MAX_ID_CHARS
from evalcore.io.clock import to_iso
from evalcore.store.authorize import authorize_corpus_write
from evalcore.store.corpora import corpus_owner, register_corpus
from evalcore.store.dialect import in_chunks
from evalcore.store.document_imports import published
from evalcore.store.hashing import content_hash
from evalcore.store.lookup import models
from evalcore.store.transaction import write_transaction


class DocumentIn(BaseModel):
    """A document as it enters the store."""

    model_config = ConfigDict(extra="forbid")

    doc_id: Annotated[StrictStr, Field(min_length=1, max_length=MAX_ID_CHARS)]
    title: StrictStr = ""
    text: StrictStr = ""
    owner_org: StrictStr | None = None
    created_at: datetime


class Document(FrozenModel):
    """A stored document."""

    corpus_id: str
    doc_id: str
    title: str
    text: str
    owner_org: str | None
    created_at: str
    content_hash: str


_COLUMNS = "corpus_id, doc_id, title, text, owner_org, created_at, content_hash"


def add_documents(
    db: sqlite_utils.Database,
    corpus_id: str,
    documents: Iterable[DocumentIn],
    *,
    actor: str | None = None,
) -> int:
    """Insert or replace documents (all or nothing); return how many were written. A changed
    document gets a new content hash (a pinned fingerprint then refuses to run on it). Once a
    study over the corpus is in team mode ``actor`` must be allowed to write it
    (:func:`evalcore.store.authorize.authorize_corpus_write`). A document without ``owner_org``
    belongs to the corpus's owner (an explicit None keeps it unowned)."""
    docs = list(documents)
    with write_transaction(db):
        register_corpus(db, corpus_id, owner_org=None, actor=actor)
        default_owner = corpus_owner(db, corpus_id)
        rows = [
            (
                corpus_id,
                d.doc_id,
                d.title,
                d.text,
                d.owner_org if "owner_org" in d.model_fields_set else default_owner,
                to_iso(d.created_at),
                content_hash(d.title, d.text),
            )
            for d in docs
        ]
        authorize_corpus_write(db, corpus_id=corpus_id, actor=actor,
                               owner_orgs={row[4] for row in rows},
                               doc_ids=[row[1] for row in rows])
        upsert_document_rows(db, rows, keep_owner=False)
    return len(rows)


def upsert_document_rows(
    db: sqlite_utils.Database, rows: Iterable[tuple], *, keep_owner: bool,
    import_id: str | None = None,
) -> None:
    """Insert or update document rows ``(corpus_id, doc_id, title, text, owner_org, created_at,
    content_hash)`` inside the caller's write transaction (the one place documents are
    written). ``keep_owner``: an existing document keeps its owner. A new document gets
    ``import_id`` (pending until published, :mod:`evalcore.store.document_imports`); an updated
    one becomes visible, the row a pending import's text of it superseded deleted."""
    owner = "" if keep_owner else "owner_org = excluded.owner_org, "
    rows = list(rows)
    db.conn.executemany(
        f"INSERT INTO documents ({_COLUMNS}, import_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (corpus_id, doc_id, superseded_by) DO UPDATE SET title = excluded.title, "
        f"text = excluded.text, {owner}"
        "created_at = excluded.created_at, content_hash = excluded.content_hash, "
        "import_id = NULL",
        ((*row, import_id) for row in rows),
    )
    if db.execute("SELECT 1 FROM documents WHERE superseded_by <> '' LIMIT 1").fetchone():
        db.conn.executemany(
            "DELETE FROM documents WHERE corpus_id = ? AND doc_id = ? AND superseded_by <> ''",
            ((row[0], row[1]) for row in rows),
        )


def get_document(db: sqlite_utils.Database, corpus_id: str, doc_id: str) -> Document | None:
    return get_documents(db, corpus_id, [doc_id]).get(doc_id)


def get_documents(
    db: sqlite_utils.Database, corpus_id: str, doc_ids: Iterable[str]
) -> dict[str, Document]:
    """The stored documents among ``doc_ids`` (missing ids are simply absent)."""
    found: dict[str, Document] = {}
    for marks, chunk in in_chunks(doc_ids):
        rows = db.execute(f"SELECT {_COLUMNS} FROM documents WHERE corpus_id = ? AND doc_id "
                          f"IN ({marks}) AND {published()}", [corpus_id, *chunk])
        found.update((doc.doc_id, doc) for doc in models(Document, rows))
    return found


def count_documents(db: sqlite_utils.Database, corpus_id: str) -> int:
    return int(
        db.execute(f"SELECT count(*) FROM documents WHERE corpus_id = ? AND {published()}",
                   [corpus_id]).fetchone()[0]
    )
