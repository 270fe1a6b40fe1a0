"""The blocking list read query by query from :class:`QueryResult` objects, with loops.

The rules are those of :mod:`evalcore.annotation.blocking`'s module docstring; the
columnar :func:`evalcore.annotation.blocking_table.blocking_table` must give exactly
these items, counts and order (the parity tests compare them).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from itertools import islice

from evalcore.annotation.blocking import (
    NO_POPULATION_NEEDED,
    BlockingItem,
    BlockingKey,
    item_from_key,
)
from evalcore.contract.reasons import Reason
from evalcore.contract.results import QueryResult

#: Reasons a label (or an adjudication) lifts: unknown evidence on returned units.
_LABEL_LIFTS = frozenset({Reason.UNLABELED_RETURNED.value, Reason.LABEL_CONFLICT.value})
_MISSING_REFERENCE = [Reason.MISSING_REFERENCE.value]
#: One run's answer to a query: its metrics and the unit ids at positions 1..k.
RankedQuery = tuple[QueryResult, Sequence[str]]


def _blockers(result: QueryResult, top_units: Sequence[str], metric: str) -> tuple[list[str], bool]:
    """(blocking units, whether labeling them all lifts every reason) of one metric value."""
    value = result.metrics[metric]
    if value.available:
        return [], False
    if not result.valid:
        if result.reasons != _MISSING_REFERENCE:
            return [], False
        units = list(dict.fromkeys(top_units))
        return units, metric in NO_POPULATION_NEEDED
    return [*value.blocking_ids, *value.conflict_ids], set(value.reasons) <= _LABEL_LIFTS


def query_blocking_keys(query_id: str, per_run: Mapping[str, RankedQuery]) -> list[BlockingKey]:
    """The query's blocking items as sorted :data:`BlockingKey` tuples (cheap to merge)."""
    unlocks: dict[str, int] = {}
    blocks: dict[str, int] = {}
    for result, top_units in per_run.values():
        for metric in result.metrics:
            units, lifts = _blockers(result, top_units, metric)
            for unit in units:
                blocks[unit] = blocks.get(unit, 0) + 1
            if lifts and len(units) == 1:
                unlocks[units[0]] = unlocks.get(units[0], 0) + 1
    if not blocks:
        return []
    best: dict[str, int] = {}
    runs: dict[str, list[str]] = {}
    for run_name, (_, top_units) in per_run.items():
        # unit -> its first rank in this run (built in C: reversed, so the first one wins)
        first = dict(zip(reversed(top_units), range(len(top_units), 0, -1), strict=True))
        for unit in blocks:
            rank = first.get(unit)
            if rank is None:
                continue
            if unit not in best:
                best[unit] = rank
                runs[unit] = [run_name]
            else:
                best[unit] = min(best[unit], rank)
                runs[unit].append(run_name)
    keys = [
        (-unlocks.get(unit, 0), -n, best.get(unit, 0), query_id, unit, tuple(runs.get(unit, ())))
        for unit, n in blocks.items()
    ]
    keys.sort()
    return keys


def query_blocking(query_id: str, per_run: Mapping[str, RankedQuery]) -> list[BlockingItem]:
    """The query's blocking items, in blocking-list order (see the module docstring).

    ``per_run`` maps run name to (the query's result, its unit ids at positions 1..k).
    """
    return [item_from_key(key) for key in query_blocking_keys(query_id, per_run)]


def merge_blocking(
    per_query: Iterable[Sequence[BlockingKey]], limit: int | None = None
) -> list[BlockingItem]:
    """The study's blocking list from per-query key lists (each sorted), first ``limit``."""
    merged = heapq.merge(*(keys for keys in per_query if keys))
    return [item_from_key(key) for key in (merged if limit is None else islice(merged, limit))]
