"""The judging pool: what an annotator is asked to label for a query.

The pool of a query is the union of the units every run of the study returned
in its top ``k`` (each run's own ``k``), deduplicated. Annotators see it in a
*blind* order: a shuffle that is stable per (annotator, query) -- the same
person always sees the same order, two people see different orders, and the
order reveals neither rank nor run.
"""

import hashlib
from collections.abc import Sequence

from pydantic import Field

from evalcore.contract.frozen import FrozenModel
from evalcore.store.pools import pooled_ranks
from evalcore.store.study_handle import Study


class PoolItem(FrozenModel):
    """A pooled unit and where each run ranked it (only runs that returned it in top k)."""

    unit_id: str
    ranks: dict[str, int] = Field(default_factory=dict)  # run name -> rank

    @property
    def best_rank(self) -> int:
        return min(self.ranks.values()) if self.ranks else 0


def query_pool(study: Study, query_id: str) -> list[PoolItem]:
    """The query's pool, ordered by best rank over the runs, then unit id."""
    ranks: dict[str, dict[str, int]] = {}
    for unit_id, run_name, rank in pooled_ranks(study, query_id):
        ranks.setdefault(unit_id, {}).setdefault(run_name, rank)
    items = [PoolItem(unit_id=u, ranks=r) for u, r in ranks.items()]
    return sorted(items, key=lambda item: (item.best_rank, item.unit_id))


def blind_order(items: Sequence[PoolItem], *, annotator: str, query_id: str) -> list[PoolItem]:
    """``items`` shuffled by a hash of (annotator, query, unit): stable and rank-blind."""

    def key(item: PoolItem) -> str:
        material = f"{annotator}\x00{query_id}\x00{item.unit_id}".encode()
        return hashlib.sha256(material).hexdigest()

    return sorted(items, key=key)
