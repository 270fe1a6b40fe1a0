"""The study's blocking list as columns, counted from the metric computer's arrays.

:func:`blocking_table` gives the items, counts and order the rules of
:mod:`evalcore.annotation.blocking` give over every run's per-query results (the tests
compare it with a per-query reading, ``tests/blocking_oracle.py``), without making a
result object or a Python loop per query, run and unit: per run and
metric the blocking units are positions of the packed batch
(:meth:`evalcore.compute.evaluate.BatchResult.blocker_masks`), counted with numpy;
the runs' positions are grouped by (query, unit code)
(:func:`evalcore.compute.unit_pairs.pair_groups`). The codes come with the runs
(:attr:`RunBlocking.unit_codes`) or are made once from the unit id strings
(:func:`evalcore.compute.unit_pairs.pair_codes`).

A large study has hundreds of thousands of items: the table keeps them as arrays,
counts them exactly (:meth:`BlockingTable.__len__`) and makes
:class:`~evalcore.annotation.blocking.BlockingItem` s only for the page asked for
(:meth:`BlockingTable.page`); a row's unit id string is looked up in its run's batch
only then. After a label the live dashboard replaces the touched queries' rows
(:meth:`BlockingTable.replace_queries`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evalcore.annotation.blocking import (
    NO_POPULATION_NEEDED,
    BlockingItem,
    BlockingKey,
    item_from_key,
)
from evalcore.compute.batch import CONFLICT_BASE, UNLABELED
from evalcore.compute.evaluate import BatchResult
from evalcore.compute.measures.base import UNKNOWN_BITS
from evalcore.compute.unit_pairs import pair_codes, pair_groups
from evalcore.compute.validity import OBSERVATION_BITS
from evalcore.contract.reasons import Reason

_MISSING_REFERENCE_BIT = OBSERVATION_BITS[Reason.MISSING_REFERENCE]
#: The rank of a reference unit in conflict that no run returned in its top k.
_NOT_RETURNED = np.iinfo(np.int64).max
#: A page ending within the first 1/_PARTIAL_FROM of the list is picked by a partition,
#: not read from the whole list's sort.
_PARTIAL_FROM = 4


@dataclass(frozen=True)
class RunBlocking:
    """One run's evaluation, as the table reads it."""

    result: BatchResult
    #: each of the batch's queries' position in the study's query list
    positions: np.ndarray
    #: int64 per packed position of the batch: equal within a query exactly when the unit
    #: ids are, across every run given to one :func:`blocking_table` (None: made from the
    #: unit id strings)
    unit_codes: np.ndarray | None = None

    def __post_init__(self) -> None:
        packed = int(self.result.batch.pos_offsets[-1])
        if self.unit_codes is not None and len(self.unit_codes) != packed:
            raise ValueError(f"RunBlocking: {len(self.unit_codes):,} unit codes for {packed:,} "
                             "packed positions; give one code per packed position")


class _FlatUnits:
    """A batch's unit ids by packed position (read one at a time, for a page)."""

    def __init__(self, top_units: Sequence[Sequence[str]], offsets: np.ndarray) -> None:
        self.top_units = top_units
        self.offsets = offsets

    def __getitem__(self, position: int) -> str:
        q = int(np.searchsorted(self.offsets, position, side="right")) - 1
        return self.top_units[q][position - int(self.offsets[q])]


class _Positions:
    """Every run's packed positions (and unreturned units in conflict) with their counts, as
    int64 columns (:data:`COLUMNS`); each entry's unit id is ``sources[source][at]``."""

    COLUMNS = ("query", "code", "rank", "run", "blocks", "unlocks", "source", "at")

    def __init__(self) -> None:
        self.parts: list[list[np.ndarray]] = []
        self.sources: list[Sequence[str] | _FlatUnits] = []

    def add(self, source: Sequence[str] | _FlatUnits, query, code, rank, run, blocks, unlocks,
            at) -> None:
        """Add entries whose unit ids are ``source[at]``."""
        at = np.asarray(at, dtype=np.int64)
        source_index = np.full(at.size, len(self.sources), dtype=np.int64)
        self.sources.append(source)
        self.parts.append([np.asarray(values, dtype=np.int64) for values in
                           (query, code, rank, run, blocks, unlocks, source_index, at)])

    def column(self, name: str) -> np.ndarray:
        i = self.COLUMNS.index(name)
        return np.concatenate([part[i] for part in self.parts])


