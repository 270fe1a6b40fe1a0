"""Labeling progress: how much of each query's pool is labeled, and who labeled it.

"Labeled" means the working reference has a gain for the unit (see
:mod:`evalcore.store.resolution`): a unit in conflict between annotators is
*not* labeled until it is adjudicated. A query may be declared complete only
when every pooled unit is labeled (:func:`mark_pool_complete`).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.query_order import natural_key
from evalcore.store.completeness import (
    CompletenessEvent,
    completeness_history,
    completeness_states,
    mark_complete,
)
from evalcore.store.marks import StoreMarks, store_marks, study_events, touched_queries
from evalcore.store.pools import pooled_units, study_pools
from evalcore.store.resolution import (
    ResolvedLabel,
    annotator_key,
    annotator_units,
    gains_with_conflicts,
    resolve_query,
    resolved_gains,
)
from evalcore.store.study_handle import Study, open_study
from evalcore.store.transaction import read_snapshot, write_transaction


class QueryProgress(FrozenModel):
    """Progress of one query."""

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


def _total(field: str) -> cached_property:
    """A study total: ``field`` summed over every query (computed once)."""
    return cached_property(lambda self: sum(getattr(p, field) for p in self.queries.values()))


class StudyProgress(FrozenModel):
    """Progress of every query of a study, with study totals (computed once)."""

    queries: dict[str, QueryProgress]

    pooled = _total("pooled")
    labeled = _total("labeled")
    conflicts = _total("conflicts")
    mine = _total("mine")
    complete = _total("complete")

    def replace(self, progress: QueryProgress) -> "StudyProgress":
        """A copy with one query's progress replaced (after a label on that query)."""
        return StudyProgress(queries={**self.queries, progress.query_id: progress})


class PoolNotFullyLabeledError(ValueError):
    """Completeness was claimed while pooled units are still unlabeled or in conflict."""


def _count(
    query_id: str,
    pooled: set[str],
    gains: Mapping[str, int | tuple[int, ...]],
    mine: set[str],
    complete: bool,
) -> QueryProgress:
    """``gains``: the query's resolved units (:func:`resolved_gains` with
    ``conflicts``: an int gain, a tuple for a unit in conflict); ``mine``: the units the
    annotator asked about holds a current label on. Counted by set operations; the units are
    looked at one by one only on a query with a unit in conflict."""
    inside = len(gains.keys() & pooled)
    in_conflict = []
    if tuple in set(map(type, gains.values())):
        in_conflict = [unit_id for unit_id, gain in gains.items() if isinstance(gain, tuple)]
    conflicts = sum(unit_id in pooled for unit_id in in_conflict)
    conflicts_outside = len(in_conflict) - conflicts
    return QueryProgress.model_construct(
        query_id=query_id, pooled=len(pooled), labeled=inside - conflicts,
        conflicts=conflicts, mine=len(mine & pooled),
        outside_pool=len(gains) - inside - conflicts_outside, complete=complete)


@dataclass(frozen=True)
class QueryLabels:
    """One read of a query's labels (its resolved units and completeness events, oldest
    first): what a page run's queue, progress and metrics of the query all derive from."""

    query_id: str
    resolved: dict[str, ResolvedLabel]
    history: list[CompletenessEvent]

    @property
    def complete(self) -> bool:
        """Whether the query's relevant set is claimed complete now (its latest event)."""
        return bool(self.history) and self.history[-1].state == "complete"

    def mine(self, annotator: str) -> dict[str, int]:
        """unit -> ``annotator``'s current gain (rule 1: a label not undone)."""
        who = annotator_key(annotator)
        return {u: label.annotators[who] for u, label in self.resolved.items()
                if who in label.annotators}

    def progress(self, pooled: set[str], annotator: str = "") -> QueryProgress:
        """The query's progress over the pool ``pooled`` (``mine``: ``annotator``'s units)."""
        mine = set(self.mine(annotator)) if annotator else set()
        return _count(self.query_id, pooled, gains_with_conflicts(self.resolved), mine,
                      self.complete)


