"""TREC qrels and run files read column by column, straight into a packed batch.

:func:`columnar_trec_input` reads both files as bytes with numpy
(:mod:`evalcore.io.trec_bytes`: no Python object per input line, no pyarrow)
and returns what the careful reader (:mod:`evalcore.io.trec`) followed by the
join and :meth:`~evalcore.compute.batch.ObservationBatch.from_gain_maps` gives --
the same batch and the same diagnostics -- or ``None`` when the input holds
anything only the careful reader may judge. The caller then runs the careful
reader, which gives the same result or names every bad line (``file:line``).
``tests/io/test_trec_columnar.py`` checks both paths against each other on random
valid and invalid files.

Checked in bulk; anything else declines (returns ``None``):

* the bytes: a regular file; no NUL, ``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1f``
  (which ``str.strip`` takes for blanks); fields separated by single spaces, or
  by single tabs, one kind per file (an empty field -- two separators, one at a
  line's start or end -- declines); only LF or CRLF line ends; text that is not
  ASCII must be UTF-8 without Unicode blanks;
* every line has exactly 4 (qrels) or 6 (run) fields (text after a run line's
  tag, accepted by the trec_eval switch, declines), and none starts with ``#``
  (comment lines decline);
* gains: every distinct token through :func:`evalcore.io.trec.gain_table`, the
  one rule (and the gain map); scores: plain ASCII numbers (digits, sign, point,
  exponent), parsed to what ``float()`` gives, finite;
* no repeated ``(query, doc)`` in the qrels (the careful reader writes the
  notes naming both lines).

Doc IDs are compared as zero-padded 64-bit words (exactly), joined through a
64-bit hash whose equal values are checked word by word (a collision declines).

Ranking: every query's lines are ordered as trec_eval orders them, score
descending then doc ID descending (byte order, ``strcmp``'s); tied pairs are
counted over whole rankings, and ties are ordered where they reach the packed
positions 1..max(k, min_depth).

Inputs under :data:`MIN_BYTES` go to the careful reader (faster there).

Tables: :func:`table_trec_input` reads a run given as a pandas DataFrame or a pyarrow
Table (and qrels as a table or prepared, :class:`TableLabels`) the same way, from the
columns' own bytes (pyarrow's string buffers); anything it cannot take declines to the
general path (:mod:`evalcore.io.trec_mappings`).

Doc IDs stay words to the end: the batch's units (:class:`WordUnits`) are decoded to
text only when a report names them (blocking or repeated docs); ``--trec-eval``
output names none, so no string is made per packed position.

Memory: both files are read :data:`BLOCK_BYTES` of whole lines at a time, each
block checked and parsed on its own. The qrels keep query codes, gains and doc
ID words (the join needs them); each run block is reduced to its queries'
packed positions and tied pairs, and the lines of its last query wait for the
next block, so a run file whose queries are each on consecutive lines (as every
TREC tool writes them) is read in memory bounded by the block and the packed
positions. When a query comes back after another one, the run is read again as
a whole (memory then grows with the file).
"""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np

from evalcore.compute.batch import UNLABELED, ObservationBatch, PerQuery
from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.query_order import natural_key
from evalcore.io.decompress import is_compressed
from evalcore.io.ties import pairs_in_runs, tied_runs
from evalcore.io.trec_bytes import (
    Block,
    Decline,
    RowIndex,
    as_strings,
    concat_words,
    distinct,
    field_words,
    hash_rows,
    pad_words,
    parse_scores,
    split_block,
)
from evalcore.io.trec_eval_scope import scope_of_ids
from evalcore.io.trec_format import (
    DOC_COLUMNS,
    GAIN_COLUMNS,
    QRELS_FIELDS,
    QUERY_COLUMNS,
    RUN_FIELDS,
    SCORE_COLUMNS,
    gain_map_note,
    gain_table,
    has_other_whitespace,
    is_arrow_table,
    is_dataframe,
    run_notes,
)

if TYPE_CHECKING:  # (or the plain ProtocolChoices: evalcore.contract.protocol_choices)
    from evalcore.contract.evaluation_protocol import EvalProtocol

