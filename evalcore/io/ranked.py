"""Qrels and runs held as arrays, and their join into the metric computer's batch.

Every qrels and run that is not joined column by column
(:func:`evalcore.io.trec.assemble`) comes here: nested dicts, DataFrames and
pyarrow tables (:mod:`evalcore.io.trec_mappings`), and files read by the
TREC reader as Python objects (:func:`judged_from_qrels`, :func:`ranked_from_run`).

* :class:`Judged`: the qrels, one ``doc ID -> gain`` dict per query (the lookup
  the join does once per packed position) and every query's distinct labels' gains
  as one int8 array; a query whose reference labels a doc twice with different
  gains is flagged ``duplicate_reference`` (contract section 3);
* :class:`Ranked`: a run in trec_eval order (score descending, doc ID
  descending), every query's ranking one slice of one array of doc IDs, ranked in
  bulk (:func:`rank_rows`: one 2-D sort per ranking length) and held to the top
  positions the measures read;
* :func:`join`: the queries of both (or trec_eval's, :mod:`evalcore.io.trec_eval_scope`)
  in natural query-ID order, positions 1..max(k, min_depth) of each ranking with
  the label code of each, packed by
  :meth:`~evalcore.compute.batch.ObservationBatch.from_codes`. The rules are those
  of :mod:`evalcore.io.trec` (contract section 8): a qrels query absent from the run has
  an empty ranking; a run query without qrels has no labels and an incomplete
  population (``missing_reference``); ``complete`` (or trec_eval) declares every
  qrels population complete.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, islice, repeat
from typing import TYPE_CHECKING

import numpy as np

from evalcore.compute.batch import UNLABELED, ObservationBatch, PerQuery
from evalcore.contract.query_order import natural_key
from evalcore.io.trec import ColumnarInput, ranges, rank_groups
from evalcore.io.trec_eval_scope import scope_of_ids

if TYPE_CHECKING:
    from evalcore.contract.evaluation_protocol import EvalProtocol
    from evalcore.io.trec import Labels, Qrels, TrecRun

_NO_LABELS: dict[str, int] = {}


@dataclass(frozen=True, eq=False)
class Judged:
    """Qrels ready to join: per query a ``doc ID -> gain`` dict and the gains as arrays."""

    name: str
    query_ids: list[str]  # in input order
    gains_of: dict[str, dict[str, int]]  # query -> doc -> gain (each query of query_ids)
    label_offsets: np.ndarray  # int64[n + 1]: query i's labels are label_gain[a:b]
    label_gain: np.ndarray  # int8, one per distinct (query, doc), in input order
    duplicate_reference: np.ndarray  # bool[n]: a doc labeled twice with different gains
    notes: list[str] = field(default_factory=list)

    @classmethod
    def of_dicts(
        cls,
        name: str,
        gains_of: dict[str, dict[str, int]],
        duplicate_reference: np.ndarray | None = None,
        notes: list[str] | None = None,
    ) -> Judged:
        """From one ``doc -> gain`` dict per query (checked: gains in 0..MAX_GAIN)."""
        sizes = np.fromiter(map(len, gains_of.values()), dtype=np.int64, count=len(gains_of))
        offsets = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        gains = np.fromiter(
            chain.from_iterable(map(dict.values, gains_of.values())),
            dtype=np.int8,
            count=int(offsets[-1]),
        )
        flags = (
            np.zeros(sizes.size, dtype=bool) if duplicate_reference is None else duplicate_reference
        )
        return cls(name, list(gains_of), gains_of, offsets, gains, flags, notes or [])

    @cached_property
    def index(self) -> dict[str, int]:
        return {q: i for i, q in enumerate(self.query_ids)}

    @cached_property
    def words(self) -> Labels | None:
        """These qrels as the table reader's columns (built once, when a table run first
        comes); None when it cannot take them (a doc labeled twice, a NUL in an ID)."""
        from evalcore.io.trec import words_labels
        from evalcore.io.trec_bytes import Decline

        if self.duplicate_reference.any():
            return None
        docs = list(chain.from_iterable(self.gains_of.values()))
        try:
            return words_labels(
                self.name, self.query_ids, np.diff(self.label_offsets), docs, self.label_gain
            )
        except Decline:
            return None

    @cached_property
    def natural_order(self) -> list[str]:
        """The query IDs in natural order (computed once: many runs join one prepared qrels)."""
        return sorted(self.query_ids, key=natural_key)


@dataclass(frozen=True, eq=False)
class Ranked:
    """A run ranked as trec_eval ranks it (score descending, doc ID descending).

    Query i's ranked positions are ``offsets[i]:offsets[i + 1]``; ``order`` maps each
    ranked position to its row of ``docs`` (None: the rows are the positions, already
    ranked). A run held to a depth (:func:`rank_rows`) keeps only each query's top
    positions in ``order`` while ``docs`` keeps every row. A doc ID is never copied:
    ``docs`` holds the input's own strings.
    """

    name: str
    query_ids: list[str]  # in input order
    offsets: np.ndarray  # int64[n + 1]: query i's ranked positions
    docs: Sequence[str]  # the doc ID of every row, grouped by query
    order: np.ndarray | None  # int64[positions]: ranked position -> row; None: rows are ranked
    tied_score_pairs: int
    may_repeat: bool  # a ranking may hold a doc twice (files, tables; never a dict)
    #: int64[rows]: equal codes for equal doc IDs (finds repeated docs in bulk), or None
    doc_codes: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)

    @cached_property
    def index(self) -> dict[str, int]:
        return {q: i for i, q in enumerate(self.query_ids)}

    def rankings(self) -> dict[str, list[str]]:
        """query -> its ranking, best first (a view for reading, built when asked)."""
        bounds = self.offsets.tolist()
        rows = range(len(self.docs)) if self.order is None else self.order.tolist()
        docs = list(map(self.docs.__getitem__, rows))
        return {q: docs[a:b] for q, a, b in zip(self.query_ids, bounds, bounds[1:], strict=False)}


class PackedUnits(PerQuery):
    """Per packed query, the doc IDs of its packed positions: read from the run's own doc
    IDs when asked (a report names blocking and repeated docs), never copied up front."""

    def __init__(self, docs: Sequence[str], rows: np.ndarray, offsets: np.ndarray) -> None:
        super().__init__(offsets)
        self._docs = docs
        self._rows = rows

    def _query(self, i: int, lo: int, hi: int) -> list[str]:
        return list(map(self._docs.__getitem__, self._rows[lo:hi].tolist()))

    def names_at(self, positions: np.ndarray) -> list[str]:
        """The doc IDs at these packed positions (flat, every query's after the last's)."""
        return list(map(self._docs.__getitem__, self._rows[positions].tolist()))


def judged_from_qrels(qrels: Qrels) -> Judged:
    """:class:`Judged` from qrels read by the careful file reader (repeats as it kept them)."""
    gains_of: dict[str, dict[str, int]] = {}
    repeats = []
    for q, ids in qrels.doc_ids.items():
        labels = dict(zip(ids, qrels.gains[q], strict=True))
        gains_of[q] = labels
        repeats.append(len(labels) != len(ids))
    return Judged.of_dicts(qrels.name, gains_of, np.asarray(repeats, dtype=bool), list(qrels.notes))


def ranked_from_run(run: TrecRun) -> Ranked:
    """:class:`Ranked` from a run read by the careful file reader (already in trec_eval order)."""
    query_ids = list(run.doc_ids)
    offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
    np.cumsum(
        np.fromiter(map(len, run.doc_ids.values()), dtype=np.int64, count=len(query_ids)),
        out=offsets[1:],
    )
    docs = list(chain.from_iterable(run.doc_ids.values()))
    return Ranked(
        run.name, query_ids, offsets, docs, None, run.tied_score_pairs, True, notes=run.notes
    )


class DictKeys(Sequence[str]):
    """The doc IDs of a run's inner dicts, row by row (query after query), read from the
    dicts: one query's keys when a tie is ordered, every key listed once when many are
    read (a report naming docs)."""

    def __init__(self, inner: list[dict], offsets: np.ndarray) -> None:
        self.inner = inner
        self._offsets = offsets
        self._all: list[str] | None = None

    @classmethod
    def of(cls, names: list[str], offsets: np.ndarray) -> DictKeys:
        """The doc IDs of a run held as one list, grouped by query (``offsets``)."""
        keys = cls([], offsets)
        keys._all = names
        return keys

    def __len__(self) -> int:
        return int(self._offsets[-1])

    def __getitem__(self, row):  # type: ignore[override]
        return self.listed()[row]

    def listed(self) -> list[str]:
        """Every doc ID, row by row (listed once, when first asked)."""
        if self._all is None:
            self._all = list(chain.from_iterable(self.inner))
        return self._all

    def at(self, i: int, rows: np.ndarray) -> list[str]:
        """The doc IDs of ``rows``, all rows of query ``i``."""
        block = self.block(i)
        return list(map(block.__getitem__, (rows - int(self._offsets[i])).tolist()))

    def first_row(self, i: int) -> int:
        """The row of query ``i``'s first doc ID."""
        return int(self._offsets[i])

    def block(self, i: int) -> list[str]:
        """Query ``i``'s doc IDs, in row order."""
        if self._all is not None:
            return self._all[int(self._offsets[i]) : int(self._offsets[i + 1])]
        return list(self.inner[i])


