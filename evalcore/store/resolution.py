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

Resolution of a whole study is one ordered scan of ``label_events`` (the
``label_events_by_query`` index gives the order) and one pass in Python.
"""

from collections.abc import Iterable, Iterator
from typing import Literal

import sqlite_utils
from pydantic import BaseModel, ConfigDict

ResolvedState = Literal["labeled", "conflict", "adjudicated"]


class ResolvedLabel(BaseModel):
    """One unit of the working reference for one query."""

    model_config = ConfigDict(frozen=True)

    unit_id: str
    #: The gain that counts; ``None`` when in conflict (counts as unlabeled).
    gain: int | None
    state: ResolvedState
    #: annotator -> their current gain (adjudications are not listed here).
    annotators: dict[str, int]
    #: the reviewer of the adjudication that counts (``adjudicated`` or a re-opened conflict)
    reviewer: str | None = None

    @property
    def counts(self) -> bool:
        """Whether this unit is part of the reference (a conflict is not)."""
        return self.gain is not None


#: (event_id, query_id, unit_id, kind, gain, annotator), sorted by query, unit, event_id.
EventRow = tuple[int, str, str, str, int | None, str]

_EVENT_SQL = (
    "SELECT event_id, query_id, unit_id, kind, gain, annotator FROM label_events "
    "WHERE study_id = ?"
)
_ORDER = " ORDER BY query_id, unit_id, event_id"


def resolve_unit(unit_id: str, events: Iterable[tuple[int, str, int | None, str]]) -> (
    ResolvedLabel | None
):
    """Resolve one unit from its (event_id, kind, gain, annotator) events in event order."""
    stacks: dict[str, list[tuple[int, int]]] = {}
    adjudication: tuple[int, int, str] | None = None
    for event_id, kind, gain, annotator in events:
        if kind == "label":
            stacks.setdefault(annotator, []).append((event_id, gain))  # type: ignore[arg-type]
        elif kind == "undo":
            stack = stacks.get(annotator)
            if stack:
                stack.pop()
        elif kind == "adjudicate":
            adjudication = (event_id, gain, annotator)  # type: ignore[assignment]
    current = {a: s[-1] for a, s in stacks.items() if s}
    annotators = {a: g for a, (_, g) in sorted(current.items())}
    if adjudication is not None:
        adj_id, adj_gain, reviewer = adjudication
        reopened = any(eid > adj_id and g != adj_gain for eid, g in current.values())
        if reopened:
            return ResolvedLabel.model_construct(
                unit_id=unit_id, gain=None, state="conflict", annotators=annotators,
                reviewer=reviewer,
            )
        return ResolvedLabel.model_construct(
            unit_id=unit_id, gain=adj_gain, state="adjudicated", annotators=annotators,
            reviewer=reviewer,
        )
    if not annotators:
        return None
    gains = set(annotators.values())
    if len(gains) == 1:
        return ResolvedLabel.model_construct(
            unit_id=unit_id, gain=gains.pop(), state="labeled", annotators=annotators,
            reviewer=None,
        )
    return ResolvedLabel.model_construct(
        unit_id=unit_id, gain=None, state="conflict", annotators=annotators, reviewer=None
    )


def _resolve_rows(rows: Iterable[EventRow]) -> Iterator[tuple[str, ResolvedLabel]]:
    """One pass over rows sorted by (query, unit, event_id): yields (query_id, resolved)."""
    key: tuple[str, str] | None = None
    bucket: list[tuple[int, str, int | None, str]] = []
    for event_id, query_id, unit_id, kind, gain, annotator in rows:
        if (query_id, unit_id) != key:
            if key is not None:
                resolved = resolve_unit(key[1], bucket)
                if resolved is not None:
                    yield key[0], resolved
            key = (query_id, unit_id)
            bucket = []
        bucket.append((event_id, kind, gain, annotator))
    if key is not None:
        resolved = resolve_unit(key[1], bucket)
        if resolved is not None:
            yield key[0], resolved


def resolve_query(
    db: sqlite_utils.Database, study_id: str, query_id: str
) -> dict[str, ResolvedLabel]:
    """unit_id -> resolved label for one query (conflicts included, gain None)."""
    rows = db.execute(_EVENT_SQL + " AND query_id = ?" + _ORDER, [study_id, query_id])
    return {r.unit_id: r for _, r in _resolve_rows(rows)}


def resolve_unit_in_store(
    db: sqlite_utils.Database, study_id: str, query_id: str, unit_id: str
) -> ResolvedLabel | None:
    """The resolved label of one unit, or None when it is unlabeled."""
    rows = db.execute(
        "SELECT event_id, kind, gain, annotator FROM label_events "
        "WHERE study_id = ? AND query_id = ? AND unit_id = ? ORDER BY event_id",
        [study_id, query_id, unit_id],
    )
    return resolve_unit(unit_id, rows)


def resolve_study(
    db: sqlite_utils.Database, study_id: str, query_ids: Iterable[str] | None = None
) -> dict[str, dict[str, ResolvedLabel]]:
    """query_id -> unit_id -> resolved label, for the whole study or the given queries.

    Queries without any resolved unit are absent. Conflicts are included with
    ``gain=None``; use :func:`resolved_gains` for the reference that counts.
    """
    out: dict[str, dict[str, ResolvedLabel]] = {}
    if query_ids is None:
        rows = db.execute(_EVENT_SQL + _ORDER, [study_id])
        for query_id, resolved in _resolve_rows(rows):
            out.setdefault(query_id, {})[resolved.unit_id] = resolved
        return out
    for query_id in dict.fromkeys(query_ids):
        units = resolve_query(db, study_id, query_id)
        if units:
            out[query_id] = units
    return out


def resolved_gains(
    db: sqlite_utils.Database, study_id: str, query_ids: Iterable[str] | None = None
) -> dict[str, dict[str, int]]:
    """query_id -> unit_id -> gain of the working reference (conflicts omitted)."""
    out: dict[str, dict[str, int]] = {}
    for query_id, units in resolve_study(db, study_id, query_ids).items():
        gains = {u: r.gain for u, r in units.items() if r.gain is not None}
        if gains:
            out[query_id] = gains
    return out


def conflicts(db: sqlite_utils.Database, study_id: str) -> dict[str, list[ResolvedLabel]]:
    """query_id -> the units in conflict (awaiting adjudication)."""
    out: dict[str, list[ResolvedLabel]] = {}
    for query_id, units in resolve_study(db, study_id).items():
        found = [r for r in units.values() if r.state == "conflict"]
        if found:
            out[query_id] = found
    return out
