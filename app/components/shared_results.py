"""Results shared by every session of the app process, valid while the store's marks hold.

A page that computes a study-wide result (a run comparison, the annotators'
agreement, a run's evaluation on a frozen version) asks :func:`shared_result`:
the first session computes it, every later click and every other session
reuses it until the store's marks (:mod:`evalcore.store.marks`: the highest
label and completeness event ids and the study's run ids) move, which a label,
an adjudication, a completeness declaration or a new run does. The results are
read-only to the pages. The computation is shared; the authorization is not: every
call names the session's ``viewer`` and is refused (PermissionDenied) unless that
viewer may read the study (:func:`evalcore.store.study_handle.open_study`), before
anything is looked up or computed. At most :data:`MAX_ENTRIES` are kept per store file,
least recently used dropped first.

A result is computed with the cyclic collector paused (the app owns its process, as for
the shared live state): a large study's comparison builds hundreds of thousands of small
acyclic objects (packed columns, one excluded-query model per query and measure), and the
allocation bursts otherwise trigger full collections that walk the whole heap.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import sqlite_utils
import streamlit as st

from evalcore.compute.gc_pause import gc_paused
from evalcore.store.connection import open_store
from evalcore.store.marks import StoreMarks, store_marks
from evalcore.store.study_handle import open_study

T = TypeVar("T")

MAX_ENTRIES = 64
#: Results of one kind kept ``alone`` per study: for the store's marks now, the most
#: recently used (two sessions comparing different choices do not replace each other's).
ALONE_KEPT = 2


@dataclass
class _Results:
    lock: threading.Lock = field(default_factory=threading.Lock)
    entries: OrderedDict[Hashable, Any] = field(default_factory=OrderedDict)
    running: set[Hashable] = field(default_factory=set)


@st.cache_resource(show_spinner=False)
def _results(path: str) -> _Results:
    return _Results()


def shared_result(
    db: sqlite_utils.Database,
    path: str,
    study_id: str,
    key: Hashable,
    compute: Callable[[], T],
    *,
    viewer: str | None,
    alone: bool = False,
) -> T:
    """``compute()``'s value for ``key`` in ``study_id``, computed once per state of the store,
    if ``viewer`` (the session's reader) may read the study.

    ``key`` names the result and every input other than the store (a tuple of
    the page's choices, its first item the kind of result); ``path`` is the store file.
    ``alone``: a large result (hundreds of MB on a large study) kept at most
    :data:`ALONE_KEPT` times per study and kind: computing it forgets the study's results of
    its kind for older marks and, beyond that number, the least recently used other choices,
    so they do not pile up in the :data:`MAX_ENTRIES`.
    """
    results = _results(path)
    full_key = (study_id, key, store_marks(open_study(db, study_id, viewer)))
    found, value = _lookup(results, full_key)
    if found:
        return value
    if alone:
        with results.lock:
            kind = [k for k in results.entries if k[0] == study_id and k[1][0] == key[0]]
            current = [k for k in kind if k[2] == full_key[2]]  # least recently used first
            for other in [k for k in kind if k[2] != full_key[2]] + current[
                    :max(0, len(current) - ALONE_KEPT + 1)]:
                del results.entries[other]
    with gc_paused():
        value = compute()  # outside the lock: another session may compute the same meanwhile
    _keep(results, full_key, value)
    return value


def ready_result(
    db: sqlite_utils.Database, path: str, study_id: str, key: Hashable, *, viewer: str | None
) -> Any:
    """:func:`shared_result`'s value for ``key`` if it is computed for the store's marks now,
    else None (nothing is computed); only."""
    return _lookup(_results(path), (study_id, key, store_marks(open_study(db, study_id, viewer))))[1]


def _lookup(results: _Results, full_key: Hashable) -> tuple[bool, Any]:
    """(found, value): a value may itself be None."""
    with results.lock:
        if full_key in results.entries:
            results.entries.move_to_end(full_key)
            return True, results.entries[full_key]
    return False, None


def compute_in_background(
    db: sqlite_utils.Database,
    path: str,
    study_id: str,
    key: Hashable,
    compute: Callable[[sqlite_utils.Database], Any],
    *,
    viewer: str | None,
) -> None:
    """Start ``compute(connection)`` on a thread of its own (its own connection to the store
    at ``path``), offered as :func:`shared_result`'s value for the store's marks now; a page
    asks :func:`ready_result` on its next run. Once per marks: a second call while it runs,
    or after it is done, starts nothing. Nothing starts unless ``viewer`` may read the study."""
    results = _results(path)
    marks = store_marks(open_study(db, study_id, viewer))
    full_key = (study_id, key, marks)
    with results.lock:
        if full_key in results.entries or full_key in results.running:
            return
        results.running.add(full_key)

    def work(conn: sqlite_utils.Database) -> None:
        try:
            with gc_paused():
                value = compute(conn)
            _keep(results, full_key, value)
        finally:
            with results.lock:
                results.running.discard(full_key)

    run_on_own_thread(path, work)


def run_on_own_thread(path: str, work: Callable[[sqlite_utils.Database], Any]) -> None:
    """Start ``work(connection)`` on a thread of its own, with its own connection to the store
    at ``path`` (closed after). The caller has checked that its viewer may read what it reads."""
    def run() -> None:
        conn = open_store(path, migrate=False)
        try:
            work(conn)
        finally:
            conn.conn.close()

    threading.Thread(target=run, name="rl-shared-result", daemon=True).start()


def share_result(path: str, study_id: str, key: Hashable, marks: StoreMarks, value: Any) -> None:
    """Offer ``value`` as :func:`shared_result`'s value for ``key`` while the store's marks are
    ``marks`` (a result a session brought up to date itself, e.g. after its own label)."""
    _keep(_results(path), (study_id, key, marks), value)


def _keep(results: _Results, full_key: Hashable, value: Any) -> None:
    with results.lock:
        results.entries[full_key] = value
        results.entries.move_to_end(full_key)
        while len(results.entries) > MAX_ENTRIES:
            results.entries.popitem(last=False)
