"""Label events: who said what about which unit, and when. Append-only.

A relabel, an undo and a reviewer's decision are new ``label``, ``undo`` and ``adjudicate``
events; nothing is updated or deleted (triggers refuse it). :mod:`evalcore.store.resolution`
turns the events into the working reference.

**Automatic reopening.** A relevant label (gain >= the study's threshold) on a unit not
already relevant in the working reference contradicts a completeness claim: if the query
is marked complete, the same transaction appends a ``reopened`` completeness event naming it."""

from collections.abc import Callable
from itertools import groupby
from operator import itemgetter
from typing import Literal

import sqlite_utils

from evalcore.access.identity import normalise_user_id
from evalcore.access.roles import Permission
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.limits import MAX_NOTE_CHARS, require_fits, without_nul
from evalcore.io.clock import utc_now_iso
from evalcore.store.authorize import authorize, known_study
from evalcore.store.completeness import append_completeness_event
from evalcore.store.lookup import exists
from evalcore.store.resolution import ANNOTATOR_SQL, replay_unit, resolve_unit_in_store
from evalcore.store.study_handle import Study, open_study
from evalcore.store.transaction import write_transaction

LabelKind = Literal["label", "undo", "adjudicate"]


class LabelEvent(FrozenModel):
    """One stored label event."""

    event_id: int
    study_id: str
    query_id: str
    unit_id: str
    kind: LabelKind
    #: 0..4 for label and adjudicate; None for undo.
    gain: int | None
    annotator: str
    created_at: str
    note: str
    source: str


_COLUMNS = "event_id, study_id, query_id, unit_id, kind, gain, annotator, created_at, note, source"
_KEYS = tuple(_COLUMNS.split(", "))


def _events(db: sqlite_utils.Database, where: str, params: list) -> list[LabelEvent]:
    """The label events matching ``where``, in event order."""
    rows = db.execute(f"SELECT {_COLUMNS} FROM label_events WHERE {where} ORDER BY event_id",
                      params)
    return [LabelEvent.model_construct(**dict(zip(_KEYS, row, strict=True))) for row in rows]


def check_gain(gain: object) -> int:
    """The gain as an int 0..4, or ValueError naming the bad value (bools are refused)."""
    if isinstance(gain, bool) or not isinstance(gain, int) or not 0 <= gain <= MAX_GAIN:
        raise ValueError(f"gain must be an integer 0..{MAX_GAIN}, got {gain!r}")
    return gain


class ItemChangedError(Exception):
    """The unit's labels changed after the annotator was shown it: nothing was written.
    ``newer``: the events recorded on the unit since ``seen_event``, oldest first."""

    def __init__(self, query_id: str, unit_id: str, seen_event: int,
                 newer: list["LabelEvent"]) -> None:
        self.query_id = query_id
        self.unit_id = unit_id
        self.seen_event = seen_event
        self.newer = newer
        said = ", ".join(
            f"{e.annotator} {'undid a label' if e.gain is None else f'said {e.gain}'}"
            for e in newer
        )
        super().__init__(f"{unit_id} on {query_id} changed since it was shown ({said}); "
                         "nothing was written")


def latest_event_id(study: Study, query_id: str, unit_id: str) -> int:
    """The newest label event on the unit (0 when it has none): what a screen reflects."""
    row = study.db.execute(
        "SELECT coalesce(max(event_id), 0) FROM label_events "
        "WHERE study_id = ? AND query_id = ? AND unit_id = ?",
        [study.study_id, query_id, unit_id],
    ).fetchone()
    return int(row[0])


def _refuse_if_changed(db: sqlite_utils.Database, study_id: str, query_id: str,
                       unit_id: str, seen_event: int) -> None:
    """Inside the write transaction: raise ItemChangedError if the unit moved past ``seen_event``."""
    newer = _events(db, "study_id = ? AND query_id = ? AND unit_id = ? AND event_id > ?",
                    [study_id, query_id, unit_id, seen_event])
    if newer:
        raise ItemChangedError(query_id, unit_id, seen_event, newer)


def _write_checks(db: sqlite_utils.Database, study_id: str, query_id: str, unit_id: str,
                  seen_event: int | None) -> Callable[[], tuple[bool, bool, bool]]:
    """Inside the write transaction, in one statement: is the query registered, is it complete,
    and has the unit an event newer than ``seen_event``? The statement is sent now and read
    when the returned function is called, so a statement sent in between shares its round
    trip (:func:`write_transaction`'s ``batched``)."""
    newer = ("EXISTS (SELECT 1 FROM label_events WHERE study_id = ? AND query_id = ? "
             "AND unit_id = ? AND event_id > ?)") if seen_event is not None else "0"
    cursor = db.execute(
        "SELECT EXISTS (SELECT 1 FROM queries WHERE study_id = ? AND query_id = ?), "
        "(SELECT state FROM completeness_events WHERE study_id = ? AND query_id = ? "
        f"ORDER BY event_id DESC LIMIT 1), {newer}",
        [study_id, query_id, study_id, query_id,
         *([study_id, query_id, unit_id, seen_event] if seen_event is not None else [])],
    )

    def answer() -> tuple[bool, bool, bool]:
        registered, state, changed = cursor.fetchone()
        return bool(registered), state == "complete", bool(changed)

    return answer


