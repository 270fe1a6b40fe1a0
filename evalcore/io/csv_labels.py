"""CSV labels: ``query_id,unit_id,gain[,annotator]`` with a required header row.

The header names the columns (any order; names are case-insensitive and
surrounding spaces are ignored). Required: ``query_id``, ``unit_id``,
``gain``. Optional: ``annotator`` (default: the importer's, e.g.
``csv:<file name>``), and the event-log columns written by ``evalcore export
labels --format csv``: ``kind``, ``created_at``, ``note``, ``source``. A file
with a ``kind`` or ``created_at`` column is an event log (see
:mod:`evalcore.io.label_rows` for what that changes). An unknown column is an
error (with a "did you mean").

Encoding follows :mod:`evalcore.io.text_lines` (UTF-8, BOM dropped, CRLF/CR
line ends); blank lines are skipped; CSV has no comment syntax. Records are
read by :mod:`evalcore.io.csv_records` (RFC 4180): quoted fields may hold
commas, quotes and line breaks (a note written over several lines), and
errors name the line a record starts on. A cell that our
exports quoted against spreadsheet formulas (``'=x``) reads back as written
before (``=x``; see :mod:`evalcore.io.spreadsheet_cells`).
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.io.csv_records import csv_records
from evalcore.io.errors import ErrorLog, suggest
from evalcore.io.label_rows import GainNotes, LabelRow, LabelRows, build_row, deduplicate
from evalcore.io.spreadsheet_cells import restore
from evalcore.io.text_lines import SourceText

REQUIRED = ("query_id", "unit_id", "gain")
OPTIONAL = ("annotator", "kind", "created_at", "note", "source")


def parse_labels_csv(
    source: SourceText,
    *,
    default_annotator: str,
    gain_map: Mapping[int, int] | None = None,
) -> LabelRows:
    """Validate a labels CSV; raise InputErrors listing every error."""
    log = ErrorLog(source.name)
    log.extend(source.errors)
    lines = csv_records(source.text, log)
    header_line = next(lines, None)
    columns = None if header_line is None else _header(header_line[1], header_line[0], log)
    if header_line is None:
        log.add(
            None,
            None,
            "empty file: no header and no labels",
            "the first line must be a header such as query_id,unit_id,gain,annotator",
        )
    if columns is None:
        log.raise_if_any()
        return LabelRows(source.name, [])  # not reached: a missing header is always logged
    rows: list[LabelRow] = []
    notes = GainNotes(source.name)
    for number, raw in lines:
        cells = [restore(cell) for cell in raw]  # our exports quote formula-like cells
        if len(cells) != len(columns):
            log.add(
                number,
                None,
                f"expected {len(columns)} fields ({','.join(columns)}), got {len(cells)}",
                "quote fields that contain commas",
            )
            continue
        record = dict(zip(columns, cells, strict=True))
        row = build_row(
            record, line=number, log=log, default_annotator=default_annotator, gain_map=gain_map,
            notes=notes,
        )
        if row is not None:
            rows.append(row)
    if not rows and not log:
        log.add(
            None,
            None,
            "no labels: the file holds only its header",
            "add one line per label: query_id,unit_id,gain",
        )
    log.raise_if_any()
    is_log = "created_at" in columns or "kind" in columns
    warnings: list[str] = []
    kept = deduplicate(rows, is_log=is_log, log=log, warnings=warnings)
    log.raise_if_any()
    return LabelRows(source.name, kept, warnings, is_log, [*source.notes(), *notes.lines()])


def _header(cells: list[str], number: int, log: ErrorLog) -> list[str] | None:
    columns = [restore(c).strip().lower() for c in cells]
    known = REQUIRED + OPTIONAL
    ok = True
    for name in columns:
        if name not in known:
            close = suggest(name, known)
            message = f"unknown column '{name}'"
            if close:
                message += f"; did you mean '{close}'?"
            log.add(number, "header", message, "columns: " + ", ".join(known))
            ok = False
    for name in REQUIRED:
        if name not in columns:
            looks_like_data = len(cells) >= 3 and cells[2].strip().lstrip("+-").isdigit()
            hint = (
                "the first line looks like data: add a header line query_id,unit_id,gain"
                if looks_like_data
                else "the header must name query_id, unit_id and gain"
            )
            log.add(number, "header", f"missing column '{name}'", hint)
            ok = False
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    for name in repeated:
        log.add(number, "header", f"column '{name}' appears twice")
        ok = False
    return columns if ok else None
