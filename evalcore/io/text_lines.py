"""Decoding and line splitting shared by every line-oriented reader.

Rules, the same for every format:

* a file (or an upload) may be gzip, bzip2 or xz compressed, told by its first
  bytes, and is decompressed as it is read, within the bounds of
  :mod:`evalcore.io.decompress`;
* no line may be longer than ``ReadLimits.max_document_bytes`` (one record,
  one document): reading stops at the first that is, naming its line;
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

Use :func:`read_source` for a path or uploaded bytes (:func:`decode_source` for bytes known
to be plain text), then :func:`numbered_lines` to iterate; :func:`stream_lines` reads a file
of any size a line at a time.
"""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from os import PathLike

from evalcore.contract.limits import DEFAULT_LIMITS, DOCUMENT_OPTION, ReadLimits, size_text
from evalcore.io.decompress import BLOCK, Opened, open_input
from evalcore.io.errors import STOP_AFTER, ErrorLog, InputError, InputErrors


@dataclass(frozen=True)
class SourceText:
    """A decoded input: ``text`` has ``\\n`` line ends; ``errors`` are its decoding errors."""

    name: str
    text: str
    errors: list[InputError] = field(default_factory=list)
    #: "gzip", "bzip2" or "xz" when the input was decompressed while read.
    compression: str | None = None

    def notes(self) -> list[str]:
        """How the input was read, for an import's summary (empty for plain text)."""
        if self.compression is None:
            return []
        return [f"{self.name}: {self.compression}-compressed; decompressed while read"]


def read_source(
    source: str | PathLike[str] | bytes, name: str | None = None, *,
    limits: ReadLimits = DEFAULT_LIMITS, stage: bool = True, fields: Sequence[str] = (),
) -> SourceText:
    """Read and decode a file, or uploaded bytes named ``name`` (see the module rules).

    Raises :class:`InputErrors` when the input cannot be read at all, unpacks past ``limits``
    or has a line longer than ``limits.max_document_bytes`` (reading stops there: memory
    stays bounded); decoding errors are in ``SourceText.errors``, for the reader to report
    with its own. ``fields``: the names of the blank-separated fields of a line (TREC), so a
    bad byte's error names its field.
    """
    with open_input(source, name, limits=limits, stage=stage) as opened:
        data = read_bounded(opened, limits.max_document_bytes)
    return replace(decode_source(data, opened.name, fields), compression=opened.compression)


