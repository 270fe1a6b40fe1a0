"""TREC document files: ``<DOC> <DOCNO>id</DOCNO> ... </DOC>``, plain or compressed, a file or a folder.

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
* A gzip, bzip2 or xz file (told by its content, whatever its name) is
  decompressed as it is read, within the bounds of :mod:`evalcore.io.decompress`.
* Files are read a block at a time and hold at most one document in memory:
  a document larger than ``ReadLimits.max_document_bytes`` (default 10 MiB)
  stops reading at once with an error naming its line and ``--max-document-mib``.
* A folder is read recursively in name order; hidden files are skipped, and a
  file holding no ``<DOC>`` at all (a README of the collection) is skipped with
  a warning. A single file with no ``<DOC>`` is an error.

Encoding and line numbers follow :mod:`evalcore.io.text_lines` (UTF-8; errors
name the file and line).
"""

from __future__ import annotations

import codecs
import html
import re
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

from evalcore.contract.limits import (
    DEFAULT_LIMITS,
    DOCUMENT_OPTION,
    MAX_ID_CHARS,
    ReadLimits,
    size_text,
)
from evalcore.io.decompress import BLOCK, Opened, open_input
from evalcore.io.errors import STOP_AFTER, ErrorLog, InputErrors, show_value
from evalcore.io.progress import reporter
from evalcore.io.text_lines import SourceText, decode_lines

_DOC_OPEN = re.compile(r"<DOC\s*>", re.IGNORECASE)
_DOC_CLOSE = re.compile(r"</DOC\s*>", re.IGNORECASE)
_DOCNO = re.compile(r"<DOCNO\s*>(.*?)</DOCNO\s*>", re.IGNORECASE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TAG = re.compile(r"<[^<>]*>")
#: How much of a text's end may be the start of a ``<DOC>`` or ``</DOC>`` tag cut by a block.
_TAG_TAIL = 32
#: The hint of a file or folder holding no document.
_DOC_SHAPE = "TREC documents look like <DOC><DOCNO>id</DOCNO> text</DOC>"


@dataclass
class DocumentSet:
    """Documents read from files: id -> (title, text) in file order, and where each was read."""

    name: str
    documents: dict[str, tuple[str, str]] = field(default_factory=dict)
    where: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: int = 0


def read_trec_documents(
    path: str | PathLike[str], *, limits: ReadLimits = DEFAULT_LIMITS
) -> DocumentSet:
    """Read a TREC document file or a folder of them; raise InputErrors with every error."""
    root = Path(path)
    out = DocumentSet(str(root))
    failures: list[InputErrors] = []
    files = _files(root) if root.is_dir() else [root]
    if root.is_dir() and not files:
        raise InputErrors.one(
            str(root), "the folder holds no file", "give a folder of TREC <DOC> files"
        )
    reporter().stage(f"reading {root.name}", sum(_size(f) for f in files), "B")
    compressed = 0
    for file in files:
        try:
            with open_input(file, limits=limits, stage=False) as opened:
                found = read_trec_stream(opened, out, in_folder=root.is_dir(), limits=limits)
                compressed += opened.compression is not None
        except InputErrors as exc:
            failures.append(exc)
            if sum(f.total for f in failures) >= STOP_AFTER:
                break
            continue
        if found:
            out.files += 1
    if failures:
        raise InputErrors.combined(failures)
    if not out.documents:
        raise InputErrors.one(str(root), "no <DOC> found", _DOC_SHAPE)
    if compressed:
        out.notes.append(f"{root}: {compressed} compressed file(s) decompressed while read")
    return out


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*")
                  if p.is_file() and not any(part.startswith(".")
                                             for part in p.relative_to(root).parts))


