"""Labels JSONL: one label event per line, as ``evalcore export labels --format jsonl`` writes.

Each line is a JSON object with ``query_id``, ``unit_id``, ``gain`` and
optionally ``annotator``, ``kind``, ``created_at``, ``note``, ``source`` and
``event_id`` (ignored on import: the store numbers its own events). Rules as in
:mod:`evalcore.io.label_rows`; a file whose objects carry ``created_at`` or
``kind`` is an event log. Blank lines are skipped; JSONL has no comments.
"""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike

from evalcore.io.errors import ErrorLog, suggest
from evalcore.io.json_objects import json_objects
from evalcore.io.label_rows import GainNotes, LabelRow, LabelRows, build_row, deduplicate
from evalcore.io.text_lines import SourceText, read_source

FIELDS = tuple("query_id unit_id gain annotator kind created_at note source event_id".split())


def read_labels_jsonl(
    path: str | PathLike[str], *, default_annotator: str, gain_map: Mapping[int, int] | None = None
) -> LabelRows:
    return parse_labels_jsonl(
        read_source(path), default_annotator=default_annotator, gain_map=gain_map
    )


def parse_labels_jsonl(
    source: SourceText, *, default_annotator: str, gain_map: Mapping[int, int] | None = None
) -> LabelRows:
    """Validate a labels JSONL file; raise InputErrors listing every error."""
    log = ErrorLog(source.name)
    log.extend(source.errors)
    rows: list[LabelRow] = []
    is_log = False
    notes = GainNotes(source.name)
    for number, obj in json_objects(source, log, nul=True):
        for key in obj:
            if key not in FIELDS:
                close = suggest(key, FIELDS)
                log.add(
                    number,
                    key,
                    f"unknown field '{key}'" + (f"; did you mean '{close}'?" if close else ""),
                )
        is_log = is_log or "created_at" in obj or "kind" in obj
        row = build_row(
            obj,
            line=number,
            log=log,
            default_annotator=default_annotator,
            gain_map=gain_map,
            text=False,
            notes=notes,
        )
        if row is not None:
            rows.append(row)
    if not rows and not log:
        log.add(None, None, "no labels: the file is empty or holds only blank lines")
    log.raise_if_any()
    warnings: list[str] = []
    kept = deduplicate(rows, is_log=is_log, log=log, warnings=warnings)
    log.raise_if_any()
    return LabelRows(source.name, kept, warnings, is_log, [*source.notes(), *notes.lines()])
