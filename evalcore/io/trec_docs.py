"""TREC document files: ``<DOC> <DOCNO>id</DOCNO> ... </DOC>``, plain or gzip, one file or a folder.

* Each ``<DOC>...</DOC>`` element is one document; its id is the text of its
  one ``<DOCNO>`` element (surrounding spaces removed).
* The document's text is everything else inside the ``<DOC>``: every tag
  (``<TEXT>``, ``<HEADLINE>``, ``<P>``, SGML comments) is removed and character
  entities (``&amp;``) are decoded. The text is plain text from then on; it is
  never interpreted as HTML when shown (the app renders it escaped).
* Tags are matched case-insensitively (``<doc>``, ``<DocNo>``).
* Between documents only whitespace may stand. A ``<DOC>`` without its
  ``</DOC>``, a nested ``<DOC>``, a document with no or two ``<DOCNO>``, an
  empty id and an id repeated (in the same file or another one of the folder,
  naming both places) are errors.
* A file whose name ends in ``.gz`` is decompressed (at most
  :data:`MAX_DECOMPRESSED` bytes per file: a decompression bomb is refused).
* A folder is read recursively in name order; hidden files are skipped, and a
  file holding no ``<DOC>`` at all (a README of the collection) is skipped with
  a warning. A single file with no ``<DOC>`` is an error.

Encoding and line numbers follow :mod:`evalcore.io.text_lines` (UTF-8; errors
name the file and line).
"""

from __future__ import annotations

import gzip
import html
import io
import re
import zlib
from collections.abc import Callable
from os import PathLike
from pathlib import Path

from evalcore.io.errors import ErrorLog, InputError, InputErrors, show_value
from evalcore.io.text_lines import SourceText, decode_source, read_source

#: Largest decompressed size of one ``.gz`` file (bytes).
MAX_DECOMPRESSED = 2 * 1024**3