def read_trec_stream(
    opened: Opened, into: DocumentSet, *, in_folder: bool = False,
    limits: ReadLimits = DEFAULT_LIMITS,
) -> int:
    """Add the documents of one opened file to ``into``, a block at a time; return how many.

    Memory holds one block and at most one document: a document (or a line)
    larger than ``limits.max_document_bytes`` stops reading at once, naming
    its line and the option that raises the bound.
    """
    log = ErrorLog(opened.name)
    scanner = _Scanner(opened.name, into, log, limits.max_document_bytes, in_folder)
    stream = opened.stream
    rest = b""
    first = True
    while True:
        data = stream.read(BLOCK)
        cut = data.rfind(b"\n") + 1 if data else len(data)
        if data and cut == 0:  # no line end in this block: the line goes on
            rest += data
            if len(rest) > limits.max_document_bytes:
                raise scanner.too_large()
            continue
        block = rest + data[:cut] if rest else data[:cut]
        rest = data[cut:]
        if first and block.startswith(codecs.BOM_UTF8):
            block = block[len(codecs.BOM_UTF8):]
        first = False
        if block:  # a bad line is logged and blanked, as in any input
            decoded = decode_lines(block, opened.name, first_line=scanner.line)
            log.extend(decoded.errors)
            scanner.feed(decoded.text, final=not data)
        if not data:
            break
    return scanner.finish()


def parse_trec_documents(source: SourceText, *, limits: ReadLimits = DEFAULT_LIMITS
                         ) -> DocumentSet:
    """The documents of one decoded text; raise InputErrors with every error."""
    out = DocumentSet(source.name, notes=source.notes())
    log = ErrorLog.of(source)
    scanner = _Scanner(source.name, out, log, limits.max_document_bytes, in_folder=False)
    scanner.feed(source.text, final=True)
    scanner.finish()
    return out