#: Smaller inputs (both files together) are read by the careful reader (faster there).
MIN_BYTES = 1 << 16
#: Files are parsed and reduced in blocks of about this many bytes.
BLOCK_BYTES = 1 << 22
#: Rankings of more distinct lengths than this are sorted in one sort, not one per length.
_MAX_SORT_GROUPS = 64
#: Bytes ``str.strip`` takes for blanks that are no TREC separator (and NUL).
_BAD_BYTES = (b"\x00", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")

_Decline = Decline


@dataclass(frozen=True, eq=False)
class ColumnarInput:
    """The packed batch of TREC files and the facts of its diagnostics, as plain values
    (no pydantic: :mod:`evalcore.api.report_text` writes the command line's JSON from
    them; :meth:`evalcore.api.inputs.EvalInput.from_columnar` makes the diagnostics' model)."""

    batch: ObservationBatch
    tied_score_pairs: int
    notes: list[str]


def columnar_trec_input(
    qrels: str | PathLike[str],
    run: str | PathLike[str],
    k: int,
    *,
    complete: bool,
    protocol: EvalProtocol,
    all_queries: bool = False,
    gain_map: Mapping[int, int] | None = None,
    min_depth: int = 0,
) -> ColumnarInput | None:
    """The packed batch and the facts of the diagnostics of TREC files, or None for the
    careful reader.

    Same arguments and meaning as :func:`evalcore.api.inputs.trec_input`.
    """
    try:
        if os.stat(qrels).st_size + os.stat(run).st_size < MIN_BYTES:
            return None
    except OSError:
        return None
    try:
        # (Read one after the other: most of the reading holds the interpreter lock, so a
        # second thread would only add memory.)
        labels = _read_qrels(qrels, gain_map or {})
        ranked = _read_run(run, max(k, min_depth))
        return _assemble(
            labels,
            ranked,
            k,
            complete=complete,
            protocol=protocol,
            all_queries=all_queries,
            min_depth=min_depth,
        )
    except _Decline:
        return None


# --- raw bytes -------------------------------------------------------------------------------


def _blocks(path: str | PathLike[str], width: int, block: int | None) -> Iterator[Block]:
    """The blocks of a plain file, read ``block`` bytes of whole lines at a time (None: the
    whole file), each checked (:func:`_check_bytes`) and split into ``width`` fields; or
    decline."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode) or is_compressed(path):
            raise _Decline("not a plain regular file")  # (the careful reader decompresses)
        handle = open(path, "rb")  # noqa: SIM115  (closed below)
    except OSError:
        raise _Decline("unreadable") from None
    sep: bytes | None = None
    rest = b""
    first = True
    with handle:
        while True:
            data = handle.read(block or -1)
            if not data and not rest:
                return
            cut = data.rfind(b"\n") + 1 if data and block else len(data)
            if cut == 0 and data:  # a line longer than a block: read on
                rest += data
                continue
            # Whole lines: the rest of the last read and this one's up to its last line end
            # (one copy of the block; ``rest`` never holds a line end).
            chunk = rest + memoryview(data)[:cut] if rest else data[:cut]
            rest = data[cut:]
            if chunk.startswith(codecs.BOM_UTF8):  # the careful reader drops it at the start
                if not first:
                    raise _Decline("byte-order mark at a line's start inside the file")
                chunk = chunk[len(codecs.BOM_UTF8) :]
            first = False
            sep = _check_bytes(chunk, sep)
            if b"\r" in chunk:
                chunk = chunk.replace(b"\r\n", b"\n")
            if chunk[:1] != b"\n" or chunk.lstrip(b"\n"):  # (only empty lines: skipped)
                yield split_block(chunk, (sep or b" ")[0], width)


def _check_bytes(chunk: bytes, sep: bytes | None) -> bytes | None:
    """The separator of a block of whole lines (``sep``: the file's so far; None: none seen
    yet), or decline.
    (Empty fields are found when the block is split, :func:`~evalcore.io.trec_bytes.split_block`.)"""
    if any(b in chunk for b in _BAD_BYTES):
        raise _Decline("blank-like control byte")
    spaces, tabs = b" " in chunk, b"\t" in chunk
    if spaces and tabs:
        raise _Decline("spaces and tabs")
    found = b"\t" if tabs else b" " if spaces else sep
    if sep is not None and found != sep:
        raise _Decline("spaces and tabs")
    if b"\r" in chunk and chunk.count(b"\r") != chunk.count(b"\r\n"):
        raise _Decline("lone CR")
    if not chunk.isascii():
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError:
            raise _Decline("not UTF-8") from None
        if has_other_whitespace(text):
            raise _Decline("Unicode blank")
    return found


def _query_codes(words: np.ndarray, code_of: dict[str, int]) -> np.ndarray:
    """Codes of a block's query IDs in ``code_of`` (new IDs get the next codes)."""
    local, values = distinct(words)
    if any(v.startswith("#") for v in values):
        raise _Decline("comment line")
    to_global = np.fromiter(
        (code_of.setdefault(v, len(code_of)) for v in values), dtype=np.int64, count=len(values)
    )
    return to_global[local]


# --- qrels -----------------------------------------------------------------------------------


@dataclass
class _Labels:
    name: str
    query_ids: list[str]  # distinct, first-appearance order
    query: np.ndarray  # int32 per row: index into query_ids
    docs: list[np.ndarray]  # doc ID words, one array per block, the rows in file order
    gains: np.ndarray  # int8 per row
    notes: list[str] = field(default_factory=list)


def _read_qrels(path: str | PathLike[str], gain_map: Mapping[int, int]) -> _Labels:
    q, _, d, g = range(len(QRELS_FIELDS))
    code_of: dict[str, int] = {}
    rules: dict[str, int | str] = {}
    mapped: dict[int, int] = {}  # raw gain -> rows, in order of appearance
    queries, docs, gains = [], [], []
    for block in _blocks(path, len(QRELS_FIELDS), BLOCK_BYTES):
        queries.append(_query_codes(block.words(q), code_of).astype(np.int32))
        local, tokens = distinct(block.words(g))
        rules.update(gain_table(set(tokens).difference(rules), gain_map))
        if any(isinstance(rules[t], str) or "." in t for t in tokens):
            raise _Decline("gain")  # (decimal gains: the careful reader notes them)
        gains.append(np.asarray([rules[t] for t in tokens], dtype=np.int8)[local])
        docs.append(block.words(d))
        if gain_map:
            counts = np.bincount(local, minlength=len(tokens)).tolist()
            for token, n in zip(tokens, counts, strict=True):
                if (raw := int(token)) in gain_map:
                    mapped[raw] = mapped.get(raw, 0) + n
    if not queries:
        raise _Decline("no judgments")
    name = str(path)
    notes = [gain_map_note(name, gain_map, mapped)] if mapped else []
    return _Labels(name, list(code_of), np.concatenate(queries), docs, np.concatenate(gains), notes)


# --- run -------------------------------------------------------------------------------------


class _Interleaved(Exception):
    """A query's lines continue after another query began (in another block)."""


@dataclass
class _Ranked:
    """The run reduced to its packed positions: per query (first-appearance order) the
    units at positions 1..depth, in trec_eval order."""

    name: str
    query_ids: list[str] = field(default_factory=list)
    code_of: dict[str, int] = field(default_factory=dict)
    window_query: list[np.ndarray] = field(default_factory=list)  # codes, one per window
    window_size: list[np.ndarray] = field(default_factory=list)
    window_docs: list[np.ndarray] = field(default_factory=list)  # doc ID words
    tied_pairs: int = 0
    tags: dict[str, None] = field(default_factory=dict)
    done: set[int] = field(default_factory=set)


def _read_run(path: str | PathLike[str], depth: int) -> _Ranked:
    try:
        return _reduce_run(path, depth, BLOCK_BYTES)
    except _Interleaved:
        return _reduce_run(path, depth, None)


def _reduce_run(path: str | PathLike[str], depth: int, block_bytes: int | None) -> _Ranked:
    """Read the run in blocks (``block_bytes``; None: the whole file at once)."""
    q, _, d, _, s, tag = range(len(RUN_FIELDS))
    out = _Ranked(str(path))
    carry: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    for block in _blocks(path, len(RUN_FIELDS), block_bytes):
        codes = _query_codes(block.words(q), out.code_of)
        scores = parse_scores(block, s)
        docs = block.words(d)
        for t in distinct(block.words(tag))[1]:  # in order of first appearance
            out.tags.setdefault(t, None)
        del block
        if carry is not None:
            codes = np.concatenate((carry[0], codes))
            scores = np.concatenate((carry[1], scores))
            docs = concat_words([carry[2], docs])
        # The last query may go on in the next block: keep its lines for then.
        tail = len(codes) - int(np.argmax(codes[::-1] != codes[-1]))  # its last stretch
        if tail == len(codes) and codes[0] == codes[-1]:
            carry = (codes, scores, docs)
            continue
        if (codes[:tail] != codes[-1]).all():  # the usual file: views, no copies
            carry = (codes[tail:], scores[tail:], docs[tail:])
            _reduce_block(out, codes[:tail], scores[:tail], docs[:tail], depth)
            continue
        last = codes == codes[-1]
        rest = ~last
        carry = (codes[last], scores[last], docs[last])
        _reduce_block(out, codes[rest], scores[rest], docs[rest], depth)
    if carry is None:
        raise _Decline("no results")
    _reduce_block(out, *carry, depth)
    out.query_ids = list(out.code_of)
    return out


def _reduce_block(
    out: _Ranked, codes: np.ndarray, scores: np.ndarray, docs: np.ndarray, depth: int
) -> None:
    """Order a block's lines per query as trec_eval does; keep positions 1..depth."""
    n = len(codes)
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    firsts = codes[starts].tolist()
    if not out.done.isdisjoint(firsts):
        raise _Interleaved
    order: np.ndarray | None = None
    if len(set(firsts)) != len(firsts):  # a query's lines apart: group them (stable)
        order = np.argsort(codes, kind="stable")
        codes, scores = codes[order], scores[order]
        starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    rising = np.flatnonzero((scores[1:] > scores[:-1]) & (codes[1:] == codes[:-1]))
    if rising.size:
        within = _score_order(scores, codes, starts, rising)
        order = within if order is None else order[within]
        scores = scores[within]
    same_block = codes[1:] == codes[:-1]
    run_start, run_end = tied_runs(scores, same_block)
    out.tied_pairs += pairs_in_runs(run_start, run_end)
    lengths = np.diff(np.append(starts, n))
    size = np.minimum(lengths, depth)
    if run_start.size:  # ties reaching the packed positions: doc ID descending (strcmp)
        group = np.searchsorted(starts, run_start, side="right") - 1
        reach = run_start < starts[group] + size[group]
        if reach.any():
            a, b = run_start[reach], run_end[reach]
            rows = _ranges(a, b - a)
            if order is None:
                order = np.arange(n, dtype=np.int64)
            lines = order[rows]
            # Big-endian words compare as the bytes do; inverted, they sort descending.
            tied = ~docs[lines].byteswap()
            keys = [tied[:, i] for i in range(tied.shape[1] - 1, -1, -1)]
            within = np.lexsort((*keys, np.repeat(np.arange(a.size), b - a)))
            order[rows] = lines[within]
    picked = _ranges(starts, size)
    lines = picked if order is None else order[picked]
    out.window_query.append(codes[starts])
    out.window_size.append(size)
    out.window_docs.append(docs[lines])
    out.done.update(firsts)


def _score_order(
    scores: np.ndarray, codes: np.ndarray, starts: np.ndarray, rising: np.ndarray
) -> np.ndarray:
    """The rows with each query's (``codes``, grouped; ``starts``: each query's first row) in
    score-descending order: only the queries with a rising pair (``rising``: its first row)
    are sorted, those of one length together (one 2-D sort; one sort of every row when
    the lengths are many). Not stable, and need not be: equal scores are put in doc ID
    order after, where they reach the packed positions."""
    n = len(scores)
    ends = np.append(starts[1:], n)
    unsorted = np.unique(np.searchsorted(starts, rising, side="right") - 1)
    lengths = ends[unsorted] - starts[unsorted]
    distinct_lengths = np.unique(lengths).tolist()
    if len(distinct_lengths) > _MAX_SORT_GROUPS:
        return np.lexsort((-scores, codes))
    order = np.arange(n, dtype=np.int64)
    for length in distinct_lengths:
        first = starts[unsorted[lengths == length]]
        rows = first[:, None] + np.arange(length)
        order[rows] = np.take_along_axis(rows, np.argsort(-scores[rows], axis=1), axis=1)
    return order


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[i] .. starts[i] + lengths[i] - 1`` of every i, concatenated."""
    total = int(lengths.sum())
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(total, dtype=np.int64)


# --- the join --------------------------------------------------------------------------------


def _assemble(
    labels: _Labels,
    ranked: _Ranked,
    k: int,
    *,
    complete: bool,
    protocol: EvalProtocol,
    all_queries: bool,
    min_depth: int,
) -> ColumnarInput | None:
    window_query = np.concatenate(ranked.window_query)
    window_size = np.concatenate(ranked.window_size)
    window_docs = concat_words(ranked.window_docs)
    ranked.window_docs.clear()
    window_start = np.cumsum(window_size) - window_size
    pos_gain = _window_gains(labels, ranked, window_query, window_size, window_docs)
    if pos_gain is None:
        return None

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
    run_out = np.fromiter((index.get(r, -1) for r in run_ids), dtype=np.int64, count=len(run_ids))
    where = run_out[window_query]
    n_pos = np.zeros(n, dtype=np.int64)
    kept = where >= 0
    n_pos[where[kept]] = window_size[kept]
    pos_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(n_pos, out=pos_offsets[1:])
    by_out = np.flatnonzero(kept)[np.argsort(where[kept], kind="stable")]
    flat = _ranges(window_start[by_out], window_size[by_out])
    position_words = window_docs[flat]
    del window_docs
    top_units = WordUnits(position_words, pos_offsets)
    pos_unit = _word_codes(position_words, np.repeat(np.arange(n, dtype=np.int64), n_pos))

    # Reference labels, per output query, in file order.
    qrels_out = np.fromiter((index.get(j, -1) for j in judged), dtype=np.int32, count=len(judged))
    row_out = qrels_out[labels.query]
    keep: slice | np.ndarray = slice(None)
    if not (row_out.size and row_out[0] >= 0 and (row_out[1:] >= row_out[:-1]).all()):
        # Not every row kept in output order already (the usual file): select and order.
        keep = np.flatnonzero(row_out >= 0)
        keep = keep[np.argsort(row_out[keep], kind="stable")]
    label_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_out[keep], minlength=n), out=label_offsets[1:])
    del row_out
    judged_set = set(judged)
    population = np.fromiter(
        ((complete or protocol.trec_eval) and qid in judged_set for qid in query_ids),
        dtype=bool,
        count=n,
    )

    batch = ObservationBatch.from_codes(
        query_ids,
        k,
        pos_offsets,
        pos_gain[flat],
        top_units,
        label_offsets,
        labels.gains[keep],
        population,
        protocol=protocol,
        min_depth=min_depth,
        pos_unit=pos_unit,
    )
    return ColumnarInput(
        batch,
        ranked.tied_pairs,
        [*notes, *labels.notes, *run_notes(ranked.name, list(ranked.tags))],
    )


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


def _word_codes(words: np.ndarray, query: np.ndarray) -> np.ndarray:
    """A code per row, equal for equal (query, words) rows only (exact: equal hashes are
    compared word by word)."""

    def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (query[a] == query[b]) & (words[a] == words[b]).all(axis=1)

    return RowIndex(hash_rows(words, seed=query), same).first.astype(np.int64)


def _window_gains(
    labels: _Labels,
    ranked: _Ranked,
    window_query: np.ndarray,
    window_size: np.ndarray,
    window_docs: np.ndarray,
) -> np.ndarray | None:
    """The label code of every packed position; None when the qrels repeat a (query, doc).

    The qrels rows go into a hash table keyed by (query, doc) (a row meeting an
    equal one is a repeated judgment); each packed position looks its label up.
    """
    judged_code = {qid: i for i, qid in enumerate(labels.query_ids)}
    extra = len(judged_code)
    run_code = np.fromiter(
        (judged_code.get(r, extra + i) for i, r in enumerate(ranked.query_ids)),
        dtype=np.int64,
        count=len(ranked.query_ids),
    )
    n_words = max(window_docs.shape[1], *(d.shape[1] for d in labels.docs))
    docs = concat_words(labels.docs) if len(labels.docs) > 1 else labels.docs[0]
    docs = pad_words(docs, n_words)
    labels.docs.clear()  # one copy of the doc IDs is enough
    query = labels.query

    def same_label(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (query[a] == query[b]) & (docs[a] == docs[b]).all(axis=1)

    index = RowIndex(hash_rows(docs, seed=query), same_label)
    if np.any(index.first != np.arange(len(docs))):
        return None  # a repeated judgment: the careful reader names its lines
    del index.first
    position_query = np.repeat(run_code[window_query].astype(np.int32), window_size)
    position_docs = pad_words(window_docs, n_words)

    def same_position(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (position_query[a] == query[b]) & (position_docs[a] == docs[b]).all(axis=1)

    label = index.find(hash_rows(position_docs, seed=position_query), same_position)
    pos_gain = np.full(len(label), UNLABELED, dtype=np.int8)
    found = label >= 0
    pos_gain[found] = labels.gains[label[found]]
    return pos_gain


# --- tables ----------------------------------------------------------------------------------


def table_trec_input(
    qrels: Any,
    run: Any,
    k: int,
    *,
    complete: bool,
    protocol: EvalProtocol,
    all_queries: bool = False,
    gain_map: Mapping[int, int] | None = None,
    min_depth: int = 0,
) -> ColumnarInput | None:
    """The packed batch of a run table (a pandas DataFrame or a pyarrow Table) against
    qrels given as a table or as the words of prepared qrels (:class:`TableLabels`), read
    column by column as the files are: no Python object per row; or None, for the general
    path (:mod:`evalcore.io.trec_mappings`), which gives the same result or names every
    wrong row. Same arguments and meaning as :func:`evalcore.api.inputs.trec_input`."""
    try:
        labels = qrels if isinstance(qrels, TableLabels) else table_labels(qrels, gain_map)
        ranked = _table_ranked(run, max(k, min_depth))
        return _assemble(
            labels.copy(),
            ranked,
            k,
            complete=complete,
            protocol=protocol,
            all_queries=all_queries,
            min_depth=min_depth,
        )
    except _Decline:
        return None


@dataclass
class TableLabels(_Labels):
    """Qrels as columns ready for :func:`table_trec_input` (kept by prepared qrels)."""

    def copy(self) -> TableLabels:
        """A copy whose doc words list the join may empty (the arrays are shared)."""
        return TableLabels(
            self.name, self.query_ids, self.query, list(self.docs), self.gains, list(self.notes)
        )


def table_labels(value: Any, gain_map: Mapping[int, int] | None) -> TableLabels:
    """Qrels from a table's columns (see :func:`table_trec_input`); raises :class:`Decline`."""
    name, (q, d, g) = _table_columns(value, "qrels", GAIN_COLUMNS)
    import pyarrow as pa

    if not pa.types.is_integer(g.type) or g.null_count:
        raise _Decline("gain column")
    gains = g.to_numpy()
    if gain_map:
        distinct_raw = np.unique(gains)
        mapped = np.asarray([gain_map.get(int(v), int(v)) for v in distinct_raw.tolist()])
        gains = mapped[np.searchsorted(distinct_raw, gains)]
    if gains.size == 0 or gains.min() < 0 or gains.max() > MAX_GAIN:
        raise _Decline("gain outside the scale")
    code_of: dict[str, int] = {}
    query = _query_codes(_words(q), code_of).astype(np.int32)
    return TableLabels(name, list(code_of), query, [_words(d)], gains.astype(np.int8))


def words_labels(
    name: str, query_ids: list[str], counts: np.ndarray, docs: list[str], gains: np.ndarray
) -> TableLabels:
    """:class:`TableLabels` from qrels held as strings (``counts[i]`` docs for query i);
    raises :class:`Decline` for a doc ID the words cannot hold (a NUL)."""
    text = "".join(docs)
    if "\0" in text:
        raise _Decline("NUL")
    lengths = (
        np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        if text.isascii()
        else np.fromiter(map(len, map(str.encode, docs)), dtype=np.int64, count=len(docs))
    )
    data = np.frombuffer(text.encode() + bytes(8), dtype=np.uint8)
    ends = np.cumsum(lengths)
    query = np.repeat(np.arange(len(query_ids), dtype=np.int32), counts)
    return TableLabels(
        name,
        list(query_ids),
        query,
        [field_words(data, ends - lengths, ends)],
        gains.astype(np.int8),
    )


def _table_ranked(value: Any, depth: int) -> _Ranked:
    name, (q, d, s) = _table_columns(value, "run", SCORE_COLUMNS)
    import pyarrow as pa

    if not (pa.types.is_floating(s.type) or pa.types.is_integer(s.type)) or s.null_count:
        raise _Decline("score column")
    scores = s.to_numpy().astype(np.float64)
    if not np.isfinite(scores).all():
        raise _Decline("score not finite")
    out = _Ranked(name)
    codes = _query_codes(_words(q), out.code_of)
    docs = _words(d)
    if codes.size > 1 and (codes[1:] < codes[:-1]).any():  # a query's rows not together
        order = np.argsort(codes, kind="stable")
        codes, scores, docs = codes[order], scores[order], docs[order]
    if not codes.size:
        raise _Decline("no results")
    _reduce_block(out, codes, scores, docs, depth)
    out.query_ids = list(out.code_of)
    return out


def _table_columns(value: Any, kind: str, value_columns: tuple[str, ...]) -> tuple[str, list]:
    """(name, the query, doc and value columns as pyarrow arrays) of a DataFrame or a pyarrow
    Table; IDs as text (an integer column as its decimal text). Raises :class:`Decline`."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:
        raise _Decline("no pyarrow") from None
    frame = is_dataframe(value)
    if not (frame or is_arrow_table(value)):
        raise _Decline("not a table")
    names = [str(c) for c in (value.columns if frame else value.column_names)]
    picked = []
    for options in (QUERY_COLUMNS, DOC_COLUMNS, value_columns):
        found = [c for c in options if c in names]
        if len(found) != 1:
            raise _Decline("columns")  # the general path says which
        picked.append(found[0])
    try:
        table = (
            pa.Table.from_pandas(value[picked], preserve_index=False)
            if frame
            else value.select(picked)
        )
    except (pa.ArrowException, TypeError, ValueError):
        raise _Decline("not columns of one type") from None
    columns = []
    for j, column in enumerate(table.columns):
        array = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        if j < 2:
            if pa.types.is_integer(array.type):
                array = pc.cast(array, pa.string())
            if pa.types.is_large_string(array.type) or pa.types.is_string_view(array.type):
                array = pc.cast(array, pa.string())
            if not pa.types.is_string(array.type) or array.null_count:
                raise _Decline("IDs not text")
        columns.append(array)
    return f"{kind} ({'DataFrame' if frame else 'Table'})", columns


def _words(array: Any) -> np.ndarray:
    """A pyarrow string array's values as rows of 64-bit words; raises :class:`Decline` for
    an empty value or a NUL (the general path names the first, the words cannot hold the
    second)."""
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[
        array.offset : array.offset + len(array) + 1
    ].astype(np.int64)
    if len(array) and (offsets[1:] == offsets[:-1]).any():
        raise _Decline("empty ID")
    start, end = int(offsets[0]), int(offsets[-1])
    data = (
        np.frombuffer(array.buffers()[2], dtype=np.uint8)[start:end]
        if end > start
        else (np.zeros(0, dtype=np.uint8))
    )
    if (data == 0).any():
        raise _Decline("NUL")
    padded = np.concatenate((data, np.zeros(8, dtype=np.uint8)))
    return field_words(padded, offsets[:-1] - start, offsets[1:] - start)