def _run_positions(out: _Positions, index: int, run: RunBlocking, codes: np.ndarray,
                   beyond_units: dict[tuple[int, str], list[int]]) -> None:
    """Add the run's positions with, per position, the values its unit blocks and unlocks;
    count the reference's units in conflict it did not return in ``beyond_units``."""
    result = run.result
    r = result.ranking
    query = r.query
    n = len(result.batch)
    missing_reference = result.observation_bits == _MISSING_REFERENCE_BIT
    every_unit = r.counted & missing_reference[query] if missing_reference.any() else None
    blocks = np.zeros(query.size, dtype=np.int64)
    unlocks = np.zeros(query.size, dtype=np.int64)
    for metric, m in result.metrics.items():
        unlabeled, conflict, beyond = result.blocker_masks(metric)
        mask = unlabeled | conflict
        if every_unit is not None:
            mask |= every_unit
        n_blockers = np.bincount(query[mask], minlength=n)
        for q, units in beyond.items():
            n_blockers[q] += len(units)
        lifts = result.valid & ((m.reason_bits & ~np.uint8(UNKNOWN_BITS)) == 0)
        if metric in NO_POPULATION_NEEDED:
            lifts = lifts | missing_reference
        alone = lifts & (n_blockers == 1)
        blocks += mask
        unlocks += mask & alone[query]
        for q, units in beyond.items():
            for unit in units:
                counts = beyond_units.setdefault((int(run.positions[q]), unit), [0, 0])
                counts[0] += 1
                counts[1] += int(alone[q])
    # Only units of unknown gain can block, in every run alike (the runs share one
    # reference): the others' positions are left out before the grouping.
    code = result.batch.pos_gain
    at = np.flatnonzero(((code == UNLABELED) | (code >= CONFLICT_BASE)) & r.counted
                        | (blocks > 0))
    out.add(_FlatUnits(result.batch.top_units, result.batch.pos_offsets),
            run.positions[query[at]], codes[at], r.rank[at], np.full(at.size, index),
            blocks[at], unlocks[at], at)


def _beyond_codes(keys: Sequence[tuple[int, str]], runs: Sequence[RunBlocking],
                  codes: Sequence[np.ndarray]) -> np.ndarray:
    """The codes of reference units in conflict no run returned for its query in its top
    k: a returned unit's code where another run returned it, else a new code per id."""
    by_query: dict[int, dict[str, int]] = {}
    for position in {q for q, _ in keys}:
        found = by_query[position] = {}
        for run, run_codes in zip(runs, codes, strict=True):
            rows = np.flatnonzero(run.positions == position)
            if rows.size:
                batch = run.result.batch
                start = int(batch.pos_offsets[rows[0]])
                found.update(zip(batch.top_units[rows[0]],
                                 run_codes[start:start + len(batch.top_units[rows[0]])].tolist(),
                                 strict=True))
    fresh: dict[str, int] = {}
    first = 1 + max((int(c.max()) for c in codes if c.size), default=0)
    out = np.empty(len(keys), dtype=np.int64)
    for i, (q, u) in enumerate(keys):
        found = by_query[q].get(u)
        out[i] = fresh.setdefault(u, first + len(fresh)) if found is None else found
    return out


