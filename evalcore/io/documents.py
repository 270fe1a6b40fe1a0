"""Document files in the formats collections ship in: JSONL, TSV, CSV and TREC ``<DOC>`` files.

* JSONL/TSV/CSV (:mod:`evalcore.io.records`): the id, text and title fields are
  named by the caller (defaults ``id``, ``text``, ``title``; a BEIR corpus is
  ``--id-field _id``). The title is optional, the text may be empty.
  A TSV/CSV file may come without a header (``id<TAB>text`` as MS MARCO's
  ``collection.tsv``): see :class:`~evalcore.io.records.Layout`.
* TREC: :mod:`evalcore.io.trec_docs` (one file or a folder).

Any of them may be compressed (:mod:`evalcore.io.decompress`). ``fmt="auto"`` picks the
format from the name, a compression suffix dropped: a folder, ``.trec``, ``.sgml``,
``.xml``, ``.txt`` or a bare ``.gz`` is TREC; ``.jsonl``, ``.tsv`` and ``.csv`` are
themselves. A document larger than ``ReadLimits.max_document_bytes`` and a repeated id
(naming both lines) are errors; nothing is returned unless the whole input is valid. How a
file was read (without a header, decompressed) is in ``DocumentSet.notes``.
"""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Literal

from evalcore.contract.limits import DEFAULT_LIMITS, DOCUMENT_OPTION, ReadLimits, size_text
from evalcore.io.decompress import SUFFIXES, open_input, without_compression_suffix
from evalcore.io.errors import ErrorLog, InputErrors, show_value
from evalcore.io.records import AUTO, Layout, TableFormat, records, text_field
from evalcore.io.text_lines import SourceText, read_source
from evalcore.io.trec_docs import (
    DocumentSet,
    parse_trec_documents,
    read_trec_documents,
    read_trec_stream,
)

DocumentFormat = Literal["auto", "jsonl", "tsv", "csv", "trec"]
DOCUMENT_FORMATS: tuple[str, ...] = ("auto", "jsonl", "tsv", "csv", "trec")


@dataclass(frozen=True)
class DocumentFields:
    """Which fields of a JSONL/TSV/CSV record hold the id, the text and the title."""

    id: str = "id"
    text: str = "text"
    title: str = "title"


def detect_format(name: str, *, folder: bool = False) -> str:
    """The format a file name suggests (see the module docstring); '' when it does not."""
    if folder:
        return "trec"
    lower = without_compression_suffix(name).lower()
    for ext in ("jsonl", "tsv", "csv"):
        if lower.endswith("." + ext):
            return ext
    if lower.endswith((".trec", ".sgml", ".sgm", ".xml", ".txt")) or name.lower().endswith(
            SUFFIXES):
        return "trec"
    return ""


def resolve_format(fmt: str, name: str, *, folder: bool = False) -> str:
    """``fmt`` itself, or the detected format; InputErrors when ``auto`` cannot tell."""
    if fmt != "auto":
        return fmt
    found = detect_format(name, folder=folder)
    if not found:
        hint = "choose it with --format (jsonl, tsv, csv or trec)"
        raise InputErrors.one(name, "cannot tell the format from the file name", hint)
    return found


def read_documents(
    path: str | PathLike[str], fmt: DocumentFormat = "auto", fields: DocumentFields | None = None,
    *, layout: Layout = AUTO, limits: ReadLimits = DEFAULT_LIMITS,
) -> DocumentSet:
    """Read and validate a document file (or a TREC folder); raise InputErrors on any error."""
    root = Path(path)
    if not root.exists():
        raise InputErrors.one(str(root), "file not found", "check the path")
    chosen = resolve_format(fmt, root.name, folder=root.is_dir())
    if chosen == "trec":
        return read_trec_documents(root, limits=limits)
    if root.is_dir():
        raise InputErrors.one(
            str(root), f"a folder, but --format {chosen} reads one file", "give the file"
        )
    return parse_documents(read_source(root, limits=limits), chosen, fields, layout=layout,
                           limits=limits)


def documents_from_bytes(
    data: bytes, name: str, fmt: str, fields: DocumentFields | None = None, *,
    layout: Layout = AUTO, limits: ReadLimits = DEFAULT_LIMITS,
) -> DocumentSet:
    """Documents from uploaded bytes named ``name`` (compression told by content; TREC
    files streamed a document at a time); raise InputErrors on any error."""
    if fmt != "trec":
        return parse_documents(read_source(data, name, limits=limits), fmt, fields,
                               layout=layout, limits=limits)
    out = DocumentSet(name)
    with open_input(data, name, limits=limits) as opened:
        read_trec_stream(opened, out, limits=limits)
        if opened.compression:
            out.notes.append(f"{name}: {opened.compression}-compressed; decompressed while read")
    return out


def parse_documents(
    source: SourceText, fmt: str, fields: DocumentFields | None = None, *,
    layout: Layout = AUTO, limits: ReadLimits = DEFAULT_LIMITS,
) -> DocumentSet:
    """Documents from decoded text (an upload or a file); raise InputErrors on any error."""
    if fmt == "trec":
        return parse_trec_documents(source, limits=limits)
    names = fields or DocumentFields()
    log = ErrorLog.of(source)
    out = DocumentSet(source.name, notes=source.notes())
    first: dict[str, int] = {}
    table: TableFormat = fmt  # type: ignore[assignment]
    limit = limits.max_document_bytes
    headerless = (names.id, names.text)
    rows = records(source, table, log, needed=(names.id,), headerless=headerless, layout=layout,
                   notes=out.notes)
    for number, record in rows:
        doc_id = text_field(record, names.id, number, log, required=True, identifier=True)
        text = text_field(record, names.text, number, log, required=False)
        title = text_field(record, names.title, number, log, required=False)
        if doc_id is None or text is None or title is None:
            continue
        size = len(text) + len(title)
        if size > limit // 4 and len(text.encode()) + len(title.encode()) > limit:
            hint = f"raise the bound with {DOCUMENT_OPTION} if it is genuine"
            log.add(number, names.text, f"a document larger than {size_text(limit)}", hint)
            continue
        line = first.setdefault(doc_id, number)
        if line != number:
            problem = f"document id {show_value(doc_id)} repeats line {line}"
            log.add(number, names.id, problem, "each document id appears once")
            continue
        out.documents[doc_id] = (title, text)
    log.finish(out.documents, "no document in the file")
    return out