def _check_text(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} is required and must be a non-empty string")
    try:
        return without_nul(value)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None


def _identity(name: str, value: object) -> str:
    """The annotator or reviewer as one person (:func:`normalise_user_id`); ValueError naming
    the field otherwise."""
    try:
        return normalise_user_id(_check_text(name, value))
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None


def _insert(db: sqlite_utils.Database, study_id: str, query_id: str, unit_id: str,
            kind: LabelKind, gain: int | None, annotator: str, note: str,
            source: str) -> Callable[[], LabelEvent]:
    """Append the event now; the returned function gives it with its event id, read late
    (after the ``COMMIT`` of a batched write: see :func:`_write_checks`)."""
    require_fits(note, MAX_NOTE_CHARS, "a note", "shorten it")
    values = (study_id, query_id, unit_id, kind, gain, annotator, utc_now_iso(), note, source)
    cursor = db.execute(f"INSERT INTO label_events ({', '.join(_KEYS[1:])}) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", values)
    return lambda: LabelEvent(**dict(zip(_KEYS, (int(cursor.lastrowid), *values), strict=True)))


def _append_gain_event(db: sqlite_utils.Database, study_id: str, query_id: str, unit_id: str,
                       kind: Literal["label", "adjudicate"], gain: int, who: str, note: str,
                       source: str, seen_event: int | None = None,
                       also: Callable[[], None] | None = None) -> LabelEvent:
    """Validate, append a label/adjudicate event and reopen a query it contradicts.

    ``seen_event``: write only if the unit has no newer event (else :class:`ItemChangedError`).
    ``also``: another write in the same transaction. Inside the lock only what another writer
    may change is read, in one round trip on PostgreSQL; the event and ``also`` go with the
    ``COMMIT``."""
    check_gain(gain)
    _check_text("query_id", query_id)
    _check_text("unit_id", unit_id)
    who = _identity("annotator" if kind == "label" else "reviewer", who)
    settings = known_study(db, who, study_id)
    threshold = settings.relevance_threshold
    with write_transaction(db, batched=True):
        checks = _write_checks(db, study_id, query_id, unit_id, seen_event)
        permission = Permission.LABEL if kind == "label" else Permission.ADJUDICATE
        study = open_study(db, study_id, who, settings=settings, permission=permission)
        registered, complete, changed = checks()
        if changed:
            _refuse_if_changed(db, study_id, query_id, unit_id, seen_event)
        reopens = False
        if gain >= threshold and complete:
            before = resolve_unit_in_store(study, query_id, unit_id)
            reopens = before is None or before.gain is None or before.gain < threshold
        if not registered:
            db.execute(
                "INSERT INTO queries (study_id, query_id, text) VALUES (?, ?, '') "
                "ON CONFLICT DO NOTHING",
                [study_id, query_id],
            )
        inserted = _insert(db, study_id, query_id, unit_id, kind, gain, who, note, source)
        if reopens:
            what = "label" if kind == "label" else "adjudication"
            reason = f"new relevant {what} on {unit_id} by {who}"
            append_completeness_event(db, study_id, query_id, "reopened", who, reason)
        if also is not None:
            also()
    return inserted()


def record_label(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    query_id: str,
    unit_id: str,
    gain: int,
    annotator: str,
    note: str = "",
    source: str = "app",
    seen_event: int | None = None,
    also: Callable[[], None] | None = None,
) -> LabelEvent:
    """Append a ``label`` event (gain 0..4), registering the query and reopening a complete
    query it contradicts. ValueError for a bad gain or an empty query, unit or annotator;
    ``seen_event`` (:func:`latest_event_id`): :class:`ItemChangedError` if the unit has a newer
    event; ``also``: another write in the same transaction (the item's draft cleared). Nothing
    is written when it raises."""
    return _append_gain_event(db, study_id, query_id, unit_id, "label", gain, annotator, note,
                              source, seen_event, also)


