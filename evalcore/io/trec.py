"""TREC qrels and run files (evidence contract section 8): the one reader, and the join of both.

Formats (fields separated by spaces and/or tabs; ``#`` comment lines and blank
lines are skipped; see :mod:`evalcore.io.text_lines` for encoding rules):

* **qrels**: ``query_id iteration doc_id gain``: exactly 4 fields. The
  iteration column is ignored (any token). ``gain`` must be an integer; after
  the optional ``gain_map`` (e.g. ``{-1: 0, 5: 4}``) it must be in 0..4.
  A row that repeats a ``(query_id, doc_id)`` with the **same** gain states
  the same fact twice: it is collapsed into one label and reported in
  :attr:`Qrels.notes`. A repeat with a **different** gain is contradictory
  evidence: both labels are kept (no label is ever lost), which makes that
  query ``duplicate_reference`` (contract section 3), and a note names both lines.
* **run**: ``query_id Q0 doc_id rank score tag``: exactly 6 fields. ``score``
  must be a finite decimal number as trec_eval's ``atof`` reads one: ASCII
  digits, optional sign, point and exponent (``-1.5``, ``.5``, ``2e-3``); no
  ``1_000``, no non-ASCII digits, no ``inf``/``nan``, nothing that overflows
  to infinity (``1e999``). As in trec_eval, the ``rank`` column is ignored:
  items are ordered by score descending, ties broken by doc ID descending
  (``strcmp`` byte order, which for UTF-8 equals code-point order). The
  number of tied pairs (two items of one query with equal scores) is reported,
  because their order rests only on that convention. A doc ID repeated within
  a query keeps every position (the metric computer reports returned duplicates).
  With ``extra_columns=True`` (the trec_eval compatibility switch) a run line
  may hold more than 6 fields: text after the tag is ignored, as trec_eval's
  reader ignores it (its test file ``results.trunc`` has such lines); the
  number of such lines is reported in :attr:`TrecRun.notes`.

Joining both files (:func:`files_input`, contract section 8): every qrels query is
measured (absent from the run: an empty ranking, a real zero); a run query with no
qrels entry gets no labels and an incomplete population, hence ``missing_reference``.
``complete=True`` (or trec_eval compatibility) declares every qrels population
complete. Queries are ordered by query ID in natural order. Note that trec_eval
evaluates only the run's queries unless ``-c`` is given; here qrels queries missing
from the run are kept, as the contract requires (under trec_eval compatibility:
:mod:`evalcore.io.trec_eval_scope`).

Reading: one reader for every TREC file and text. Blocks of whole lines
(:data:`BLOCK_BYTES`), read into one reused buffer, are split in place in bulk
(:mod:`evalcore.io.trec_bytes`) when plain (ASCII, single spaces or single tabs between
fields, no blank or comment line; else again once made plain: CRLF ends, UTF-8); any other
block, and a block holding a bad gain or score, is read line by line in the same
reader, which names every bad line (``file:line: field``). A file that is not plain
UTF-8 with LF or CRLF line ends is decoded whole first
(:func:`~evalcore.io.text_lines.read_source`, which names its decoding errors).
:func:`files_input` keeps from a run only the positions it measures and joins them to
the qrels on the doc IDs' packed words, so memory grows with what is measured;
:func:`read_qrels` and :func:`read_run` give whole files as Python objects.
"""

from __future__ import annotations

import codecs
import io
import math
import os
import re
import stat
import sys
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate, repeat
from os import PathLike
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from evalcore.compute.batch import UNLABELED, ObservationBatch, PerQuery
from evalcore.contract.limits import DEFAULT_LIMITS
from evalcore.contract.query_order import natural_key
from evalcore.io.decompress import is_compressed
from evalcore.io.ties import pairs_in_runs, tied_runs
from evalcore.io.trec_bytes import (
    NEWLINE,
    PAD,
    Block,
    Decline,
    RowIndex,
    as_strings,
    concat_words,
    distinct,
    field_words,
    hash_rows,
    pad_words,
    padded,
    parse_scores,
    rows_equal,
    split_block,
)
from evalcore.io.trec_eval_scope import scope_of_ids
from evalcore.io.trec_format import (  # noqa: F401  (INTEGER, parse_gain_map, ...: re-exported)
    INTEGER,
    QRELS_FIELDS,
    RUN_FIELDS,
    decimal_gain_note,
    gain_hint,
    gain_map_note,
    gain_number,
    gain_table,
    has_other_whitespace,
    parse_gain_map,
    run_notes,
)

if TYPE_CHECKING:
    from evalcore.contract.evaluation_protocol import EvalProtocol
    from evalcore.io.errors import ErrorLog, InputErrors
    from evalcore.io.text_lines import SourceText

#: TREC fields are separated by spaces and tabs only (as in trec_eval).
_FIELD_SEP = re.compile(r"[ \t]+")
#: Repeated-row notes kept per file (all are counted).
_MAX_NOTES = 20
#: Files are read and reduced in blocks of about this many bytes of whole lines.
BLOCK_BYTES = 1 << 22
#: Rankings of more distinct lengths than this are sorted in one sort, not one per length.
MAX_SORT_GROUPS = 64
#: Rankings of one length are sorted this many rows at a time (they stay in cache).
_SORT_ROWS = 1 << 18
#: A depth that keeps every position (a whole run).
_ALL = sys.maxsize
T = TypeVar("T")
A = TypeVar("A")
B = TypeVar("B")


# --- parsed files ---------------------------------------------------------------------------


class Contradiction(NamedTuple):
    """A row repeating an earlier row's ``(query, doc)`` with another gain: both lines."""

    line: int
    first_line: int
    query_id: str
    doc_id: str
    gain: int
    first_gain: int


@dataclass(frozen=True, eq=False)
class Qrels:
    """Judgments per query: label doc IDs and gains, in file order (see module docstring)."""

    name: str
    doc_ids: dict[str, list[str]]
    gains: dict[str, list[int]]
    n_rows: int
    collapsed_duplicates: int = 0
    conflicting_duplicates: int = 0
    notes: list[str] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)  # every one, in row order

    @property
    def query_ids(self) -> list[str]:
        return list(self.doc_ids)


