"""Label files: label events as CSV or JSONL, read into :class:`LabelRow` s.

* **CSV** (``query_id,unit_id,gain[,annotator]``): a header row is required and
  names the columns (any order; names are case-insensitive and surrounding
  spaces are ignored). Required: ``query_id``, ``unit_id``, ``gain``. Optional:
  ``annotator`` (default: the importer's, e.g. ``csv:<file name>``), and the
  event-log columns written by ``evalcore export labels --format csv``:
  ``kind``, ``created_at``, ``note``, ``source``. An unknown column is an error
  (with a "did you mean"). Records are read by :mod:`evalcore.io.csv_records`
  (RFC 4180: a quoted note may span lines; errors name the line a record starts
  on); CSV has no comments. A cell that our exports quoted against spreadsheet
  formulas (``'=x``) reads back as written before (``=x``;
  :mod:`evalcore.io.spreadsheet_cells`).
* **JSONL** (as ``evalcore export labels --format jsonl`` writes): one object per
  line with the same fields, and ``event_id`` (ignored on import: the store
  numbers its own events). JSONL has no comments.

Blank lines are skipped; encoding follows :mod:`evalcore.io.text_lines`. A file is
either a **snapshot** (no ``created_at`` or ``kind``: each row says
"annotator X gives unit U of query Q the gain G") or an **event log** (as written
by ``evalcore export labels``: every row is one event, replayed in file order).

Rules, checked for every row (all errors are collected, with line and field):

* ``query_id``, ``unit_id`` and ``annotator`` are non-empty strings (the
  annotator defaults to the importer's default, e.g. ``csv:<file name>``);
* ``kind`` is ``label`` (default), ``undo`` or ``adjudicate``;
* ``gain`` is an integer 0..4 after the optional gain map; empty for ``undo``.
  A gain written as an exact decimal (``1.0``, ``0.000000``, as SMART-converted
  judgments write them) is its integer, and a note counts them; another
  decimal (``0.5``) is refused unless the gain map maps it (``--gain-map 0.5:1``);
* ``created_at`` (optional) is an ISO-8601 time, kept as given (normalised to UTC ``Z``);
* ids, annotators and notes are at most as long as :mod:`evalcore.contract.limits` allows.

Duplicates in a snapshot file: the same (query, unit, annotator) twice with the
same gain is one event and a warning naming both lines; with different gains
it is an error naming both lines (the file contradicts itself). An event log
may relabel freely; only byte-identical repeated events are collapsed.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.limits import MAX_ID_CHARS, MAX_KEY_CHARS, MAX_NOTE_CHARS, too_long
from evalcore.io.clock import to_iso
from evalcore.io.csv_records import csv_records
from evalcore.io.errors import ErrorLog, show_value, suggest
from evalcore.io.json_objects import json_objects
from evalcore.io.spreadsheet_cells import restore
from evalcore.io.text_lines import SourceText
from evalcore.io.trec_format import decimal_gain_note, gain_number

KINDS = ("label", "undo", "adjudicate")
REQUIRED = ("query_id", "unit_id", "gain")
OPTIONAL = ("annotator", "kind", "created_at", "note", "source")
#: The fields of a labels JSONL object (``event_id`` is ignored).
JSONL_FIELDS = (*REQUIRED, *OPTIONAL, "event_id")
_INTEGER = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class LabelRow:
    """One validated label event from a file (``line`` is 1-based)."""

    line: int
    query_id: str
    unit_id: str
    gain: int | None
    annotator: str
    kind: str = "label"
    created_at: str | None = None
    note: str = ""
    source: str | None = None


@dataclass
class LabelRows:
    """The rows of one labels file, and what was noticed while reading it."""

    name: str
    rows: list[LabelRow]
    warnings: list[str] = field(default_factory=list)
    is_log: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass
class GainNotes:
    """Counts the gains of one file written as exact decimals (``1.0``), for its note."""

    name: str
    decimals: Counter[str] = field(default_factory=Counter)

    def lines(self) -> list[str]:
        note = decimal_gain_note(self.name, self.decimals)
        return [note] if note else []


def parse_gain(
    value: object, gain_map: Mapping[float, int] | None, *, text: bool = True,
    notes: GainNotes | None = None,
) -> tuple[int | None, str | None, str | None]:
    """(gain, error message, hint) for a gain given as CSV text or (``text=False``) a JSON
    number; an exact decimal written is counted in ``notes``."""
    raw: int | float | None = None
    written = ""
    if isinstance(value, bool):
        raw = None
    elif isinstance(value, int):
        raw = value
    elif isinstance(value, float) and math.isfinite(value):
        raw, written = (int(value) if value.is_integer() else value), repr(value)
    elif text and isinstance(value, str):
        token = value.strip()
        raw = int(token) if _INTEGER.fullmatch(token) else gain_number(token)
        written = token if "." in token else ""
    if raw is None:
        return None, f"must be an integer 0..4, got {show_value(value)}", "gains are integers 0..4"
    gain = (gain_map or {}).get(raw, raw)
    map_it = f"map it with --gain-map '{raw}:N' (N in 0..4)"
    if isinstance(gain, float):
        return None, f"gain {raw} is not an integer", map_it
    if not 0 <= gain <= MAX_GAIN:
        if gain_map and raw in gain_map:
            return None, f"gain {raw} is mapped to {gain}, outside 0..4", None
        digits = str(raw)
        if len(digits.lstrip("+-")) > 18:  # no gain map can name it
            problem = f"gain {digits[:20]}... ({len(digits)} digits) is outside 0..4"
            return None, problem, "gains are integers 0..4"
        return None, f"gain {raw} is outside 0..4", map_it
    if written and notes is not None and not isinstance(raw, float):
        notes.decimals[written] += 1
    return gain, None, None


def normalise_time(value: str) -> str | None:
    """An ISO-8601 time as the store writes it (UTC, ``Z``), or None when unreadable."""
    try:
        return to_iso(datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
    except ValueError:
        return None


def _row(
    record: Mapping[str, object], line: int, log: ErrorLog, default_annotator: str,
    gain_map: Mapping[float, int] | None, text: bool, notes: GainNotes,
) -> LabelRow | None:
    """Validate one record (CSV cells, ``text=True``, or a JSON object); None when it has an
    error (each logged)."""
    errors_before = log.total
    ids: dict[str, str] = {}
    for name in ("query_id", "unit_id"):
        value = record.get(name)
        if not isinstance(value, str) or not value.strip():
            log.add(line, name, f"must be a non-empty string, got {show_value(value)}")
        elif problem := too_long(value.strip(), MAX_ID_CHARS, "an id"):
            log.add(line, name, problem)
        else:
            ids[name] = value.strip()
    annotator = record.get("annotator")
    if annotator is None or annotator == "":
        annotator = default_annotator
    if not isinstance(annotator, str) or not annotator.strip():
        log.add(line, "annotator", f"must be a non-empty string, got {show_value(annotator)}")
    elif problem := too_long(annotator.strip(), MAX_KEY_CHARS, "an annotator"):
        log.add(line, "annotator", problem)
    kind = record.get("kind") or "label"
    if kind not in KINDS:
        log.add(line, "kind", f"must be one of {', '.join(KINDS)}, got {show_value(kind)}")
    gain: int | None = None
    if kind == "undo":
        if record.get("gain") not in (None, ""):
            log.add(line, "gain", "must be empty for an undo event", "an undo cancels a label")
    else:
        gain, problem, hint = parse_gain(record.get("gain"), gain_map, text=text, notes=notes)
        if problem is not None:
            log.add(line, "gain", problem, hint)
    created_at: str | None = None
    raw_time = record.get("created_at")
    if raw_time not in (None, ""):
        created_at = normalise_time(raw_time) if isinstance(raw_time, str) else None
        if created_at is None:
            example = "an ISO-8601 time such as 2026-06-30T12:00:00Z"
            log.add(line, "created_at", f"must be {example}, got {show_value(raw_time)}")
    note = record.get("note") or ""
    source = record.get("source") or None
    for name, value in (("note", note), ("source", source)):
        if value is not None and not isinstance(value, str):
            log.add(line, name, f"must be a string, got {show_value(value)}")
        elif value is not None and (problem := too_long(value, MAX_NOTE_CHARS, f"a {name}")):
            log.add(line, name, problem)
    if log.total > errors_before:
        return None
    annotator, kind, note = str(annotator).strip(), str(kind), str(note)
    query_id, unit_id = ids["query_id"], ids["unit_id"]
    return LabelRow(line, query_id, unit_id, gain, annotator, kind, created_at, note, source)  # type: ignore[arg-type]


def _deduplicate(
    rows: list[LabelRow], *, is_log: bool, log: ErrorLog, warnings: list[str]
) -> list[LabelRow]:
    """Apply the duplicate rules of the module docstring; return the rows to record."""
    kept: list[LabelRow] = []
    if is_log:
        seen: dict[LabelRow, int] = {}
        for row in rows:
            first = seen.setdefault(replace(row, line=0), row.line)  # the event, wherever it is
            if first != row.line:
                warnings.append(
                    f"{log.file}:{row.line}: repeats the event on line {first}; recorded once"
                )
                continue
            kept.append(row)
        return kept
    first_row: dict[tuple[str, str, str, str], LabelRow] = {}
    for row in rows:
        key = (row.query_id, row.unit_id, row.annotator, row.kind)
        earlier = first_row.setdefault(key, row)
        if earlier is row:
            kept.append(row)
        elif earlier.gain == row.gain:
            warnings.append(
                f"{log.file}:{row.line}: query {row.query_id} unit {row.unit_id} repeats line "
                f"{earlier.line} with the same gain {row.gain} ({row.annotator}); recorded once"
            )
        else:
            log.add(
                row.line,
                "gain",
                f"query {row.query_id} unit {row.unit_id}: gain {row.gain} by {row.annotator} "
                f"contradicts line {earlier.line} (gain {earlier.gain})",
                "keep one of the two lines, or give them different annotators",
            )
    return kept


def parse_labels(
    source: SourceText,
    fmt: Literal["csv", "jsonl"],
    *,
    default_annotator: str,
    gain_map: Mapping[int, int] | None = None,
) -> LabelRows:
    """Validate a labels CSV or JSONL file; raise InputErrors listing every error."""
    log = ErrorLog.of(source)
    records = _csv_records(source, log) if fmt == "csv" else _jsonl_records(source, log)
    rows: list[LabelRow] = []
    is_log = False
    notes = GainNotes(source.name)
    for number, record in records:
        is_log = is_log or "created_at" in record or "kind" in record
        row = _row(record, number, log, default_annotator, gain_map, fmt == "csv", notes)
        if row is not None:
            rows.append(row)
    if fmt == "csv":
        hint = "add one line per label: query_id,unit_id,gain"
        log.finish(rows, "no labels: the file holds only its header", hint)
    log.finish(rows, "no labels: the file is empty or holds only blank lines")
    warnings: list[str] = []
    kept = _deduplicate(rows, is_log=is_log, log=log, warnings=warnings)
    log.raise_if_any()
    return LabelRows(source.name, kept, warnings, is_log, [*source.notes(), *notes.lines()])


def _jsonl_records(source: SourceText, log: ErrorLog) -> Iterator[tuple[int, dict[str, object]]]:
    """The objects of a labels JSONL file; an unknown field is logged."""
    for number, obj in json_objects(source, log, nul=True):
        for key in obj:
            if key not in JSONL_FIELDS:
                close = suggest(key, JSONL_FIELDS)
                guess = f"; did you mean '{close}'?" if close else ""
                log.add(number, key, f"unknown field '{key}'{guess}")
        yield number, obj


def _csv_records(source: SourceText, log: ErrorLog) -> Iterator[tuple[int, dict[str, str]]]:
    """The records of a labels CSV file, named by its header (checked); nothing when the
    header is missing or wrong (logged)."""
    lines = csv_records(source.text, log)
    header_line = next(lines, None)
    if header_line is None:
        hint = "the first line must be a header such as query_id,unit_id,gain,annotator"
        log.add(None, None, "empty file: no header and no labels", hint)
        return
    columns = _header(header_line[1], header_line[0], log)
    if columns is None:
        return
    for number, raw in lines:
        cells = [restore(cell) for cell in raw]  # our exports quote formula-like cells
        if len(cells) != len(columns):
            problem = f"expected {len(columns)} fields ({','.join(columns)}), got {len(cells)}"
            log.add(number, None, problem, "quote fields that contain commas")
            continue
        yield number, dict(zip(columns, cells, strict=True))


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