def _latest_open_label(
    db: sqlite_utils.Database, study_id: str, query_id: str, annotator: str
) -> tuple[int, str] | None:
    """(event_id, unit_id) of the annotator's latest label on the query not yet undone
    (rule 1 of :mod:`evalcore.store.resolution` on each unit)."""
    rows = db.execute(
        f"SELECT unit_id, event_id, kind, gain, {ANNOTATOR_SQL} FROM label_events WHERE "
        f"study_id = ? AND query_id = ? AND {ANNOTATOR_SQL} = ? AND kind IN ('label', 'undo') "
        "ORDER BY unit_id, event_id",
        [study_id, query_id, annotator],
    )
    tops = [(label[0], unit_id) for unit_id, events in groupby(rows, itemgetter(0))
            for label in replay_unit(e[1:] for e in events)[0].values()]
    return max(tops) if tops else None


def undo_last_label(
    db: sqlite_utils.Database, *, study_id: str, query_id: str, annotator: str
) -> LabelEvent | None:
    """Cancel the annotator's latest not-yet-undone label on the query with an ``undo`` event
    (note naming the cancelled event); None when there is nothing to undo. Undo never reopens
    or closes a completeness claim by itself."""
    annotator = _identity("annotator", annotator)
    study = known_study(db, annotator, study_id)
    with write_transaction(db):
        authorize(db, study_id=study_id, actor=annotator, permission=Permission.LABEL,
                  study=study)
        target = _latest_open_label(db, study_id, query_id, annotator)
        if target is None:
            return None
        event_id, unit_id = target
        note = f"undo of event {event_id}"
        return _insert(db, study_id, query_id, unit_id, "undo", None, annotator, note, "app")()


def adjudicate(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    query_id: str,
    unit_id: str,
    gain: int,
    reviewer: str,
    note: str = "",
    source: str = "app",
) -> LabelEvent:
    """A reviewer settles the unit's gain (an ``adjudicate`` event), until an annotator records
    a newer label that disagrees (:mod:`evalcore.store.resolution`). Reopens a complete query
    like a label."""
    return _append_gain_event(db, study_id, query_id, unit_id, "adjudicate", gain, reviewer, note,
                              source)


def label_history(study: Study, query_id: str, unit_id: str | None = None) -> list[LabelEvent]:
    """Every label event of the query (or of one unit), oldest first."""
    one_unit = "" if unit_id is None else " AND unit_id = ?"
    params = [study.study_id, query_id, *([] if unit_id is None else [unit_id])]
    return _events(study.db, "study_id = ? AND query_id = ?" + one_unit, params)


def has_labels_from(study: Study, source: str) -> bool:
    """Does the study hold a label event written by ``source`` (e.g. the demo builder)?"""
    return exists(study.db, "SELECT 1 FROM label_events WHERE study_id = ? AND source = ? "
                  "LIMIT 1", [study.study_id, source])


class UnitJudgements(FrozenModel):
    """The events that count on one unit (:func:`evalcore.store.resolution.replay_unit`): each
    annotator's current label (an undone one is not) and the latest adjudication."""

    unit_id: str
    #: annotator -> their current ``label`` event (annotator order).
    labels: dict[str, LabelEvent]
    adjudication: LabelEvent | None = None


def current_judgements(
    study: Study, query_id: str, unit_id: str | None = None
) -> dict[str, UnitJudgements]:
    """unit_id -> :class:`UnitJudgements` of the query (or of one unit), units in id order,
    leaving out units whose labels are all undone and that were never adjudicated."""
    by_unit: dict[str, list[LabelEvent]] = {}
    for event in label_history(study, query_id, unit_id):
        by_unit.setdefault(event.unit_id, []).append(event)
    out: dict[str, UnitJudgements] = {}
    for unit, events in sorted(by_unit.items()):
        by_id = {e.event_id: e for e in events}
        current, adjudication = replay_unit(
            (e.event_id, e.kind, e.gain, e.annotator) for e in events
        )
        if not current and adjudication is None:
            continue
        out[unit] = UnitJudgements(
            unit_id=unit,
            labels={a: by_id[current[a][0]] for a in sorted(current)},
            adjudication=None if adjudication is None else by_id[adjudication[0]],
        )
    return out


def query_annotators(study: Study) -> dict[str, list[str]]:
    """query_id -> the annotators who wrote a label event on it, sorted."""
    out: dict[str, list[str]] = {}
    for query_id, annotator in study.db.execute(
        f"SELECT DISTINCT query_id, {ANNOTATOR_SQL} AS who FROM label_events "
        "WHERE study_id = ? ORDER BY query_id, who",
        [study.study_id],
    ):
        out.setdefault(query_id, []).append(annotator)
    return out


def noted_label_events(study: Study) -> list[LabelEvent]:
    """The study's label events that carry a note, in event order."""
    return _events(study.db, "study_id = ? AND note != ''", [study.study_id])