@dataclass(frozen=True, eq=False)
class TrecRun:
    """Ranked doc IDs per query, in trec_eval order, with their scores.

    ``doc_ids[q]`` is query ``q``'s ranking, best first. Scores are kept in
    one array (``scores_for(q)`` gives a query's list) so that reading a large
    run builds no per-item Python floats it does not need.
    """

    name: str
    doc_ids: dict[str, list[str]]
    n_rows: int
    tags: list[str]  # distinct run tags, in order of appearance
    tied_score_pairs: int
    ranked_scores: np.ndarray  # float64, all queries' scores in ranking order
    spans: dict[str, tuple[int, int]]  # query -> [start, end) in ranked_scores
    extra_column_lines: int = 0  # lines with text after the tag (ignored, as trec_eval does)

    @property
    def query_ids(self) -> list[str]:
        return list(self.doc_ids)

    def scores_for(self, query_id: str) -> list[float]:
        """Scores of ``query_id``'s ranking, best first (empty for an unknown query)."""
        a, b = self.spans.get(query_id, (0, 0))
        return self.ranked_scores[a:b].tolist()

    @cached_property
    def duplicate_ids(self) -> int:
        """Rows that repeat a doc ID already ranked for the same query (each keeps its rank)."""
        return sum(len(ids) - len(set(ids)) for ids in self.doc_ids.values())

    @property
    def notes(self) -> list[str]:
        """Facts worth a reader's attention (several run tags, ignored trailing columns)."""
        return run_notes(self.name, self.tags, self.extra_column_lines)


# --- blocks of lines -------------------------------------------------------------------------


class _Undecoded(Exception):
    """The file is not plain UTF-8 text with LF or CRLF line ends: decode it whole."""


@dataclass
class _Lines:
    """A block's rows as fields, and the line number of each row."""

    fields: Block | None  # None once taken (:meth:`take`)
    first_line: int
    numbers: np.ndarray | None  # the line of every row; None: rows on consecutive lines
    rows: int = 0

    def __post_init__(self) -> None:
        self.rows = 0 if self.fields is None else self.fields.lines

    def take(self) -> Block:
        """The fields, handed over once: the block's memory goes with their last use."""
        block, self.fields = self.fields, None
        assert block is not None
        return block

    def line(self, row: int) -> int:
        return self.first_line + row if self.numbers is None else int(self.numbers[row])


class LineMap:
    """Row (counted over the whole input) -> line number, kept per block."""

    def __init__(self) -> None:
        self._starts: list[int] = []  # first row of each block
        self._blocks: list[_Lines] = []

    def add(self, first_row: int, lines: _Lines) -> None:
        self._starts.append(first_row)
        self._blocks.append(lines)

    def line(self, row: int) -> int:
        c = bisect_right(self._starts, row) - 1
        return self._blocks[c].line(row - self._starts[c])


@dataclass
class _Reading:
    """One input being read: its name, what the line walk counted, and its error log
    (made when the first error is logged: a clean file never imports the error models)."""

    name: str
    names: tuple[str, ...]
    extra_columns: bool = False
    raw: bool = False  # a file's bytes, not yet known to be UTF-8 text
    extra_column_lines: int = 0
    rows: int = 0
    lines: LineMap = field(default_factory=LineMap)
    _log: ErrorLog | None = None

    @property
    def log(self) -> ErrorLog:
        if self._log is None:
            from evalcore.io.errors import ErrorLog

            self._log = ErrorLog(self.name)
        return self._log

    def raise_if_any(self) -> None:
        if self._log is not None:
            self._log.raise_if_any()


def input_errors() -> type[InputErrors]:
    """The error class, imported when an exception is matched against it (``except
    input_errors():`` evaluates only then): reading clean files never imports it."""
    from evalcore.io.errors import InputErrors

    return InputErrors


def _read_blocks(
    source: str | PathLike[str] | SourceText,
    names: tuple[str, ...],
    consume: Callable[[_Reading, _Lines], None],
    *,
    extra_columns: bool = False,
    block_bytes: int | None = None,
) -> _Reading:
    """Read ``source`` block by block, each handed to ``consume(reading, lines)``.

    A path is read as raw bytes, which must be plain UTF-8 text (else
    :class:`_Undecoded`: the caller reads it again decoded, :func:`_decoded`); a
    :class:`SourceText` is read from its text. Every error goes to the reading's log;
    raises :class:`InputErrors` at the end when the log has any."""
    if isinstance(source, str | PathLike):
        reading = _Reading(str(source), names, extra_columns, raw=True)
        with _plain_file(source) as handle:
            _take_all(reading, _blocks(handle, block_bytes, raw=True), consume)
    else:
        reading = _Reading(source.name, names, extra_columns)
        if source.errors:
            reading.log.extend(source.errors)
        _take_all(reading, _blocks(io.BytesIO(source.text.encode("utf-8")), block_bytes), consume)
    reading.raise_if_any()
    return reading


def read_both(first: Callable[[], A], second: Callable[[], B]) -> tuple[A, B]:
    """The results of two reads, or one :class:`InputErrors` holding the errors of both."""
    failed: list[InputErrors] = []
    results: list[Any] = []
    for read in (first, second):
        try:
            results.append(read())
        except input_errors() as exc:
            failed.append(exc)
    if failed:
        raise input_errors()([e for f in failed for e in f.errors], sum(f.total for f in failed))
    return results[0], results[1]


def _decoded(fields: tuple[str, ...]) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """``read(source, ...)``, and again from the decoded text when the raw bytes of a path
    are not plain UTF-8 text (:class:`_Undecoded`; a NUL byte's error names which of
    ``fields`` holds it)."""

    def decorate(read: Callable[..., T]) -> Callable[..., T]:
        def reader(source: str | PathLike[str] | SourceText, *args: Any, **kwargs: Any) -> T:
            try:
                return read(source, *args, **kwargs)
            except _Undecoded:
                from evalcore.io.text_lines import read_source

                decoded = read_source(source, fields=fields)  # type: ignore[arg-type]
                return read(decoded, *args, **kwargs)

        return reader

    return decorate


def _take_all(
    reading: _Reading,
    blocks: Iterator[np.ndarray],
    consume: Callable[[_Reading, _Lines], None],
) -> None:
    first_line = 1
    for data in blocks:
        lines = _split(reading, data, first_line)
        if lines is not None and lines.numbers is None:
            first_line += lines.rows  # one row a line: the block's lines are its rows
        else:
            first_line += int(np.count_nonzero(data[:-PAD] == NEWLINE))
        if lines is not None:
            reading.lines.add(reading.rows, lines)
            consume(reading, lines)
            reading.rows += lines.rows


