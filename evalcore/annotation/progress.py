"""Labeling progress: how much of each query's pool is labeled, and who labeled it.

"Labeled" means the working reference has a gain for the unit (see
:mod:`evalcore.store.resolution`): a unit in conflict between annotators is
*not* labeled until it is adjudicated. A query may be declared complete only
when every pooled unit is labeled (:func:`mark_pool_complete`).
"""

from collections.abc import Mapping
from functools import cached_property

import sqlite_utils
from pydantic import BaseModel, ConfigDict

from evalcore.contract.query_order import natural_key
from evalcore.store.completeness import (
    CompletenessEvent,
    completeness_states_unchecked,
    is_complete_unchecked,
    mark_complete,
)
from evalcore.store.pools import pool_sizes_unchecked, pooled_units_unchecked
from evalcore.store.read_access import Viewer, require_read
from evalcore.store.resolution import annotator_units_unchecked, resolved_gains_unchecked
from evalcore.store.transaction import write_transaction


class QueryProgress(BaseModel):
    """Progress of one query."""

    model_config = ConfigDict(frozen=True)

    query_id: str
    pooled: int
    #: pooled units with a resolved gain (conflicts excluded)
    labeled: int
    #: pooled units in conflict between annotators
    conflicts: int
    #: pooled units the annotator asked about has a current label on
    mine: int
    #: labeled units outside the pool (found by searching the corpus)
    outside_pool: int
    complete: bool

    @property
    def remaining(self) -> int:
        """Pooled units without a resolved gain (unlabeled or in conflict)."""
        return self.pooled - self.labeled


class StudyProgress(BaseModel):
    """Progress of every query of a study, with study totals (computed once)."""

    model_config = ConfigDict(frozen=True)

    queries: dict[str, QueryProgress]

    @cached_property
    def pooled(self) -> int:
        return sum(p.pooled for p in self.queries.values())

    @cached_property
    def labeled(self) -> int:
        return sum(p.labeled for p in self.queries.values())

    @cached_property
    def conflicts(self) -> int:
        return sum(p.conflicts for p in self.queries.values())

    @cached_property
    def mine(self) -> int:
        return sum(p.mine for p in self.queries.values())

    @cached_property
    def complete(self) -> int:
        return sum(p.complete for p in self.queries.values())

    def replace(self, progress: QueryProgress) -> "StudyProgress":
        """A copy with one query's progress replaced (after a label on that query)."""
        return StudyProgress(queries={**self.queries, progress.query_id: progress})


class PoolNotFullyLabeledError(ValueError):
    """Completeness was claimed while pooled units are still unlabeled or in conflict."""


def _count(
    query_id: str,
    pooled: set[str],
    gains: Mapping[str, object],
    mine: set[str],
    complete: bool,
) -> QueryProgress:
    """``gains``: the query's resolved units (:func:`resolved_gains_unchecked` with
    ``conflicts``: an int gain, a tuple for a unit in conflict); ``mine``: the units the
    annotator asked about holds a current label on."""
    labeled = conflicts = outside = 0
    for unit_id, gain in gains.items():
        if unit_id in pooled:
            labeled += isinstance(gain, int)
            conflicts += isinstance(gain, tuple)
        elif isinstance(gain, int):
            outside += 1
    return QueryProgress(
        query_id=query_id,
        pooled=len(pooled),
        labeled=labeled,
        conflicts=conflicts,
        mine=len(mine & pooled),
        outside_pool=outside,
        complete=complete,
    )


def _mine(db: sqlite_utils.Database, study_id: str, annotator: str,
          query_ids: list[str] | None = None) -> dict[str, set[str]]:
    """The units ``annotator`` holds a current label on, per query (none without a name)."""
    return annotator_units_unchecked(db, study_id, annotator, query_ids) if annotator else {}


def query_progress(
    db: sqlite_utils.Database, study_id: str, query_id: str, annotator: str = "", *,
    viewer: Viewer,
) -> QueryProgress:
    """:func:`query_progress_unchecked` if ``viewer`` may read the study
    (:func:`evalcore.store.read_access.require_read`)."""
    require_read(db, viewer, study_id)
    return query_progress_unchecked(db, study_id, query_id, annotator)


def query_progress_unchecked(
    db: sqlite_utils.Database, study_id: str, query_id: str, annotator: str = ""
) -> QueryProgress:
    """Progress of one query (cheap: one pool query, one resolution)."""
    pooled = pooled_units_unchecked(db, study_id, [query_id])[query_id]
    return _count(
        query_id,
        pooled,
        resolved_gains_unchecked(db, study_id, [query_id], conflicts=True).get(query_id, {}),
        _mine(db, study_id, annotator, [query_id]).get(query_id, set()),
        is_complete_unchecked(db, study_id, query_id),
    )


def study_progress(
    db: sqlite_utils.Database,
    study_id: str,
    annotator: str = "",
    sizes: Mapping[str, int] | None = None,
    *,
    viewer: Viewer,
) -> StudyProgress:
    """:func:`study_progress_unchecked` if ``viewer`` may read the study
    (:func:`evalcore.store.read_access.require_read`)."""
    require_read(db, viewer, study_id)
    return study_progress_unchecked(db, study_id, annotator, sizes)


def study_progress_unchecked(
    db: sqlite_utils.Database,
    study_id: str,
    annotator: str = "",
    sizes: Mapping[str, int] | None = None,
) -> StudyProgress:
    """Progress of every query of the study (queries with pools or with queries rows).

    ``sizes`` may pass :func:`evalcore.store.pools.pool_sizes` computed earlier: it
    depends only on the runs, which never change once stored, and it is the
    expensive part on large studies.
    """
    sizes = pool_sizes_unchecked(db, study_id) if sizes is None else sizes
    states = completeness_states_unchecked(db, study_id)
    # the resolved gains, not the resolved label models: a tenth of the time at 10,000
    # queries (630,000 labels), and the annotator's own units read apart
    resolved = resolved_gains_unchecked(db, study_id, conflicts=True)
    mine = _mine(db, study_id, annotator)
    labeled_queries = [q for q in resolved if q in sizes]
    pools = pooled_units_unchecked(db, study_id, labeled_queries)
    out: dict[str, QueryProgress] = {}
    for query_id in sorted(set(sizes) | set(states) | set(resolved), key=natural_key):
        units = resolved.get(query_id, {})
        complete = states.get(query_id, False)
        if units:
            out[query_id] = _count(query_id, pools.get(query_id, set()), units,
                                   mine.get(query_id, set()), complete)
        else:
            out[query_id] = QueryProgress(
                query_id=query_id,
                pooled=sizes.get(query_id, 0),
                labeled=0,
                conflicts=0,
                mine=0,
                outside_pool=0,
                complete=complete,
            )
    return StudyProgress(queries=out)


def mark_pool_complete(
    db: sqlite_utils.Database, *, study_id: str, query_id: str, actor: str, reason: str = ""
) -> CompletenessEvent | None:
    """Declare the query complete, refusing while any pooled unit lacks a resolved gain.

    Checked and written in one transaction, so a concurrent undo cannot slip
    between the check and the claim. Returns None if the query was already complete.
    """
    with write_transaction(db):
        progress = query_progress_unchecked(db, study_id, query_id)
        if progress.remaining:
            raise PoolNotFullyLabeledError(
                f"query {query_id!r} cannot be marked complete: {progress.remaining} of "
                f"{progress.pooled} pooled units are unlabeled or in conflict; label them first"
            )
        return mark_complete(
            db, study_id=study_id, query_id=query_id, actor=actor, reason=reason
        )
