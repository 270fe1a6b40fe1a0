"""CSV records as spreadsheets write them (RFC 4180): the one CSV parser of every reader.

* Cells are separated by commas. A cell in double quotes may hold commas, line
  breaks and quotes (written twice: ``"say ""hi"" now"``); an unquoted cell holds
  neither quotes nor commas.
* A record may span several lines (a quoted line break); its line number is
  the line it starts on, so ``file:line`` points where the record begins.
* Blank lines between records are skipped (CSV has no comments); a blank
  line inside a quoted cell is part of the cell.
* A quote inside an unquoted cell, text after a closing quote, and a quote
  that is never closed are errors naming the record's first line and column;
  reading goes on with the next record, so every bad record is reported in one
  pass.

Encoding, BOM and line ends are :mod:`evalcore.io.text_lines`'s; the reader
has no size limit of its own (the text is already bounded when it was read;
Python's ``csv`` module, with its process-wide field size limit of 128 KiB, is
not used).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from evalcore.io.errors import ErrorLog

_PLAIN = re.compile(r'[^,"]*')
#: A quoted cell: possessive, so an unclosed cell fails at once instead of backtracking.
_QUOTED = re.compile(r'"((?:[^"]++|"")*+)"')


class _Incomplete(ValueError):
    """The record ends inside a quoted cell: it goes on on the next line."""


class _Malformed(ValueError):
    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


def parse_record(text: str) -> list[str]:
    """The cells of one record; ValueError (``_Incomplete``, ``_Malformed``) when it is not one."""
    cells: list[str] = []
    pos, n = 0, len(text)
    while True:
        if pos < n and text[pos] == '"':
            match = _QUOTED.match(text, pos)
            if match is None:
                raise _Incomplete
            cells.append(match.group(1).replace('""', '"'))
            pos = match.end()
            if pos < n and text[pos] != ",":
                raise _Malformed("text after a closing quote", pos + 1)
        else:
            end = _PLAIN.match(text, pos).end()  # type: ignore[union-attr]
            if end < n and text[end] == '"':
                raise _Malformed("a quote inside an unquoted cell", end + 1)
            cells.append(text[pos:end])
            pos = end
        if pos >= n:
            return cells
        pos += 1  # the comma


def csv_records(text: str, log: ErrorLog) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(first line, cells)`` for every record of ``text`` (``\\n`` line ends); log
    malformed records with their first line and go on."""
    pending: list[str] = []
    start = 0
    quotes = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if pending:
            pending.append(line)
            quotes += line.count('"')
            if quotes % 2:
                continue  # still inside the quoted cell
            record = "\n".join(pending)
        else:
            if not line.strip():
                continue
            start, record = number, line
            quotes = line.count('"')
        try:
            cells = parse_record(record)
        except _Incomplete:
            if not pending:
                pending = [line]
            continue
        except _Malformed as bad:
            pending = []
            hint = 'quote the whole cell and write a quote inside it twice: "say ""hi"" now"'
            problem = f"not valid CSV: {bad.message} (column {_column(record, bad)})"
            log.add(start, None, problem, hint)
            continue
        pending = []
        yield start, cells
    if pending:
        hint = "close the quote (a quote inside a quoted cell is written twice)"
        problem = "not valid CSV: a quoted cell starting on this line is never closed"
        log.add(start, None, problem, hint)


def _column(record: str, bad: _Malformed) -> str:
    """The column of an error in a record that may span lines ("14 of the record's line 3")."""
    before = record[: bad.column - 1]
    if "\n" not in before:
        return str(bad.column)
    return f"{bad.column - before.rfind(chr(10)) - 1} of the record's line {before.count(chr(10)) + 1}"
