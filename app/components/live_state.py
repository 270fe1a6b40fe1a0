"""The live dashboard state, shared by every session of the app process.

One :class:`evalcore.live.dashboard.LiveDashboard` per store and study, under a lock: the
first reader builds it, later readers ``refresh`` it (only the queries touched since are
evaluated again), once per page-run handle (each read of the store's marks is a round trip
on PostgreSQL). Every read takes the page's :class:`evalcore.store.study_handle.Study`.
"""

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import streamlit as st

from app.components.session import db_path
from evalcore.live.dashboard import LiveDashboard, RefreshOutcome
from evalcore.store.study_handle import Study

T = TypeVar("T")


@dataclass
class _Shared:
    lock: threading.Lock
    state: LiveDashboard | None = None
    #: the handle that last brought the state up to date, and what that refresh said
    refreshed_by: weakref.ref | None = None
    outcome: RefreshOutcome | None = None


@st.cache_resource(show_spinner=False)
def _shared(path: str, study_id: str) -> _Shared:
    return _Shared(lock=threading.Lock())


def _evaluating(shared: _Shared, study: Study) -> RefreshOutcome:
    """Build the state, or bring it up to date (once per handle)."""
    if shared.state is None:
        shared.state = LiveDashboard.build(study)
        outcome = shared.state.last_refresh
    elif shared.refreshed_by is not None and shared.refreshed_by() is study:
        return shared.outcome
    else:
        outcome = shared.state.refresh(study)
    shared.refreshed_by, shared.outcome = weakref.ref(study), outcome
    return outcome


def with_live_state(study: Study, read: Callable[[LiveDashboard, float, bool], T]) -> T:
    """Call ``read(state, seconds, changed)`` on the handle's study's up-to-date state,
    under its lock (the store is read at the handle's first call only).

    ``seconds`` is the time the build or refresh took; ``changed`` whether the
    store had changed since the last refresh.
    """
    shared = _shared(str(db_path()), study.study_id)
    with shared.lock:
        if shared.state is None:
            with st.spinner("Evaluating every run of the study (first load only)…"):
                outcome = _evaluating(shared, study)
        else:
            outcome = _evaluating(shared, study)
        return read(shared.state, outcome.seconds, outcome.changed)
