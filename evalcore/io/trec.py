"""TREC qrels and run files (evidence contract section 8), and observations built from them.

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

Building observations (:func:`trec_columns`, :func:`trec_observations`): every
qrels query becomes an observation (absent from the run: an empty ranking, a
real zero); a run query with no qrels entry gets no labels and
``population_complete=False``, hence ``missing_reference``. ``complete=True``
declares every qrels population complete. Queries are ordered by query ID in
code-point order, the order in which trec_eval (which sorts with ``strcmp``)
prints per-query results. Note that trec_eval evaluates only the run's queries
unless ``-c`` is given; here qrels queries missing from the run are kept, as
the contract requires.

Speed: files are read in chunks of whole lines by a tight loop that unpacks
exactly the expected fields of each line (a 1,000,000-line run takes about as
long as pytrec_eval's own parser); a chunk with a blank, comment or malformed
line is re-read by a careful path that gives the same result and names every
bad line.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate
from os import PathLike
from typing import TYPE_CHECKING

import numpy as np

from evalcore.contract.query_order import natural_key
from evalcore.contract.results import Diagnostics
from evalcore.io.errors import ErrorLog
from evalcore.io.text_lines import SourceText, data_lines, read_source
from evalcore.io.ties import pairs_in_runs, tied_runs
from evalcore.io.trec_format import (  # noqa: F401  (QRELS_FIELDS, RUN_FIELDS, ...: re-exported)
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
    from evalcore.contract.observation import Observation

#: TREC fields are separated by spaces and tabs only (as in trec_eval).
_FIELD_SEP = re.compile(r"[ \t]+")
#: Repeated-row notes kept per file (all are counted).
_MAX_NOTES = 20


# --- parsed files ---------------------------------------------------------------------------


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
        """Rows that repeat a doc ID already ranked for the same query (each keeps its rank).

        Computed on demand (it costs a set per query); the metric computer
        reports the returned duplicates that matter, those in positions 1..k.
        """
        return sum(len(ids) - len(set(ids)) for ids in self.doc_ids.values())

    @property
    def notes(self) -> list[str]:
        """Facts worth a reader's attention (several run tags, ignored trailing columns)."""
        return run_notes(self.name, self.tags, self.extra_column_lines)


# --- tokenizing ------------------------------------------------------------------------------

#: Files are read in chunks of whole lines of about this many characters.
_CHUNK_CHARS = 1 << 20


def _line_chunks(text: str) -> Iterator[tuple[int, list[str], bool]]:
    """Yield ``(first_line_number, lines, plain)`` for chunks of whole lines.

    ``plain`` is true when the chunk holds no whitespace other than space, tab
    and line ends, so that ``str.split()`` splits exactly at TREC separators.
    """
    line_no = 1
    pos, n = 0, len(text)
    while pos < n:
        end = text.find("\n", pos + _CHUNK_CHARS)
        end = n if end == -1 else end + 1
        chunk = text[pos:end]
        lines = chunk.split("\n")
        if lines[-1] == "":
            lines.pop()
        yield line_no, lines, not has_other_whitespace(chunk)
        line_no += len(lines)
        pos = end


def _checked_fields(
    lines: list[str],
    first_line: int,
    names: tuple[str, ...],
    log: ErrorLog,
    rows: _Rows,
) -> Iterator[tuple[int, list[str]]]:
    """The careful per-line path: ``(line_number, fields)`` of every data line.

    Blank and ``#`` comment lines are skipped; a line without ``len(names)``
    fields is logged as an error and skipped, unless it has more and
    ``rows.extra_columns`` allows that (the extra fields are dropped and counted).
    """
    width = len(names)
    for number, line in data_lines(lines, comments=True, first_line=first_line):
        fields = _FIELD_SEP.split(line.strip(" \t"))
        if len(fields) > width and rows.extra_columns:
            rows.extra_column_lines += 1
            del fields[width:]
        if len(fields) != width:
            log.add(
                number,
                None,
                f"expected {width} fields ({' '.join(names)}), got {len(fields)}",
                "fields are separated by spaces or tabs",
            )
            continue
        yield number, fields


