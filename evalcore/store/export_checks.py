"""Cheap checks of whether an export would be refused, before anyone asks for the file.

The app offers downloads whose files are built only when clicked; a refusal
(:class:`~evalcore.store.exports.ExportRefusedError`, e.g. an id with whitespace
that TREC files cannot hold) must still be said up front. Each check is one
indexed SQL pass for *suspects* (a superset of what the export refuses); only
when there is a suspect is the export itself run, so the message is the
export's own and each rule stays in :mod:`evalcore.store.exports`.

The pass reads one row per query: its id and its unit ids concatenated by SQLite
(whitespace inside any id is whitespace in the concatenation, and the
concatenation adds none), tested in Python with the exports' own
:data:`~evalcore.store.exports.TREC_SPACE` (a per-row GLOB in SQL was 3-4 times
slower: 0.55 s per run at 10,000 queries x 100). Label events are append-only:
:func:`label_ids_seen_unchecked` reads only the events newer than what it saw
last, so a page can keep the answer up to date after each label without a scan.
"""

import io
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from evalcore.store.exports import TREC_SPACE, ExportRefusedError, export_qrels, export_run
from evalcore.store.runs import get_run_unchecked
from evalcore.store.scoping import require_study_view
from evalcore.store.tool_label_exports import export_tool_labels
from evalcore.store.transaction import read_snapshot

#: One row per query of the rows ``FROM ... WHERE ...`` selects: (query id, its unit ids
#: concatenated, the length of its shortest unit id).
_PER_QUERY = ("SELECT query_id, group_concat(unit_id, ''), min(length(unit_id)) FROM {source} "
              "GROUP BY query_id")


def _suspect(rows: Any) -> bool:
    """Whether any (query id, unit ids concatenated, shortest unit id) row holds an id a TREC
    export may refuse: an empty id, whitespace, a query id starting with '#'."""
    for query_id, units, shortest in rows:
        if (not shortest or not query_id or query_id[0] == "#" or TREC_SPACE.search(query_id)
                or TREC_SPACE.search(units or "")):
            return True
    return False


def qrels_suspect_unchecked(db: sqlite_utils.Database, study_id: str, reference: str | None) -> bool:
    """Whether the study's label events (or the frozen ``reference``'s labels) hold an id a
    TREC qrels export may refuse (a superset: every event, undone or not, is read)."""
    if reference is None:
        return _suspect(db.execute(_PER_QUERY.format(source="label_events WHERE study_id = ?"),
                                   [study_id]))
    return _suspect(db.execute(
        _PER_QUERY.format(source="reference_labels WHERE study_id = ? AND version = ?"),
        [study_id, reference]))


@dataclass(frozen=True)
class LabelIdsSeen:
    """What :func:`label_ids_seen_unchecked` read of a study's label events: every event up
    to ``through_event`` (store-wide id), ``events`` of them the study's, and whether any
    of those holds an id a TREC qrels export may refuse."""

    study_id: str
    through_event: int
    events: int
    suspect: bool


def label_ids_seen_unchecked(
    db: sqlite_utils.Database, study_id: str, seen: LabelIdsSeen | None = None
) -> LabelIdsSeen:
    """:class:`LabelIdsSeen` now, reading only the events newer than ``seen`` (an earlier
    answer for the study); all of the study's events when ``seen`` is None or no longer
    adds up (an event id reused after a staged study's events were discarded)."""
    with read_snapshot(db):
        through = int(db.execute("SELECT coalesce(max(event_id), 0) FROM label_events").fetchone()[0])
        events = int(db.execute("SELECT count(*) FROM label_events WHERE study_id = ?",
                                [study_id]).fetchone()[0])
        if seen is not None and seen.study_id == study_id and seen.through_event <= through:
            # "+study_id": the event_id (rowid) range, not every event of the study
            newer = "label_events WHERE event_id > ? AND +study_id = ?"
            params = [seen.through_event, study_id]
            added = int(db.execute(f"SELECT count(*) FROM {newer}", params).fetchone()[0])
            if seen.events + added == events:
                suspect = seen.suspect or (added > 0 and _suspect(
                    db.execute(_PER_QUERY.format(source=newer), params)))
                return LabelIdsSeen(study_id, through, events, suspect)
        return LabelIdsSeen(study_id, through, events, qrels_suspect_unchecked(db, study_id, None))


def _refusal(export) -> str | None:
    try:
        export(io.StringIO())
    except ExportRefusedError as error:
        return str(error)
    return None


def qrels_refusal(
    db: sqlite_utils.Database, study_id: str, reference: str | None, *, viewer: str | None,
    suspect: bool | None = None,
) -> str | None:
    """Why :func:`export_qrels` would refuse these qrels, or None (it would not).

    ``suspect``: whether the labels hold a suspect, if the caller knows it already (e.g.
    :attr:`LabelIdsSeen.suspect` for the working reference, up to date); read here if None.
    """
    require_study_view(db, viewer, study_id)
    if suspect is None:
        suspect = qrels_suspect_unchecked(db, study_id, reference)
    if not suspect:
        return None
    return _refusal(lambda out: export_qrels(db, study_id, out, reference=reference,
                                             viewer=viewer))


def tool_labels_refusal(
    db: sqlite_utils.Database, study_id: str, fmt: str, reference: str | None, *,
    viewer: str | None,
) -> str | None:
    """Why :func:`export_tool_labels` would refuse, or None (only Quepid refuses: two rated
    queries shown with the same text)."""
    require_study_view(db, viewer, study_id)
    if fmt != "quepid":
        return None
    suspect = db.execute(
        "SELECT 1 FROM queries WHERE study_id = ? GROUP BY coalesce(nullif(text, ''), query_id) "
        "HAVING count(*) > 1 LIMIT 1", [study_id]).fetchone()
    if suspect is None:
        return None
    return _refusal(lambda out: export_tool_labels(db, study_id, out, fmt, reference=reference,
                                                   viewer=viewer))


def run_suspect_unchecked(db: sqlite_utils.Database, run_id: int) -> bool:
    """Whether the stored run ``run_id`` holds an id a TREC run export refuses (a stored run
    never changes: the answer holds as long as the run)."""
    return _suspect(db.execute(_PER_QUERY.format(source="results WHERE run_id = ?"), [run_id]))


def run_refusal(
    db: sqlite_utils.Database, study_id: str, run_name: str, *, viewer: str | None,
    suspect: bool | None = None,
) -> str | None:
    """Why :func:`export_run` would refuse this run, or None (it would not).

    ``suspect``: :func:`run_suspect_unchecked` of the run, if the caller knows it already.
    """
    require_study_view(db, viewer, study_id)
    run = get_run_unchecked(db, study_id, run_name)
    if not (run_suspect_unchecked(db, run.run_id) if suspect is None else suspect):
        return None
    return _refusal(lambda out: export_run(db, study_id, run_name, out, viewer=viewer))