def is_device(path: str | PathLike[str]) -> bool:
    """Is ``path`` a character or block device (``/dev/zero`` never ends)?"""
    mode = os.stat(path).st_mode
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def read_bounded(opened: Opened, max_line_bytes: int) -> bytes:
    """Every byte of an opened input; :class:`InputErrors` at the first line longer than
    ``max_line_bytes`` (read a block at a time, so a huge line is never held whole)."""
    block = min(BLOCK, max_line_bytes)
    chunks: list[bytes] = []
    since = 0  # bytes since the last line end
    while chunk := opened.stream.read(block):
        first = chunk.find(b"\n")
        if first < 0:
            since += len(chunk)
        elif since + first <= max_line_bytes:
            since = len(chunk) - chunk.rfind(b"\n") - 1
        else:
            since += first
        if since > max_line_bytes:
            line = sum(c.count(b"\n") for c in chunks) + chunk.count(b"\n", 0, max(first, 0)) + 1
            raise InputErrors.one(
                opened.name,
                f"a line longer than {size_text(max_line_bytes)}: one record (one "
                "document) may not be larger; reading stopped here",
                f"is this the right file? raise the bound with {DOCUMENT_OPTION} if it is",
                line=line,
            )
        chunks.append(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def decode_source(data: bytes, name: str, fields: Sequence[str] = ()) -> SourceText:
    """Decode UTF-8 bytes named ``name`` (used in error messages), a leading byte-order mark
    dropped (``fields``: see :func:`read_source`)."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    return decode_lines(data, name, fields)


def decode_lines(
    data: bytes, name: str, fields: Sequence[str] = (), *, first_line: int = 1
) -> SourceText:
    """Decode UTF-8 lines (the first is line ``first_line``) with ``\\n`` line ends.

    A line that is not UTF-8 or holds a NUL is blanked and its error kept; decoding stops
    at :data:`~evalcore.io.errors.STOP_AFTER` bad lines (a binary file or the wrong
    encoding): the reader's :class:`~evalcore.io.errors.ErrorLog` then stops at the last
    of them and says so, and the rest is never decoded.
    """
    if b"\x00" not in data:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return SourceText(name, text.replace("\r\n", "\n").replace("\r", "\n"))
    raw = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    lines: list[str] = []
    errors: list[InputError] = []
    for number, chunk in enumerate(raw, start=first_line):
        if len(errors) >= STOP_AFTER:
            break
        line, error = decode_line(chunk, number, name, fields)
        lines.append(line)
        if error is not None:
            errors.append(error)
    return SourceText(name, "\n".join(lines), errors)


def decode_line(chunk: bytes, number: int, name: str,
                fields: Sequence[str] = ()) -> tuple[str, InputError | None]:
    """One line's text, or ``""`` and the error (a NUL byte, invalid UTF-8) naming its line
    (and, given the names of its blank-separated ``fields``, the field holding the NUL)."""
    nul = chunk.find(b"\x00")
    if nul >= 0:
        return "", InputError(
            file=name,
            line=number,
            field=_field_at(chunk, nul, fields),
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


def _field_at(chunk: bytes, at: int, fields: Sequence[str]) -> str | None:
    """The name of the blank-separated field of ``chunk`` holding byte ``at`` (None: no
    names given, or more fields than names)."""
    before = chunk[:at]
    index = len(before.split()) - (1 if before and not before[-1:].isspace() else 0)
    return fields[index] if 0 <= index < len(fields) else None


def stream_lines(
    path: str | PathLike[str], log: ErrorLog, *, max_line_bytes: int,
    limits: ReadLimits = DEFAULT_LIMITS,
) -> Iterator[tuple[int, str]]:
    """``read_source`` then ``numbered_lines(comments=False)``, a line at a time from the file.

    The same rules and line numbers, but the file is never held in memory: decoding errors
    go to ``log`` as they are met, and a line longer than ``max_line_bytes`` is an error,
    skipped without being read into memory.
    """
    with open_input(path, limits=limits) as opened:
        number = 0
        while raw := opened.stream.readline(max_line_bytes + 1):
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                number += 1
                hint = (f"one line holds one record; is this the right file? ({DOCUMENT_OPTION} "
                        "raises the bound)")
                log.add(number, None, f"line longer than {max_line_bytes:,} bytes", hint)
                while raw and not raw.endswith(b"\n"):  # skip the rest of that line
                    raw = opened.stream.readline(max_line_bytes + 1)
                continue
            if number == 0 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8) :]
            raw = raw[:-1] if raw.endswith(b"\n") else raw
            raw = raw[:-1] if raw.endswith(b"\r") else raw  # CRLF
            for chunk in raw.split(b"\r"):  # a lone CR ends a line too
                number += 1
                text, error = decode_line(chunk, number, opened.name)
                if error is not None:
                    log.append(error)
                elif text.strip():
                    yield number, text


def numbered_lines(text: str, *, comments: bool, first_line: int = 1) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` for every line that holds data (no line end, otherwise
    untouched): blank lines are skipped, and with ``comments=True`` ``#`` comment lines."""
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
    text = source.text
    start = text.find(value)
    while start >= 0:  # (str.find, not a regex: the value may be a 10 MB id)
        end = start + len(value)
        before = text[start - 1] if start else "\n"
        after = text[end] if end < len(text) else "\n"
        if before in _FIELD_EDGE and after in _FIELD_EDGE:
            return text.count("\n", 0, start) + 1
        start = text.find(value, start + 1)
    return None


#: What may stand on either side of a field for :func:`first_line_of`.
_FIELD_EDGE = frozenset(' \t\n\r\x0b\x0c,"')
