"""Import documents (JSONL, TSV, CSV, TREC ``<DOC>`` files) into a study's corpus.

Parsing: :mod:`evalcore.io.documents`. The whole input is validated first; then, in one
transaction, the documents are upserted (``created_at`` = import time; one with other
content is updated, changing its content hash: a warning counts them; the same content is
left alone). New documents belong to ``owner_org``, so a pinned protocol naming that
organisation can see them. One audit entry (``import.documents``)."""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.contract.limits import DEFAULT_LIMITS, ReadLimits
from evalcore.io.clock import utc_now_iso
from evalcore.io.documents import DocumentFields, parse_documents, read_documents
from evalcore.io.progress import reporter
from evalcore.io.records import AUTO, Layout
from evalcore.io.text_lines import SourceText
from evalcore.io.trec_docs import DocumentSet
from evalcore.store.authorize import authorize, authorize_corpus_write
from evalcore.store.corpora import corpus_owner, register_corpus
from evalcore.store.corpus import upsert_document_rows
from evalcore.store.document_imports import current
from evalcore.store.hashing import content_hash
from evalcore.store.imports.common import ImportSummary
from evalcore.store.studies import get_study
from evalcore.store.transaction import write_transaction


def import_documents(
    db: sqlite_utils.Database,
    source: str | PathLike[str] | SourceText | DocumentSet,
    *,
    study_id: str,
    fmt: str = "auto",
    fields: DocumentFields | None = None,
    owner_org: str | None = None,
    actor: str = "import",
    layout: Layout = AUTO,
    limits: ReadLimits = DEFAULT_LIMITS,
) -> ImportSummary:
    """Import a document file or folder into the study's corpus (all or nothing).

    ``source`` is a path (a TREC folder too), decoded text (then ``fmt`` must
    be given, not ``auto``) or documents already read (an upload,
    :func:`evalcore.io.documents.documents_from_bytes`).
    """
    study = get_study(db, study_id)
    if isinstance(source, DocumentSet):
        parsed = source
    elif isinstance(source, SourceText):
        parsed = parse_documents(source, fmt, fields, layout=layout, limits=limits)
    else:
        parsed = read_documents(source, fmt, fields, layout=layout, limits=limits)  # type: ignore[arg-type]
    summary = ImportSummary(kind="documents", study_id=study_id, source=parsed.name,
                            warnings=list(parsed.warnings), notes=list(parsed.notes))
    with write_transaction(db):
        authorize(db, study_id=study_id, actor=actor, permission=Permission.IMPORT)
        register_corpus(db, study.corpus_id, owner_org=None, actor=actor)
        if owner_org is None:  # new documents belong to the corpus's owner (docs/access-model.md)
            owner_org = corpus_owner(db, study.corpus_id)
        authorize_corpus_write(db, corpus_id=study.corpus_id, actor=actor,
                               owner_orgs={owner_org}, doc_ids=parsed.documents)
        reporter().stage(f"writing {len(parsed.documents):,} documents")
        summary.count_documents(study.corpus_id, *write_documents(
            db, study.corpus_id, parsed.documents, owner_org))
        summary.rows = len(parsed.documents)
        summary.audit(db, actor, owner_org=owner_org)
    return summary


def write_documents(db: sqlite_utils.Database, corpus_id: str,
                    documents: Mapping[str, tuple[str, str]], owner_org: str | None
                    ) -> tuple[int, int]:
    """Upsert the documents (doc id -> title, text) but those stored with the same content;
    return (written, existing ones whose content changed). A new document belongs to
    ``owner_org``; an existing one keeps its owner."""
    now = utc_now_iso()
    rows = [(corpus_id, d, t, x, owner_org, now, content_hash(t, x))
            for d, (t, x) in documents.items()]
    existing = dict(db.execute(
        f"SELECT doc_id, content_hash FROM documents WHERE corpus_id = ? AND {current()}",
        [corpus_id]).fetchall()) if rows else {}
    written = [r for r in rows if existing.get(r[1]) != r[6]]
    upsert_document_rows(db, written, keep_owner=True)
    return len(written), sum(1 for r in written if r[1] in existing)
