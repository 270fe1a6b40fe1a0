"""Import human labels: CSV (``query_id,unit_id,gain[,annotator]``), labels JSONL, TREC qrels.

**CSV and JSONL** (:func:`import_labels`, parsed by :func:`evalcore.io.label_rows.parse_labels`).
A snapshot file gives one ``label`` event per row (default annotator ``csv:<file name>`` /
``jsonl:<file name>``); an event log (``evalcore export labels``) is replayed row by row with
each event's kind, annotator, time, note and source, so export -> import reproduces the same
events and working reference.

Who is on record (docs/access-model.md): a file may carry other annotators' names (and
their times and sources) only when the importing lead asks (``keep_annotators``,
``--keep-annotators``); otherwise a file naming annotators is refused, naming its lines, and
every event is recorded under the default annotator, at import time, with source ``import``.
``undo`` events are never imported (an undo is its annotator's own act): refused with
file:line. The audit entry records who imported the file and whether names were kept.

**TREC qrels** (:func:`import_qrels`, parsed by :func:`evalcore.io.trec.parse_qrels`): one
``label`` event per (query, doc) by ``qrels:<file name>`` (or the one given), source
``import``; an identical repeated row is one event and a warning, a repeat with a different
gain an error naming both lines; ``complete=True`` declares every qrels query complete.

Both refuse unit ids unknown to a non-empty corpus unless ``allow_unknown_ids``, and apply
the auto-reopen rule to queries already complete."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import sqlite_utils

from evalcore.access.identity import normalise_user_id
from evalcore.access.roles import Permission
from evalcore.io.errors import ErrorLog, InputError, InputErrors
from evalcore.io.label_rows import LabelRow, parse_labels
from evalcore.io.trec import Qrels, parse_qrels
from evalcore.store.imports import common
from evalcore.store.studies import get_study
from evalcore.store.study_handle import open_study
from evalcore.store.transaction import write_transaction


def import_labels(
    db: sqlite_utils.Database,
    source: common.Source,
    *,
    study_id: str,
    format: Literal["csv", "jsonl"] = "csv",
    annotator: str | None = None,
    gain_map: Mapping[int, int] | None = None,
    allow_unknown_ids: bool = False,
    actor: str = "import",
    keep_annotators: bool = False,
) -> common.ImportSummary:
    """Import a labels file into the study (all or nothing); see the module docstring."""
    study = get_study(db, study_id)
    text = common.load_source(source)
    default = annotator or f"{format}:{Path(text.name).name}"
    parsed = parse_labels(text, format, default_annotator=default, gain_map=gain_map)
    _refuse_claims(parsed.rows, file=text.name, default=default, keep=keep_annotators)
    events = [
        common.NewEvent(r.query_id, r.unit_id, r.kind, r.gain, r.annotator,
                 r.created_at if keep_annotators else None, r.note,
                 (r.source or "import") if keep_annotators else "import")
        for r in parsed.rows
    ]
    summary = common.ImportSummary(kind=f"labels-{format}", study_id=study_id, source=text.name,
                            rows=len(parsed.rows), warnings=parsed.warnings, notes=parsed.notes)
    with write_transaction(db):
        handle = open_study(db, study_id, actor, Permission.IMPORT)
        common.check_known_ids(db, study.corpus_id, (e.unit_id for e in events), text,
                        allow_unknown=allow_unknown_ids)
        common.write_label_events(handle, events, summary)
        summary.queries = len({e.query_id for e in events})
        summary.audit(db, actor, imported_by=actor, kept_annotators=keep_annotators)
    return summary


def _refuse_claims(rows: Sequence[LabelRow], *, file: str, default: str, keep: bool) -> None:
    """Undo events, and other annotators' names unless ``keep``: InputErrors naming the lines."""
    errors = [
        InputError(file=file, line=r.line, field="kind",
                   message="undo events cannot be imported: an undo is recorded only by its "
                           "own annotator (in the app, or undo_last_label)",
                   hint="remove the undo rows (and the labels they cancel) from the file")
        for r in rows if r.kind == "undo"
    ]
    named: list[LabelRow] = []  # rows naming a valid annotator other than the default
    for r in rows:
        try:
            annotator = normalise_user_id(r.annotator)
        except ValueError as error:
            errors.append(InputError(file=file, line=r.line, field="annotator",
                                     message=str(error)))
            continue
        if annotator != normalise_user_id(default):
            named.append(r)
    if not keep:
        errors += [
            InputError(file=file, line=r.line, field="annotator",
                       message=f"names annotator {r.annotator!r}: a label file may carry other "
                               "annotators' names only when the importing lead asks for it",
                       hint="pass --keep-annotators to vouch for the names in the file, or "
                            "remove the annotator column to record the labels as the import")
            for r in named
        ]
    if errors:
        raise InputErrors(sorted(errors, key=lambda e: e.line or 0))


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
    common.refuse_long_ids((i for q, docs in qrels.doc_ids.items() for i in (q, *docs)), text)
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
