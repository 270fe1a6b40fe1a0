"""Query files: JSONL, TSV, CSV or TREC topics, with an optional information need; id maps.

* JSONL/TSV/CSV (:mod:`evalcore.io.records`): fields named by the caller
  (defaults ``id``, ``text``, ``description``, ``narrative``; the last two are
  optional and form the query's information need). A TSV/CSV file without a
  header (``qid<TAB>text``, as MS MARCO, ColBERT and Pyserini ship queries) is
  read as ``id, text`` and a note says so (:class:`~evalcore.io.records.Layout`).
* TREC topics: ``<top> <num> Number: 301 <title> ... <desc> Description: ...
  <narr> Narrative: ... </top>``. The classic format leaves ``<num>``,
  ``<title>``, ``<desc>`` and ``<narr>`` unclosed: a field runs until the next
  field tag or ``</top>`` (closing tags are accepted too; tags match any case).
  ``num`` is the topic id (after an optional ``Number:`` label), ``title`` the
  query text (``Topic:`` removed), ``desc`` the description (``Description:``),
  ``narr`` the narrative, the assessor's guideline (``Narrative:``). Field text
  is plain text (tags removed, entities decoded, whitespace collapsed; never
  shown as HTML). A topic without a ``<num>`` or a title, a repeated id (naming
  both lines), a ``<top>`` without ``</top>`` and text outside any ``<top>`` are
  errors, each with file and line.

A **query map** (``--query-map FILE``) renames ids: a classic collection may
number its queries 1..225 in the topics file and differently in its judgments.
The map file has two columns per line, the id in the queries file and the id
the judgments use, separated by whitespace, a tab or a comma (``#`` comments
and blank lines skipped). With a map, every query must be in it; two queries
mapped to one id, or an id mapped twice, are errors naming the lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from os import PathLike
from pathlib import Path
from typing import Literal

from evalcore.contract.limits import DEFAULT_LIMITS, ReadLimits
from evalcore.io.documents import DOCUMENT_FORMATS, resolve_format
from evalcore.io.errors import ErrorLog, InputErrors, show_value
from evalcore.io.records import AUTO, Layout, TableFormat, records, text_field
from evalcore.io.text_lines import SourceText, numbered_lines, read_source
from evalcore.io.trec_docs import plain_text

QueryFormat = Literal["auto", "jsonl", "tsv", "csv", "trec"]
QUERY_FORMATS: tuple[str, ...] = DOCUMENT_FORMATS  # trec: TREC topics


@dataclass(frozen=True)
class QueryFields:
    """Which fields of a JSONL/TSV/CSV record hold the id, text and information need."""

    id: str = "id"
    text: str = "text"
    description: str = "description"
    narrative: str = "narrative"


@dataclass(frozen=True)
class QueryRecord:
    """A query as read: id, text and its information need (description, narrative)."""

    line: int
    query_id: str
    text: str
    description: str = ""
    narrative: str = ""


def read_queries(
    path: str | PathLike[str], fmt: QueryFormat = "auto", fields: QueryFields | None = None,
    *, layout: Layout = AUTO, limits: ReadLimits = DEFAULT_LIMITS,
    notes: list[str] | None = None,
) -> tuple[str, list[QueryRecord]]:
    """(file name, queries) of a query file; raise InputErrors with every error.

    How the file was read (without a header, decompressed) is added to ``notes``.
    """
    name = str(path)
    chosen = resolve_format(fmt, Path(name).name)
    return name, parse_queries(read_source(Path(name), limits=limits), chosen, fields,
                               layout=layout, notes=notes)


def parse_queries(
    source: SourceText, fmt: str, fields: QueryFields | None = None, *,
    layout: Layout = AUTO, notes: list[str] | None = None,
) -> list[QueryRecord]:
    """Queries from decoded text; raise InputErrors with every error (notes as
    :func:`read_queries`)."""
    if notes is not None:
        notes.extend(source.notes())
    log = ErrorLog.of(source)
    if fmt == "trec":
        topics = _trec_topics(source, log)
        hint = "TREC topics look like <top> <num> Number: 301 <title> ... </top>"
        log.finish(topics, "no <top> found", hint)
        return topics
    names = fields or QueryFields()
    out: list[QueryRecord] = []
    first: dict[str, int] = {}
    table: TableFormat = fmt  # type: ignore[assignment]
    for number, record in records(source, table, log, needed=(names.id, names.text),
                                  layout=layout, notes=notes):
        qid = text_field(record, names.id, number, log, required=True, identifier=True)
        text = text_field(record, names.text, number, log, required=True)
        desc = text_field(record, names.description, number, log, required=False)
        narr = text_field(record, names.narrative, number, log, required=False)
        if qid is None or text is None or desc is None or narr is None:
            continue
        line = first.setdefault(qid, number)
        if line != number:
            problem = f"query id {show_value(qid)} repeats line {line}"
            log.add(number, names.id, problem, "each query id appears once")
            continue
        out.append(QueryRecord(number, qid, text, desc, narr))
    log.finish(out, "no query in the file")
    return out


def read_query_map(path: str | PathLike[str]) -> dict[str, str]:
    """The id map of a two-column file (see the module docstring)."""
    return parse_query_map(read_source(path))


def parse_query_map(source: SourceText) -> dict[str, str]:
    log = ErrorLog.of(source)
    mapping: dict[str, str] = {}
    line_of: dict[str, int] = {}
    target_line: dict[str, int] = {}
    for number, text in numbered_lines(source.text, comments=True):
        cells = [c for c in text.replace(",", " ").split() if c]
        if len(cells) != 2:
            columns = "id in the queries file, id in the judgments"
            log.add(number, None, f"expected 2 columns ({columns}), got {len(cells)}")
            continue
        old, new = cells
        if old in line_of:
            log.add(number, None, f"{old} is mapped again (first on line {line_of[old]})")
            continue
        if new in target_line:
            problem = f"{new} is the target of line {target_line[new]} too"
            log.add(number, None, problem, "two queries cannot share one id")
            continue
        line_of[old], target_line[new] = number, number
        mapping[old] = new
    log.finish(mapping, "empty query map", "one line per query: <id in file> <id used>")
    return mapping


def apply_query_map(
    queries: list[QueryRecord], mapping: dict[str, str], *, file: str, map_file: str
) -> list[QueryRecord]:
    """The queries with mapped ids; InputErrors naming every query the map does not cover."""
    missing = [q for q in queries if q.query_id not in mapping]
    if missing:
        shown = ", ".join(q.query_id for q in missing[:10])
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        raise InputErrors.one(
            file,
            f"{len(missing)} query id(s) not in the query map {map_file}: {shown}{more}",
            "add a line '<id> <judgment id>' for each",
            line=missing[0].line,
            field="id",
        )
    return [replace(q, query_id=mapping[q.query_id]) for q in queries]


#: TREC topics (see the module docstring).
_TOP = re.compile(r"<top\s*>(.*?)</top\s*>", re.IGNORECASE | re.DOTALL)
_TOP_OPEN = re.compile(r"<top\s*>", re.IGNORECASE)
_FIELD = re.compile(r"<(/?)(num|title|desc|narr|con|fac|def|dom|smry)\s*>", re.IGNORECASE)
_LABELS = {
    "num": re.compile(r"^\s*Number\s*:\s*", re.IGNORECASE),
    "title": re.compile(r"^\s*Topic\s*:\s*", re.IGNORECASE),
    "desc": re.compile(r"^\s*Description\s*:\s*", re.IGNORECASE),
    "narr": re.compile(r"^\s*Narrative\s*:\s*", re.IGNORECASE),
}


def _trec_topics(source: SourceText, log: ErrorLog) -> list[QueryRecord]:
    """The topics of one decoded file; every problem is logged (file, line, field)."""
    text = source.text
    topics: list[QueryRecord] = []
    first_line: dict[str, int] = {}
    end = 0
    for match in _TOP.finditer(text):
        _outside(text, end, match.start(), log)
        end = match.end()
        line = _line(text, match.start())
        fields = _fields(match.group(1))
        if _TOP_OPEN.search(match.group(1)):
            hint = "the topic before it lacks its </top>"
            log.add(line, "top", "a <top> inside this <top>", hint)
            continue
        qid = fields.get("num", "").split()
        title = fields.get("title", "")
        if not qid:
            log.add(line, "num", "the topic has no <num>", "each <top> has <num> Number: 301")
            continue
        if len(qid) > 1:
            log.add(line, "num", f"the topic id must be one word, got {show_value(' '.join(qid))}")
            continue
        if not title:
            problem = f"topic {qid[0]} has no <title> text"
            log.add(line, "title", problem, "the title is the query text")
            continue
        first = first_line.setdefault(qid[0], line)
        if first != line:
            log.add(line, "num", f"topic {qid[0]} repeats line {first}", "each topic appears once")
            continue
        desc, narr = fields.get("desc", ""), fields.get("narr", "")
        topics.append(QueryRecord(line, qid[0], title, desc, narr))
    _outside(text, end, len(text), log)
    return topics


def _fields(body: str) -> dict[str, str]:
    """Tag name -> plain text; a field runs to the next tag (closing tags are optional)."""
    out: dict[str, str] = {}
    tags = list(_FIELD.finditer(body))
    for i, tag in enumerate(tags):
        if tag.group(1):  # a closing tag ends the field before it
            continue
        name = tag.group(2).lower()
        stop = tags[i + 1].start() if i + 1 < len(tags) else len(body)
        value = plain_text(body[tag.end():stop])
        label = _LABELS.get(name)
        if label is not None:
            value = label.sub("", value, count=1).strip()
        if name not in out:
            out[name] = re.sub(r"\s+", " ", value) if name in ("num", "title") else value
    return out


def _outside(text: str, start: int, end: int, log: ErrorLog) -> None:
    """Only whitespace may stand between topics; an unclosed ``<top>`` is named too."""
    gap = text[start:end]
    if not gap.strip():
        return
    opened = _TOP_OPEN.search(gap)
    before = gap[: opened.start()] if opened else gap
    if before.strip():
        line = _line(text, start + len(before) - len(before.lstrip()))
        problem = f"text outside any <top>: {show_value(before.strip()[:40])}"
        log.add(line, None, problem, "the file holds only <top>...</top> elements")
    if opened:
        line = _line(text, start + opened.start())
        log.add(line, "top", "a <top> without its </top>", "close every <top> with </top>")


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
