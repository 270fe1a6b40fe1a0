"""Import judgments from Quepid, RRE or Elasticsearch ``_rank_eval`` as label events.

Parsing: :mod:`evalcore.io.tool_labels`. Each rating becomes one ``label``
event by the annotator ``<format>:<file name>`` (or the one given). Quepid
names a query by its text: a stored query with exactly that text is that
query (two stored queries with the text are an error); otherwise the text
is the query id. A new query is registered with its text. Document ids
unknown to a non-empty corpus are refused unless ``allow_unknown_ids``; the
auto-reopen rule applies. All or nothing; one audit entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from pathlib import Path

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.io.errors import InputErrors
from evalcore.io.text_lines import SourceText
from evalcore.io.tool_labels import ToolFormat, ToolRating, parse_tool_labels
from evalcore.store.imports import common
from evalcore.store.query_reads import query_texts
from evalcore.store.studies import get_study
from evalcore.store.study_handle import Study, open_study
from evalcore.store.transaction import write_transaction


def import_tool_labels(
    db: sqlite_utils.Database,
    source: str | PathLike[str] | SourceText,
    *,
    study_id: str,
    fmt: ToolFormat,
    annotator: str | None = None,
    gain_map: Mapping[int, int] | None = None,
    allow_unknown_ids: bool = False,
    actor: str = "import",
) -> common.ImportSummary:
    """Import another tool's judgments into the study (all or nothing)."""
    study = get_study(db, study_id)
    text = common.load_source(source)
    parsed = parse_tool_labels(text, fmt, gain_map)
    common.refuse_long_ids((r.doc_id for r in parsed.ratings), text, "document")
    who = annotator or f"{fmt}:{Path(text.name).name}"
    summary = common.ImportSummary(kind=f"labels-{fmt}", study_id=study_id, source=text.name,
                            rows=len(parsed.ratings), warnings=list(parsed.warnings),
                            notes=list(parsed.notes))
    with write_transaction(db):
        handle = open_study(db, study_id, actor, Permission.IMPORT)
        ids = _query_ids(handle, parsed.ratings, fmt, text.name)
        events = [common.NewEvent(ids[r.query], r.doc_id, "label", r.gain, who) for r in parsed.ratings]
        common.check_known_ids(db, study.corpus_id, (e.unit_id for e in events), text,
                        what="document", allow_unknown=allow_unknown_ids)
        known = query_texts(handle, ids.values())
        new_texts = {ids[r.query]: r.query_text for r in parsed.ratings
                     if r.query_text and not known.get(ids[r.query])}
        db.conn.executemany(
            "INSERT INTO queries (study_id, query_id, text) VALUES (?, ?, ?) "
            "ON CONFLICT (study_id, query_id) DO UPDATE SET text = excluded.text "
            "WHERE queries.text = ''",
            [(study_id, q, t) for q, t in new_texts.items()],
        )
        common.write_label_events(handle, events, summary)
        summary.queries = len(set(ids.values()))
        summary.audit(db, actor)
    return summary


def _query_ids(study: Study, ratings: list[ToolRating], fmt: str, name: str) -> dict[str, str]:
    """How each rating's query names a study query (Quepid: by text; the others: by id)."""
    named = {r.query for r in ratings}
    if fmt != "quepid":
        return {q: q for q in named}
    by_text: dict[str, list[str]] = {}
    for qid, text in query_texts(study).items():
        if text in named:
            by_text.setdefault(text, []).append(qid)
    ambiguous = {t: ids for t, ids in by_text.items() if len(ids) > 1}
    if ambiguous:
        text, ids = next(iter(ambiguous.items()))
        raise InputErrors.one(
            name, f"{len(ambiguous)} query text(s) match several stored queries, e.g. "
            f"{text!r}: {', '.join(sorted(ids))}",
            "give the queries distinct texts, or use a format that names query ids", field="query")
    return {q: by_text[q][0] if q in by_text else q for q in named}
