"""Label resolution: from the append-only label events to the working reference.

The rule, per (query, unit), replaying the events in ``event_id`` order:

1. **Each annotator's current gain.** A ``label`` event pushes the annotator's
   gain; an ``undo`` event (same query, unit and annotator) cancels that
   annotator's latest not-yet-cancelled label on the unit. The annotator's
   current gain is their latest label that is not cancelled; an annotator whose
   labels are all cancelled has no current gain.
2. **Without adjudication.** If every current annotator gain agrees, the unit is
   ``labeled`` with that gain. If they disagree, the unit is in ``conflict``:
   its gain is ``None`` and it counts as **unlabeled** (unknown, never 0).
3. **Adjudication.** A reviewer's ``adjudicate`` event sets the gain; the latest
   adjudication is the one that counts. It *stands* (state ``adjudicated``)
   as long as no current annotator label **newer** than it disagrees with it:
   labels older than the adjudication are settled by it. A label recorded after
   the adjudication that disagrees with it re-opens the conflict (gain
   ``None``) until a newer adjudication. Undoing that label lets the
   adjudication stand again.
4. A unit with no current label and no adjudication is not in the reference
   (it is unlabeled).

Only units with an undo or an adjudication are replayed event by event; the others are
settled from one grouped scan (:mod:`evalcore.store.working_labels` for a whole study).
"""

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import Any, Literal

import sqlite_utils

from evalcore.contract.frozen import FrozenModel
from evalcore.store.dialect import in_chunks
from evalcore.store.study_handle import Study
from evalcore.store.working_labels import WorkingLabels, label_columns

ResolvedState = Literal["labeled", "conflict", "adjudicated"]


class ResolvedLabel(FrozenModel):
    """One unit of the working reference for one query."""

    unit_id: str
    #: The gain that counts; ``None`` when in conflict (counts as unlabeled).
    gain: int | None
    state: ResolvedState
    #: annotator -> their current gain (adjudications are not listed here).
    annotators: dict[str, int]
    #: the reviewer of the adjudication that counts (``adjudicated`` or a re-opened conflict)
    reviewer: str | None = None
    #: in conflict: the gains it may have (its annotators' current gains, and the
    #: re-opened adjudication's), sorted and distinct; empty otherwise
    conflict_gains: tuple[int, ...] = ()

    @property
    def counts(self) -> bool:
        """Whether this unit is part of the reference (a conflict is not)."""
        return self.gain is not None


def _resolved(unit_id: str, gain: int | None, state: str, annotators: dict[str, int],
              reviewer: str | None = None, conflict_gains: tuple[int, ...] = ()) -> ResolvedLabel:
    return ResolvedLabel.model_construct(unit_id=unit_id, gain=gain, state=state,
                                         annotators=annotators, reviewer=reviewer,
                                         conflict_gains=conflict_gains)


#: The annotator of a label event as one person (SQL): :func:`normalise_user_id
#: <evalcore.access.identity.normalise_user_id>` applied when reading, so a name stored
#: as typed (``Ann@Acme.org``) is ``ann@acme.org`` (SQLite's ``lower``: ASCII letters only).
ANNOTATOR_SQL = (
    "(CASE WHEN instr(annotator, '@') > 0 THEN lower(trim(annotator)) ELSE trim(annotator) END)"
)


def annotator_key(annotator: str) -> str:
    """One annotator, exactly as :data:`ANNOTATOR_SQL` reads it."""
    name = annotator.strip(" ")
    if "@" not in name:
        return name
    return "".join(c.lower() if c.isascii() else c for c in name)


def replay_unit(events: Iterable[tuple[int, str, int | None, str]]) -> tuple[
    dict[str, tuple[int, int]], tuple[int, int, str] | None
]:
    """Rule 1 on one unit's (event_id, kind, gain, annotator) events in event order.

    Returns annotator -> (event_id, gain) of their current label, and the latest
    adjudication as (event_id, gain, reviewer) or None.
    """
    stacks: dict[str, list[tuple[int, int]]] = {}
    adjudication: tuple[int, int, str] | None = None
    for event_id, kind, gain, name in events:
        annotator = annotator_key(name)
        if kind == "label":
            stacks.setdefault(annotator, []).append((event_id, gain))  # type: ignore[arg-type]
        elif kind == "undo":
            stack = stacks.get(annotator)
            if stack:
                stack.pop()
        elif kind == "adjudicate":
            adjudication = (event_id, gain, annotator)  # type: ignore[assignment]
    return {a: s[-1] for a, s in stacks.items() if s}, adjudication


def resolve_unit(unit_id: str, events: Iterable[tuple[int, str, int | None, str]]) -> (
    ResolvedLabel | None
):
    """Resolve one unit from its (event_id, kind, gain, annotator) events in event order."""
    current, adjudication = replay_unit(events)
    annotators = {a: g for a, (_, g) in sorted(current.items())}
    if adjudication is None:
        return _from_current(unit_id, annotators) if annotators else None
    adj_id, adj_gain, reviewer = adjudication
    if any(eid > adj_id and g != adj_gain for eid, g in current.values()):  # re-opened
        gains = tuple(sorted(set(annotators.values()) | {adj_gain}))
        return _resolved(unit_id, None, "conflict", annotators, reviewer, gains)
    return _resolved(unit_id, adj_gain, "adjudicated", annotators, reviewer)


