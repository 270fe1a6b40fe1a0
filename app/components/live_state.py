"""The live dashboard state, shared by every session of the app process.

One :class:`evalcore.live.dashboard.LiveDashboard` per store file and study,
kept with ``st.cache_resource`` and guarded by a lock: the first reader builds
it (every run evaluated once), later readers bring it up to date with
``refresh`` (nothing read when the store is unchanged; only the touched
queries re-evaluated after a label). Used by the dashboard and the run
comparison on the working labels.
"""

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import streamlit as st

from app.components.session import db_path, get_db
from evalcore.live.dashboard import LiveDashboard

T = TypeVar("T")


@dataclass
class _Shared:
    lock: threading.Lock
    state: LiveDashboard | None = None


@st.cache_resource(show_spinner=False)
def _shared(path: str, study_id: str) -> _Shared:
    return _Shared(lock=threading.Lock())


def with_live_state(study_id: str, read: Callable[[LiveDashboard, float, bool], T]) -> T:
    """Call ``read(state, seconds, changed)`` on the up-to-date state, under its lock.

    ``seconds`` is the time the build or refresh took; ``changed`` whether the
    store had changed since the last refresh.
    """
    db = get_db()
    shared = _shared(str(db_path()), study_id)
    with shared.lock:
        if shared.state is None:
            with st.spinner("Evaluating every run of the study (first load only)…"):
                shared.state = LiveDashboard.build(db, study_id)
            outcome = shared.state.last_refresh
        else:
            outcome = shared.state.refresh(db)
        return read(shared.state, outcome.seconds, outcome.changed)