def query_labels(study: Study, query_id: str) -> QueryLabels:
    """The query's resolved labels and completeness events, read once."""
    return QueryLabels(query_id, resolve_query(study, query_id),
                       completeness_history(study, query_id))


def query_progress(study: Study, query_id: str, annotator: str = "") -> QueryProgress:
    """Progress of one query (cheap: one pool query, one resolution)."""
    pooled = pooled_units(study, [query_id])[query_id]
    return query_labels(study, query_id).progress(pooled, annotator)


def study_progress(study: Study, annotator: str = "") -> StudyProgress:
    """Progress of every query of the study (queries with pools, with queries rows or with
    labels), counted in full (:func:`progress_now`)."""
    now = progress_now(study, annotator)
    assert now is not None  # counted in full when nothing is known
    counts, share = now
    return counts.progress if share is None else share.progress


@dataclass(frozen=True)
class ProgressCounts:
    """The study's progress without any annotator's share (``mine`` is 0), as the store was at
    ``marks`` (``events``: the study's label and completeness events then), and what an
    annotator's share needs besides their own units: per query, the resolved units outside
    its pool (queries with none are absent)."""

    marks: StoreMarks
    events: int
    progress: StudyProgress
    unpooled: Mapping[str, frozenset[str]]


@dataclass(frozen=True)
class AnnotatorShare:
    """The study's progress for one annotator (their ``mine`` per query, queries with none
    absent) as the store was at ``marks`` (``events``: as in :class:`ProgressCounts`)."""

    annotator: str
    marks: StoreMarks
    events: int
    mine: Mapping[str, int]
    progress: StudyProgress


def progress_now(
    study: Study,
    annotator: str = "",
    counts: ProgressCounts | None = None,
    share: AnnotatorShare | None = None,
    *,
    full: bool = True,
) -> tuple[ProgressCounts, AnnotatorShare | None] | None:
    """The study's counts now and, with ``annotator``, their share, read in one snapshot.

    ``counts`` and ``share``: earlier answers (of any store state). Only the queries with a
    label or completeness event since their marks are counted again; without them, or when
    the runs changed or events were removed since, everything is counted (every pool and
    every label). An annotator's share reads their current units of the queries touched
    since ``share`` (all of them without one). With ``full`` False, None instead of
    counting either in full.
    """
    with read_snapshot(study.db):
        marks = store_marks(study)
        if counts is None or counts.marks != marks:  # equal marks: nothing changed
            events = study_events(study)
            touched = (
                None
                if counts is None
                else _touched(study, counts.marks, counts.events, marks, events)
            )
            if touched is None and not full:
                return None
            counts = (
                _count_study(study, marks, events)
                if touched is None
                else _recount(study, counts, marks, events, touched)
            )
        if not annotator:
            return counts, None
        if share is None or share.annotator != annotator:
            return (counts, _share(study, annotator, counts, {}, None)) if full else None
        if share.marks == marks:
            return counts, share
        touched = _touched(study, share.marks, share.events, marks, counts.events)
        if touched is None and not full:
            return None
        return counts, _share(study, annotator, counts, share.mine, touched)


def _touched(
    study: Study, then: StoreMarks, events_then: int, marks: StoreMarks, events: int
) -> set[str] | None:
    """The queries with an event since ``then``, or None when they do not tell every change
    since (the runs changed, or not every event of the study now is one of then or newer)."""
    if (
        then.run_ids != marks.run_ids
        or then.removed != marks.removed
        or (events_then + study_events(study, then) != events)
    ):
        return None
    return touched_queries(study, then)