def rank_rows(
    scores: np.ndarray, offsets: np.ndarray, docs: DictKeys, depth: int = 0
) -> tuple[np.ndarray, np.ndarray, int]:
    """(positions, order, tied pairs): query i's ranked positions are
    ``positions[i]:positions[i + 1]`` of ``order``, the rows of its top ``depth`` (0: all)
    of ``offsets[i]:offsets[i + 1]`` in trec_eval order (:func:`~evalcore.io.trec.rank_groups`)."""

    def order_ties(order: np.ndarray, run_start: np.ndarray, run_end: np.ndarray) -> None:
        if run_start.size * 4 > offsets.size:  # ties in many queries: every doc ID listed once
            names = docs.listed()
            for a, b in zip(run_start.tolist(), run_end.tolist(), strict=True):
                tied = order[a:b].tolist()
                tied.sort(key=names.__getitem__, reverse=True)
                order[a:b] = tied
            return
        query = np.searchsorted(offsets, run_start, side="right") - 1
        for a, b, q in zip(run_start.tolist(), run_end.tolist(), query.tolist(), strict=True):
            block, first = docs.block(q), docs.first_row(q)
            within = (order[a:b] - first).tolist()
            within.sort(key=block.__getitem__, reverse=True)
            order[a:b] = np.asarray(within, dtype=np.int64) + first

    order, kept, pairs = rank_groups(scores, offsets[:-1], depth, order_ties)
    positions = np.zeros(kept.size + 1, dtype=np.int64)
    np.cumsum(kept, out=positions[1:])
    picked = ranges(offsets[:-1], kept)
    return positions, picked if order is None else order[picked], pairs


