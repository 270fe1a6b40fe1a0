"""Each page checks the read permission a fixed number of times per script run.

A page opens one read handle per script run (``study_page``: its opening is the page's
check; a fragment that reruns on its own opens its own) and passes it to every read, the shared
caches included: a read that checked again, per query, per run or per conflict card, shows
here as a count above the page's.
"""

import sys

import pytest

import evalcore.store.authorize as authorize_module
from evalcore.store.labels import record_label

#: Checks (calls of ``authorize``) per run of each page on the small study with a conflict:
#: the page's handle, and Annotate's work area's own (it opens its handle in every run). The
#: dashboard's live panels use the page's handle when the whole page runs (they open their own
#: only when they rerun on their own).
CHECKS = {
    "home": 1,
    "data": 1,
    "annotate": 2,
    "compare": 1,
    "agreement": 1,
    "inspector": 1,
    "reports": 1,
    "dashboard": 1,
}


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of ``authorize`` calls since the last reset (every module that imported it)."""
    calls = [0]
    real = authorize_module.authorize

    def counting(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    for module in list(sys.modules.values()):
        if getattr(module, "authorize", None) is real:
            monkeypatch.setattr(module, "authorize", counting)
    return calls


@pytest.mark.parametrize("page", list(CHECKS))
def test_a_page_run_checks_the_read_once(small_store, new_app, counted, page: str) -> None:
    _, db = small_store
    for unit, (alice, bob) in {"d1": (2, 2), "d2": (0, 3), "d4": (3, 1)}.items():
        record_label(db, study_id="s1", query_id="q1", unit_id=unit, gain=alice, annotator="alice")
        record_label(db, study_id="s1", query_id="q1", unit_id=unit, gain=bob, annotator="bob")
    at = new_app(annotator="alice", page=f"views/{page}.py")
    counted[0] = 0
    at.run()
    assert not at.exception, at.exception
    assert counted[0] == CHECKS[page], (page, counted[0])