def resolve_query(study: Study, query_id: str) -> dict[str, ResolvedLabel]:
    """unit_id -> resolved label for one query (conflicts included, gain None)."""
    return resolve_study(study, [query_id]).get(query_id, {})


def resolve_unit_in_store(study: Study, query_id: str, unit_id: str) -> ResolvedLabel | None:
    """The resolved label of one unit, or None when it is unlabeled."""
    return resolve_unit(unit_id, _unit_events(study, query_id, unit_id))


def _unit_events(study: Study, query_id: str, unit_id: str) -> Iterable[tuple]:
    """The unit's (event_id, kind, gain, annotator) events in event order."""
    return study.db.execute(
        f"SELECT event_id, kind, gain, {ANNOTATOR_SQL} FROM label_events "
        "WHERE study_id = ? AND query_id = ? AND unit_id = ? ORDER BY event_id",
        [study.study_id, query_id, unit_id],
    )


def query_filters(query_ids: Iterable[str] | None) -> list[tuple[str, list[str]]]:
    """SQL conditions (and their parameters) covering the wanted queries, 500 at a time."""
    if query_ids is None:
        return [("", [])]
    return [(f" AND query_id IN ({marks})", chunk) for marks, chunk in in_chunks(query_ids)]


def _resolve_scan(
    db: sqlite_utils.Database,
    study_id: str,
    query_ids: Iterable[str] | None,
    gains_only: bool = False,
) -> Iterator[tuple[str, Any]]:
    """(query_id, resolved) for every resolved unit, from two ordered scans: units with only
    ``label`` events from each annotator's latest label (one grouped scan: SQLite's ``max()``
    bare-column rule gives its gain), the others replayed by :func:`resolve_unit`.
    ``gains_only``: (query_id, (unit_id, gain)) instead, a conflict's gain the tuple of its gains."""
    finish = _gain_from_current if gains_only else _from_current
    for condition, params in query_filters(query_ids):
        special = set(
            db.execute(
                "SELECT DISTINCT query_id, unit_id FROM label_events "
                "WHERE study_id = ? AND kind != 'label'" + condition,
                [study_id, *params],
            ).fetchall()
        )
        key: tuple[str, str] | None = None
        annotators: dict[str, int] = {}
        for query_id, unit_id, annotator, gain, _ in db.execute(
            f"SELECT query_id, unit_id, {ANNOTATOR_SQL} AS who, gain, max(event_id) "
            "FROM label_events WHERE study_id = ? AND kind = 'label'" + condition
            + " GROUP BY query_id, unit_id, who ORDER BY query_id, unit_id, who",
            [study_id, *params],
        ):
            if (query_id, unit_id) != key:
                if key is not None and key not in special:
                    yield key[0], finish(key[1], annotators)
                key = (query_id, unit_id)
                annotators = {}
            annotators[annotator] = gain
        if key is not None and key not in special:
            yield key[0], finish(key[1], annotators)
        if special:
            rows = db.execute(
                f"SELECT query_id, unit_id, event_id, kind, gain, {ANNOTATOR_SQL} FROM label_events "
                "WHERE study_id = ? AND (query_id, unit_id) IN (SELECT DISTINCT query_id, unit_id "
                "FROM label_events WHERE study_id = ? AND kind != 'label'" + condition + ")"
                + " ORDER BY query_id, unit_id, event_id",
                [study_id, study_id, *params],
            )
            for (query_id, unit_id), events in groupby(rows, itemgetter(0, 1)):
                resolved = resolve_unit(unit_id, (e[2:] for e in events))
                if resolved is None:
                    continue
                if gains_only:
                    gain = resolved.gain
                    yield query_id, (unit_id, resolved.conflict_gains if gain is None else gain)
                else:
                    yield query_id, resolved


def _gain_from_current(
    unit_id: str, annotators: dict[str, int]
) -> tuple[str, int | tuple[int, ...]]:
    gains = set(annotators.values())
    return unit_id, (gains.pop() if len(gains) == 1 else tuple(sorted(gains)))


def _from_current(unit_id: str, annotators: dict[str, int]) -> ResolvedLabel:
    gains = set(annotators.values())
    if len(gains) == 1:
        return _resolved(unit_id, gains.pop(), "labeled", annotators)
    return _resolved(unit_id, None, "conflict", annotators, conflict_gains=tuple(sorted(gains)))


def resolve_study(
    study: Study, query_ids: Iterable[str] | None = None
) -> dict[str, dict[str, ResolvedLabel]]:
    """query_id -> unit_id -> resolved label (units in unit_id order; conflicts with ``gain=None``,
    see :func:`resolved_gains`), for the whole study or the given queries."""
    out: dict[str, dict[str, ResolvedLabel]] = {}
    for query_id, resolved in _resolve_scan(study.db, study.study_id, query_ids):
        out.setdefault(query_id, {})[resolved.unit_id] = resolved
    return {q: dict(sorted(units.items())) for q, units in sorted(out.items())}


