"""Import TREC qrels (``query_id iteration doc_id gain``) as label events.

Parsing is :func:`evalcore.io.trec.parse_qrels` (comments, blank lines, BOM,
CRLF, field counts, integer gains, ``gain_map``, empty file). On top of it the
store import:

* records one ``label`` event per (query, doc) by the annotator
  ``qrels:<file name>`` (or the one given), source ``import``;
* collapses an identical repeated row into one event, with a warning;
* refuses a row that repeats a (query, doc) with a **different** gain (the file
  contradicts itself): an error naming both lines;
* refuses doc ids unknown to the study's corpus (when it has documents),
  unless ``allow_unknown_ids``;
* with ``complete=True`` declares every qrels query's population complete;
* applies the auto-reopen rule to queries already complete.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.io.errors import ErrorLog
from evalcore.io.trec import Qrels, parse_qrels
from evalcore.store.imports import common
from evalcore.store.studies import get_study
from evalcore.store.study_handle import open_study
from evalcore.store.transaction import write_transaction


def _conflict_errors(qrels: Qrels) -> None:
    """Raise InputErrors naming both lines of every contradictory repeated judgment."""
    log = ErrorLog(qrels.name)
    for c in qrels.contradictions:
        log.add(
            c.line,
            "gain",
            f"query {c.query_id} doc {c.doc_id}: gain {c.gain} contradicts line {c.first_line} "
            f"(gain {c.first_gain})",
            "keep one of the two lines, or import them as different annotators",
        )
    log.raise_if_any()


def import_qrels(
    db: sqlite_utils.Database,
    source: common.Source,
    *,
    study_id: str,
    annotator: str | None = None,
    complete: bool = False,
    gain_map: Mapping[int, int] | None = None,
    allow_unknown_ids: bool = False,
    actor: str = "import",
) -> common.ImportSummary:
    """Import a qrels file into the study (all or nothing); see the module docstring."""
    study = get_study(db, study_id)
    text = common.load_source(source)
    qrels = parse_qrels(text, gain_map)
    _conflict_errors(qrels)
    common.refuse_long_ids((i for q, docs in qrels.doc_ids.items() for i in (q, *docs)),
                    file=text.name, source=text)
    who = annotator or f"qrels:{Path(text.name).name}"
    events = [
        common.NewEvent(q, d, "label", g, who)
        for q in qrels.doc_ids
        for d, g in zip(qrels.doc_ids[q], qrels.gains[q], strict=True)
    ]
    summary = common.ImportSummary(kind="qrels", study_id=study_id, source=text.name, rows=qrels.n_rows,
                            warnings=list(qrels.notes), notes=text.notes())
    with write_transaction(db):
        handle = open_study(db, study_id, actor, Permission.IMPORT)
        common.check_known_ids(db, study.corpus_id, (e.unit_id for e in events), text,
                        what="document", allow_unknown=allow_unknown_ids)
        common.write_label_events(handle, events, summary)
        summary.queries = len(qrels.doc_ids)
        if complete:
            summary.completeness_events = common.mark_queries_complete(
                db, study_id=study_id, query_ids=qrels.doc_ids, actor=actor,
                reason=f"declared complete by import of {text.name}",
            )
        summary.audit(db, actor)
    return summary
