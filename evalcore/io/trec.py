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
  must be a finite number. As in trec_eval, the ``rank`` column is ignored:
  items are ordered by score descending, ties broken by doc ID descending
  (``strcmp`` byte order, which for UTF-8 equals code-point order). The
  number of tied pairs (two items of one query with equal scores) is reported,
  because their order rests only on that convention. A doc ID repeated within
  a query keeps every position (the metric computer reports returned duplicates).

Building observations (:func:`trec_columns`, :func:`trec_observations`): every
qrels query becomes an observation (absent from the run: an empty ranking, a
real zero); a run query with no qrels entry gets no labels and
``population_complete=False``, hence ``missing_reference``. ``complete=True``
declares every qrels population complete. Queries are ordered by query ID in
code-point order, the order in which trec_eval (which sorts with ``strcmp``)
prints per-query results. Note that trec_eval evaluates only the run's queries
unless ``-c`` is given; here qrels queries missing from the run are kept, as
the contract requires.

Speed: a 1,000,000-line run is read without a Python loop per line when the
file is regular (one record per line, a constant second column, no exotic
whitespace); otherwise a per-line path gives the same result with exact
line-numbered errors.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate
from os import PathLike

import numpy as np

from evalcore.gc_pause import gc_paused
from evalcore.io.errors import ErrorLog
from evalcore.io.text_lines import SourceText, numbered_lines, read_source
from evalcore.observation import Label, Observation
from evalcore.results import Diagnostics
from evalcore.trusted_models import construct

QRELS_FIELDS = ("query_id", "iteration", "doc_id", "gain")
RUN_FIELDS = ("query_id", "Q0", "doc_id", "rank", "score", "tag")

