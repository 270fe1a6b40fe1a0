"""Store change detection: what the store looked like when a cached state was built.

One home for "has anything changed?": the live dashboard's incremental state
(:mod:`evalcore.live.dashboard`) and the app's per-session caches
(``app/components/state.py``) both compare :class:`StoreMarks`.
"""

import dataclasses
import json
from dataclasses import dataclass

from evalcore.store.study_handle import Study


@dataclass(frozen=True)
class StoreMarks:
    """What a cached state was built at: the highest label and completeness event ids
    (store-wide); the study's run ids and removed queries (either moved: built again whole);
    its corpus's generation (documents moved: the corpus size bounding open populations may
    have); its latest published automatic import (the to-decide queue breaks ties with them)."""

    label_event: int
    completeness_event: int
    run_ids: tuple[int, ...]
    removed: frozenset[str] = frozenset()
    corpus_generation: int = 0
    automatic_import: int = 0


def store_marks(study: Study) -> StoreMarks:
    """The store's marks now, for ``study_id``'s runs: one statement (each is a round trip
    to a PostgreSQL server, and a page run asks for the marks several times)."""
    row = study.db.execute(
        "SELECT (SELECT coalesce(max(event_id), 0) FROM label_events), "
        "(SELECT coalesce(max(event_id), 0) FROM completeness_events), "
        "(SELECT coalesce(max(g.generation), 0) FROM corpus_generations g JOIN studies s "
        "ON g.corpus_id = s.corpus_id WHERE s.study_id = ?), "
        "(SELECT coalesce(max(import_id), 0) FROM automatic_imports "
        "WHERE study_id = ? AND staged_by IS NULL), "
        "(SELECT json_group_array(run_id) FROM runs WHERE study_id = ? AND staged_by IS NULL), "
        "(SELECT json_group_array(query_id) FROM removed_queries WHERE study_id = ?)",
        [study.study_id] * 4,
    ).fetchone()
    # JSON arrays, not separator-joined text: a query id may hold any separator
    runs = tuple(sorted(map(int, json.loads(row[4]))))
    removed = frozenset(json.loads(row[5]))
    return StoreMarks(
        int(row[0]), int(row[1]), runs, removed, int(row[2]), int(row[3])
    )


def marks_read_once(study: Study) -> Study:
    """The handle again, its caches keyed on one read of the store's marks (made when first
    needed; each read is a round trip on PostgreSQL): a page run's handle. What it reads
    afterwards is never older than those marks; a write shows on the next run's handle."""
    return dataclasses.replace(study, pinned_marks=[])


def current_marks(study: Study) -> StoreMarks:
    """The store's marks: read now, or once for a handle of :func:`marks_read_once`."""
    if study.pinned_marks is None:
        return store_marks(study)
    if not study.pinned_marks:
        study.pinned_marks.append(store_marks(study))
    return study.pinned_marks[0]


def touched_queries(study: Study, since: StoreMarks) -> set[str]:
    """Queries of the study with a label or completeness event newer than ``since``."""
    # "+study_id" keeps SQLite on the event_id (rowid) range: with the study index it
    # would scan every event of the study.
    rows = study.db.execute(
        "SELECT DISTINCT query_id FROM label_events WHERE event_id > ? AND +study_id = ? "
        "UNION SELECT DISTINCT query_id FROM completeness_events WHERE event_id > ? "
        "AND +study_id = ?",
        [since.label_event, study.study_id, since.completeness_event, study.study_id],
    )
    return {r[0] for r in rows}


def study_events(study: Study, since: StoreMarks | None = None) -> int:
    """How many label and completeness events the study holds (those newer than ``since``, if
    given): a state updated from the queries touched since its marks checks that nothing else
    moved (an id below the marks is never new, unless a discarded staged study's were reused)."""
    if since is None:
        row = study.db.execute(
            "SELECT (SELECT count(*) FROM label_events WHERE study_id = ?), "
            "(SELECT count(*) FROM completeness_events WHERE study_id = ?)",
            [study.study_id, study.study_id],
        ).fetchone()
    else:
        row = study.db.execute(
            "SELECT (SELECT count(*) FROM label_events WHERE event_id > ? AND +study_id = ?), "
            "(SELECT count(*) FROM completeness_events WHERE event_id > ? AND +study_id = ?)",
            [since.label_event, study.study_id, since.completeness_event, study.study_id],
        ).fetchone()
    return int(row[0]) + int(row[1])