class _LineMap:
    """Record index -> line number, stored per chunk (most chunks: consecutive lines)."""

    def __init__(self) -> None:
        self._starts: list[int] = []  # first record index of each chunk
        self._first_lines: list[int] = []
        self._lines: list[list[int] | None] = []  # explicit lines, or None: consecutive

    def add(self, first_record: int, first_line: int, lines: list[int] | None) -> None:
        self._starts.append(first_record)
        self._first_lines.append(first_line)
        self._lines.append(lines)

    def line(self, record: int) -> int:
        c = bisect_right(self._starts, record) - 1
        explicit = self._lines[c]
        offset = record - self._starts[c]
        return self._first_lines[c] + offset if explicit is None else explicit[offset]


@dataclass
class _Rows:
    """Columns read so far, and runs of consecutive rows with the same query ID."""

    docs: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)  # the current chunk's gain/score tokens
    keys: list[str] = field(default_factory=list)  # query ID of each run of rows
    starts: list[int] = field(default_factory=list)  # first row of each run
    tags: dict[str, None] = field(default_factory=dict)
    lines: _LineMap = field(default_factory=_LineMap)
    extra_columns: bool = False  # accept text after the last field (runs, trec_eval mode)
    extra_column_lines: int = 0

    def mark(self) -> tuple[int, int]:
        return len(self.docs), len(self.keys)

    def rollback(self, mark: tuple[int, int]) -> None:
        del self.docs[mark[0] :], self.keys[mark[1] :], self.starts[mark[1] :]
        self.values.clear()

    def add(self, q: str, d: str, value: str) -> None:
        if not self.keys or self.keys[-1] != q:
            self.keys.append(q)
            self.starts.append(len(self.docs))
        self.docs.append(d)
        self.values.append(value)

    def lengths(self) -> list[int]:
        return np.diff(np.asarray([*self.starts, len(self.docs)], dtype=np.int64)).tolist()


def _read_rows(
    source: SourceText,
    names: tuple[str, ...],
    log: ErrorLog,
    take_values: Callable[[list[str], int, _LineMap], None],
    *,
    extra_columns: bool = False,
) -> _Rows:
    """Read a qrels (4 fields) or run (6 fields) file into :class:`_Rows`.

    Each chunk is first read by a tight loop that unpacks exactly the expected
    number of fields per line; a chunk where that fails (a blank, comment or
    malformed line) is read again by the careful path, which names every bad line.
    After each chunk, ``take_values(tokens, first_row, lines)`` receives the
    chunk's gain or score tokens (to convert them while they are in cache).
    ``extra_columns`` accepts lines with more fields than ``names`` (see
    :func:`_checked_fields`); such a chunk always takes the careful path.
    """
    rows = _Rows(extra_columns=extra_columns)
    fast = _fast_run_chunk if len(names) == 6 else _fast_qrels_chunk
    value_col = 4 if len(names) == 6 else 3
    for first_line, lines, plain in _line_chunks(source.text):
        mark = rows.mark()
        if plain:
            try:
                fast(lines, rows)
            except ValueError:  # wrong field count, or a comment: read carefully
                rows.rollback(mark)
            else:
                rows.lines.add(mark[0], first_line, None)
                take_values(rows.values, mark[0], rows.lines)
                rows.values = []
                continue
        numbers: list[int] = []
        for number, fields in _checked_fields(lines, first_line, names, log, rows):
            rows.add(fields[0], fields[2], fields[value_col])
            if value_col == 4:
                rows.tags[fields[5]] = None
            numbers.append(number)
        rows.lines.add(mark[0], first_line, numbers)
        take_values(rows.values, mark[0], rows.lines)
        rows.values = []
    return rows


