"""Import labels from CSV (``query_id,unit_id,gain[,annotator]``) or labels JSONL.

Parsing: :func:`evalcore.io.label_rows.parse_labels`. A
snapshot file gives one ``label`` event per row (default annotator
``csv:<file name>`` / ``jsonl:<file name>``); an event log (as exported by
``evalcore export labels``) is replayed row by row, keeping each event's
kind, annotator, time, note and source, so export -> import reproduces the same
events and the same working reference. Unit ids unknown to a non-empty corpus
are refused unless ``allow_unknown_ids``. The auto-reopen rule applies.

Who is on record (docs/access-model.md): a file may carry other annotators'
names (and their times and sources) only when the importing lead asks for it
(``keep_annotators``, ``--keep-annotators``); otherwise a file naming
annotators is refused, naming its lines, and every event is recorded under the
default annotator, at import time, with source ``import``. ``undo`` events are
never imported (an undo is its annotator's own act): refused with file:line.
The audit entry records who imported the file and whether names were kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import sqlite_utils

from evalcore.access.identity import normalise_user_id
from evalcore.access.roles import Permission
from evalcore.io.errors import InputError, InputErrors
from evalcore.io.label_rows import LabelRow, parse_labels
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