_DOC = re.compile(r"<DOC\s*>(.*?)</DOC\s*>", re.IGNORECASE | re.DOTALL)
_DOC_OPEN = re.compile(r"<DOC\s*>", re.IGNORECASE)
_DOCNO = re.compile(r"<DOCNO\s*>(.*?)</DOCNO\s*>", re.IGNORECASE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TAG = re.compile(r"<[^<>]*>")


class DocumentSet:
    """Documents read from files: id -> (title, text) in file order, and where each was read."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.documents: dict[str, tuple[str, str]] = {}
        self.where: dict[str, str] = {}
        self.warnings: list[str] = []
        self.files = 0


def read_trec_documents(path: str | PathLike[str]) -> DocumentSet:
    """Read a TREC document file or a folder of them; raise InputErrors with every error."""
    root = Path(path)
    out = DocumentSet(str(root))
    errors: list[InputError] = []
    total = 0
    files = _files(root) if root.is_dir() else [root]
    if root.is_dir() and not files:
        raise InputErrors([InputError(file=str(root), message="the folder holds no file",
                                      hint="give a folder of TREC <DOC> files")])
    for file in files:
        try:
            source = read_text_file(file)
            found = parse_trec_documents(source, out, in_folder=root.is_dir())
        except InputErrors as exc:
            errors.extend(exc.errors)
            total += exc.total
            if total >= 1_000:
                break
            continue
        if found:
            out.files += 1
    if errors:
        raise InputErrors([e for e in errors if not e.stop][:200] + [e for e in errors if e.stop],
                          total)
    if not out.documents:
        raise InputErrors([InputError(file=str(root), message="no <DOC> found",
                                      hint="TREC documents look like <DOC><DOCNO>id</DOCNO> "
                                           "text</DOC>")])
    return out


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*")
                  if p.is_file() and not any(part.startswith(".")
                                             for part in p.relative_to(root).parts))


def read_text_file(file: Path) -> SourceText:
    """A text file decoded; a ``.gz`` file decompressed first (bounded)."""
    if file.suffix.lower() != ".gz":
        return read_source(file)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise InputErrors([InputError(file=str(file), message=f"cannot read file: "
                                      f"{exc.strerror or exc}")]) from None
    return gunzip_source(data, str(file))


def gunzip_source(data: bytes, name: str) -> SourceText:
    """Decompress gzip bytes (at most :data:`MAX_DECOMPRESSED`) and decode them."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") as stream:
            text = stream.read(MAX_DECOMPRESSED + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputErrors([InputError(file=name, message=f"not a readable gzip file ({exc})",
                                      hint="decompress it and check it, or give the plain file")]
                          ) from None
    if len(text) > MAX_DECOMPRESSED:
        raise InputErrors([InputError(
            file=name, message=f"decompresses to more than {MAX_DECOMPRESSED:,} bytes",
            hint="split the collection into smaller files")])
    return decode_source(text, name)


def parse_trec_documents(
    source: SourceText, into: DocumentSet | None = None, *, in_folder: bool = False
) -> int:
    """Add the documents of one decoded file to ``into``; return how many it held."""
    out = into if into is not None else DocumentSet(source.name)
    log = ErrorLog(source.name)
    log.extend(source.errors)
    text = source.text
    counter = _LineCounter(text)
    found = 0
    end = 0
    for match in _DOC.finditer(text):
        _gap(text, end, match.start(), counter, log)
        end = match.end()
        found += 1
        line = counter.line(match.start())
        body = match.group(1)
        nested = _DOC_OPEN.search(body)
        if nested:
            log.add(counter.line(match.start(1) + nested.start()), "DOC",
                    f"a <DOC> inside the <DOC> of line {line}",
                    "the document before it lacks its </DOC>")
            continue
        numbers = list(_DOCNO.finditer(body))
        if len(numbers) != 1:
            message = "no <DOCNO>...</DOCNO>" if not numbers else (
                f"{len(numbers)} <DOCNO> elements")
            log.add(line, "DOCNO", f"the document has {message}", "each <DOC> has one <DOCNO>")
            continue
        doc_id = plain_text(numbers[0].group(1)).strip()
        if not doc_id:
            log.add(line, "DOCNO", "empty document id")
            continue
        if len(doc_id) > 1024:
            log.add(line, "DOCNO", f"an id of {len(doc_id):,} characters (at most 1,024)")
            continue
        here = f"{source.name}:{line}"
        first = out.where.setdefault(doc_id, here)
        if first != here:
            log.add(line, "DOCNO", f"document id {show_value(doc_id)} repeats {first}",
                    "each document id appears once in a collection")
            continue
        rest = body[: numbers[0].start()] + " " + body[numbers[0].end():]
        out.documents[doc_id] = ("", plain_text(rest))
    if found or not in_folder:
        _gap(text, end, len(text), counter, log)
    if not found and not log:
        if in_folder:
            out.warnings.append(f"{source.name}: skipped, it holds no <DOC>")
            return 0
        log.add(None, None, "no <DOC> found",
                "TREC documents look like <DOC><DOCNO>id</DOCNO> text</DOC>")
    log.raise_if_any()
    return found


def _gap(text: str, start: int, end: int, counter: _LineCounter, log: ErrorLog) -> None:
    between_elements(text, start, end, _DOC_OPEN, "DOC", counter.line, log)


def between_elements(text: str, start: int, end: int, opener: re.Pattern[str], tag: str,
                     line_of: Callable[[int], int], log: ErrorLog) -> None:
    """Only whitespace may stand between ``<tag>`` elements; an unclosed one is named too."""
    gap = text[start:end]
    if not gap.strip():
        return
    opened = opener.search(gap)
    before = gap[: opened.start()] if opened else gap
    if before.strip():
        log.add(line_of(start + len(before) - len(before.lstrip())), None,
                f"text outside any <{tag}>: {show_value(before.strip()[:40])}",
                f"the file holds only <{tag}>...</{tag}> elements")
    if opened:
        log.add(line_of(start + opened.start()), tag, f"a <{tag}> without its </{tag}>",
                f"close every <{tag}> with </{tag}>")


def plain_text(markup: str) -> str:
    """SGML/HTML-ish markup as plain text: tags and comments removed, entities decoded.

    Runs of spaces become one space; blank lines are dropped.
    """
    if "<!--" in markup:
        markup = _COMMENT.sub(" ", markup)
    text = _TAG.sub(" ", markup) if "<" in markup else markup
    if "&" in text:
        text = html.unescape(text)
    return "\n".join(filter(None, (" ".join(line.split()) for line in text.split("\n"))))


class _LineCounter:
    """1-based line of a text offset, for offsets asked in increasing order (mostly)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.number = 1

    def line(self, offset: int) -> int:
        if offset < self.pos:
            return self.text.count("\n", 0, offset) + 1
        self.number += self.text.count("\n", self.pos, offset)
        self.pos = offset
        return self.number
