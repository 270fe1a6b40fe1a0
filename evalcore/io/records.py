"""Records with named fields: JSONL objects or the rows of a TSV/CSV file, with or without a header.

Shared by the document and query readers (:mod:`evalcore.io.documents`,
:mod:`evalcore.io.queries`), whose field names are configurable
(``--id-field``, ``--text-field``, ...):

* **JSONL**: one object per line, read strictly (:mod:`evalcore.io.json_objects`);
* **TSV**: one record per line, cells separated by tabs (no quoting: a tab or
  a line break cannot be in a cell; quotes are text);
* **CSV**: RFC 4180 (:mod:`evalcore.io.csv_records`).

**Header or not** (:class:`Layout`). By default the first row is a header
naming the columns. Collections often ship without one (MS MARCO, ColBERT and
Pyserini queries are ``qid<TAB>text``): when the first row names none of the
needed columns, has exactly as many cells as the reader's headerless columns
(``id, text``) and does not look like a header of other names (``qid``,
``query``, ...), the file is read without a header, and a note says so
("read as id<TAB>text without a header"). ``--no-header`` chooses that
reading; ``--columns id,title,text`` names the columns of a headerless file
(``-`` skips a column).

Every error is logged with file, line and field; reading continues so a file is
fixed in one pass. A value must be a string (JSON numbers are not ids: ``1``
and ``1.0`` would be the same number but different ids); an id is at most
:data:`~evalcore.contract.limits.MAX_ID_CHARS` characters.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

from evalcore.contract.limits import MAX_ID_CHARS, too_long
from evalcore.io.csv_records import csv_records
from evalcore.io.errors import ErrorLog, show_value
from evalcore.io.json_objects import json_objects
from evalcore.io.text_lines import SourceText, numbered_lines

TableFormat = Literal["jsonl", "tsv", "csv"]

#: First-row cells that name a column (any case): such a row is a header, never data.
HEADER_WORDS = frozenset(
    "id _id qid query_id queryid query-id query topic topic_id question text title body "
    "contents content passage docid doc_id doc-id pid did document url corpus-id corpus_id "
    "score narrative description".split()
)
#: A ``--columns`` entry that skips its column.
SKIP = "-"


@dataclass(frozen=True)
class Layout:
    """How a TSV/CSV file is laid out: ``header`` True (a header row), False (none) or None
    (tell from the first row); ``columns``: the names of a headerless file's columns
    (None: the reader's default, e.g. ``id, text``)."""

    header: bool | None = None
    columns: tuple[str, ...] | None = None

    @classmethod
    def from_options(cls, no_header: bool, columns: str | None) -> Layout:
        """The layout of ``--no-header`` / ``--columns a,b,c``."""
        if columns is None:
            return cls(header=False if no_header else None)
        names = tuple(c.strip() for c in columns.split(","))
        named = [n for n in names if n != SKIP]
        if not all(names) or len(set(named)) != len(named):
            raise ValueError(f"--columns {show_value(columns)}: give distinct column names "
                             "separated by commas, e.g. id,text (- skips a column)")
        return cls(header=False, columns=names)


AUTO = Layout()


def records(
    source: SourceText,
    fmt: TableFormat,
    log: ErrorLog,
    *,
    needed: tuple[str, ...],
    headerless: tuple[str, ...] | None = None,
    layout: Layout = AUTO,
    notes: list[str] | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, record)`` for every well-formed record; log the rest.

    ``log`` holds the source's decoding errors (:meth:`ErrorLog.of`). ``needed`` are the field names a table's header must hold (JSONL objects
    are checked field by field by the caller); ``headerless`` the columns of a
    file without a header (default ``needed``). How a table was read is added
    to ``notes`` when it had no header.
    """
    if fmt == "jsonl":
        yield from json_objects(source, log)
        return
    rows = _rows(source.text, fmt, log)
    first = next(rows, None)
    if first is None:
        hint = f"the first line names the columns, e.g. {_join(fmt, needed)}"
        log.add(None, None, "empty file: no header and no records", hint)
        return
    number, cells = first
    default = headerless or needed
    chosen = _columns(cells, number, fmt, log, needed, default, layout, notes)
    if chosen is None:
        return
    header, first_is_data = chosen
    if first_is_data:
        rows = chain([first], rows)
    hint = "quote cells that hold commas" if fmt == "csv" else "cells cannot hold tabs"
    for number, cells in rows:
        if len(cells) != len(header):
            log.add(number, None, f"expected {len(header)} cells, got {len(cells)}", hint)
            continue
        yield number, {name: cell for name, cell in zip(header, cells, strict=True) if name != SKIP}


def _columns(
    cells: list[str], number: int, fmt: TableFormat, log: ErrorLog, needed: tuple[str, ...],
    default: tuple[str, ...], layout: Layout, notes: list[str] | None,
) -> tuple[tuple[str, ...], bool] | None:
    """(the column names, whether the first row ``cells`` is data rather than the header,
    checked), or None (logged)."""
    if layout.header is False:
        columns = layout.columns or default
        missing = [n for n in needed if n not in columns]
        if missing:
            problem = f"--columns names no column '{missing[0]}' (given: {', '.join(columns)})"
            log.add(None, "columns", problem, f"name the columns, e.g. {', '.join(needed)}")
            return None
        _note(notes, log.file, _join(fmt, columns), "as asked")
        return columns, True
    header = tuple(c.strip() for c in cells)
    names = any(n in header for n in needed) or HEADER_WORDS.intersection(map(str.lower, header))
    if layout.header is None and not names and len(cells) == len(default):
        why = f"its first line names no column '{needed[0]}'"
        _note(notes, log.file, _join(fmt, default), why)
        return default, True
    missing = [n for n in needed if n not in header]
    hint = (f"the first line names the columns, e.g. {_join(fmt, needed)}; choose the column "
            "with --id-field / --text-field, or read a file without a header with "
            "--no-header or --columns")
    for field in missing:
        log.add(number, "header", f"no column named '{field}' (columns: {show_value(header)})", hint)
    repeated = sorted({c for c in header if header.count(c) > 1})
    for field in repeated:
        log.add(number, "header", f"column '{field}' appears twice")
    return None if missing or repeated else (header, False)


def _note(notes: list[str] | None, name: str, columns: str, why: str) -> None:
    if notes is not None:
        notes.append(f"{name}: read as {columns} without a header ({why}; give "
                     "--columns, or add a header line, to read it otherwise)")


def _rows(text: str, fmt: TableFormat, log: ErrorLog) -> Iterator[tuple[int, list[str]]]:
    if fmt == "csv":
        return csv_records(text, log)
    return ((number, line.split("\t")) for number, line in numbered_lines(text, comments=False))


def _join(fmt: TableFormat, names: tuple[str, ...]) -> str:
    return ("\t" if fmt == "tsv" else ",").join(names).replace("\t", "<TAB>")


def text_field(
    record: dict[str, Any], name: str, number: int, log: ErrorLog, *, required: bool,
    identifier: bool = False,
) -> str | None:
    """The string field ``name`` ('' when optional and absent); None (logged) when invalid."""
    value = record.get(name)
    hint = None
    if value is None and not required:
        return ""
    if value is None:
        problem = f"missing required field '{name}'"
        hint = f"fields present: {', '.join(record) or 'none'}"
    elif not isinstance(value, str):
        problem = f"must be a string, got {show_value(value)}"
        hint = "write ids and text as JSON strings"
    elif "\x00" in value:
        problem, hint = "holds a NUL character (\\u0000)", "remove it: no text holds one"
    elif identifier:
        value = value.strip()
        problem = too_long(value, MAX_ID_CHARS, "an id") if value else "must not be empty"
    else:
        problem = None
    if problem is None:
        return value
    log.add(number, name, problem, hint)
    return None
