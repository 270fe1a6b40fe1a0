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

from evalcore.contract.frozen import FrozenModel

#: Metrics an unlabeled-only query can make available once every top-k unit is labeled.
NO_POPULATION_NEEDED = frozenset({"precision", "reciprocal_rank"})


class BlockingItem(FrozenModel):
    """One unlabeled returned item and how many metric values wait for its label."""

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


def item_from_key(key: BlockingKey) -> BlockingItem:
    unlocks, blocks, best_rank, query_id, unit_id, runs = key
    return BlockingItem(
        query_id=query_id, unit_id=unit_id, unlocks=-unlocks, blocks=-blocks,
        best_rank=best_rank, runs=list(runs),
    )
