"""The study's blocking list as columns, counted from the metric computer's arrays.

:func:`blocking_table` gives exactly the items, counts and order of
:func:`evalcore.annotation.blocking.query_blocking_keys` over every run's
per-query results (the rules are written there, in its module docstring), without
making a result object or a Python loop per query, run and unit: per run and
metric the blocking units are positions of the packed batch
(:meth:`evalcore.compute.evaluate.BatchResult.blocker_masks`), counted with numpy;
the runs' positions are grouped by (query, unit) with one sort.

Units are grouped by their string's hash; every group's strings are then compared, and
if two different units of a query ever shared a hash the grouping is redone with exact
codes (a dictionary of every unit string: slower, same result).

A large study has hundreds of thousands of items: the table keeps them as arrays,
counts them exactly (:meth:`BlockingTable.__len__`) and makes
:class:`~evalcore.annotation.blocking.BlockingItem` s only for the page asked for
(:meth:`BlockingTable.page`). After a label the live dashboard replaces the touched
queries' rows (:meth:`BlockingTable.replace_queries`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

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
from evalcore.compute.validity import OBSERVATION_BITS
from evalcore.contract.reasons import Reason

_MISSING_REFERENCE_BIT = OBSERVATION_BITS[Reason.MISSING_REFERENCE]
#: The rank of a reference unit in conflict that no run returned in its top k.
_NOT_RETURNED = np.iinfo(np.int64).max


@dataclass(frozen=True)
class RunBlocking:
    """One run's evaluation, as the table reads it."""

    result: BatchResult
    #: each of the batch's queries' position in the study's query list
    positions: np.ndarray


@dataclass
class _Positions:
    """Every run's packed positions (and unreturned units in conflict) with their counts."""

    query: list[np.ndarray] = field(default_factory=list)
    units: list[np.ndarray] = field(default_factory=list)  # object[...]
    rank: list[np.ndarray] = field(default_factory=list)
    run: list[np.ndarray] = field(default_factory=list)
    blocks: list[np.ndarray] = field(default_factory=list)
    unlocks: list[np.ndarray] = field(default_factory=list)

    def add(self, query, units, rank, run, blocks, unlocks) -> None:
        self.query.append(np.asarray(query, dtype=np.int64))
        self.units.append(units)
        self.rank.append(np.asarray(rank, dtype=np.int64))
        self.run.append(np.asarray(run, dtype=np.int64))
        self.blocks.append(np.asarray(blocks, dtype=np.int64))
        self.unlocks.append(np.asarray(unlocks, dtype=np.int64))


def _run_positions(out: _Positions, index: int, run: RunBlocking) -> None:
    """Add the run's positions with, per position, the values its unit blocks and unlocks."""
    result = run.result
    r = result.ranking
    query = r.query
    n = len(result.batch)
    missing_reference = result.observation_bits == _MISSING_REFERENCE_BIT
    every_unit = r.counted & missing_reference[query] if missing_reference.any() else None
    blocks = np.zeros(query.size, dtype=np.int64)
    unlocks = np.zeros(query.size, dtype=np.int64)
    extra: dict[tuple[int, str], list[int]] = {}
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
                counts = extra.setdefault((q, unit), [0, 0])
                counts[0] += 1
                counts[1] += int(alone[q])
    # Only units of unknown gain can block, in every run alike (the runs share one
    # reference): the others' positions are left out before the grouping.
    code = result.batch.pos_gain
    at = np.flatnonzero(((code == UNLABELED) | (code >= CONFLICT_BASE)) & r.counted
                        | (blocks > 0))
    units = np.empty(query.size, dtype=object)
    units[:] = list(chain.from_iterable(result.batch.top_units))
    out.add(run.positions[query[at]], units[at], r.rank[at], np.full(at.size, index),
            blocks[at], unlocks[at])
    if extra:  # reference units in conflict: grouped with the returned ones, if any
        keys = list(extra)
        beyond_units = np.empty(len(keys), dtype=object)
        beyond_units[:] = [u for _, u in keys]
        out.add(run.positions[[q for q, _ in keys]], beyond_units,
                np.full(len(keys), _NOT_RETURNED), np.full(len(keys), -1),
                [c[0] for c in extra.values()], [c[1] for c in extra.values()])


def _hash_codes(units: Sequence[str], bits: int) -> np.ndarray:
    """Each unit's string hash, cut to its top ``bits`` bits."""
    hashes = np.fromiter(map(hash, units), dtype=np.int64, count=len(units))
    return hashes.view(np.uint64) >> np.uint64(64 - bits)


def _exact_codes(units: Sequence[str], bits: int) -> np.ndarray:
    """Each unit's number among the distinct unit strings (exact, slower)."""
    codes: dict[str, int] = {}
    out = np.fromiter((codes.setdefault(u, len(codes)) for u in units), dtype=np.uint64,
                      count=len(units))
    if len(codes) >= 1 << bits:
        raise ValueError(f"{len(codes):,} distinct units do not fit the {bits}-bit key")
    return out


