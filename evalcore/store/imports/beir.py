"""Import a BEIR folder: documents, queries (with their text) and qrels judgments.

Parsing: :mod:`evalcore.io.beir`. Documents go into the study's corpus (one with other
content is updated: a warning counts them); queries are added with their text; each
``qrels/<split>.tsv`` becomes label events by ``beir:<split>``. A judgment naming a query or
document neither in the folder nor in the store is an error unless ``allow_unknown_ids``;
``complete=True`` declares every judged query complete.

All or nothing in bounded memory: ``corpus.jsonl`` is streamed into a scratch file
(:class:`evalcore.store.staged_documents.StagedDocuments`); every check runs before anything
is written and again in the final transaction, which publishes the documents (written
invisible in paced short transactions) with the queries, events and audit row; replaced
texts are then deleted in paced chunks (:mod:`evalcore.store.document_replacements`).
Called inside a transaction, it cannot attach its scratch file and stays one transaction."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext
from pathlib import Path

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.contract.limits import DEFAULT_LIMITS, ReadLimits
from evalcore.io.beir import BeirFolder, read_beir_folder
from evalcore.io.clock import utc_now_iso
from evalcore.io.errors import InputError, InputErrors
from evalcore.io.progress import reporter
from evalcore.store.authorize import authorize, authorize_corpus_write
from evalcore.store.corpora import corpus_owner
from evalcore.store.document_imports import begin_import, discard_import, publish_import
from evalcore.store.document_replacements import remove_superseded
from evalcore.store.imports.common import (
    ImportSummary,
    NewEvent,
    check_known_ids,
    listed,
    mark_queries_complete,
    write_label_events,
)
from evalcore.store.imports.documents import write_documents
from evalcore.store.staged_documents import StagedDocuments
from evalcore.store.studies import get_study
from evalcore.store.study_handle import open_study
from evalcore.store.transaction import in_transaction, write_transaction


def import_beir(
    db: sqlite_utils.Database,
    folder: str | Path,
    *,
    study_id: str,
    splits: list[str] | None = None,
    gain_map: Mapping[int, int] | None = None,
    allow_unknown_ids: bool = False,
    complete: bool = False,
    actor: str = "import",
    owner_org: str | None = None,
    limits: ReadLimits = DEFAULT_LIMITS,
) -> ImportSummary:
    """Import a BEIR folder into the study (all or nothing; see the module docstring). New
    documents belong to ``owner_org`` (default: the corpus's owner); a stored one keeps its own."""
    study = get_study(db, study_id)
    # a scratch file cannot be attached inside a transaction: then none (staged is None)
    with nullcontext() if in_transaction(db) else StagedDocuments(db) as staged:
        beir = read_beir_folder(folder, gain_map=gain_map, splits=splits, documents=staged,
                                limits=limits)
        if staged is not None:
            staged.finish_reading()
        events = [
            NewEvent(j.query_id, j.doc_id, "label", j.gain, f"beir:{split}")
            for split, judgments in beir.qrels.items()
            for j in judgments
        ]
        summary = ImportSummary(kind="beir", study_id=study_id, source=str(folder),
                                rows=len(events), warnings=list(beir.warnings), notes=beir.notes)
        owner = owner_org if owner_org is not None else corpus_owner(db, study.corpus_id)

        def check(existing_owners: set[str | None] | None) -> None:
            authorize(db, study_id=study_id, actor=actor, permission=Permission.IMPORT)
            if not allow_unknown_ids:
                _check_queries(db, study_id, beir)
            judged = {e.unit_id for e in events}
            check_known_ids(db, study.corpus_id, judged, str(Path(folder) / "qrels"),
                            what="corpus-id", allow_unknown=allow_unknown_ids,
                            also_known=staged.present(judged) if staged else set(beir.documents),
                            arriving_documents=beir.document_count)
            # staged: the owners of the stored documents it replaces; else checked by their ids
            owners = {owner} | (existing_owners or set())
            ids = beir.documents if staged is None else ()
            authorize_corpus_write(db, corpus_id=study.corpus_id, actor=actor, owner_orgs=owners,
                                   doc_ids=ids)

        def append(documents: int, changed: int) -> None:
            """Everything but the documents, inside the final write transaction."""
            summary.count_documents(study.corpus_id, documents, changed)
            db.conn.executemany(
                "INSERT INTO queries (study_id, query_id, text) VALUES (?, ?, ?) "
                "ON CONFLICT (study_id, query_id) DO UPDATE SET text = excluded.text",
                ((study_id, q, t) for q, t in beir.queries.items()),
            )
            summary.queries = len(beir.queries)
            handle = open_study(db, study_id, actor, Permission.IMPORT)
            write_label_events(handle, events, summary)
            if complete:
                summary.completeness_events = mark_queries_complete(
                    db, study_id=study_id, query_ids=(e.query_id for e in events), actor=actor,
                    reason=f"declared complete by import of {folder}",
                )
            summary.audit(db, actor)

        if staged is None:  # inside the caller's transaction: one transaction, as it always was
            with write_transaction(db):
                check(None)
                append(*write_documents(db, study.corpus_id, beir.documents, owner))
            return summary
        check(staged.stored_owner_orgs(study.corpus_id))  # refuse before writing anything
        import_id = begin_import(db, study.corpus_id)
        try:
            progress = reporter()
            progress.stage("writing documents", beir.document_count, "documents")
            new, replaced = staged.write_staged(import_id, study.corpus_id, owner, utc_now_iso(),
                                                on_chunk=lambda rows, _: progress.advance(rows))
            with write_transaction(db):
                check(staged.replaced_owners)
                append(new + replaced, replaced)
                publish_import(db, import_id)
        except BaseException:
            discard_import(db, import_id)
            raise
        if replaced:  # published: the old texts, now invisible, are deleted in paced chunks
            remove_superseded(db, import_id)
        return summary


def _check_queries(db: sqlite_utils.Database, study_id: str, beir: BeirFolder) -> None:
    """Every judged query is in ``queries.jsonl`` or the study (an InputError per split)."""
    known = set(beir.queries) | {r[0] for r in db.execute(
        "SELECT query_id FROM queries WHERE study_id = ?", [study_id])}
    errors: list[InputError] = []
    for split, judgments in beir.qrels.items():
        unknown = list(dict.fromkeys(j.query_id for j in judgments if j.query_id not in known))
        if unknown:
            errors.append(InputError(
                file=beir.qrels_files[split], field="query-id",
                message=f"{len(unknown)} query id(s) not in queries.jsonl: {listed(unknown)}",
                hint="add the queries, or pass --allow-unknown-ids"))
    if errors:
        raise InputErrors(errors)