def _fast_run_chunk(lines: list[str], rows: _Rows) -> None:
    """Append a chunk of run lines; raise ValueError unless every line has 6 fields."""
    docs, values, keys, starts, tags = rows.docs, rows.values, rows.keys, rows.starts, rows.tags
    add_doc, add_value = docs.append, values.append
    current = keys[-1] if keys else None
    tag = next(reversed(tags)) if tags else None
    for line in lines:
        q, _, d, _, s, t = line.split()
        if q != current:
            if q[0] == "#":  # a comment line that happens to have 6 words
                raise ValueError(q)
            keys.append(q)
            starts.append(len(docs))
            current = q
        if t != tag:
            tags[t] = None
            tag = t
        add_doc(d)
        add_value(s)


def _fast_qrels_chunk(lines: list[str], rows: _Rows) -> None:
    """Append a chunk of qrels lines; raise ValueError unless every line has 4 fields.

    The same loop as :func:`_fast_run_chunk`, for 4 fields: the per-line body is
    inlined on purpose (a shared per-line function call would double the cost).
    """
    docs, values, keys, starts = rows.docs, rows.values, rows.keys, rows.starts
    add_doc, add_value = docs.append, values.append
    current = keys[-1] if keys else None
    for line in lines:
        q, _, d, g = line.split()
        if q != current:
            if q[0] == "#":  # a comment line that happens to have 4 words
                raise ValueError(q)
            keys.append(q)
            starts.append(len(docs))
            current = q
        add_doc(d)
        add_value(g)


# --- qrels -----------------------------------------------------------------------------------


def read_qrels(path: str | PathLike[str], gain_map: Mapping[int, int] | None = None) -> Qrels:
    """Read a TREC qrels file; raise :class:`~evalcore.io.errors.InputErrors` listing every error."""
    return parse_qrels(read_source(path), gain_map)


def parse_qrels(source: SourceText, gain_map: Mapping[int, int] | None = None) -> Qrels:
    """Validate decoded qrels text; same rules as :func:`read_qrels`."""
    log = ErrorLog(source.name)
    log.extend(source.errors)
    tokens: list[str] = []
    rows = _read_rows(source, QRELS_FIELDS, log, lambda values, _, __: tokens.extend(values))
    table = gain_table(set(tokens), gain_map or {})
    if any(isinstance(v, str) for v in table.values()):
        for i, tok in enumerate(tokens):
            problem = table[tok]
            if isinstance(problem, str):
                log.add(rows.lines.line(i), "gain", problem, gain_hint(tok))
    log.raise_if_any()
    if not rows.docs:
        log.add(None, None, "no judgments", "a qrels line is: query_id iteration doc_id gain")
        log.raise_if_any()
    gains = list(map(table.__getitem__, tokens))
    qrels = _group_qrels(source.name, rows, gains)
    if gain_map:
        mapped = Counter(raw for tok in tokens if (raw := gain_number(tok)) in gain_map)
        if mapped:
            qrels.notes.append(gain_map_note(source.name, gain_map, mapped))
    if any("." in tok for tok in table) and (note := decimal_gain_note(source.name, tokens)):
        qrels.notes.append(note)  # exact decimals (1.0) were read as integers
    return qrels


