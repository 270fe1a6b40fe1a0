"""Per-session caches of what is expensive to recompute, invalidated by store marks.

The study progress is also shared by every session (:mod:`app.components.shared_results`):
a new tab or another annotator's session reuses it while the marks are unchanged.

The store's marks (:mod:`evalcore.store.marks`) are the highest label and
completeness event ids and the study's run ids. A cached study progress is
reused while the marks are unchanged; after
this session's own label it is updated for that one query only (the rest of
the study cannot have changed if the version moved by exactly that write);
anything else -- another annotator's label, a new run -- triggers a full
recompute on the next read.

Every public function here reads as the session's reader
(:func:`app.components.session.reader`) and is refused unless it may read the study,
even when the value comes from a cache another session filled.
"""

import sqlite_utils
import streamlit as st

from app.components.shared_results import (
    compute_in_background,
    ready_result,
    share_result,
    shared_result,
)
from evalcore.annotation.pool import PoolItem, query_pool_unchecked
from evalcore.annotation.progress import (
    StudyProgress,
    query_progress_unchecked,
    study_progress_unchecked,
)
from evalcore.store.connection import open_store
from evalcore.store.marks import StoreMarks, store_marks_unchecked
from evalcore.store.pools import pool_sizes_unchecked
from evalcore.store.read_access import Viewer, require_read


def _cache() -> dict:
    return st.session_state.setdefault("_rl_cache", {})


def _viewer() -> Viewer:
    from app.components.session import reader

    return reader()


def _session_progress(
    db: sqlite_utils.Database, study_id: str, annotator: str
) -> tuple[Viewer, tuple[str, str, str], StoreMarks, StudyProgress | None]:
    """Check the session's reader may read the study; the progress key, the store's marks
    now, and the progress this session cached for those marks (None if it has none)."""
    viewer = _viewer()
    require_read(db, viewer, study_id)
    key = ("progress", study_id, annotator)
    version = store_marks_unchecked(db, study_id)
    entry = _cache().get(key)
    return viewer, key, version, entry[1] if entry is not None and entry[0] == version else None


def cached_study_progress(
    db: sqlite_utils.Database, study_id: str, annotator: str = ""
) -> StudyProgress:
    """The study's progress, recomputed only when the store changed."""
    viewer, key, version, known = _session_progress(db, study_id, annotator)
    if known is not None:
        return known
    # Shared by every session (a new tab does not recompute the study) while the marks hold.
    progress = shared_result(
        db, _store_path(), study_id, key,
        lambda: study_progress_unchecked(db, study_id, annotator,
                                         sizes=shared_pool_sizes(db, study_id)),
        viewer=viewer,
    )
    _cache()[key] = (version, progress)
    return progress


#: A study with more queries than this has its progress counted in the background on a
#: first visit (seconds at 10,000 queries: every run's results and every label are read).
LARGE_STUDY_QUERIES = 1000


def study_progress_if_ready(
    db: sqlite_utils.Database, study_id: str, annotator: str, query_count: int
) -> StudyProgress | None:
    """:func:`cached_study_progress`, or None while a large study's progress is counted in the
    background (started here; the page shows it on its next run)."""
    viewer, key, version, known = _session_progress(db, study_id, annotator)
    if known is not None:
        return known
    if query_count <= LARGE_STUDY_QUERIES:
        return cached_study_progress(db, study_id, annotator)
    path = _store_path()
    progress = ready_result(db, path, study_id, key, viewer=viewer)
    if progress is None:
        compute_in_background(db, path, study_id, key,
                              lambda conn: study_progress_unchecked(conn, study_id, annotator),
                              viewer=viewer)
        return None
    _cache()[key] = (version, progress)
    return progress


def _store_path() -> str:
    from app.components.session import db_path

    return str(db_path())


def shared_pool_sizes(db: sqlite_utils.Database, study_id: str) -> dict[str, int]:
    """Pool size per query, shared by every session of the process.

    Stored runs never change, so the sizes are keyed by the study's run ids.
    """
    require_read(db, _viewer(), study_id)
    return _pool_sizes(_store_path(), study_id, store_marks_unchecked(db, study_id).run_ids)


@st.cache_data(max_entries=16, show_spinner="Measuring the study's pools…")
def _pool_sizes(path: str, study_id: str, runs: tuple[int, ...]) -> dict[str, int]:
    db = open_store(path, migrate=False)
    try:
        return pool_sizes_unchecked(db, study_id)
    finally:
        db.conn.close()


def note_own_write(
    db: sqlite_utils.Database,
    study_id: str,
    query_id: str,
    annotator: str,
    before: StoreMarks,
) -> None:
    """After this session wrote one event on ``query_id``: refresh that query only.

    ``before`` is the marks read just before the write. If anything else
    changed meanwhile, the cached progress is left stale and recomputed in full
    on the next read.
    """
    key = ("progress", study_id, annotator)
    entry = _cache().get(key)
    if entry is None or entry[0] != before:
        return
    after = store_marks_unchecked(db, study_id)
    own_only = (
        after.run_ids == before.run_ids
        and after.label_event - before.label_event <= 1
        and after.completeness_event - before.completeness_event <= 1
    )
    if not own_only:
        return
    updated = entry[1].replace(query_progress_unchecked(db, study_id, query_id, annotator))
    _cache()[key] = (after, updated)
    share_result(_store_path(), study_id, key, after, updated)


def cached_pool(db: sqlite_utils.Database, study_id: str, query_id: str) -> list[PoolItem]:
    """The query's pool, recomputed only when a run was added."""
    require_read(db, _viewer(), study_id)
    key = ("pool", study_id, query_id)
    version = store_marks_unchecked(db, study_id).run_ids
    entry = _cache().get(key)
    if entry is not None and entry[0] == version:
        return entry[1]
    pool = query_pool_unchecked(db, study_id, query_id)
    _cache()[key] = (version, pool)
    return pool