def _plain_file(path: str | PathLike[str]) -> io.BufferedReader:
    """The open file when it is a regular, uncompressed one, else :class:`_Undecoded`."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode) or is_compressed(path):
            raise _Undecoded
        return open(path, "rb")  # noqa: SIM115  (the caller closes it)
    except OSError:
        raise _Undecoded from None  # (read_source names what is wrong)


def _blocks(
    stream: io.BufferedIOBase, block_bytes: int | None, *, raw: bool = False
) -> Iterator[np.ndarray]:
    """The whole lines of the input, about ``block_bytes`` at a time (-1: all at once), each
    LF-ended (one added at the end when missing) and followed by PAD zero bytes: views of
    one buffer the input is read into and that every block reuses (no copy of the bytes).
    Raw file bytes: a leading BOM is dropped; a line past the document limit raises
    :class:`_Undecoded` (decoding names it)."""
    whole = block_bytes is not None and block_bytes < 0
    size = BLOCK_BYTES if whole or not block_bytes else block_bytes
    limit = DEFAULT_LIMITS.max_document_bytes
    buf = np.empty(size + PAD + 1, dtype=np.uint8)  # (PAD + 1: the padding, a last LF)
    held = 0  # bytes of a line the last block did not end, at the buffer's start
    skip = 0
    first = True
    while True:
        if len(buf) - PAD - 1 - held <= size // 2:  # a long line: room for as much again
            extra = max(size, held) + PAD + 1
            buf = np.concatenate((buf[:held], np.empty(extra, dtype=np.uint8)))
        space = len(buf) - PAD - 1 - held
        got = stream.readinto(memoryview(buf[held : held + space]))  # (reads until full)
        end = held + got
        if first and raw and buf[: min(end, 3)].tobytes() == codecs.BOM_UTF8:
            skip = 3
        first = False
        if got < space:  # the end of the input: the rest is the last block
            if end == skip:
                return
            if buf[end - 1] != NEWLINE:
                buf[end] = NEWLINE
                end += 1
            buf[end : end + PAD] = 0
            yield buf[skip : end + PAD]
            return
        cut = 0 if whole else _after_last_line_end(buf, held, end)
        if not cut:  # no line end yet: read on
            if raw and not whole and end - skip > limit:
                raise _Undecoded
            held = end
            continue
        rest = buf[cut:end].copy()
        buf[cut : cut + PAD] = 0
        yield buf[skip : cut + PAD]
        skip = 0
        buf[: len(rest)] = rest
        held = len(rest)


def _after_last_line_end(buf: np.ndarray, start: int, end: int) -> int:
    """The position after the last LF of ``buf[start:end]``, 0 when it holds none (looked
    for from the end, a window at a time)."""
    while end > start:
        low = max(start, end - (1 << 16))
        found = np.flatnonzero(buf[low:end] == NEWLINE)
        if found.size:
            return low + int(found[-1]) + 1
        end = low
    return 0


def _plain_text(chunk: bytes, limit: int) -> bytes:
    """Raw whole lines with LF ends, or :class:`_Undecoded`."""
    if b"\x00" in chunk:
        raise _Undecoded
    if b"\r" in chunk:
        if chunk.count(b"\r") != chunk.count(b"\r\n"):
            raise _Undecoded  # (a lone CR ends a line: decoding numbers the lines)
        chunk = chunk.replace(b"\r\n", b"\n")
    if not chunk.isascii():
        try:
            chunk.decode("utf-8")
        except UnicodeDecodeError:
            raise _Undecoded from None
    if len(chunk) > limit and max(map(len, chunk.split(b"\n"))) > limit:
        raise _Undecoded
    return chunk


def _split(reading: _Reading, data: np.ndarray, first_line: int) -> _Lines | None:
    """A block's fields: split in bulk from the buffer when it is plain ASCII, else from its
    bytes made plain (:func:`_plain_text`: CRLF ends, UTF-8), else walked line by line
    (:func:`_walk_block`)."""
    width = len(reading.names)
    chunk = data[:-PAD]
    limit = DEFAULT_LIMITS.max_document_bytes
    try:
        if chunk.max() >= 0x80 or (reading.raw and len(chunk) > limit):
            raise Decline("not ASCII, or long")
        block = _bulk_split(data, width)
    except Decline:
        text = _plain_text(chunk.tobytes(), limit) if reading.raw else chunk.tobytes()
        if not text.strip(b"\n"):
            return None  # only empty lines
        try:
            if not text.isascii() and has_other_whitespace(text.decode("utf-8")):
                raise Decline("Unicode blank") from None
            block = _bulk_split(padded(text), width)
        except Decline:
            kept, numbers = _walk_block(reading, text.decode("utf-8"), first_line)
            if not kept:
                return None
            block = split_block(padded(("\n".join(kept) + "\n").encode("utf-8")), width)
            return _Lines(block, first_line, np.asarray(numbers, dtype=np.int64))
    if not block.skipped:
        return _Lines(block, first_line, None)
    # Empty lines: a row's line is the first line plus the line ends before it.
    ends = np.flatnonzero(block.data[:-PAD] == NEWLINE)
    return _Lines(block, first_line, first_line + np.searchsorted(ends, block.firsts))


def _bulk_split(data: np.ndarray, width: int) -> Block:
    """The fields of a plain block (module docstring), or :class:`Decline`."""
    return split_block(data, width, plain=True)


def _walk_block(reading: _Reading, text: str, first_line: int) -> tuple[list[str], list[int]]:
    """The careful per-line reading of a block: its data lines' fields joined by single
    spaces, and their line numbers.

    Blank and ``#`` comment lines are skipped; a line without ``len(names)`` fields is
    logged as an error and skipped, unless it has more and ``extra_columns`` allows that
    (the extra fields are dropped and counted)."""
    names = reading.names
    width = len(names)
    kept: list[str] = []
    numbers: list[int] = []
    from evalcore.io.text_lines import data_lines

    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    for number, line in data_lines(lines, comments=True, first_line=first_line):
        fields = _FIELD_SEP.split(line.strip(" \t"))
        if len(fields) > width and reading.extra_columns:
            reading.extra_column_lines += 1
            del fields[width:]
        if len(fields) != width:
            reading.log.add(
                number,
                None,
                f"expected {width} fields ({' '.join(names)}), got {len(fields)}",
                "fields are separated by spaces or tabs",
            )
            continue
        kept.append(" ".join(fields))
        numbers.append(number)
    return kept, numbers


def query_codes(words: np.ndarray, code_of: dict[str, int]) -> np.ndarray:
    """Codes of a block's query IDs in ``code_of`` (new IDs get the next codes)."""
    local, values = distinct(words)
    to_global = np.fromiter(
        (code_of.setdefault(v, len(code_of)) for v in values), dtype=np.int64, count=len(values)
    )
    return to_global[local]