def join(
    judged: Judged,
    ranked: Ranked,
    k: int,
    *,
    complete: bool,
    protocol: EvalProtocol,
    all_queries: bool = False,
    min_depth: int = 0,
) -> ColumnarInput:
    """The batch of ``ranked`` against ``judged`` (see the module docstring)."""
    query_ids, notes = _query_order(judged, ranked, protocol.trec_eval, all_queries)
    n = len(query_ids)
    depth = max(k, min_depth)

    r_at = _positions_in(ranked.index, query_ids)
    r_has = r_at >= 0
    r_start = ranked.offsets[:-1][r_at[r_has]]
    r_len = np.zeros(n, dtype=np.int64)
    r_len[r_has] = np.minimum(ranked.offsets[1:][r_at[r_has]] - r_start, depth)
    pos_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(r_len, out=pos_offsets[1:])
    rows = ranges(r_start, r_len[r_has])  # ranked positions, then rows, of packed positions
    if ranked.order is not None:
        rows = ranked.order[rows]
    pos_gain = _gains(judged, ranked, rows, query_ids, r_len)
    top_units = PackedUnits(ranked.docs, rows, pos_offsets)
    pos_unit = None if ranked.doc_codes is None else ranked.doc_codes[rows]

    j_at = _positions_in(judged.index, query_ids)
    j_has = j_at >= 0
    l_start = judged.label_offsets[:-1][j_at[j_has]]
    l_len = np.zeros(n, dtype=np.int64)
    l_len[j_has] = judged.label_offsets[1:][j_at[j_has]] - l_start
    label_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(l_len, out=label_offsets[1:])
    label_gain = judged.label_gain[ranges(l_start, l_len[j_has])]
    duplicate_reference = np.zeros(n, dtype=bool)
    duplicate_reference[j_has] = judged.duplicate_reference[j_at[j_has]]
    population = j_has & (complete or protocol.trec_eval)

    batch = ObservationBatch.from_codes(
        query_ids,
        k,
        pos_offsets,
        pos_gain,
        top_units,
        label_offsets,
        label_gain,
        population,
        protocol=protocol,
        min_depth=min_depth,
        duplicate_reference=duplicate_reference,
        may_repeat=ranked.may_repeat,
        pos_unit=pos_unit,
    )
    return ColumnarInput(batch, ranked.tied_score_pairs, [*notes, *judged.notes, *ranked.notes])