def _count_study(study: Study, marks: StoreMarks, events: int) -> ProgressCounts:
    pools = study_pools(study)
    states = completeness_states(study)
    resolved = resolved_gains(study, conflicts=True)
    queries: dict[str, QueryProgress] = {}
    unpooled: dict[str, frozenset[str]] = {}
    no_units: dict[str, int | tuple[int, ...]] = {}
    no_pool: set[str] = set()
    present = (set(pools) | set(states) | set(resolved)) - set(marks.removed)
    for query_id in sorted(present, key=natural_key):
        units = resolved.get(query_id, no_units)
        pool = pools.get(query_id, no_pool)
        queries[query_id] = _count(query_id, pool, units, set(), states.get(query_id, False))
        if len(units) > queries[query_id].labeled + queries[query_id].conflicts:
            unpooled[query_id] = frozenset(units.keys() - pool)
    return ProgressCounts(marks, events, _study(queries), unpooled)


def _recount(
    study: Study, counts: ProgressCounts, marks: StoreMarks, events: int, touched: set[str]
) -> ProgressCounts:
    """``counts`` with the ``touched`` queries counted again."""
    if not touched:
        return ProgressCounts(marks, events, counts.progress, counts.unpooled)
    wanted = sorted(touched)
    pools = pooled_units(study, wanted)
    resolved = resolved_gains(study, wanted, conflicts=True)
    states = completeness_states(study)
    queries = dict(counts.progress.queries)
    unpooled = dict(counts.unpooled)
    for query_id in wanted:
        if query_id in marks.removed:  # out of the study: labels kept, never counted
            queries.pop(query_id, None)
            unpooled.pop(query_id, None)
            continue
        units, pool = resolved.get(query_id, {}), pools[query_id]
        queries[query_id] = _count(query_id, pool, units, set(), states.get(query_id, False))
        outside = frozenset(units.keys() - pool)
        if outside:
            unpooled[query_id] = outside
        else:
            unpooled.pop(query_id, None)
    if not touched <= counts.progress.queries.keys():  # a query seen for the first time
        queries = {q: queries[q] for q in sorted(queries, key=natural_key)}
    return ProgressCounts(marks, events, _study(queries), unpooled)


def _share(
    study: Study,
    annotator: str,
    counts: ProgressCounts,
    mine: Mapping[str, int],
    touched: set[str] | None,
) -> AnnotatorShare:
    """The annotator's share at ``counts``' marks: ``mine`` with the ``touched`` queries
    counted again (every query when None)."""
    units = annotator_units(study, annotator, None if touched is None else sorted(touched))
    counted = {} if touched is None else {q: n for q, n in mine.items() if q not in touched}
    none: frozenset[str] = frozenset()
    for query_id, own in units.items():
        n = len(own - counts.unpooled.get(query_id, none))
        if n:
            counted[query_id] = n
    queries = counts.progress.queries
    progress = _study({q: QueryProgress.model_construct(**{**p.__dict__, "mine": counted[q]})
                       if q in counted else p for q, p in queries.items()})
    return AnnotatorShare(annotator, counts.marks, counts.events, counted, progress)


def _study(queries: dict[str, QueryProgress]) -> StudyProgress:
    return StudyProgress.model_construct(queries=queries)


def mark_pool_complete(
    db: sqlite_utils.Database, *, study_id: str, query_id: str, actor: str, reason: str = ""
) -> CompletenessEvent | None:
    """Declare the query complete, refusing while any pooled unit lacks a resolved gain.

    Checked and written in one transaction, so a concurrent undo cannot slip
    between the check and the claim. Returns None if the query was already complete.
    """
    with write_transaction(db):
        progress = query_progress(open_study(db, study_id, actor, Permission.MARK_COMPLETE), query_id)
        if progress.remaining:
            raise PoolNotFullyLabeledError(
                f"query {query_id!r} cannot be marked complete: {progress.remaining} of "
                f"{progress.pooled} pooled units are unlabeled or in conflict; label them first"
            )
        return mark_complete(
            db, study_id=study_id, query_id=query_id, actor=actor, reason=reason
        )
