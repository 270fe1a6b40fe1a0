"""The study's labeling progress and its queries' pools, shared by every session.

The progress is counted once per server process and kept up to date from the store's
marks: only the queries touched since are counted again
(:func:`evalcore.annotation.progress.progress_now`); a large study's first count runs on a
thread of its own. Every read goes through the page's
:class:`evalcore.store.study_handle.Study` (checked for the session's reader).
"""

import threading
from dataclasses import dataclass, field

import sqlite_utils
import streamlit as st

from app.components.session import db_path
from app.components.shared_results import run_on_own_thread
from evalcore.annotation.pool import PoolItem, query_pool
from evalcore.annotation.progress import AnnotatorShare, ProgressCounts, StudyProgress, progress_now
from evalcore.store.marks import current_marks
from evalcore.store.study_handle import Study, open_study


@dataclass
class _Counted:
    """Per store file: each study's latest counts and each annotator's latest share in it
    (any session's), and per study the annotators whose share is wanted from the count on
    its thread in the background (a study being counted is a key)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    counts: dict[str, ProgressCounts] = field(default_factory=dict)
    shares: dict[tuple[str, str], AnnotatorShare] = field(default_factory=dict)
    counting: dict[str, set[str]] = field(default_factory=dict)


@st.cache_resource(show_spinner=False)
def _counted(path: str) -> _Counted:
    return _Counted()


def _newer(kept: ProgressCounts | AnnotatorShare | None,
           new: ProgressCounts | AnnotatorShare) -> bool:
    """Whether ``new`` should replace ``kept`` (not when a slow count finishes late)."""
    return kept is None or (new.marks.label_event, new.marks.completeness_event) >= (
        kept.marks.label_event, kept.marks.completeness_event)


def _keep(counted: _Counted, study_id: str, counts: ProgressCounts,
          share: AnnotatorShare | None) -> None:
    with counted.lock:
        if _newer(counted.counts.get(study_id), counts):
            counted.counts[study_id] = counts
        if share is not None and _newer(counted.shares.get((study_id, share.annotator)), share):
            counted.shares[(study_id, share.annotator)] = share


#: A study with more queries than this has its progress counted in the background on a
#: first visit (seconds at 10,000 queries: every run's pool and every label are read).
LARGE_STUDY_QUERIES = 1000


def study_progress_if_ready(
    study: Study, annotator: str, query_count: int
) -> StudyProgress | None:
    """The study's progress (``annotator``'s share in it, if named) now, or None while a
    large study (or the annotator's share in it) is counted in full in the background
    (started here; the page shows it on its next run). Kept up to date from the queries
    touched since it was counted."""
    study_id = study.study_id
    path = str(db_path())
    counted = _counted(path)
    with counted.lock:
        counts = counted.counts.get(study_id)
        share = counted.shares.get((study_id, annotator))
    large = query_count > LARGE_STUDY_QUERIES
    now = progress_now(study, annotator, counts, share, full=not large)
    if now is None:
        _count_in_background(path, study, annotator, counted)
        return None
    counts, share = now
    _keep(counted, study_id, counts, share)
    return counts.progress if share is None else share.progress


def _count_in_background(path: str, study: Study, annotator: str, counted: _Counted) -> None:
    """Count the study in full on a thread of its own (read as the handle's reader, the
    session that asked), then the share of every annotator asked for meanwhile: one thread
    at a time per study."""
    study_id = study.study_id
    with counted.lock:
        wanted = counted.counting.get(study_id)
        if wanted is not None:
            wanted.add(annotator)
            return
        counted.counting[study_id] = {annotator}

    def count(conn: sqlite_utils.Database) -> None:
        try:
            while True:
                with counted.lock:  # an annotator asked for until the thread ends is counted
                    wanted = counted.counting[study_id]
                    if not wanted:
                        del counted.counting[study_id]
                        return
                    who = wanted.pop()
                    counts = counted.counts.get(study_id)
                    share = counted.shares.get((study_id, who))
                now = progress_now(open_study(conn, study_id, study.actor), who, counts, share)
                if now is not None:
                    _keep(counted, study_id, *now)
        except BaseException:
            with counted.lock:  # the next page run starts another thread
                counted.counting.pop(study_id, None)
            raise

    run_on_own_thread(path, count)


#: Query pools kept (shared by every session), the least recently used dropped first.
POOLS_KEPT = 256


@st.cache_resource(max_entries=POOLS_KEPT, show_spinner=False)
def _pool(path: str, study_id: str, query_id: str, run_ids: tuple[int, ...],
          _study: Study) -> list[PoolItem]:
    return query_pool(_study, query_id)


def cached_pool(study: Study, query_id: str) -> list[PoolItem]:
    """The query's pool, shared by every session (read-only), recomputed only when a run was
    added or removed."""
    return _pool(str(db_path()), study.study_id, query_id, current_marks(study).run_ids, study)