def resolved_gains(
    study: Study, query_ids: Iterable[str] | None = None, *, conflicts: bool = False
) -> dict[str, dict[str, Any]]:
    """query_id -> unit_id -> gain of the working reference (units in unit id order; queries
    with no unit that counts absent). Units in conflict are omitted, or with ``conflicts`` given
    as the sorted tuple of their gains (contract section 9: unknown, never dropped)."""
    if query_ids is not None:
        return _scanned_gains(study.db, study.study_id, query_ids, conflicts)
    return dict(working_labels(study, conflicts=conflicts).gains)


def gains_with_conflicts(resolved: Mapping[str, ResolvedLabel]) -> dict[str, Any]:
    """One query's :func:`resolved_gains` (``conflicts=True``) from its resolved labels
    (:func:`resolve_query`)."""
    return {unit_id: label.gain if label.gain is not None else label.conflict_gains
            for unit_id, label in sorted(resolved.items())}


def working_labels(study: Study, *, conflicts: bool = False) -> WorkingLabels:
    """The whole study's working reference as columns (:mod:`evalcore.store.working_labels`),
    the queries that need the rules resolved by them (units in conflict omitted, or, with
    ``conflicts``, given as the sorted tuple of their gains)."""
    labels, replay = label_columns(study)
    if replay:
        labels.others = _scanned_gains(study.db, study.study_id, replay, conflicts)
    return labels


def _scanned_gains(
    db: sqlite_utils.Database, study_id: str, query_ids: Iterable[str], conflicts: bool
) -> dict[str, dict[str, Any]]:
    """:func:`resolved_gains` of the given queries, from :func:`_resolve_scan` (which yields
    replayed units last: put back in unit id order)."""
    out: dict[str, dict[str, Any]] = {}
    for query_id, (unit_id, gain) in _resolve_scan(db, study_id, query_ids, gains_only=True):
        if conflicts or isinstance(gain, int):
            out.setdefault(query_id, {})[unit_id] = gain
    return {q: dict(sorted(units.items())) for q, units in out.items()}


def annotator_units(
    study: Study, annotator: str, query_ids: Iterable[str] | None = None
) -> dict[str, set[str]]:
    """query_id -> the units on which ``annotator`` holds a current label (rule 1), for the whole
    study or the given queries, without resolving the others' labels: a unit with an undo of
    theirs is replayed, any other with a label of theirs holds one."""
    who = annotator_key(annotator)
    out: dict[str, set[str]] = {}
    for condition, params in query_filters(query_ids):
        replay = []
        for query_id, unit_id, undone in study.db.execute(
            "SELECT query_id, unit_id, max(kind = 'undo') FROM label_events "
            f"WHERE study_id = ? AND kind != 'adjudicate' AND {ANNOTATOR_SQL} = ?"
            + condition
            + " GROUP BY query_id, unit_id",
            [study.study_id, who, *params],
        ):
            if undone:
                replay.append((query_id, unit_id))
            else:
                out.setdefault(query_id, set()).add(unit_id)
        for query_id, unit_id in replay:
            current, _ = replay_unit(_unit_events(study, query_id, unit_id))
            if who in current:
                out.setdefault(query_id, set()).add(unit_id)
    return out


def conflicts(study: Study) -> dict[str, list[ResolvedLabel]]:
    """query_id -> the units in conflict (awaiting adjudication)."""
    out: dict[str, list[ResolvedLabel]] = {}
    for query_id, units in resolve_study(study).items():
        found = [r for r in units.values() if r.state == "conflict"]
        if found:
            out[query_id] = found
    return out


@dataclass(frozen=True)
class Overlap:
    """The queries to resolve, and the annotators with a current label elsewhere."""

    queries: tuple[str, ...]
    annotators: frozenset[str]


def annotator_overlap(study: Study) -> Overlap:
    """Where annotators overlap, the only places agreement is measured and conflicts arise:
    queries with two or more annotator names (told apart by case here, merged by resolution)
    or with an undo or an adjudication. The other queries' annotators are read without
    resolving them (the agreement page resolves only the overlap)."""
    names: dict[str, set[str]] = {}
    replayed: set[str] = set()
    for query_id, annotator, special in study.db.execute(
        "SELECT query_id, annotator, max(kind != 'label') FROM label_events "
        "WHERE study_id = ? GROUP BY query_id, annotator",
        [study.study_id],
    ):
        names.setdefault(query_id, set()).add(annotator)
        if special:
            replayed.add(query_id)
    queries = tuple(q for q, who in names.items() if len(who) > 1 or q in replayed)
    overlapping = set(queries)
    plain = {a for q, who in names.items() if q not in overlapping for a in who}
    return Overlap(queries=queries, annotators=frozenset(map(annotator_key, plain)))