def _group_qrels(name: str, rows: _Rows, gains: list[int]) -> Qrels:
    docs = rows.docs
    by_query: dict[str, dict[str, int]] = {}
    a = 0
    for q, n in zip(rows.keys, rows.lengths(), strict=True):
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
    extra: dict[str, list[tuple[str, int]]] = {}
    collapsed = conflicting = 0
    notes: list[str] = []
    if sum(map(len, by_query.values())) != len(docs):
        # Second pass, only for files with repeated (query, doc) rows: name the lines.
        qids = [q for q, n in zip(rows.keys, rows.lengths(), strict=True) for _ in range(n)]
        line = rows.lines.line
        first: dict[tuple[str, str], int] = {}
        kept: dict[tuple[str, str], dict[int, int]] = {}  # (q, d) -> {gain: first row}
        for i, (q, d, g) in enumerate(zip(qids, docs, gains, strict=True)):
            j = first.setdefault((q, d), i)
            if j == i:
                continue
            seen = kept.setdefault((q, d), {gains[j]: j})
            where = f"{name}:{line(i)}: query {q} doc {d}"
            if g in seen:
                collapsed += 1
                text = f"{where} repeats line {line(seen[g])} with the same gain {g}; counted once"
            else:
                conflicting += 1
                seen[g] = i
                extra.setdefault(q, []).append((d, g))
                text = (
                    f"{where} has gain {g} but line {line(j)} gave {gains[j]}; "
                    "both labels kept, so the query is duplicate_reference"
                )
            if len(notes) < _MAX_NOTES:
                notes.append(text)
    return _qrels_from(name, by_query, extra, len(docs), collapsed, conflicting, notes)


def _qrels_from(
    name: str,
    by_query: dict[str, dict[str, int]],
    extra: dict[str, list[tuple[str, int]]],
    n_rows: int,
    collapsed: int,
    conflicting: int,
    notes: list[str],
) -> Qrels:
    doc_ids = {q: list(m) for q, m in by_query.items()}
    gains = {q: list(m.values()) for q, m in by_query.items()}
    for q, rows in extra.items():
        doc_ids[q].extend(d for d, _ in rows)
        gains[q].extend(g for _, g in rows)
    if collapsed + conflicting > len(notes):
        notes.append(f"... {collapsed + conflicting - len(notes)} more repeated rows")
    return Qrels(name, doc_ids, gains, n_rows, collapsed, conflicting, notes)


# --- runs ------------------------------------------------------------------------------------


def read_run(path: str | PathLike[str], *, extra_columns: bool = False) -> TrecRun:
    """Read a TREC run file; raise :class:`~evalcore.io.errors.InputErrors` listing every error.

    ``extra_columns=True`` ignores text after the tag, as trec_eval does.
    """
    return parse_run(read_source(path), extra_columns=extra_columns)


def parse_run(source: SourceText, *, extra_columns: bool = False) -> TrecRun:
    """Validate decoded run text; same rules as :func:`read_run`."""
    log = ErrorLog(source.name)
    log.extend(source.errors)
    parts: list[np.ndarray] = []

    def take_scores(tokens: list[str], first_row: int, lines: _LineMap) -> None:
        parts.append(_parse_scores(tokens, first_row, lines, log))

    rows = _read_rows(source, RUN_FIELDS, log, take_scores, extra_columns=extra_columns)
    log.raise_if_any()
    if not rows.docs:
        log.add(None, None, "no results", "a run line is: query_id Q0 doc_id rank score tag")
        log.raise_if_any()
    return _rank_run(source.name, rows, np.concatenate(parts))


def _parse_scores(tokens: list[str], first_row: int, lines: _LineMap, log: ErrorLog) -> np.ndarray:
    """One chunk's scores as float64; every token that is not a finite number is logged."""
    try:
        scores = np.fromiter(map(float, tokens), dtype=np.float64, count=len(tokens))
    except ValueError:
        scores = None
    if scores is not None and bool(np.isfinite(scores).all()) and _plain_ascii(tokens):
        return scores
    for i, tok in enumerate(tokens):
        try:
            ok = math.isfinite(float(tok)) and _plain_ascii([tok])
        except ValueError:
            ok = False
        if not ok:
            log.add(
                lines.line(first_row + i),
                "score",
                f"must be a finite number, got '{tok[:40]}'",
                "the fifth field is the score; items are ranked by it"
                if _plain_ascii([tok])
                else "write it as trec_eval reads it: ASCII digits, no '_' (e.g. 1000.5)",
            )
    return np.zeros(len(tokens))


def _plain_ascii(tokens: list[str]) -> bool:
    """No digit or separator Python's float() takes but trec_eval's atof does not (``_``, ``١``)."""
    text = "".join(tokens)
    return text.isascii() and "_" not in text


