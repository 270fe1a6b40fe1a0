"""CSV cells that are safe to open in a spreadsheet (OWASP "CSV injection").

A spreadsheet runs a cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or
a carriage return as a formula (``=HYPERLINK(...)``, ``@SUM(...)``, ...). Every
CSV this package writes goes through :func:`csv_writer`, which prefixes such a
*text* cell with a single quote, OWASP's rule; the spreadsheet then shows the
text and runs nothing.

What is left alone, and why:

* numbers: an ``int``/``float`` cell, or a text cell that is a plain decimal
  number (``-1.5``, ``+3``, ``-2e-05``), stays a number: a spreadsheet reads it
  as a value, never as a formula, and a score of -1.5 must stay sortable;
* text that begins with a quote not followed by a formula character.

The rule is reversible, so our own CSVs read back exactly (:func:`restore`,
used by the labels CSV reader): a cell of quotes followed by a formula
character gets one more quote on the way out and loses one on the way in
(``=x`` -> ``'=x`` -> ``=x``; ``'=x`` -> ``''=x`` -> ``'=x``).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any, TextIO

#: A cell a spreadsheet would evaluate: it starts with = + - @ tab or CR (after any ').
_NEEDS_QUOTE = re.compile(r"'*[=+\-@\t\r]")
_QUOTED = re.compile(r"''*[=+\-@\t\r]")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def neutralise(cell: Any) -> Any:
    """``cell`` as written to a CSV: formula-like text gets a leading ``'``; numbers stay."""
    if isinstance(cell, str) and _NEEDS_QUOTE.match(cell) and not _NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


def restore(cell: str) -> str:
    """The inverse of :func:`neutralise` for a cell read back from one of our CSVs."""
    if _QUOTED.match(cell) and not _NUMBER.fullmatch(cell[1:]):
        return cell[1:]
    return cell


class _SafeWriter:
    def __init__(self, writer: Any) -> None:
        self._writer = writer

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([neutralise(cell) for cell in row])


def csv_writer(stream: TextIO, **options: Any) -> _SafeWriter:
    """A ``csv.writer`` on ``stream`` whose cells are :func:`neutralise` d."""
    return _SafeWriter(csv.writer(stream, **options))