def blocking_table(run_names: Sequence[str], runs: Mapping[str, RunBlocking],
                   query_ids: Sequence[str]) -> BlockingTable:
    """The blocking items of every query of ``runs`` (see the module docstring); a query is
    named by its position in ``query_ids``, a run's items list the runs in ``run_names``
    order (a run of ``run_names`` missing from ``runs`` answers none of these queries)."""
    out = _Positions()
    names = tuple(run_names)
    given = [(index, runs[name]) for index, name in enumerate(names) if name in runs]
    if all(run.unit_codes is not None for _, run in given):
        codes = [run.unit_codes for _, run in given]
    else:
        codes = pair_codes([(run.positions, run.result.batch.top_units) for _, run in given])
    beyond: dict[tuple[int, str], list[int]] = {}
    for (index, run), run_codes in zip(given, codes, strict=True):
        _run_positions(out, index, run, run_codes, beyond)
    if beyond:  # reference units in conflict: grouped with the returned ones, if any
        keys = list(beyond)
        out.add([u for _, u in keys], [q for q, _ in keys],
                _beyond_codes(keys, [run for _, run in given], codes),
                np.full(len(keys), _NOT_RETURNED), np.full(len(keys), -1),
                [c[0] for c in beyond.values()], [c[1] for c in beyond.values()],
                np.arange(len(keys)))
    if not sum(part[0].size for part in out.parts):
        return BlockingTable.empty(names, query_ids)
    query = out.column("query")
    group = pair_groups(query, out.column("code"))
    n = group.size
    blocks = np.bincount(group, weights=out.column("blocks"), minlength=n)
    rows = np.flatnonzero(blocks)  # the entries naming a group with a blocked value
    unlocks = np.bincount(group, weights=out.column("unlocks"), minlength=n)
    best = np.full(n, _NOT_RETURNED, dtype=np.int64)
    np.minimum.at(best, group, out.column("rank"))
    best = best[rows]
    best[best == _NOT_RETURNED] = 0
    run = out.column("run")
    returned = run >= 0
    present = np.zeros(n * len(names), dtype=bool)  # flat: one scatter, not a 2-d one
    present[group[returned] * len(names) + run[returned]] = True
    present = present.reshape(n, len(names))
    return BlockingTable(
        run_names=names, query_ids=query_ids, query=query[rows],
        unit_source=out.column("source")[rows], unit_at=out.column("at")[rows],
        sources=out.sources, unlocks=unlocks[rows].astype(np.int64),
        blocks=blocks[rows].astype(np.int64), best_rank=best, present=present[rows],
    )


#: The columns of a :class:`BlockingTable` holding one value per row.
_ROW_COLUMNS = ("query", "unit_source", "unit_at", "unlocks", "blocks", "best_rank", "present")