def _rank_run(name: str, rows: _Rows, scores: np.ndarray) -> TrecRun:
    """Group rows by query (first-appearance order) and order each query as trec_eval does."""
    docs, run_keys, run_lengths = rows.docs, rows.keys, rows.lengths()
    n = len(docs)
    code_of = {q: i for i, q in enumerate(dict.fromkeys(run_keys))}
    keys = list(code_of)
    if len(keys) == len(run_keys):  # each query's rows are contiguous
        edges = [0, *accumulate(run_lengths)]
    else:  # some query's rows are interleaved with others': regroup them stably
        codes = np.repeat(np.fromiter(map(code_of.__getitem__, run_keys), np.int64), run_lengths)
        perm = np.argsort(codes, kind="stable")
        docs = list(map(docs.__getitem__, perm.tolist()))
        scores = scores[perm]
        edges = [0, *accumulate(np.bincount(codes, minlength=len(keys)).tolist())]
    order, s_sorted, tied_pairs = order_blocks(scores, edges, docs)
    ranked = docs if order is None else list(map(docs.__getitem__, order.tolist()))
    doc_ids = {q: ranked[a:b] for q, a, b in zip(keys, edges, edges[1:], strict=False)}
    spans = {q: (a, b) for q, a, b in zip(keys, edges, edges[1:], strict=False)}
    return TrecRun(
        name, doc_ids, n, list(rows.tags), tied_pairs, s_sorted, spans, rows.extra_column_lines
    )


def qrels_from_rows(
    name: str, query_ids: Sequence[str], doc_ids: Sequence[str], gains: Sequence[int]
) -> Qrels:
    """Qrels from parallel rows already validated (gains in 0..4), with the file rules.

    Repeated ``(query, doc)`` rows are treated as in a file, row ``i`` standing
    for line ``i + 1``. Used for in-memory input (dicts, DataFrames).
    """
    rows = _rows_of(query_ids, doc_ids)
    return _group_qrels(name, rows, list(gains))


def _rows_of(query_ids: Sequence[str], doc_ids: Sequence[str]) -> _Rows:
    """Rows with runs of equal consecutive query IDs found by numpy (no per-row Python)."""
    q = np.asarray(query_ids, dtype=object)
    starts = np.flatnonzero(np.concatenate(([q.size > 0], q[1:] != q[:-1])))
    rows = _Rows(docs=list(doc_ids), keys=q[starts].tolist(), starts=starts.tolist())
    rows.lines.add(0, 1, None)
    return rows


def order_blocks(
    scores: np.ndarray, edges: Sequence[int], docs: Sequence[str]
) -> tuple[np.ndarray | None, np.ndarray, int]:
    """Order rows within each block ``edges[i]:edges[i+1]``: score descending, then doc ID
    descending. Returns (row order or None when already in order, sorted scores, tied pairs)."""
    n = len(scores)
    same_block = np.ones(max(n - 1, 0), dtype=bool)
    inner = np.asarray(edges[1:-1], dtype=np.int64)
    same_block[inner - 1] = False
    rising = np.flatnonzero((scores[1:] > scores[:-1]) & same_block)
    order_arr: np.ndarray | None = None
    if rising.size:
        order_arr = np.arange(n, dtype=np.int64)
        neg = -scores
        bounds = np.asarray(edges, dtype=np.int64)
        blocks = np.searchsorted(inner, rising, side="right")  # ascending: rising is
        unsorted = blocks[np.concatenate(([True], blocks[1:] != blocks[:-1]))]  # np.unique
        starts, lengths = bounds[unsorted], bounds[unsorted + 1] - bounds[unsorted]
        # Blocks of equal length are sorted together, one 2-D argsort per length.
        for length in np.unique(lengths).tolist():
            rows = starts[lengths == length][:, None] + np.arange(length)
            # Not stable, and need not be: equal scores are ordered by doc ID below.
            within = np.argsort(neg[rows], axis=1)
            order_arr[rows] = np.take_along_axis(rows, within, axis=1)
        scores = scores[order_arr]
    run_start, run_end = tied_runs(scores, same_block)
    tied_pairs = pairs_in_runs(run_start, run_end)
    if run_start.size:
        for a, b in zip(run_start.tolist(), run_end.tolist(), strict=True):
            rows = list(range(a, b)) if order_arr is None else order_arr[a:b].tolist()
            # trec_eval: equal scores are ordered by doc ID descending (strcmp).
            fixed = sorted(rows, key=docs.__getitem__, reverse=True)
            if fixed != rows:
                if order_arr is None:
                    order_arr = np.arange(n, dtype=np.int64)
                order_arr[a:b] = fixed
    return order_arr, scores, tied_pairs