# --- qrels -----------------------------------------------------------------------------------


@dataclass
class Labels:
    """Qrels as columns: per row its query's code, its doc ID's words and its gain."""

    name: str
    query_ids: list[str]  # distinct, first-appearance order
    query: np.ndarray  # int32 per row: index into query_ids
    docs: list[np.ndarray]  # doc ID words, one array per block, the rows in file order
    gains: np.ndarray  # int8 per row
    notes: list[str] = field(default_factory=list)
    lines: LineMap | None = None  # row -> line (files); None: row i is line i + 1
    kept: bool = False  # joined more than once (prepared qrels): the join keeps the words

    def words(self) -> np.ndarray:
        """Every row's doc ID words, in one array (kept as the only copy)."""
        if len(self.docs) != 1:
            self.docs = [concat_words(self.docs)]
        return self.docs[0]

    def line(self, row: int) -> int:
        return row + 1 if self.lines is None else self.lines.line(row)


def words_labels(
    name: str, query_ids: list[str], counts: np.ndarray, docs: list[str], gains: np.ndarray
) -> Labels:
    """:class:`Labels` from qrels held as strings (``counts[i]`` docs for query i);
    raises :class:`Decline` for a doc ID the words cannot hold (a NUL)."""
    text = "".join(docs)
    if "\0" in text:
        raise Decline("NUL")
    lengths = (
        np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        if text.isascii()
        else np.fromiter(map(len, map(str.encode, docs)), dtype=np.int64, count=len(docs))
    )
    data = np.frombuffer(text.encode() + bytes(8), dtype=np.uint8)
    ends = np.cumsum(lengths)
    query = np.repeat(np.arange(len(query_ids), dtype=np.int32), counts)
    return Labels(
        name,
        list(query_ids),
        query,
        [field_words(data, ends - lengths, ends)],
        gains.astype(np.int8),
        kept=True,
    )


@_decoded(QRELS_FIELDS)
def read_labels(
    source: str | PathLike[str] | SourceText,
    gain_map: Mapping[float, int] | None = None,
    *,
    block_bytes: int | None = None,
) -> Labels:
    """Read TREC qrels as columns; raise :class:`InputErrors` listing every error."""
    gain_map = gain_map or {}
    q, _, d, g = range(len(QRELS_FIELDS))
    code_of: dict[str, int] = {}
    rules: dict[str, int | str] = {}
    counts: dict[str, int] = {}  # rows per gain token, in order of appearance
    queries: list[np.ndarray] = []
    docs: list[np.ndarray] = []
    gains: list[np.ndarray] = []

    def consume(reading: _Reading, lines: _Lines) -> None:
        block = lines.take()
        queries.append(query_codes(block.words(q), code_of).astype(np.int32))
        local, tokens = distinct(block.words(g))
        rules.update(gain_table(set(tokens).difference(rules), gain_map))
        per_token = np.bincount(local, minlength=len(tokens)).tolist()
        for token, n in zip(tokens, per_token, strict=True):
            counts[token] = counts.get(token, 0) + n
        values = [rules[t] for t in tokens]
        bad = [i for i, v in enumerate(values) if isinstance(v, str)]
        if bad:
            for row in np.flatnonzero(np.isin(local, bad)).tolist():
                token = tokens[local[row]]
                reading.log.add(lines.line(row), "gain", str(rules[token]), gain_hint(token))
        codes = [v if isinstance(v, int) else 0 for v in values]
        gains.append(np.asarray(codes, dtype=np.int8)[local])
        docs.append(block.words(d))
        del block

    reading = _read_blocks(source, QRELS_FIELDS, consume, block_bytes=block_bytes)
    if not queries:
        reading.log.add(
            None, None, "no judgments", "a qrels line is: query_id iteration doc_id gain"
        )
        reading.raise_if_any()
    name = reading.name
    notes = []
    mapped: dict[float, int] = {}
    for token, n in counts.items():
        if (raw := gain_number(token)) in gain_map:
            mapped[raw] = mapped.get(raw, 0) + n
    if mapped:
        notes.append(gain_map_note(name, gain_map, mapped))
    if any("." in t for t in counts) and (note := decimal_gain_note(name, counts)):
        notes.append(note)  # exact decimals (1.0) were read as integers
    return Labels(
        name,
        list(code_of),
        np.concatenate(queries),
        docs,
        np.concatenate(gains),
        notes,
        reading.lines,
    )


def read_qrels(
    source: str | PathLike[str] | SourceText, gain_map: Mapping[float, int] | None = None
) -> Qrels:
    """Read TREC qrels (a file or decoded text); raise :class:`InputErrors` listing every error."""
    return qrels_of(read_labels(source, gain_map))


parse_qrels = read_qrels  # (decoded text: the same reader)


def qrels_of(labels: Labels) -> Qrels:
    """The :class:`Qrels` of qrels read as columns (repeated rows noted, see module docstring)."""
    query = labels.query
    starts = np.flatnonzero(np.concatenate(([query.size > 0], query[1:] != query[:-1])))
    keys = [labels.query_ids[c] for c in query[starts].tolist()]
    lengths = np.diff(np.append(starts, query.size)).tolist()
    docs = as_strings(labels.words())
    qrels = _group_qrels(labels.name, keys, lengths, docs, labels.gains.tolist(), labels.line)
    qrels.notes.extend(labels.notes)
    return qrels


def qrels_from_rows(
    name: str, query_ids: Sequence[str], doc_ids: Sequence[str], gains: Sequence[int]
) -> Qrels:
    """Qrels from parallel rows already validated (gains in 0..4), with the file rules.

    Repeated ``(query, doc)`` rows are treated as in a file, row ``i`` standing
    for line ``i + 1``. Used for in-memory input (dicts, DataFrames).
    """
    q = np.asarray(query_ids, dtype=object)
    starts = np.flatnonzero(np.concatenate(([q.size > 0], q[1:] != q[:-1])))
    lengths = np.diff(np.append(starts, q.size)).tolist()
    return _group_qrels(name, q[starts].tolist(), lengths, list(doc_ids), list(gains), _next)


def _next(row: int) -> int:
    return row + 1


