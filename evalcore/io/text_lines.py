"""Decoding and line splitting shared by every line-oriented reader.

Rules, the same for every format:

* input is UTF-8; a leading byte-order mark is dropped;
* line ends may be LF, CRLF or a lone CR; all become ``\\n``;
* a line that is not valid UTF-8 is reported as an :class:`~evalcore.io.errors.InputError`
  with its line number (and the byte column) and is blanked, so the other lines
  are still checked and every error is reported in one pass;
* a line holding a NUL byte is reported the same way (no text format carries
  one; it usually means UTF-16 or a binary file);
* blank (whitespace-only) lines are skipped;
* where a format allows comments (TREC files do, JSONL does not), a line whose
  first non-blank character is ``#`` is a comment. A ``#`` inside a field
  (e.g. an MS MARCO v2.1 segment ID ``msmarco_v2.1_doc_00_880019750#4_1633802806``)
  is data.

Use :func:`read_source` for a path or :func:`decode_source` for bytes already in
memory (an upload), then :func:`numbered_lines` to iterate; :func:`stream_lines`
reads a file of any size a line at a time.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

from evalcore.io.errors import STOP_AFTER, ErrorLog, InputError, InputErrors


@dataclass(frozen=True)
class SourceText:
    """A decoded input: ``text`` has ``\\n`` line ends; ``errors`` are its decoding errors."""

    name: str
    text: str
    errors: list[InputError] = field(default_factory=list)


def read_source(path: str | PathLike[str]) -> SourceText:
    """Read and decode a file (see the module rules).

    Raises :class:`InputErrors` when the file cannot be read at all (missing,
    a directory, no permission). Decoding errors do not raise: they are in
    ``SourceText.errors`` for the reader to report with its own errors.
    """
    name = str(path)
    with _reading(name):
        _refuse_device(path)
        data = Path(path).read_bytes()
    return decode_source(data, name)


def _refuse_device(path: str | PathLike[str]) -> None:
    if is_device(path):
        raise InputErrors([InputError(
            file=str(path), message="is a device, not a file (it may never end)",
            hint="give the path of a file")])


def is_device(path: str | PathLike[str]) -> bool:
    """Is ``path`` a character or block device (``/dev/zero`` never ends)?"""
    mode = os.stat(path).st_mode
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def decode_source(data: bytes, name: str) -> SourceText:
    """Decode UTF-8 bytes named ``name`` (used in error messages)."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    if b"\x00" in data:
        return _decode_by_line(data, name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _decode_by_line(data, name)
    return SourceText(name, _normalize_newlines(text))


def _normalize_newlines(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _decode_by_line(data: bytes, name: str) -> SourceText:
    """Slow path for invalid UTF-8 or NUL bytes: decode line by line, blank the bad lines.

    Stops at :data:`~evalcore.io.errors.STOP_AFTER` bad lines (a binary file or
    the wrong encoding): the reader's :class:`~evalcore.io.errors.ErrorLog` then
    stops at the last of them and says so, and the rest is never decoded.
    """
    raw = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    lines: list[str] = []
    errors: list[InputError] = []
    for number, chunk in enumerate(raw, start=1):
        if len(errors) >= STOP_AFTER:
            break
        line, error = decode_line(chunk, number, name)
        lines.append(line)
        if error is not None:
            errors.append(error)
    return SourceText(name, "\n".join(lines), errors)


def decode_line(chunk: bytes, number: int, name: str) -> tuple[str, InputError | None]:
    """One line's text, or ``""`` and the error (a NUL byte, invalid UTF-8) naming its line."""
    nul = chunk.find(b"\x00")
    if nul >= 0:
        return "", InputError(
            file=name,
            line=number,
            message=f"holds a NUL byte (0x00 at column {nul + 1})",
            hint="save the file as UTF-8 text (a NUL byte means UTF-16 or binary data)",
        )
    try:
        return chunk.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return "", InputError(
            file=name,
            line=number,
            message=f"not valid UTF-8 (byte 0x{chunk[exc.start]:02x} at column {exc.start + 1})",
            hint="save the file as UTF-8",
        )


def stream_lines(
    path: str | PathLike[str], log: ErrorLog, *, max_line_bytes: int
) -> Iterator[tuple[int, str]]:
    """``read_source`` then ``numbered_lines(comments=False)``, a line at a time from the file.

    The same rules and line numbers (BOM, LF/CRLF/CR, blank lines skipped), but
    the file is never held in memory: decoding errors go to ``log`` as they are
    met, and a line longer than ``max_line_bytes`` is an error, skipped without
    being read into memory. Raises :class:`InputErrors` like :func:`read_source`
    when the file cannot be read at all.
    """
    name = str(path)
    with _reading(name):
        _refuse_device(path)
        file = open(path, "rb")  # noqa: SIM115 - closed below; the generator owns it
    with file:
        number = 0
        first = True
        while raw := file.readline(max_line_bytes + 1):
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                number += 1
                log.add(number, None, f"line longer than {max_line_bytes:,} bytes",
                        "one line holds one record; is this the right file?")
                while raw and not raw.endswith(b"\n"):  # skip the rest of that line
                    raw = file.readline(max_line_bytes + 1)
                continue
            if first and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8) :]
            first = False
            raw = raw[:-1] if raw.endswith(b"\n") else raw
            raw = raw[:-1] if raw.endswith(b"\r") else raw  # CRLF
            for chunk in raw.split(b"\r"):  # a lone CR ends a line too
                number += 1
                text, error = decode_line(chunk, number, name)
                if error is not None:
                    log.append(error)
                elif text.strip():
                    yield number, text


@contextmanager
def _reading(name: str) -> Iterator[None]:
    """A file that cannot be opened or read, as the :class:`InputErrors` naming it."""
    try:
        yield
    except FileNotFoundError:
        raise InputErrors(
            [InputError(file=name, message="file not found", hint="check the path")]
        ) from None
    except IsADirectoryError:
        raise InputErrors(
            [InputError(file=name, message="is a directory, expected a file")]
        ) from None
    except OSError as exc:
        raise InputErrors(
            [InputError(file=name, message=f"cannot read file: {exc.strerror or exc}")]
        ) from None


def numbered_lines(text: str, *, comments: bool, first_line: int = 1) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` (1-based) for every line that holds data.

    Blank lines are skipped; with ``comments=True`` so are ``#`` comment lines.
    The yielded line has no line end but is otherwise untouched. ``first_line``
    is the number of the text's first line (for a chunk of a larger text).
    """
    return data_lines(text.split("\n"), comments=comments, first_line=first_line)


def data_lines(
    lines: Iterable[str], *, comments: bool, first_line: int = 1
) -> Iterator[tuple[int, str]]:
    """Like :func:`numbered_lines`, for lines already split (without line ends)."""
    for number, line in enumerate(lines, start=first_line):
        stripped = line.strip()
        if not stripped or (comments and stripped.startswith("#")):
            continue
        yield number, line


def first_line_of(source: SourceText, value: str) -> int | None:
    """The first line where ``value`` stands as a whole field (for messages about a value).

    A field is delimited by the line's ends, spaces, tabs, commas or double
    quotes, so this finds an id in TREC, CSV and JSONL lines alike (an id that
    JSON escapes is not found: None).
    """
    field = re.compile(r'(?:^|(?<=[\s,"]))' + re.escape(value) + r'(?=[\s,"]|$)')
    for number, line in numbered_lines(source.text, comments=False):
        if value in line and field.search(line):
            return number
    return None
