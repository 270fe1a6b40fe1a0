"""Import labels from CSV (``query_id,unit_id,gain[,annotator]``) or labels JSONL.

Parsing: :mod:`evalcore.io.csv_labels` / :mod:`evalcore.io.labels_jsonl`. A
snapshot file gives one ``label`` event per row (default annotator
``csv:<file name>`` / ``jsonl:<file name>``); an event log (as exported by
``evalcore export labels``) is replayed row by row, keeping each event's
kind, annotator, time, note and source, so export -> import reproduces the same
events and the same working reference. Unit ids unknown to a non-empty corpus
are refused unless ``allow_unknown_ids``. The auto-reopen rule applies.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.io.csv_labels import parse_labels_csv
from evalcore.io.labels_jsonl import parse_labels_jsonl
from evalcore.store.audit import record_audit
from evalcore.store.authorize import authorize
from evalcore.store.imports.common import (
    ImportSummary,
    NewEvent,
    Source,
    check_known_ids,
    load_source,
    write_label_events,
)
from evalcore.store.studies import get_study
from evalcore.store.transaction import write_transaction


def import_labels(
    db: sqlite_utils.Database,
    source: Source,
    *,
    study_id: str,
    format: Literal["csv", "jsonl"] = "csv",
    annotator: str | None = None,
    gain_map: Mapping[int, int] | None = None,
    allow_unknown_ids: bool = False,
    actor: str = "import",
) -> ImportSummary:
    """Import a labels file into the study (all or nothing)."""
    study = get_study(db, study_id)
    text = load_source(source)
    default = annotator or f"{format}:{Path(text.name).name}"
    parse = parse_labels_csv if format == "csv" else parse_labels_jsonl
    parsed = parse(text, default_annotator=default, gain_map=gain_map)
    events = [
        NewEvent(r.query_id, r.unit_id, r.kind, r.gain, r.annotator, r.created_at, r.note,
                 r.source or "import")
        for r in parsed.rows
    ]
    summary = ImportSummary(kind=f"labels-{format}", study_id=study_id, source=text.name,
                            rows=len(parsed.rows), warnings=parsed.warnings)
    with write_transaction(db):
        authorize(db, study_id=study_id, actor=actor, permission=Permission.IMPORT)
        check_known_ids(db, study.corpus_id, (e.unit_id for e in events), file=text.name,
                        allow_unknown=allow_unknown_ids, source=text)
        n, reopened = write_label_events(
            db, study_id=study_id, threshold=study.relevance_threshold, events=events,
            origin=f"import of {text.name}",
        )
        summary.label_events, summary.reopened = n, reopened
        summary.queries = len({e.query_id for e in events})
        record_audit(db, actor=actor, action=f"import.labels-{format}", study_id=study_id,
                     detail=summary.model_dump(exclude={"warnings"}))
    return summary
