"""Results shared by every session of the app process, valid while the store's marks hold.

The first session computes a study-wide result (:func:`shared_result`), every other click
and session reuses it (read-only) until the store's marks (:mod:`evalcore.store.marks`)
move. The computation is shared, the authorization is not: every call takes the page's
:class:`evalcore.store.study_handle.Study`, made only once the session's reader may read the
study, and finds only its study's results (keyed by the store's identity, the study, the
page's key and the marks).
"""

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import sqlite_utils
import streamlit as st

from evalcore.store.connection import open_store
from evalcore.store.marks import StoreMarks, current_marks
from evalcore.store.store_identity import store_identity, store_location
from evalcore.store.study_handle import Study, open_study

T = TypeVar("T")

MAX_ENTRIES = 64
#: Large results (``alone``) kept per server process, the most recently used: two sessions
#: comparing different choices do not replace each other's.
ALONE_KEPT = 2


@dataclass
class _Slot:
    """One result's place: computed at most once (under its lock), read without it."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    done: bool = False
    started: bool = False  # a background computation was started
    value: Any = None


def _marks_key(marks: StoreMarks) -> tuple:
    return (marks.label_event, marks.completeness_event, marks.run_ids,
            tuple(sorted(marks.removed)), marks.corpus_generation, marks.automatic_import)


_CACHE = {"show_spinner": False, "hash_funcs": {StoreMarks: _marks_key}}


@st.cache_resource(max_entries=MAX_ENTRIES, **_CACHE)
def _slot(path: str, study_id: str, key: Hashable, marks: StoreMarks) -> _Slot:
    return _Slot()


@st.cache_resource(max_entries=ALONE_KEPT, **_CACHE)
def _alone_slot(path: str, study_id: str, key: Hashable, marks: StoreMarks) -> _Slot:
    return _Slot()


def study_store(study: Study) -> str:
    """Which store the handle reads (the cache's first key: a process may serve several
    stores, files or PostgreSQL databases): its :func:`store_identity`."""
    return store_identity(study.db)


def _find(study: Study, key: Hashable, alone: bool) -> _Slot:
    marks = current_marks(study)
    return (_alone_slot if alone else _slot)(study_store(study), study.study_id, key, marks)


def shared_result(study: Study, key: Hashable, compute: Callable[[], T], *,
                  alone: bool = False) -> T:
    """``compute()``'s value for ``key`` in the handle's study, computed once per state of
    the store.

    ``key`` names the result and every input other than the store (a tuple of
    the page's choices, its first item the kind of result; the reader too when what they
    may see changes the result).
    ``alone``: a large result (hundreds of MB on a large study), one of the
    :data:`ALONE_KEPT` most recently used of its own cache, so they do not pile up in the
    :data:`MAX_ENTRIES`. A second call for the same result while it is computed waits for it.
    """
    slot = _find(study, key, alone)
    with slot.lock:  # a second session asking meanwhile waits for this computation
        if not slot.done:
            slot.value = compute()
            slot.done = True
    return slot.value


def ready_result(study: Study, key: Hashable, *, alone: bool = False) -> Any:
    """:func:`shared_result`'s value for ``key`` if it is computed for the store's marks now,
    else None (nothing is computed)."""
    slot = _find(study, key, alone)
    return slot.value if slot.done else None


def compute_in_background(study: Study, key: Hashable,
                          compute: Callable[[Study], Any]) -> None:
    """Start ``compute(handle)`` on a thread of its own (a handle on the study for the same
    reader, on its own connection to the store), offered as :func:`shared_result`'s value for
    the store's marks now; a page asks :func:`ready_result` on its next run. Once per marks:
    a second call while it runs, or after it is done, starts nothing (after a failure, the
    next call starts it again)."""
    slot = _find(study, key, False)
    with slot.lock:
        if slot.done or slot.started:
            return
        slot.started = True

    def work(conn: sqlite_utils.Database) -> None:
        try:
            with slot.lock:
                if not slot.done:
                    slot.value = compute(open_study(conn, study.study_id, study.actor))
                    slot.done = True
        finally:
            slot.started = slot.done

    run_on_own_thread(store_location(study.db), work)


def run_on_own_thread(path: str, work: Callable[[sqlite_utils.Database], Any]) -> None:
    """Start ``work(connection)`` on a thread of its own, with its own connection to the store
    at ``path`` (closed after). The caller holds a handle on what it reads."""
    def run() -> None:
        conn = open_store(path, migrate=False)
        try:
            work(conn)
        finally:
            conn.conn.close()

    threading.Thread(target=run, name="rl-shared-result", daemon=True).start()