def _query_order(
    judged: Judged, ranked: Ranked, trec_eval: bool, all_queries: bool
) -> tuple[list[str], list[str]]:
    """The queries to pack, in natural order, and the notes on those left out (trec_eval)."""
    judged_index = judged.index
    ranked_ids = ranked.query_ids
    notes: list[str] = []
    if trec_eval:
        scope = scope_of_ids(set(judged_index), set(ranked_ids), all_queries=all_queries)
        keep, notes = scope.query_ids, list(scope.notes)
        if len(keep) == len(judged_index):
            return list(judged.natural_order), notes
        wanted = set(keep)
        return [q for q in judged.natural_order if q in wanted], notes
    outside = [q for q in ranked_ids if q not in judged_index]
    if not outside:  # the usual run: every query judged, the qrels' order is the order
        return list(judged.natural_order), notes
    return sorted(chain(judged.query_ids, dict.fromkeys(outside)), key=natural_key), notes


def _gains(
    judged: Judged, ranked: Ranked, rows: np.ndarray, query_ids: list[str], counts: np.ndarray
) -> np.ndarray:
    """The label code of every packed position (``rows``: the run row of each, query by
    query; ``counts``: positions per query): one ``dict.get`` per position in C loops, each
    query's docs looked up in its ``doc -> gain`` dict. A dict's run packed almost whole is
    looked up inner dict by inner dict, in row order."""
    gains_of = judged.gains_of
    names = ranked.docs
    if isinstance(names, DictKeys) and names.inner and rows.size * 2 >= len(names):
        lookups = (
            map(gains_of.get(q, _NO_LABELS).get, block, repeat(UNLABELED))
            for q, block in zip(ranked.query_ids, names.inner, strict=True)
        )
        by_row = np.fromiter(chain.from_iterable(lookups), dtype=np.int8, count=len(names))
        return by_row[rows]
    if isinstance(names, DictKeys):  # each query's keys listed in turn, never all
        where = ranked.index
        ends = np.cumsum(counts).tolist()
        lookups = (
            map(
                gains_of.get(q, _NO_LABELS).get,
                names.at(where[q], rows[b - c : b]),
                repeat(UNLABELED),
            )
            for q, c, b in zip(query_ids, counts.tolist(), ends, strict=True)
            if c
        )
        return np.fromiter(chain.from_iterable(lookups), dtype=np.int8, count=rows.size)
    docs_at = map(ranked.docs.__getitem__, rows.tolist())
    lookups = (
        map(gains_of.get(q, _NO_LABELS).get, islice(docs_at, c), repeat(UNLABELED))
        for q, c in zip(query_ids, counts.tolist(), strict=True)
        if c
    )
    return np.fromiter(chain.from_iterable(lookups), dtype=np.int8, count=rows.size)


def _positions_in(index: dict[str, int], query_ids: Sequence[str]) -> np.ndarray:
    """Each query's position in ``index``, -1 where absent."""
    return np.fromiter(map(index.get, query_ids, repeat(-1)), dtype=np.int64, count=len(query_ids))