#: TREC fields are separated by spaces and tabs only (as in trec_eval).
_FIELD_SEP = re.compile(r"[ \t]+")
#: Characters ``str.split()`` treats as whitespace that are *not* TREC separators.
_OTHER_WHITESPACE = re.compile(
    "[\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)
_INTEGER = re.compile(r"[+-]?[0-9]+")
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
        """Facts worth a reader's attention (several run tags in one file)."""
        if len(self.tags) <= 1:
            return []
        shown = ", ".join(self.tags[:5]) + (", ..." if len(self.tags) > 5 else "")
        return [f"{self.name}: {len(self.tags)} different run tags: {shown}"]


@dataclass(frozen=True, eq=False)
class _Chunk:
    """Selected columns of a run of whole lines, one entry per record, with their lines."""

    columns: list[list[str]]
    first_line: int
    lines: list[int] | None  # None: record j is on line first_line + j

    def line(self, j: int) -> int:
        return self.first_line + j if self.lines is None else self.lines[j]

    def record_lines(self) -> Sequence[int]:
        n = len(self.columns[0])
        return range(self.first_line, self.first_line + n) if self.lines is None else self.lines


# --- tokenizing ------------------------------------------------------------------------------


#: Files are split in chunks of about this many characters, to bound peak memory.
_CHUNK_CHARS = 1 << 20


def _chunks(
    source: SourceText, width: int, names: tuple[str, ...], keep: tuple[int, ...], log: ErrorLog
) -> Iterator[_Chunk]:
    """Split every data line into exactly ``width`` fields; yield the ``keep`` columns.

    The text is processed in chunks of whole lines (bounded memory: a chunk's
    tokens are freed before the next is split). A regular chunk (see
    :func:`_split_regular`) is split in one call; any other chunk line by
    line, with an error for every line that does not have ``width`` fields.
    """
    text = source.text
    line_no = 0  # lines before the current chunk
    pos, n = 0, len(text)
    while pos < n:
        end = text.find("\n", pos + _CHUNK_CHARS)
        end = n if end == -1 else end + 1
        chunk = text[pos:end]
        n_lines = chunk.count("\n") + (0 if chunk.endswith("\n") else 1)
        tokens = _split_regular(chunk, width, n_lines)
        if tokens is not None:
            yield _Chunk([tokens[c::width] for c in keep], line_no + 1, None)
        else:
            columns: list[list[str]] = [[] for _ in keep]
            lines: list[int] = []
            _split_lines(chunk, line_no + 1, width, names, keep, columns, lines, log)
            yield _Chunk(columns, line_no + 1, lines)
        line_no += n_lines
        pos = end


def _split_lines(
    chunk: str,
    first_line: int,
    width: int,
    names: tuple[str, ...],
    keep: tuple[int, ...],
    columns: list[list[str]],
    lines: list[int],
    log: ErrorLog,
) -> None:
    """The per-line path: skip blank and comment lines, log every wrong field count."""
    for number, line in numbered_lines(chunk, comments=True, first_line=first_line):
        fields = _FIELD_SEP.split(line.strip(" \t"))
        if len(fields) != width:
            log.add(
                number,
                None,
                f"expected {width} fields ({' '.join(names)}), got {len(fields)}",
                "fields are separated by spaces or tabs",
            )
            continue
        for col, c in zip(columns, keep, strict=True):
            col.append(fields[c])
        lines.append(number)


def _split_regular(text: str, width: int, n_lines: int) -> list[str] | None:
    """All tokens of a file that is certainly one ``width``-field record per line, else None.

    Certainty: the token count is ``width`` times the line count (so no blank,
    comment, short or long lines unless they cancel out exactly), and the
    second column holds one constant value (a shifted record would move other
    fields into it), and no character other than space/tab separates fields.
    """
    if not text or _has_other_whitespace(text):
        return None
    tokens = text.split()
    if len(tokens) != width * n_lines:
        return None
    second = tokens[1::width]
    if second.count(second[0]) != len(second):
        return None
    return tokens


def _has_other_whitespace(text: str) -> bool:
    if text.isascii():
        return any(c in text for c in "\x0b\x0c\x1c\x1d\x1e\x1f")
    return _OTHER_WHITESPACE.search(text) is not None


# --- qrels -----------------------------------------------------------------------------------


def read_qrels(path: str | PathLike[str], gain_map: Mapping[int, int] | None = None) -> Qrels:
    """Read a TREC qrels file; raise :class:`~evalcore.io.errors.InputErrors` listing every error."""
    return parse_qrels(read_source(path), gain_map)


def parse_qrels(source: SourceText, gain_map: Mapping[int, int] | None = None) -> Qrels:
    """Validate decoded qrels text; same rules as :func:`read_qrels`."""
    log = ErrorLog(source.name)
    log.extend(source.errors)
    qids: list[str] = []
    docs: list[str] = []
    gain_tokens: list[str] = []
    lines: list[int] = []
    for chunk in _chunks(source, 4, QRELS_FIELDS, (0, 2, 3), log):
        q, d, g = chunk.columns
        qids += q
        docs += d
        gain_tokens += g
        lines += chunk.record_lines()
    table = _gain_table(set(gain_tokens), gain_map or {})
    if any(isinstance(v, str) for v in table.values()):
        for i, tok in enumerate(gain_tokens):
            problem = table[tok]
            if isinstance(problem, str):
                log.add(lines[i], "gain", problem, _gain_hint(tok))
    log.raise_if_any()
    if not qids:
        log.add(None, None, "no judgments", "a qrels line is: query_id iteration doc_id gain")
        log.raise_if_any()
    gains = list(map(table.__getitem__, gain_tokens))
    return _group_qrels(source.name, qids, docs, gains, lines)


def _gain_table(tokens: set[str], gain_map: Mapping[int, int]) -> dict[str, int | str]:
    """Each distinct gain token -> its gain, or -> an error message."""
    out: dict[str, int | str] = {}
    for tok in tokens:
        if not _INTEGER.fullmatch(tok):
            out[tok] = f"must be an integer, got '{tok}'"
            continue
        raw = int(tok)
        gain = gain_map.get(raw, raw)
        if 0 <= gain <= 4:
            out[tok] = gain
        elif raw in gain_map:
            out[tok] = f"gain {raw} is mapped to {gain}, outside 0..4"
        else:
            out[tok] = f"gain {raw} is outside 0..4"
    return out


def _gain_hint(token: str) -> str:
    if _INTEGER.fullmatch(token):
        return f"map it with --gain-map '{int(token)}:N', N in 0..4"
    return "gains are integers 0..4"


def _group_qrels(
    name: str, qids: list[str], docs: list[str], gains: list[int], lines: list[int]
) -> Qrels:
    by_query: dict[str, dict[str, int]] = {}
    run_keys: list[str] = []
    run_lengths: list[int] = []
    _add_runs(qids, run_keys, run_lengths)
    a = 0
    for q, n in zip(run_keys, run_lengths, strict=True):
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
    if sum(map(len, by_query.values())) != len(qids):
        # Second pass, only for files with repeated (query, doc) rows: name the lines.
        first: dict[tuple[str, str], int] = {}
        kept: dict[tuple[str, str], dict[int, int]] = {}  # (q, d) -> {gain: first row}
        for i, (q, d, g) in enumerate(zip(qids, docs, gains, strict=True)):
            j = first.setdefault((q, d), i)
            if j == i:
                continue
            seen = kept.setdefault((q, d), {gains[j]: j})
            where = f"{name}:{lines[i]}: query {q} doc {d}"
            if g in seen:
                collapsed += 1
                text = f"{where} repeats line {lines[seen[g]]} with the same gain {g}; counted once"
            else:
                conflicting += 1
                seen[g] = i
                extra.setdefault(q, []).append((d, g))
                text = (
                    f"{where} has gain {g} but line {lines[j]} gave {gains[j]}; "
                    "both labels kept, so the query is duplicate_reference"
                )
            if len(notes) < _MAX_NOTES:
                notes.append(text)
    return _qrels_from(name, by_query, extra, len(qids), collapsed, conflicting, notes)


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


def read_run(path: str | PathLike[str]) -> TrecRun:
    """Read a TREC run file; raise :class:`~evalcore.io.errors.InputErrors` listing every error."""
    return parse_run(read_source(path))


def parse_run(source: SourceText) -> TrecRun:
    """Validate decoded run text; same rules as :func:`read_run`."""
    log = ErrorLog(source.name)
    log.extend(source.errors)
    docs: list[str] = []
    score_parts: list[np.ndarray] = []
    run_keys: list[str] = []  # query IDs of consecutive same-query row runs ...
    run_lengths: list[int] = []  # ... and their lengths
    tags: dict[str, None] = {}
    for chunk in _chunks(source, 6, RUN_FIELDS, (0, 2, 4, 5), log):
        q, d, score_tokens, t = chunk.columns
        if not q:
            continue
        docs += d
        score_parts.append(_parse_scores(score_tokens, chunk, log))
        _add_runs(q, run_keys, run_lengths)
        tags.update(dict.fromkeys(_distinct(t)))
    log.raise_if_any()
    if not docs:
        log.add(None, None, "no results", "a run line is: query_id Q0 doc_id rank score tag")
        log.raise_if_any()
    scores = np.concatenate(score_parts)
    return _rank_run(source.name, run_keys, run_lengths, docs, scores, list(tags))


def _parse_scores(tokens: list[str], chunk: _Chunk, log: ErrorLog) -> np.ndarray:
    try:
        scores = np.fromiter(map(float, tokens), dtype=np.float64, count=len(tokens))
    except ValueError:
        scores = None
    if scores is not None and bool(np.isfinite(scores).all()):
        return scores
    for i, tok in enumerate(tokens):
        try:
            ok = math.isfinite(float(tok))
        except ValueError:
            ok = False
        if not ok:
            log.add(
                chunk.line(i),
                "score",
                f"must be a finite number, got '{tok}'",
                "the fifth field is the score; items are ranked by it",
            )
    return np.zeros(len(tokens))


def _add_runs(qids: list[str], keys: list[str], lengths: list[int]) -> None:
    """Append the runs of equal consecutive query IDs in ``qids`` (joining across calls).

    Run files usually hold the same number of rows per query, so a run's end
    is guessed from the previous run's length and verified with a C-level
    count; a wrong guess falls back to a scan of that run.
    """
    n = len(qids)
    a = 0
    width = lengths[-1] if lengths else 1
    while a < n:
        key = qids[a]
        b = a + width
        if not (
            b <= n
            and qids[b - 1] == key
            and (b == n or qids[b] != key)
            and qids[a:b].count(key) == width
        ):
            b = a + 1
            while b < n and qids[b] == key:
                b += 1
        if a == 0 and keys and keys[-1] == key:
            lengths[-1] += b - a
        else:
            keys.append(key)
            lengths.append(b - a)
        a, width = b, b - a


def _distinct(values: list[str]) -> list[str]:
    """Distinct values in first-appearance order (fast when all are equal)."""
    if values and values.count(values[0]) == len(values):
        return [values[0]]
    return list(dict.fromkeys(values))


def _rank_run(
    name: str,
    run_keys: list[str],
    run_lengths: list[int],
    docs: list[str],
    scores: np.ndarray,
    tags: list[str],
) -> TrecRun:
    """Group rows by query (first-appearance order) and order each query as trec_eval does."""
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
    order, s_sorted, tied_pairs = _order_blocks(scores, edges, docs)
    ranked = docs if order is None else list(map(docs.__getitem__, order))
    doc_ids = {q: ranked[a:b] for q, a, b in zip(keys, edges, edges[1:], strict=False)}
    spans = {q: (a, b) for q, a, b in zip(keys, edges, edges[1:], strict=False)}
    return TrecRun(name, doc_ids, n, tags, tied_pairs, s_sorted, spans)


def _order_blocks(
    scores: np.ndarray, edges: list[int], docs: list[str]
) -> tuple[list[int] | None, np.ndarray, int]:
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
        unsorted = np.unique(np.searchsorted(inner, rising, side="right"))
        starts, lengths = bounds[unsorted], bounds[unsorted + 1] - bounds[unsorted]
        # Blocks of equal length are sorted together, one 2-D argsort per length.
        for length in np.unique(lengths).tolist():
            rows = starts[lengths == length][:, None] + np.arange(length)
            within = np.argsort(neg[rows], axis=1, kind="stable")
            order_arr[rows] = np.take_along_axis(rows, within, axis=1)
        scores = scores[order_arr]
    tied = np.flatnonzero((scores[1:] == scores[:-1]) & same_block)
    tied_pairs = 0
    order: list[int] | None = None if order_arr is None else order_arr.tolist()
    if tied.size:
        # Runs of equal scores: group starts where the previous pair is not tied.
        run_start = tied[np.concatenate(([True], np.diff(tied) > 1))]
        run_end = tied[np.concatenate((np.diff(tied) > 1, [True]))] + 2
        sizes = run_end - run_start
        tied_pairs = int((sizes * (sizes - 1) // 2).sum())
        for a, b in zip(run_start.tolist(), run_end.tolist(), strict=True):
            rows = list(range(a, b)) if order is None else order[a:b]
            # trec_eval: equal scores are ordered by doc ID descending (strcmp).
            fixed = sorted(rows, key=docs.__getitem__, reverse=True)
            if fixed != rows:
                if order is None:
                    order = list(range(n))
                order[a:b] = fixed
    return order, scores, tied_pairs


# --- gain map --------------------------------------------------------------------------------


def parse_gain_map(spec: str) -> dict[int, int]:
    """Parse ``"-1:0,5:4"`` into ``{-1: 0, 5: 4}``; raise ValueError with what is wrong."""
    out: dict[int, int] = {}
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        raw, sep, mapped = part.partition(":")
        if not sep or not _INTEGER.fullmatch(raw.strip()) or not _INTEGER.fullmatch(mapped.strip()):
            raise ValueError(f"'{part}' is not FROM:TO with integers, e.g. '-1:0,5:4'")
        src, dst = int(raw), int(mapped)
        if not 0 <= dst <= 4:
            raise ValueError(f"'{part}' maps to {dst}; gains must be mapped into 0..4")
        if src in out and out[src] != dst:
            raise ValueError(f"gain {src} is mapped twice ({out[src]} and {dst})")
        out[src] = dst
    if not out:
        raise ValueError("empty gain map; give FROM:TO pairs, e.g. '-1:0,5:4'")
    return out


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


def trec_columns(qrels: Qrels, run: TrecRun, *, complete: bool) -> TrecColumns:
    """Join qrels and run per query (see module docstring for the rules)."""
    query_ids = sorted(set(qrels.doc_ids).union(run.doc_ids))
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
    """One :class:`Observation` per query of qrels or run, ordered by query ID.

    The reader validated every field, so observations are built without a
    second validation (:func:`evalcore.trusted_models.construct`; equal to
    validated models). ``returned_ids`` holds the whole ranking with its
    scores; only positions 1..k are measured.
    """
    if not (isinstance(k, int) and not isinstance(k, bool) and k >= 1):
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    cols = trec_columns(qrels, run, complete=complete)
    with gc_paused():
        return [
            construct(
                Observation,
                {
                    "query_id": q,
                    "corpus_id": None,
                    "corpus_fingerprint": None,
                    "cutoff": None,
                    "retrieval_unit": "document",
                    "k": k,
                    "returned_ids": list(returned),
                    "scores": run.scores_for(q),
                    "labels": [
                        construct(Label, {"id": d, "gain": g})
                        for d, g in zip(ids, gains, strict=True)
                    ],
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