class _Scanner:
    """Finds ``<DOC>...</DOC>`` elements in text fed a block at a time (see the module rules).

    ``buf`` holds what is not consumed yet: the open document, or the end of
    a gap that may be the start of a tag cut by the block's end. ``line`` is
    the line number of ``buf[0]``.
    """

    def __init__(self, name: str, out: DocumentSet, log: ErrorLog, limit: int,
                 in_folder: bool) -> None:
        self.name, self.out, self.log, self.limit, self.in_folder = name, out, log, limit, in_folder
        self.buf = ""
        self.line = 1
        self.in_doc = False
        self.doc_line = 0
        self.body_from = 0
        self.search_from = 0
        self.gap_logged = False
        self.held: list[tuple[int, str]] = []  # text outside <DOC> before the first one
        self.found = 0

    def feed(self, text: str, *, final: bool = False) -> None:
        buf = self.buf + text if self.buf else text
        counter = _LineCounter(buf, self.line)
        pos = 0
        while True:
            if not self.in_doc:
                opened = _DOC_OPEN.search(buf, pos)
                stop = opened.start() if opened else len(buf) if final else _tail(buf, pos)
                self._gap(buf, pos, stop, counter)
                pos = stop
                if opened is None:
                    break
                self.in_doc, self.gap_logged = True, False
                self.doc_line = counter.line(opened.start())
                self.body_from = self.search_from = opened.end()
                pos = opened.start()
                self._flush_held()
                continue
            closed = _DOC_CLOSE.search(buf, self.search_from)
            if closed is None:
                if len(buf) - self.body_from > self.limit:
                    raise self.too_large()
                self.search_from = max(self.body_from, len(buf) - _TAG_TAIL)
                break
            self._document(buf, self.body_from, closed.start(), counter)
            self.in_doc = False
            self.found += 1
            pos = closed.end()
        # Keep the unconsumed text only, re-based at ``pos``.
        self.line = counter.line(pos)
        self.body_from -= pos
        self.search_from -= pos
        self.buf = buf[pos:]

    def finish(self) -> int:
        if self.in_doc:
            hint = "close every <DOC> with </DOC>"
            self.log.add(self.doc_line, "DOC", "a <DOC> without its </DOC>", hint)
        if not self.found and not self.log:
            if self.in_folder:
                self.out.warnings.append(f"{self.name}: skipped, it holds no <DOC>")
                return 0
            self._flush_held()
            if not self.log:
                self.log.add(None, None, "no <DOC> found", _DOC_SHAPE)
        elif self.found:
            self._flush_held()
        self.log.raise_if_any()
        return self.found

    def too_large(self) -> InputErrors:
        """Reading stops: the open document (or, between documents, a line) is too large."""
        what = "a <DOC> larger than" if self.in_doc else "a line longer than"
        return InputErrors.one(
            self.name,
            f"{what} {size_text(self.limit)} with no </DOC>: "
            "one document may not be larger; reading stopped here",
            f"is this the right file? raise the bound with {DOCUMENT_OPTION} if it is",
            line=self.doc_line if self.in_doc else self.line,
            field="DOC" if self.in_doc else None,
        )

    def _gap(self, buf: str, start: int, end: int, counter: _LineCounter) -> None:
        """Only whitespace may stand between documents (one error per stretch of text)."""
        if self.gap_logged or start >= end:
            return
        gap = buf[start:end]
        stripped = gap.lstrip()
        if not stripped:
            return
        line = counter.line(start + len(gap) - len(stripped))
        message = f"text outside any <DOC>: {show_value(stripped.strip()[:40])}"
        self.gap_logged = True
        if self.found or not self.in_folder:
            self.log.add(line, None, message, "the file holds only <DOC>...</DOC> elements")
        elif len(self.held) < 1:  # a folder's README: an error only if <DOC>s follow
            self.held.append((line, message))

    def _flush_held(self) -> None:
        for line, message in self.held:
            self.log.add(line, None, message, "the file holds only <DOC>...</DOC> elements")
        self.held.clear()

    def _document(self, buf: str, start: int, end: int, counter: _LineCounter) -> None:
        line = self.doc_line
        body = buf[start:end]
        log, out = self.log, self.out
        nested = _DOC_OPEN.search(body)
        if nested:
            problem = f"a <DOC> inside the <DOC> of line {line}"
            hint = "the document before it lacks its </DOC>"
            log.add(counter.line(start + nested.start()), "DOC", problem, hint)
            return
        if len(body) > self.limit // 4 and len(body.encode("utf-8")) > self.limit:
            hint = f"raise the bound with {DOCUMENT_OPTION} if it is genuine"
            log.add(line, "DOC", f"a <DOC> larger than {size_text(self.limit)}", hint)
            return
        numbers = list(_DOCNO.finditer(body))
        if len(numbers) != 1:
            message = f"{len(numbers)} <DOCNO> elements" if numbers else "no <DOCNO>...</DOCNO>"
            log.add(line, "DOCNO", f"the document has {message}", "each <DOC> has one <DOCNO>")
            return
        doc_id = plain_text(numbers[0].group(1)).strip()
        if not doc_id:
            log.add(line, "DOCNO", "empty document id")
            return
        if len(doc_id) > MAX_ID_CHARS:
            problem = f"an id of {len(doc_id):,} characters (at most {MAX_ID_CHARS:,})"
            log.add(line, "DOCNO", problem)
            return
        here = f"{self.name}:{line}"
        first = out.where.setdefault(doc_id, here)
        if first != here:
            problem = f"document id {show_value(doc_id)} repeats {first}"
            log.add(line, "DOCNO", problem, "each document id appears once in a collection")
            return
        rest = body[: numbers[0].start()] + " " + body[numbers[0].end():]
        out.documents[doc_id] = ("", plain_text(rest))


def _tail(buf: str, pos: int) -> int:
    """Where the possible start of a tag cut by the block's end begins (``len(buf)`` if none)."""
    cut = buf.rfind("<", max(pos, len(buf) - _TAG_TAIL))
    return cut if cut >= 0 else len(buf)


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
    """The line of a text offset (``first`` is the text's first line), for offsets asked in
    increasing order (mostly)."""

    def __init__(self, text: str, first: int = 1) -> None:
        self.text = text
        self.first = first
        self.pos = 0
        self.number = first

    def line(self, offset: int) -> int:
        if offset < self.pos:
            return self.text.count("\n", 0, offset) + self.first
        self.number += self.text.count("\n", self.pos, offset)
        self.pos = offset
        return self.number
