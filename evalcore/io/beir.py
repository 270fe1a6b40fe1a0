"""BEIR dataset folders: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/*.tsv``.

* ``corpus.jsonl``: one object per line, ``{"_id": str, "title": str, "text": str}``
  (``title`` optional; other keys such as ``metadata`` are ignored);
* ``queries.jsonl``: ``{"_id": str, "text": str}`` (other keys ignored);
* ``qrels/<split>.tsv``: a header line ``query-id<TAB>corpus-id<TAB>score``, then
  one judgment per line, tab-separated; ``score`` is an integer, in 0..4
  after the optional gain map.

Every error of every file is collected (file, line, field) before anything is returned.
``corpus.jsonl`` is streamed a line at a time into a :class:`DocumentSink` (by default a
dict in memory; the store's importer passes one backed by a scratch file, so a corpus of
any size is read in bounded memory). A repeated ``_id`` is an error naming both lines; a
score written as an exact decimal (``1.0``) is its integer, with a note; a repeated
judgment with the same score is a warning, with a different score an error. Judgments
naming unknown queries or documents are checked by the importer
(:mod:`evalcore.store.imports`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from evalcore.contract.limits import DEFAULT_LIMITS, MAX_ID_CHARS, ReadLimits, too_long
from evalcore.io.errors import ErrorLog, InputErrors, show_value
from evalcore.io.json_objects import json_object_lines, json_objects
from evalcore.io.label_rows import GainNotes, parse_gain
from evalcore.io.text_lines import SourceText, numbered_lines, read_source, stream_lines

QRELS_HEADER = ("query-id", "corpus-id", "score")


class DocumentSink(Protocol):
    """Where the documents of ``corpus.jsonl`` go as they are read."""

    def add(self, line: int, doc_id: str, title: str, text: str) -> int:
        """Keep the document unless its id was kept before; return the line it was first on."""
        ...


class DocumentsInMemory:
    """A :class:`DocumentSink` holding ``documents``: ``_id`` -> (title, text), in file order."""

    def __init__(self) -> None:
        self.documents: dict[str, tuple[str, str]] = {}
        self._first: dict[str, int] = {}

    def add(self, line: int, doc_id: str, title: str, text: str) -> int:
        first = self._first.setdefault(doc_id, line)
        if first == line:
            self.documents[doc_id] = (title, text)
        return first


@dataclass
class BeirJudgment:
    line: int
    query_id: str
    doc_id: str
    gain: int


@dataclass
class BeirFolder:
    """A parsed BEIR folder."""

    root: str
    documents: dict[str, tuple[str, str]]  # _id -> (title, text), file order (in-memory sink)
    queries: dict[str, str]  # _id -> text
    qrels: dict[str, list[BeirJudgment]]  # split name -> judgments (deduplicated)
    qrels_files: dict[str, str] = field(default_factory=dict)  # split -> file name
    warnings: list[str] = field(default_factory=list)
    document_count: int = 0  # documents read from corpus.jsonl (into whichever sink)
    notes: list[str] = field(default_factory=list)  # how the files were read


def read_beir_folder(
    folder: str | Path,
    *,
    gain_map: Mapping[int, int] | None = None,
    splits: list[str] | None = None,
    documents: DocumentSink | None = None,
    limits: ReadLimits = DEFAULT_LIMITS,
) -> BeirFolder:
    """Read and validate a BEIR folder; raise InputErrors with every error of every file.

    The documents go to ``documents`` as they are read (default: into
    ``BeirFolder.documents``); on an error the sink may hold some of them.
    """
    root = Path(folder)
    if not root.is_dir():
        raise InputErrors.one(
            str(root), "not a folder", "give the BEIR dataset folder holding corpus.jsonl"
        )
    failures: list[InputErrors] = []
    warnings: list[str] = []
    in_memory = DocumentsInMemory()
    sink = documents if documents is not None else in_memory
    qrels: dict[str, list[BeirJudgment]] = {}
    files: dict[str, str] = {}

    def collect(read: Callable[[], Any]) -> Any:
        try:
            return read()
        except InputErrors as exc:  # a file cut short (ReadingStopped) keeps its notice
            failures.append(exc)
            return None

    def queries_file() -> dict[str, dict[str, str]]:
        source = read_source(root / "queries.jsonl", limits=limits)
        notes.extend(source.notes())
        return parse_objects(source, ("_id", "text"), ("_id", "text"))

    notes: list[str] = []
    document_count = collect(lambda: stream_corpus(root / "corpus.jsonl", sink, limits)) or 0
    got = collect(queries_file)
    queries = {k: v["text"] for k, v in (got or {}).items()}
    qrels_dir = root / "qrels"
    tsv_files = sorted(qrels_dir.glob("*.tsv")) if qrels_dir.is_dir() else []
    if splits is not None:
        known = {p.stem for p in tsv_files}
        for name in splits:
            if name not in known:
                hint = "splits in this folder: " + (", ".join(sorted(known)) or "none")
                split = str(qrels_dir / f"{name}.tsv")
                failures.append(InputErrors.one(split, "no such qrels split", hint))
        tsv_files = [p for p in tsv_files if p.stem in splits]
    if not tsv_files and splits is None:
        hint = "a BEIR folder has qrels/test.tsv (and/or train, dev)"
        failures.append(InputErrors.one(str(qrels_dir), "no qrels/*.tsv file", hint))
    for path in tsv_files:
        got = collect(lambda p=path: parse_qrels_tsv(read_source(p, limits=limits), gain_map,
                                                     warnings, notes))
        if got is not None:
            qrels[path.stem] = got
            files[path.stem] = str(path)
    if failures:
        raise InputErrors.combined(failures)
    return BeirFolder(str(root), in_memory.documents, queries, qrels, files, warnings,
                      document_count, notes)


def stream_corpus(path: Path, sink: DocumentSink, limits: ReadLimits = DEFAULT_LIMITS) -> int:
    """Read ``corpus.jsonl`` a line at a time into ``sink``; return how many documents it kept."""
    log = ErrorLog(str(path))
    lines = stream_lines(path, log, max_line_bytes=limits.max_document_bytes, limits=limits)
    kept = _checked_objects(
        json_object_lines(lines, log), log, ("_id", "title", "text"), ("_id",),
        lambda number, key, fields: sink.add(number, key, fields.get("title", ""),
                                             fields.get("text", "")),
    )
    log.finish(kept, "empty file: no object", "one JSON object per line")
    return kept


def parse_objects(
    source: SourceText, string_fields: tuple[str, ...], required: tuple[str, ...]
) -> dict[str, dict[str, str]]:
    """``_id`` -> the object's string fields, for a BEIR corpus or queries JSONL file."""
    log = ErrorLog.of(source)
    out: dict[str, dict[str, str]] = {}
    first_line: dict[str, int] = {}

    def keep(number: int, key: str, fields: dict[str, str]) -> int:
        first = first_line.setdefault(key, number)
        if first == number:
            out[key] = fields
        return first

    _checked_objects(json_objects(source, log), log, string_fields, required, keep)
    log.finish(out, "empty file: no object", "one JSON object per line")
    return out


