"""Records with named fields: JSONL objects or the rows of a TSV/CSV file with a header.

Shared by the document and query readers (:mod:`evalcore.io.documents`,
:mod:`evalcore.io.queries`), whose field names are configurable
(``--id-field``, ``--text-field``, ...):

* **JSONL**: one object per line, read strictly (:mod:`evalcore.io.json_objects`:
  repeated keys, NaN, huge numbers are errors);
* **TSV**: a header line naming the columns, then one record per line, cells
  separated by tabs (no quoting: a tab or a line break cannot be in a cell);
* **CSV**: a header line, then one record per line (RFC 4180 quoting; a quoted
  cell may hold commas and quotes but not line breaks).

Every error is logged with file, line and field; reading continues so a file is
fixed in one pass. A value must be a string (JSON numbers are not ids: ``1``
and ``1.0`` would be the same number but different ids).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any, Literal

from evalcore.io.errors import ErrorLog, show_value
from evalcore.io.json_objects import json_objects
from evalcore.io.text_lines import SourceText, numbered_lines

TableFormat = Literal["jsonl", "tsv", "csv"]


def records(
    source: SourceText, fmt: TableFormat, log: ErrorLog, *, needed: tuple[str, ...]
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, record)`` for every well-formed record; log the rest.

    ``needed`` are the field names a table's header must hold (JSONL objects
    are checked field by field by the caller).
    """
    log.extend(source.errors)
    if fmt == "jsonl":
        yield from json_objects(source, log)
        return
    lines = numbered_lines(source.text, comments=False)
    first = next(lines, None)
    if first is None:
        log.add(None, None, "empty file: no header and no records",
                f"the first line names the columns, e.g. {_join(fmt, needed)}")
        return
    number, text = first
    header = _cells(text, fmt)
    if header is None:
        log.add(number, "header", "the header is not a valid CSV line")
        return
    header = [c.strip() for c in header]
    missing = [n for n in needed if n not in header]
    for name in missing:
        log.add(number, "header", f"no column named '{name}' (columns: {show_value(header)})",
                f"the first line names the columns, e.g. {_join(fmt, needed)}; or choose the "
                "column with --id-field / --text-field")
    repeated = sorted({c for c in header if header.count(c) > 1})
    for name in repeated:
        log.add(number, "header", f"column '{name}' appears twice")
    if missing or repeated:
        return
    for number, text in lines:
        cells = _cells(text, fmt)
        if cells is None:
            log.add(number, None, "not a valid CSV line (unbalanced quotes)")
            continue
        if len(cells) != len(header):
            hint = "quote cells that hold commas" if fmt == "csv" else "cells cannot hold tabs"
            log.add(number, None, f"expected {len(header)} cells, got {len(cells)}", hint)
            continue
        yield number, dict(zip(header, cells, strict=True))


def _join(fmt: TableFormat, names: tuple[str, ...]) -> str:
    return ("\t" if fmt == "tsv" else ",").join(names).replace("\t", "<TAB>")


def _cells(text: str, fmt: TableFormat) -> list[str] | None:
    if fmt == "tsv":
        return text.split("\t")
    try:
        return next(csv.reader([text], strict=True))
    except (csv.Error, StopIteration):
        return None


def text_field(
    record: dict[str, Any], name: str, number: int, log: ErrorLog, *, required: bool,
    identifier: bool = False,
) -> str | None:
    """The string field ``name`` ('' when optional and absent); None (logged) when invalid."""
    value = record.get(name)
    if value is None:
        if required:
            log.add(number, name, f"missing required field '{name}'",
                    f"fields present: {', '.join(record) or 'none'}")
            return None
        return ""
    if not isinstance(value, str):
        log.add(number, name, f"must be a string, got {show_value(value)}",
                "write ids and text as JSON strings")
        return None
    if identifier:
        value = value.strip()
        if not value:
            log.add(number, name, "must not be empty")
            return None
        if len(value) > 1024:
            log.add(number, name, f"an id of {len(value):,} characters (at most 1,024)")
            return None
    return value