# --- gain map --------------------------------------------------------------------------------


# --- observations ----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class TrecColumns:
    """Per-query parallel lists, ordered by query ID: the input of an observation batch."""

    query_ids: list[str]
    returned_ids: list[list[str]]
    label_ids: list[list[str]]
    label_gains: list[list[int]]
    population_complete: list[bool]


_EMPTY_IDS: list[str] = []
_EMPTY_GAINS: list[int] = []


def trec_columns(
    qrels: Qrels, run: TrecRun, *, complete: bool, query_ids: Iterable[str] | None = None
) -> TrecColumns:
    """Join qrels and run per query (see module docstring for the rules).

    ``query_ids`` restricts the join to those queries (default: every query of
    qrels or run); see :mod:`evalcore.io.trec_eval_scope`.
    """
    query_ids = sorted(
        set(qrels.doc_ids).union(run.doc_ids) if query_ids is None else query_ids, key=natural_key
    )
    q_docs, q_gains = qrels.doc_ids, qrels.gains
    r_docs = run.doc_ids
    return TrecColumns(
        query_ids=query_ids,
        returned_ids=[r_docs.get(q, _EMPTY_IDS) for q in query_ids],
        label_ids=[q_docs.get(q, _EMPTY_IDS) for q in query_ids],
        label_gains=[q_gains.get(q, _EMPTY_GAINS) for q in query_ids],
        population_complete=[complete and q in q_docs for q in query_ids],
    )


def trec_observations(qrels: Qrels, run: TrecRun, k: int, *, complete: bool) -> list[Observation]:
    """One :class:`Observation` per query of qrels or run, in natural query-ID order.

    Observations are validated (the model has a validator); their labels, checked
    by the reader, are built without a second validation
    (``model_construct``). ``returned_ids`` holds the whole ranking with its
    scores; only positions 1..k are measured.
    """
    # Imported here: the evaluate command's TREC path packs columns and never builds
    # an Observation, so its start-up does not pay for the model.
    from evalcore.contract.observation import Observation

    if not (isinstance(k, int) and not isinstance(k, bool) and k >= 1):
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    cols = trec_columns(qrels, run, complete=complete)
    return [
        Observation.model_validate(
            {
                "query_id": q,
                "corpus_id": None,
                "corpus_fingerprint": None,
                "cutoff": None,
                "retrieval_unit": "document",
                "k": k,
                "returned_ids": list(returned),
                "scores": run.scores_for(q),
                "labels": [{"id": d, "gain": g} for d, g in zip(ids, gains, strict=True)],
                "population_complete": pop,
                "scan_complete": True,
                "permitted_ids": None,
                "unit_of": None,
                "reference_version": None,
            },
        )
        for q, returned, ids, gains, pop in zip(
            cols.query_ids,
            cols.returned_ids,
            cols.label_ids,
            cols.label_gains,
            cols.population_complete,
            strict=True,
        )
    ]


def trec_diagnostics(qrels: Qrels, run: TrecRun) -> Diagnostics:
    """Reader facts for the report: tied score pairs and notes on repeated rows."""
    return Diagnostics(tied_score_pairs=run.tied_score_pairs, notes=[*qrels.notes, *run.notes])
