"""Document files in the formats collections ship in: JSONL, TSV, CSV and TREC ``<DOC>`` files.

* JSONL/TSV/CSV (:mod:`evalcore.io.records`): the id, text and title fields are
  named by the caller (defaults ``id``, ``text``, ``title``; a BEIR corpus is
  ``--id-field _id``). The title is optional, the text may be empty.
* TREC: :mod:`evalcore.io.trec_docs` (plain or gzip, one file or a folder).

``fmt="auto"`` picks the format from the name: a folder, ``.trec``, ``.sgml``,
``.xml``, ``.txt`` or a ``.gz`` of those is TREC; ``.jsonl``, ``.tsv`` and
``.csv`` are themselves. A repeated id is an error naming both lines. Every
error of a file is reported in one pass (file, line, field); nothing is
returned unless the whole input is valid.
"""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Literal

from evalcore.io.errors import ErrorLog, InputError, InputErrors, show_value
from evalcore.io.records import TableFormat, records, text_field
from evalcore.io.text_lines import SourceText, read_source
from evalcore.io.trec_docs import DocumentSet, parse_trec_documents, read_trec_documents

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
    lower = name.lower().removesuffix(".gz")
    for ext in ("jsonl", "tsv", "csv"):
        if lower.endswith("." + ext):
            return ext
    if lower.endswith((".trec", ".sgml", ".sgm", ".xml", ".txt")) or name.lower().endswith(".gz"):
        return "trec"
    return ""


def resolve_format(fmt: str, name: str, *, folder: bool = False, kinds: str = "jsonl, tsv, "
                   "csv or trec") -> str:
    """``fmt`` itself, or the detected format; InputErrors when ``auto`` cannot tell."""
    if fmt != "auto":
        return fmt
    found = detect_format(name, folder=folder)
    if not found:
        raise InputErrors([InputError(
            file=name, message="cannot tell the format from the file name",
            hint=f"choose it with --format ({kinds})")])
    return found


def read_documents(
    path: str | PathLike[str], fmt: DocumentFormat = "auto", fields: DocumentFields | None = None
) -> DocumentSet:
    """Read and validate a document file (or a TREC folder); raise InputErrors on any error."""
    root = Path(path)
    if not root.exists():
        raise InputErrors([InputError(file=str(root), message="file not found",
                                      hint="check the path")])
    chosen = resolve_format(fmt, root.name, folder=root.is_dir())
    if chosen == "trec":
        return read_trec_documents(root)
    if root.is_dir():
        raise InputErrors([InputError(file=str(root), message=f"a folder, but --format {chosen} "
                                      "reads one file", hint="give the file")])
    return parse_documents(read_source(root), chosen, fields)  # type: ignore[arg-type]


def parse_documents(
    source: SourceText, fmt: str, fields: DocumentFields | None = None
) -> DocumentSet:
    """Documents from decoded text (an upload or a file); raise InputErrors on any error."""
    if fmt == "trec":
        out = DocumentSet(source.name)
        parse_trec_documents(source, out)
        return out
    names = fields or DocumentFields()
    log = ErrorLog(source.name)
    out = DocumentSet(source.name)
    first: dict[str, int] = {}
    table: TableFormat = fmt  # type: ignore[assignment]
    for number, record in records(source, table, log, needed=(names.id,)):
        doc_id = text_field(record, names.id, number, log, required=True, identifier=True)
        text = text_field(record, names.text, number, log, required=False)
        title = text_field(record, names.title, number, log, required=False)
        if doc_id is None or text is None or title is None:
            continue
        line = first.setdefault(doc_id, number)
        if line != number:
            log.add(number, names.id, f"document id {show_value(doc_id)} repeats line {line}",
                    "each document id appears once")
            continue
        out.documents[doc_id] = (title, text)
    if not out.documents and not log:
        log.add(None, None, "no document in the file")
    log.raise_if_any()
    return out
