"""A study's packed evidence against one reference, read once per store state and shared.

:func:`shared_evidence` is the one object the dashboard, the Compare page, reports and the
command line pack every stored run from. It is kept per store, study and reference under
the store's marks it was read at (:class:`~evalcore.store.marks.StoreMarks`) and read
again once they move, so every reader sees the store as it is now. It is reached through
a study handle only (the actor's read was checked when it was opened) and holds no
connection and no actor; a store in memory is read every time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from evalcore.store.marks import StoreMarks, current_marks
from evalcore.store.observations import StudyEvidence, study_evidence
from evalcore.store.store_identity import store_place
from evalcore.store.study_handle import Study

#: How many (store, study, reference) evidences are kept, the least recently used dropped
#: first.
KEPT = 6

_lock = threading.Lock()
_kept: OrderedDict[tuple[str, str, str | None], StudyEvidence] = OrderedDict()


def shared_evidence(study: Study, reference: str | None = None, *,
                    marks: StoreMarks | None = None) -> StudyEvidence:
    """The study's evidence against the working reference (``reference`` None) or the frozen
    version ``reference`` at the store's marks now: the one kept when read at these marks,
    else read (and kept when the store did not move meanwhile). ``marks``: the store's marks
    the caller has just read (not read again)."""
    # Where the store is kept: the same store through any connection; None in memory.
    store = store_place(study.db)
    if store is None:  # a store in memory: nothing outlives its connection to key it by
        return study_evidence(study, reference)
    key = (store, study.study_id, reference)
    marks = current_marks(study) if marks is None else marks
    with _lock:
        kept = _kept.get(key)
        if kept is not None and kept.marks == marks:
            _kept.move_to_end(key)
            return kept
    read = study_evidence(study, reference, marks=marks)
    if read.marks is not None:
        with _lock:
            _kept[key] = read
            _kept.move_to_end(key)
            while len(_kept) > KEPT:
                _kept.popitem(last=False)
    return read