def blocking_table(run_names: Sequence[str], runs: Mapping[str, RunBlocking],
                   query_ids: Sequence[str]) -> BlockingTable:
    """The blocking items of every query of ``runs`` (see the module docstring); a query is
    named by its position in ``query_ids``, a run's items list the runs in ``run_names``
    order (a run of ``run_names`` missing from ``runs`` answers none of these queries)."""
    out = _Positions()
    names = tuple(run_names)
    for index, name in enumerate(names):
        if name in runs:
            _run_positions(out, index, runs[name])
    if not out.query or not sum(q.size for q in out.query):
        return BlockingTable.empty(names, query_ids)
    units = np.concatenate(out.units)
    query = np.concatenate(out.query)
    grouped = _group(query, units, _hash_codes)
    if grouped is None:  # two different units of a query shared a hash
        grouped = _group(query, units, _exact_codes)
        assert grouped is not None
    order, starts, group = grouped
    blocks = np.add.reduceat(np.concatenate(out.blocks)[order], starts)
    keep = blocks > 0
    unlocks = np.add.reduceat(np.concatenate(out.unlocks)[order], starts)
    best = np.minimum.reduceat(np.concatenate(out.rank)[order], starts)
    best[best == _NOT_RETURNED] = 0
    run = np.concatenate(out.run)[order]
    returned = run >= 0
    present = np.zeros((starts.size, len(names)), dtype=bool)
    present[group[returned], run[returned]] = True
    return BlockingTable(
        run_names=names, query_ids=query_ids, query=query[order][starts][keep],
        unit=units[order][starts][keep], unlocks=unlocks[keep], blocks=blocks[keep],
        best_rank=best[keep], present=present[keep],
    )


def _group(query: np.ndarray, units: np.ndarray,
           codes: Callable[[Sequence[str], int], np.ndarray]) -> tuple[np.ndarray, ...] | None:
    """(order, group starts in it, each sorted position's group) of the (query, unit)
    groups, or None when two units of one query got the same code.

    One 63-bit key per position: the query's position in its top bits, the unit's code
    below; positions come query by query in each run, so the stable sort is cheap."""
    shift = max(1, int(query.max()).bit_length())
    bits = 63 - shift
    key = (query.astype(np.uint64) << np.uint64(bits)) | codes(units, bits)
    order = np.argsort(key, kind="stable")
    key = key[order]
    start = np.ones(order.size, dtype=bool)
    start[1:] = key[1:] != key[:-1]
    group = np.cumsum(start) - 1
    starts = np.flatnonzero(start)
    members = np.flatnonzero(~start)
    if members.size:
        sorted_units = units[order]
        if not (sorted_units[members] == sorted_units[starts[group[members]]]).all():
            return None
    return order, starts, group


@dataclass
class BlockingTable:
    """Every blocking item of a study as columns (row order is not the list's order)."""

    run_names: tuple[str, ...]
    #: the study's query ids; ``query`` holds positions in it
    query_ids: Sequence[str]
    query: np.ndarray
    unit: np.ndarray  # object[N]: unit ids
    unlocks: np.ndarray
    blocks: np.ndarray
    best_rank: np.ndarray
    #: bool[N, runs]: which runs returned the unit in their top k
    present: np.ndarray
    _order: np.ndarray | None = None

    @classmethod
    def empty(cls, run_names: tuple[str, ...], query_ids: Sequence[str]) -> BlockingTable:
        none = np.zeros(0, dtype=np.int64)
        return cls(run_names, query_ids, none, np.zeros(0, dtype=object), none, none, none,
                   np.zeros((0, len(run_names)), dtype=bool))

    def __len__(self) -> int:
        return int(self.query.size)

    def _key(self, row: int) -> BlockingKey:
        return (-int(self.unlocks[row]), -int(self.blocks[row]), int(self.best_rank[row]),
                self.query_ids[int(self.query[row])], self.unit[row],
                tuple(name for name, on in zip(self.run_names, self.present[row].tolist(),
                                               strict=True) if on))

    def _sorted(self) -> np.ndarray:
        """Rows in list order by every key but the unit id (equal rows: any order)."""
        if self._order is None:
            ids = self.query_ids
            by_id = np.empty(len(ids), dtype=np.int64)
            by_id[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
            columns = [self.unlocks.max(initial=0) - self.unlocks,
                       self.blocks.max(initial=0) - self.blocks, self.best_rank,
                       by_id[self.query]]
            widths = [max(1, int(c.max(initial=0)).bit_length()) for c in columns]
            if sum(widths) <= 63:  # one integer key: a plain sort, not a lexsort of four
                key = np.zeros(self.query.size, dtype=np.int64)
                for column, width in zip(columns, widths, strict=True):
                    key = (key << width) | column
                self._order = np.argsort(key)
            else:
                self._order = np.lexsort(columns[::-1])
        return self._order

    def _same(self, a: int, b: int) -> bool:
        """Whether rows ``a`` and ``b`` tie on every key but the unit id."""
        return (self.query[a] == self.query[b] and self.best_rank[a] == self.best_rank[b]
                and self.blocks[a] == self.blocks[b] and self.unlocks[a] == self.unlocks[b])

    def page_keys(self, offset: int = 0, limit: int | None = None) -> list[BlockingKey]:
        """The list's items ``offset`` .. ``offset + limit`` as keys, in list order."""
        order = self._sorted()
        end = order.size if limit is None else min(order.size, offset + limit)
        if offset >= end:
            return []
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
        return BlockingTable(
            run_names=self.run_names, query_ids=self.query_ids,
            query=np.concatenate((self.query[keep], new.query)),
            unit=np.concatenate((self.unit[keep], new.unit)),
            unlocks=np.concatenate((self.unlocks[keep], new.unlocks)),
            blocks=np.concatenate((self.blocks[keep], new.blocks)),
            best_rank=np.concatenate((self.best_rank[keep], new.best_rank)),
            present=np.concatenate((self.present[keep], new.present)),
        )