def _group_qrels(
    name: str,
    keys: list[str],
    lengths: list[int],
    docs: list[str],
    gains: list[int],
    line: Callable[[int], int],
) -> Qrels:
    """Group rows (``keys[i]`` for ``lengths[i]`` consecutive rows) by query, each doc's
    first gain first; repeated rows as :func:`_repeats` says."""
    by_query: dict[str, dict[str, int]] = {}
    a = 0
    for q, n in zip(keys, lengths, strict=True):
        b = a + n
        block = dict(zip(docs[a:b], gains[a:b], strict=True))
        labels = by_query.get(q)
        if labels is None and len(block) == n:
            by_query[q] = block  # the common case: one block per query, no repeats
        else:  # repeats or a query split over blocks: the first gain of a doc is kept
            labels = by_query.setdefault(q, {})
            for d, g in zip(docs[a:b], gains[a:b], strict=True):
                labels.setdefault(d, g)
        a = b
    doc_ids = {q: list(m) for q, m in by_query.items()}
    gains_of = {q: list(m.values()) for q, m in by_query.items()}
    if sum(map(len, by_query.values())) == len(docs):
        return Qrels(name, doc_ids, gains_of, len(docs))
    # Only for rows repeating a (query, doc): which earlier row each repeats.
    qids = [q for q, n in zip(keys, lengths, strict=True) for _ in range(n)]
    first: dict[tuple[str, str], int] = {}
    pairs = []
    for i, key in enumerate(zip(qids, docs, strict=True)):
        j = first.setdefault(key, i)
        if j != i:
            pairs.append((i, j, key[0], key[1]))
    rep = _repeats(name, pairs, gains, line)
    for i in rep.extra:
        doc_ids[qids[i]].append(docs[i])
        gains_of[qids[i]].append(gains[i])
    return Qrels(
        name, doc_ids, gains_of, len(docs), rep.collapsed, rep.conflicting, rep.notes, rep.against
    )


@dataclass
class _Repeated:
    """What :func:`_repeats` found: the rows kept beside the first (another gain), the counts,
    the notes naming both lines and every row whose gain differs from its first row's."""

    extra: list[int]
    collapsed: int
    conflicting: int
    notes: list[str]
    against: list[Contradiction]


def _repeats(
    name: str,
    pairs: Iterable[tuple[int, int, str, str]],
    gains: Sequence[int],
    line: Callable[[int], int],
) -> _Repeated:
    """The rule for rows repeating a ``(query, doc)``: ``(row, the first row with its query
    and doc, query, doc)`` in row order. A repeat with the same gain as one kept states the
    same fact twice: counted once. With another gain it is contradictory evidence: both
    labels are kept (the query is ``duplicate_reference``). Every repeat is noted."""
    out = _Repeated([], 0, 0, [], [])
    kept: dict[int, dict[int, int]] = {}  # first row -> {gain: the first row with it}
    for i, j, q, d in pairs:
        g = gains[i]
        seen = kept.setdefault(j, {gains[j]: j})
        where = f"{name}:{line(i)}: query {q} doc {d}"
        if g != gains[j]:
            out.against.append(Contradiction(line(i), line(j), q, d, g, gains[j]))
        if g in seen:
            out.collapsed += 1
            text = f"{where} repeats line {line(seen[g])} with the same gain {g}; counted once"
        else:
            out.conflicting += 1
            seen[g] = i
            out.extra.append(i)
            text = (
                f"{where} has gain {g} but line {line(j)} gave {gains[j]}; "
                "both labels kept, so the query is duplicate_reference"
            )
        if len(out.notes) < _MAX_NOTES:
            out.notes.append(text)
    if out.collapsed + out.conflicting > len(out.notes):
        out.notes.append(
            f"... {out.collapsed + out.conflicting - len(out.notes)} more repeated rows"
        )
    return out


# --- runs ------------------------------------------------------------------------------------


class _Interleaved(Exception):
    """A query's lines continue after another query began (in another block)."""


@dataclass
class Windows:
    """A run reduced to its packed positions: per query (first-appearance order) the doc
    IDs (as words) and scores at positions 1..depth, in trec_eval order."""

    name: str
    query_ids: list[str] = field(default_factory=list)
    code_of: dict[str, int] = field(default_factory=dict)
    window_query: list[np.ndarray] = field(default_factory=list)  # codes, one per window
    window_size: list[np.ndarray] = field(default_factory=list)
    window_docs: list[np.ndarray] = field(default_factory=list)  # doc ID words
    window_scores: list[np.ndarray] = field(default_factory=list)  # (kept for whole runs)
    tied_pairs: int = 0
    tags: dict[str, None] = field(default_factory=dict)
    done: set[int] = field(default_factory=set)
    n_rows: int = 0
    extra_column_lines: int = 0


def read_windows(
    source: str | PathLike[str] | SourceText,
    depth: int = _ALL,
    *,
    extra_columns: bool = False,
    block_bytes: int | None = None,
) -> Windows:
    """Read a TREC run, keeping each query's positions 1..``depth``; raise
    :class:`InputErrors` listing every error. A query whose lines come back after
    another query's (in a later block) makes the run be read again as one block."""
    try:
        return _reduce_run(source, depth, extra_columns, block_bytes)
    except _Interleaved:
        return _reduce_run(source, depth, extra_columns, -1)


@_decoded(RUN_FIELDS)
def _reduce_run(
    source: str | PathLike[str] | SourceText,
    depth: int,
    extra_columns: bool,
    block_bytes: int | None,
) -> Windows:
    q, _, d, _, s, tag = range(len(RUN_FIELDS))
    out = Windows("")
    carry: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def consume(reading: _Reading, lines: _Lines) -> None:
        block = lines.take()
        codes = query_codes(block.words(q), out.code_of)
        scores = _scores(block, s, lines, reading)
        docs = block.words(d)
        for t in distinct(block.words(tag))[1]:  # in order of first appearance
            out.tags.setdefault(t, None)
        del block
        if carry:  # the last block's last query, with the lines that go on with it here
            last = carry.pop()
            differ = codes != last[0][0]
            head = int(np.argmax(differ)) if differ.any() else len(codes)
            joined = (
                np.concatenate((last[0], codes[:head])),
                np.concatenate((last[1], scores[:head])),
                concat_words([last[2], docs[:head]]),
            )
            if head == len(codes):
                carry.append(joined)
                return
            reduce_block(out, *joined, depth)
            codes, scores, docs = codes[head:], scores[head:], docs[head:]
        # The last query may go on in the next block: keep its lines for then.
        tail = len(codes) - int(np.argmax(codes[::-1] != codes[-1]))  # its last stretch
        if tail == len(codes) and codes[0] == codes[-1]:
            carry.append((codes, scores, docs))
            return
        if (codes[:tail] != codes[-1]).all():  # the usual file: views, no copies
            carry.append((codes[tail:], scores[tail:], docs[tail:]))
            reduce_block(out, codes[:tail], scores[:tail], docs[:tail], depth)
            return
        last_query = codes == codes[-1]
        rest = ~last_query
        carry.append((codes[last_query], scores[last_query], docs[last_query]))
        reduce_block(out, codes[rest], scores[rest], docs[rest], depth)

    reading = _read_blocks(
        source, RUN_FIELDS, consume, extra_columns=extra_columns, block_bytes=block_bytes
    )
    out.name = reading.name
    if not carry:
        reading.log.add(
            None, None, "no results", "a run line is: query_id Q0 doc_id rank score tag"
        )
        reading.raise_if_any()
    reduce_block(out, *carry.pop(), depth)
    out.query_ids = list(out.code_of)
    out.n_rows = reading.rows
    out.extra_column_lines = reading.extra_column_lines
    return out


