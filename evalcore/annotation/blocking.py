"""The blocking list: which unlabeled returned items to label first.

For one query, every run's :class:`~evalcore.contract.results.QueryResult` says which
metric values are unavailable and which unknown units block them: unlabeled
(``blocking_ids``) or in conflict (``conflict_ids``; the dashboard links those to
adjudication). An item's weight is counted over every (run, metric)
value of its query:

* ``unlocks`` — values it blocks **alone**: its label makes the value
  available whatever gain it gets (``unlabeled_returned`` / ``label_conflict``
  are the value's only reasons and the item is its only blocker);
* ``blocks`` — values it is one of the blockers of: its label moves them
  closer to available (their blocker set shrinks), including the ``unlocks``.

**A query with no label at all** is invalid (``missing_reference``) and its
metrics carry no blocking IDs. Any label lifts that reason, after which every
unlabeled unit in the top k blocks every metric. For such a query the
blocking set of every metric is therefore taken to be all distinct units in
its top k, and ``unlocks`` counts the values whose other reasons would all be
gone (precision and reciprocal rank when a single unit was returned;
recall and nDCG only once the population is complete, which such a query is
not). A query invalid for any other reason (partial scan, permission
violation, duplicate reference) is not fixed by labeling and contributes no
item.

**Order** (deterministic): most ``unlocks`` first, then most ``blocks``, then
the best (smallest) rank at which any run returned the item, then query id,
then unit id.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from itertools import islice

from pydantic import BaseModel, ConfigDict

from evalcore.contract.reasons import Reason
from evalcore.contract.results import QueryResult

#: Reasons a label (or an adjudication) lifts: unknown evidence on returned units.
_LABEL_LIFTS = frozenset({Reason.UNLABELED_RETURNED.value, Reason.LABEL_CONFLICT.value})
_MISSING_REFERENCE = [Reason.MISSING_REFERENCE.value]
#: Metrics an unlabeled-only query can make available once every top-k unit is labeled.
NO_POPULATION_NEEDED = frozenset({"precision", "reciprocal_rank"})


class BlockingItem(BaseModel):
    """One unlabeled returned item and how many metric values wait for its label."""

    model_config = ConfigDict(frozen=True)

    query_id: str
    unit_id: str
    #: (run, metric) values its label alone makes available.
    unlocks: int
    #: (run, metric) values it is one of the blockers of (``unlocks`` included).
    blocks: int
    #: Best rank at which a run returned it in its top k.
    best_rank: int
    #: Runs that returned it in their top k, in the order the runs were given.
    runs: list[str]


#: A blocking item as a plain tuple whose natural order is the blocking-list order:
#: (-unlocks, -blocks, best_rank, query_id, unit_id, runs).
BlockingKey = tuple[int, int, int, str, str, tuple[str, ...]]
#: One run's answer to a query: its metrics and the unit ids at positions 1..k.
RankedQuery = tuple[QueryResult, Sequence[str]]


def item_from_key(key: BlockingKey) -> BlockingItem:
    unlocks, blocks, best_rank, query_id, unit_id, runs = key
    return BlockingItem(
        query_id=query_id, unit_id=unit_id, unlocks=-unlocks, blocks=-blocks,
        best_rank=best_rank, runs=list(runs),
    )


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