def _checked_objects(
    objects: Iterable[tuple[int, dict[str, Any]]],
    log: ErrorLog,
    string_fields: tuple[str, ...],
    required: tuple[str, ...],
    keep: Callable[[int, str, dict[str, str]], int],
) -> int:
    """Check each object's fields and pass the good ones to ``keep`` (which returns the line its
    ``_id`` was first kept on: another line is a duplicate, logged); return how many were kept."""
    kept = 0
    for number, obj in objects:
        errors_before = log.total
        for name in string_fields:
            value = obj.get(name)
            if value is None and name not in required:
                continue
            if not isinstance(value, str) or (name == "_id" and not value.strip()):
                what = "a non-empty string" if name == "_id" else "a string"
                if value is None:
                    log.add(number, name, f"missing required field '{name}'")
                else:
                    log.add(number, name, f"must be {what}, got {show_value(value)}")
            elif "\x00" in value:
                log.add(number, name, "holds a NUL character (\\u0000)",
                        "remove it: no text holds one")
            elif name == "_id" and (problem := too_long(value, MAX_ID_CHARS, "an id")):
                log.add(number, name, problem)
        if log.total > errors_before:  # the object has an error
            continue
        key = obj["_id"]
        first = keep(number, key, {n: obj[n] for n in string_fields if isinstance(obj.get(n), str)})
        if first != number:
            log.add(
                number,
                "_id",
                f"duplicate _id {show_value(key)}, first on line {first}",
                "each _id appears once per file",
            )
            continue
        kept += 1
    return kept


def parse_qrels_tsv(
    source: SourceText, gain_map: Mapping[float, int] | None, warnings: list[str],
    notes: list[str] | None = None,
) -> list[BeirJudgment]:
    """The judgments of a BEIR qrels TSV (header required), deduplicated; how the file was
    read (decompressed, decimal scores) is added to ``notes``."""
    gains = GainNotes(source.name)
    log = ErrorLog.of(source)
    lines = numbered_lines(source.text, comments=False)
    header = next(lines, None)
    if header is None:
        log.add(None, None, "empty file", "the first line must be: query-id\tcorpus-id\tscore")
        log.raise_if_any()
    assert header is not None
    number, text = header
    if tuple(c.strip().lower() for c in text.split("\t")) != QRELS_HEADER:
        log.add(
            number,
            "header",
            f"expected the header 'query-id<TAB>corpus-id<TAB>score', got {show_value(text)}",
            "BEIR qrels files start with that header line",
        )
    judgments: list[BeirJudgment] = []
    seen: dict[tuple[str, str], BeirJudgment] = {}
    for number, text in lines:
        cells = [c.strip() for c in text.split("\t")]
        if len(cells) != 3:
            log.add(
                number,
                None,
                f"expected 3 tab-separated fields (query-id, corpus-id, score), got {len(cells)}",
            )
            continue
        qid, did, score = cells
        errors_before = log.total
        for name, value in (("query-id", qid), ("corpus-id", did)):
            if not value:
                log.add(number, name, "must not be empty")
            elif problem := too_long(value, MAX_ID_CHARS, "an id"):
                log.add(number, name, problem)
        gain, problem, hint = parse_gain(score, gain_map, notes=gains)
        if problem is not None:
            log.add(number, "score", problem, hint)
        if log.total > errors_before or gain is None:
            continue
        judgment = BeirJudgment(number, qid, did, gain)
        earlier = seen.setdefault((qid, did), judgment)
        if earlier is judgment:
            judgments.append(judgment)
        elif earlier.gain == gain:
            warnings.append(
                f"{source.name}:{number}: query {qid} doc {did} repeats line "
                f"{earlier.line} with the same score {gain}; recorded once"
            )
        else:
            log.add(
                number,
                "score",
                f"query {qid} doc {did}: score {gain} contradicts line "
                f"{earlier.line} (score {earlier.gain})",
                "keep one of the two lines",
            )
    log.finish(judgments, "no judgments: the file holds only its header")
    if notes is not None:
        notes.extend([*source.notes(), *gains.lines()])
    return judgments