def _scores(block: Block, j: int, lines: _Lines, reading: _Reading) -> np.ndarray:
    """Field ``j`` as float64 (bulk); a block holding a token that is not a plain finite
    number is looked at token by token and every bad one is logged with its line."""
    try:
        return parse_scores(block, j)
    except Decline:
        pass
    tokens = as_strings(block.words(j))
    scores = np.zeros(len(tokens))
    for i, tok in enumerate(tokens):
        plain = tok.isascii() and "_" not in tok  # (what float() takes but atof does not)
        try:
            value = float(tok)
        except ValueError:
            value = math.nan
        if plain and math.isfinite(value):
            scores[i] = value
            continue
        reading.log.add(
            lines.line(i),
            "score",
            f"must be a finite number, got '{tok[:40]}'",
            "the fifth field is the score; items are ranked by it"
            if plain
            else "write it as trec_eval reads it: ASCII digits, no '_' (e.g. 1000.5)",
        )
    return scores


def reduce_block(
    out: Windows, codes: np.ndarray, scores: np.ndarray, docs: np.ndarray, depth: int
) -> None:
    """Order a block's lines per query as trec_eval does (:func:`rank_groups`); keep
    positions 1..depth."""
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    firsts = codes[starts].tolist()
    if not out.done.isdisjoint(firsts):
        raise _Interleaved
    if len(set(firsts)) != len(firsts):  # a query's lines apart: group them (stable)
        grouped = np.argsort(codes, kind="stable")
        codes, scores, docs = codes[grouped], scores[grouped], docs[grouped]
        starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))

    def order_ties(order: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        rows = ranges(a, b - a)
        lines = order[rows]
        # Big-endian words compare as the bytes do; inverted, they sort descending.
        tied = ~docs[lines].byteswap()
        keys = [tied[:, i] for i in range(tied.shape[1] - 1, -1, -1)]
        order[rows] = lines[np.lexsort((*keys, np.repeat(np.arange(a.size), b - a)))]

    order, size, pairs = rank_groups(scores, starts, depth, order_ties)
    out.tied_pairs += pairs
    lines: slice | np.ndarray = slice(None)  # every line kept, in file order: as they are
    if order is not None or size.sum() != len(codes):
        picked = ranges(starts, size)
        lines = picked if order is None else order[picked]
    out.window_query.append(codes[starts])
    out.window_size.append(size)
    out.window_docs.append(docs[lines])
    if depth == _ALL:  # a whole run (read_run): its scores too
        out.window_scores.append(scores[lines])
    out.done.update(firsts)


def rank_groups(
    scores: np.ndarray,
    starts: np.ndarray,
    depth: int,
    order_ties: Callable[[np.ndarray, np.ndarray, np.ndarray], None],
) -> tuple[np.ndarray | None, np.ndarray, int]:
    """Rank rows grouped by query (``starts``: each query's first row) as trec_eval does:
    score descending, then doc ID descending (``strcmp``). Returns (ranked position ->
    row, None when the rows are ranked already; positions kept per query, at most
    ``depth``; tied pairs, counted over whole rankings).

    Only queries with a rising pair are sorted, those of one length together (one 2-D sort;
    one sort of every row when the lengths are many); not stable, and need not be:
    ``order_ties(order, a, b)`` puts each run ``a:b`` of equal scores in doc ID order, in
    place, where it reaches the kept positions."""
    n = len(scores)
    lengths = np.diff(np.append(starts, n))
    same_block = np.ones(max(n - 1, 0), dtype=bool)
    same_block[starts[1:] - 1] = False
    rising = np.zeros(n, dtype=np.int64)  # rising[i]: rising pairs (j, j + 1) with j < i
    np.cumsum((scores[1:] > scores[:-1]) & same_block, out=rising[1:])
    order: np.ndarray | None = None
    if rising[-1]:
        unsorted = np.flatnonzero(rising[starts + lengths - 1] > rising[starts])
        distinct_lengths = np.unique(lengths[unsorted]).tolist()
        if len(distinct_lengths) > MAX_SORT_GROUPS:
            order = np.lexsort((-scores, np.repeat(np.arange(starts.size), lengths)))
        else:
            order = np.arange(n, dtype=np.int64)
            for length in distinct_lengths:
                firsts = starts[unsorted[lengths[unsorted] == length]]
                step = max(1, _SORT_ROWS // length)
                for c in range(0, firsts.size, step):
                    rows = firsts[c : c + step, None] + np.arange(length)
                    within = np.argsort(-scores[rows], axis=1)
                    order[rows] = np.take_along_axis(rows, within, axis=1)
        scores = scores[order]
    run_start, run_end = tied_runs(scores, same_block)
    size = np.minimum(lengths, depth) if depth else lengths
    if run_start.size:  # ties reaching the kept positions: doc ID descending
        group = np.searchsorted(starts, run_start, side="right") - 1
        reach = run_start < starts[group] + size[group]
        if reach.any():
            if order is None:
                order = np.arange(n, dtype=np.int64)
            order_ties(order, run_start[reach], run_end[reach])
    return order, size, pairs_in_runs(run_start, run_end)


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[i] .. starts[i] + lengths[i] - 1`` of every i, concatenated."""
    total = int(lengths.sum())
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(total, dtype=np.int64)


def read_run(source: str | PathLike[str] | SourceText, *, extra_columns: bool = False) -> TrecRun:
    """Read a TREC run (a file or decoded text); raise :class:`InputErrors` listing every error.
    ``extra_columns=True`` ignores text after the tag, as trec_eval does."""
    return run_of(read_windows(source, extra_columns=extra_columns))


parse_run = read_run  # (decoded text: the same reader)


def run_of(windows: Windows) -> TrecRun:
    """The :class:`TrecRun` of a run read whole (every position kept)."""
    query_ids = [windows.query_ids[c] for c in np.concatenate(windows.window_query).tolist()]
    sizes = np.concatenate(windows.window_size)
    edges = [0, *accumulate(sizes.tolist())]
    names = as_strings(concat_words(windows.window_docs))
    doc_ids = {q: names[a:b] for q, a, b in zip(query_ids, edges, edges[1:], strict=False)}
    spans = {q: (a, b) for q, a, b in zip(query_ids, edges, edges[1:], strict=False)}
    order = [windows.code_of[q] for q in query_ids]
    if order != sorted(order):  # (windows come in block order: first appearance per block)
        doc_ids = {q: doc_ids[q] for q in windows.query_ids}
        spans = {q: spans[q] for q in windows.query_ids}
    return TrecRun(
        windows.name,
        doc_ids,
        windows.n_rows,
        list(windows.tags),
        windows.tied_pairs,
        np.concatenate(windows.window_scores),
        spans,
        windows.extra_column_lines,
    )


# --- the join of two files -------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ColumnarInput:
    """The packed batch of qrels and a run joined, and the facts of its diagnostics, as plain values
    (no pydantic: :mod:`evalcore.api.report_text` writes the command line's JSON from
    them; :meth:`evalcore.api.inputs.EvalInput.from_columnar` makes the diagnostics' model)."""

    batch: ObservationBatch
    tied_score_pairs: int
    notes: list[str]


def files_input(
    qrels: str | PathLike[str],
    run: str | PathLike[str],
    k: int,
    *,
    complete: bool,
    protocol: EvalProtocol,
    all_queries: bool = False,
    gain_map: Mapping[float, int] | None = None,
    min_depth: int = 0,
) -> ColumnarInput:
    """The packed batch and the facts of the diagnostics of two TREC files; raises
    :class:`InputErrors` with the errors of both files. Same arguments and meaning as
    :func:`evalcore.api.inputs.trec_input`."""
    labels, ranked = read_both(
        lambda: read_labels(qrels, gain_map),
        lambda: read_windows(run, max(k, min_depth), extra_columns=protocol.trec_eval),
    )
    return assemble(
        labels,
        ranked,
        k,
        complete=complete,
        protocol=protocol,
        all_queries=all_queries,
        min_depth=min_depth,
    )


def assemble(
    labels: Labels,
    ranked: Windows,
    k: int,
    *,
    complete: bool,
    protocol: EvalProtocol,
    all_queries: bool = False,
    min_depth: int = 0,
) -> ColumnarInput:
    """Join qrels and a run read as columns into the packed batch (rules: module docstring)."""
    window_query = np.concatenate(ranked.window_query)
    window_size = np.concatenate(ranked.window_size)
    window_docs = concat_words(ranked.window_docs)
    ranked.window_docs.clear()
    pos_gain, window_unit, repeated = _window_gains(
        labels, ranked, window_query, window_size, window_docs
    )

    judged, run_ids = labels.query_ids, ranked.query_ids
    notes: list[str] = []
    if protocol.trec_eval:
        scope = scope_of_ids(set(judged), set(run_ids), all_queries=all_queries)
        query_ids, notes = scope.query_ids, list(scope.notes)
    else:
        query_ids = list(dict.fromkeys(judged + run_ids))
    query_ids.sort(key=natural_key)
    index = {qid: i for i, qid in enumerate(query_ids)}
    n = len(query_ids)

    # Packed positions, per output query.
    run_out = np.fromiter(map(index.get, run_ids, repeat(-1)), dtype=np.int64, count=len(run_ids))
    where = run_out[window_query]
    n_pos = np.zeros(n, dtype=np.int64)
    kept = where >= 0
    n_pos[where[kept]] = window_size[kept]
    pos_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(n_pos, out=pos_offsets[1:])
    by_out = np.flatnonzero(kept)[np.argsort(where[kept], kind="stable")]
    flat: slice | np.ndarray = slice(None)  # every window kept, in output order: as they are
    if by_out.size != where.size or (by_out[1:] < by_out[:-1]).any():
        window_start = np.cumsum(window_size) - window_size
        flat = ranges(window_start[by_out], window_size[by_out])
    position_words = window_docs[flat]
    del window_docs
    top_units = WordUnits(position_words, pos_offsets)
    pos_unit = None if window_unit is None else window_unit[flat]

    # Reference labels, per output query, in file order.
    qrels_out = np.fromiter(map(index.get, judged, repeat(-1)), dtype=np.int32, count=len(judged))
    row_out = qrels_out[labels.query]
    label_gain = labels.gains
    if repeated is not None:  # one label per distinct (query, doc)
        row_out[repeated.first != np.arange(len(row_out))] = -1
        label_gain = repeated.gains
    keep: slice | np.ndarray = slice(None)
    if not (row_out.size and row_out[0] >= 0 and (row_out[1:] >= row_out[:-1]).all()):
        # Not every row kept in output order already (the usual file): select and order.
        keep = np.flatnonzero(row_out >= 0)
        keep = keep[np.argsort(row_out[keep], kind="stable")]
    label_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_out[keep], minlength=n), out=label_offsets[1:])
    del row_out
    judged_set = set(judged)
    duplicate_reference = None
    if repeated is not None:
        duplicate_reference = np.zeros(n, dtype=bool)
        flagged = qrels_out[repeated.queries]
        duplicate_reference[flagged[flagged >= 0]] = True
    population = np.fromiter(map(judged_set.__contains__, query_ids), dtype=bool, count=n)
    population &= complete or protocol.trec_eval

    batch = ObservationBatch.from_codes(
        query_ids,
        k,
        pos_offsets,
        pos_gain[flat],
        top_units,
        label_offsets,
        label_gain[keep],
        population,
        protocol=protocol,
        min_depth=min_depth,
        duplicate_reference=duplicate_reference,
        may_repeat=pos_unit is not None,
        pos_unit=pos_unit,
    )
    if repeated is not None:
        notes += repeated.notes
    notes += labels.notes + run_notes(ranked.name, list(ranked.tags), ranked.extra_column_lines)
    return ColumnarInput(batch, ranked.tied_pairs, notes)


class WordUnits(PerQuery):
    """Per query, the doc IDs of its packed positions, kept as words and decoded when read
    (a report names blocking and repeated docs; ``--trec-eval`` output names none)."""

    #: per-query reads before every query is decoded at once (a report naming many)
    BULK_AFTER = 64

    def __init__(self, words: np.ndarray, offsets: np.ndarray) -> None:
        super().__init__(offsets)
        self._words = words
        self._reads = 0
        self._names: list[str] | None = None

    def _query(self, i: int, a: int, b: int) -> list[str]:
        if self._names is None:
            self._reads += 1
            if self._reads <= self.BULK_AFTER:
                return as_strings(self._words[a:b])
            self._names = as_strings(self._words)
        return self._names[a:b]

    def names_at(self, positions: np.ndarray) -> list[str]:
        """The doc IDs at these packed positions (flat, every query's after the last's)."""
        if self._names is not None:
            return list(map(self._names.__getitem__, positions.tolist()))
        return as_strings(self._words[positions])

    def __iter__(self) -> Iterator[list[str]]:
        names = self._names if self._names is not None else as_strings(self._words)
        bounds = self._bounds
        for a, b in zip(bounds, bounds[1:], strict=False):
            yield names[a:b]


@dataclass
class _JoinRepeats:
    """Qrels rows that repeat a ``(query, doc)``, as the join takes them: one label per
    distinct ``(query, doc)`` (its first row, with the gain given last: a query labeling a
    doc with two gains is ``duplicate_reference`` whatever the gain), the judged queries
    that do, and the notes naming both lines."""

    first: np.ndarray  # per qrels row: the first row with its query and doc
    gains: np.ndarray  # int8 per row: at a first row, its label's gain
    queries: np.ndarray  # judged query codes
    notes: list[str]


def _window_gains(
    labels: Labels,
    ranked: Windows,
    window_query: np.ndarray,
    window_size: np.ndarray,
    window_docs: np.ndarray,
) -> tuple[np.ndarray, np.ndarray | None, _JoinRepeats | None]:
    """The label code of every packed position, a unit code of every packed position (equal
    for equal (query, doc) positions only; None: all distinct), and the qrels' repeated rows
    (None: none).

    The qrels rows go into a hash table keyed by (query, doc) (a row meeting an
    equal one is a repeated judgment); each packed position looks its label up (the
    gain of the first row with its query and doc). A position's unit is named by the label
    it found; the positions that found none go into a table of their own, which names
    theirs (one hash table fewer than coding every position anew).
    """
    judged_code = {qid: i for i, qid in enumerate(labels.query_ids)}
    extra = len(judged_code)
    run_code = np.fromiter(
        (judged_code.get(r, extra + i) for i, r in enumerate(ranked.query_ids)),
        dtype=np.int64,
        count=len(ranked.query_ids),
    )
    n_words = max(window_docs.shape[1], labels.words().shape[1])
    position_query = np.repeat(run_code[window_query].astype(np.int32), window_size)
    position_docs = pad_words(window_docs, n_words)
    label, repeated = _found_labels(labels, position_query, position_docs)
    # A gain per label row, then UNLABELED, which a position finding none (-1) reads.
    gains = labels.gains if repeated is None else repeated.gains[repeated.first]
    pos_gain = np.append(gains, np.int8(UNLABELED)).take(label)
    return pos_gain, _unit_codes(label, position_query, position_docs), repeated


def _found_labels(
    labels: Labels, position_query: np.ndarray, position_docs: np.ndarray
) -> tuple[np.ndarray, _JoinRepeats | None]:
    """Per packed position, the qrels row the hash table holds for its (query, doc) (-1:
    none), and the qrels' repeated rows (None: none). The table and the qrels' doc words
    are freed on return, before the unit codes' own table (a lower peak of memory)."""
    docs = pad_words(labels.words(), position_docs.shape[1])
    if not labels.kept:
        labels.docs.clear()  # one copy of the doc IDs is enough
    query = labels.query

    def same_label(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (query[a] == query[b]) & rows_equal(docs, a, docs, b)

    index = RowIndex(hash_rows(docs, seed=query), same_label)
    repeated = None
    if np.any(index.first != np.arange(len(docs))):
        repeated = _join_repeats(labels, index.first, docs)
    del index.first

    def same_position(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (position_query[a] == query[b]) & rows_equal(position_docs, a, docs, b)

    return index.find(hash_rows(position_docs, seed=position_query), same_position), repeated


def _unit_codes(label: np.ndarray, query: np.ndarray, docs: np.ndarray) -> np.ndarray | None:
    """A code per position (int64, below the number of positions), equal exactly for the
    positions of one (query, doc): from the label row each found (``label``: the row the
    qrels table holds, one per (query, doc)), else from a table of the positions that found
    none (their ``query`` codes and ``docs`` words). None when every position has a code of
    its own: no ranking repeats a doc, so none is looked for."""
    found = np.flatnonzero(label >= 0)
    unfound = np.flatnonzero(label < 0)
    own = np.arange(max(found.size, unfound.size), dtype=np.int64)
    # Label rows made dense: equal rows get the number one of their positions wrote.
    at = label[found]
    number = np.empty(int(label.max(initial=-1)) + 1, dtype=np.int64)
    number[at] = own[: found.size]
    mine = number[at]
    del number, at
    held = own[: unfound.size]
    if unfound.size:
        query, docs = query[unfound], docs[unfound]

        def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return (query[a] == query[b]) & rows_equal(docs, a, docs, b)

        held = RowIndex(hash_rows(docs, seed=query), same).first
    if np.array_equal(mine, own[: found.size]) and np.array_equal(held, own[: unfound.size]):
        return None
    codes = np.empty(len(label), dtype=np.int64)
    codes[found] = mine
    codes[unfound] = found.size + held
    return codes


def _join_repeats(labels: Labels, held: np.ndarray, docs: np.ndarray) -> _JoinRepeats:
    """The repeated rows of qrels (``held``: per row, the equal row the hash table holds)
    under the rule of :func:`_repeats`."""
    n = len(held)
    rows = np.arange(n, dtype=np.int64)
    first = np.full(n, n, dtype=np.int64)  # per held row: the first row equal to it
    np.minimum.at(first, held, rows)
    first = first[held]
    again = np.flatnonzero(first != rows)
    names = as_strings(docs[again])
    query_ids, query = labels.query_ids, labels.query.tolist()
    pairs = (
        (i, j, query_ids[query[i]], d)
        for i, j, d in zip(again.tolist(), first[again].tolist(), names, strict=True)
    )
    rep = _repeats(labels.name, pairs, labels.gains.tolist(), labels.line)
    gains = labels.gains.copy()
    gains[first[rep.extra]] = labels.gains[rep.extra]  # (in row order: the last one stays)
    return _JoinRepeats(first, gains, labels.query[rep.extra], rep.notes)