@dataclass
class BlockingTable:
    """Every blocking item of a study as columns (row order is not the list's order)."""

    run_names: tuple[str, ...]
    #: the study's query ids; ``query`` holds positions in it
    query_ids: Sequence[str]
    query: np.ndarray
    #: each row's unit id: ``sources[unit_source[row]][unit_at[row]]``
    unit_source: np.ndarray
    unit_at: np.ndarray
    sources: list[Sequence[str] | _FlatUnits]
    unlocks: np.ndarray
    blocks: np.ndarray
    best_rank: np.ndarray
    #: bool[N, runs]: which runs returned the unit in their top k
    present: np.ndarray
    _order: np.ndarray | None = None
    #: the packed sort key once made (see _packed_key)
    _packed: tuple[np.ndarray | None] | None = None
    #: the rows of the first pages picked by a partition (see _first_rows): up to which end
    _first: tuple[int, np.ndarray] | None = None

    @classmethod
    def empty(cls, run_names: tuple[str, ...], query_ids: Sequence[str]) -> BlockingTable:
        none = dict.fromkeys(_ROW_COLUMNS, np.zeros(0, dtype=np.int64))
        return cls(run_names, query_ids, sources=[], **{
            **none, "present": np.zeros((0, len(run_names)), dtype=bool)})

    def __len__(self) -> int:
        return int(self.query.size)

    def unit_id(self, row: int) -> str:
        return self.sources[int(self.unit_source[row])][int(self.unit_at[row])]

    def _key(self, row: int) -> BlockingKey:
        return (-int(self.unlocks[row]), -int(self.blocks[row]), int(self.best_rank[row]),
                self.query_ids[int(self.query[row])], self.unit_id(row),
                tuple(name for name, on in zip(self.run_names, self.present[row].tolist(),
                                               strict=True) if on))

    def _key_columns(self) -> list[np.ndarray]:
        """Every key but the unit id, as columns each ordered as the list is."""
        ids = self.query_ids
        by_id = np.empty(len(ids), dtype=np.int64)
        by_id[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
        return [self.unlocks.max(initial=0) - self.unlocks,
                self.blocks.max(initial=0) - self.blocks, self.best_rank, by_id[self.query]]

    def _packed_key(self) -> np.ndarray | None:
        """The key columns as one int64 per row (None: they do not fit in 63 bits)."""
        if self._packed is None:
            columns = self._key_columns()
            widths = [max(1, int(c.max(initial=0)).bit_length()) for c in columns]
            key = None
            if sum(widths) <= 63:
                key = np.zeros(self.query.size, dtype=np.int64)
                for column, width in zip(columns, widths, strict=True):
                    key = (key << width) | column
            self._packed = (key,)
        return self._packed[0]

    def _sorted(self) -> np.ndarray:
        """Rows in list order by every key but the unit id (equal rows: any order)."""
        if self._order is None:
            key = self._packed_key()
            if key is not None:  # one integer key: a plain sort, not a lexsort of four
                self._order = np.argsort(key)
            else:
                self._order = np.lexsort(self._key_columns()[::-1])
        return self._order

    def _first_rows(self, end: int) -> np.ndarray:
        """Rows in list order by every key but the unit id, as :meth:`_sorted` has them, up to
        the ``end``-th and every row tying with it: while the whole order is not made and
        ``end`` is a small part of the list (the first pages), the rows are picked by one
        partition of the key and only they are sorted (kept for the next page as far)."""
        if self._first is not None and end <= self._first[0]:
            return self._first[1]  # the live page asks for the same page every few seconds
        key = self._packed_key() if self._order is None else None
        if key is None or end * _PARTIAL_FROM > key.size:
            return self._sorted()
        last = np.partition(key, end - 1)[end - 1]
        rows = np.flatnonzero(key <= last)
        rows = rows[np.argsort(key[rows])]
        self._first = (end, rows)
        return rows

    def _same(self, a: int, b: int) -> bool:
        """Whether rows ``a`` and ``b`` tie on every key but the unit id."""
        return (self.query[a] == self.query[b] and self.best_rank[a] == self.best_rank[b]
                and self.blocks[a] == self.blocks[b] and self.unlocks[a] == self.unlocks[b])

    def page_keys(self, offset: int = 0, limit: int | None = None) -> list[BlockingKey]:
        """The list's items ``offset`` .. ``offset + limit`` as keys, in list order."""
        size = len(self)
        end = size if limit is None else min(size, offset + limit)
        if offset >= end:
            return []
        order = self._first_rows(end)
        start, stop = offset, end  # widened to whole ties: the unit id orders within them
        while start > 0 and self._same(order[start - 1], order[offset]):
            start -= 1
        while stop < order.size and self._same(order[stop], order[end - 1]):
            stop += 1
        keys = sorted(self._key(row) for row in order[start:stop].tolist())
        return keys[offset - start: end - start]

    def page(self, offset: int = 0, limit: int | None = None) -> list[BlockingItem]:
        """The list's items ``offset`` .. ``offset + limit`` (every item: ``limit`` None)."""
        return [item_from_key(key) for key in self.page_keys(offset, limit)]

    def of_query(self, position: int) -> list[BlockingItem]:
        """One query's items (the query at ``position`` in ``query_ids``), in list order."""
        rows = np.flatnonzero(self.query == position).tolist()
        return [item_from_key(key) for key in sorted(self._key(row) for row in rows)]

    def replace_queries(self, positions: Iterable[int], new: BlockingTable) -> BlockingTable:
        """This table with the queries at ``positions`` holding ``new``'s items instead."""
        drop = np.isin(self.query, np.asarray(list(positions), dtype=np.int64))
        keep = ~drop
        source = np.concatenate((self.unit_source[keep], new.unit_source + len(self.sources)))
        sources = [*self.sources, *new.sources]
        used = np.zeros(len(sources), dtype=bool)
        used[source] = True
        if not used.all():  # sources no row reads any more are let go
            source = (np.cumsum(used) - 1)[source]
            sources = [s for s, on in zip(sources, used.tolist(), strict=True) if on]
        rows = {name: np.concatenate((getattr(self, name)[keep], getattr(new, name)))
                for name in _ROW_COLUMNS if name != "unit_source"}
        return BlockingTable(self.run_names, self.query_ids, unit_source=source, sources=sources,
                             **rows)
