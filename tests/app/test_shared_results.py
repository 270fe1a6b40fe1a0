"""Study-wide results are computed once per state of the store and shared by sessions."""

import pytest
from store_fixtures import new_store

from app.components import shared_results
from app.components.shared_results import shared_result
from evalcore.store.labels import record_label
from evalcore.store.study_handle import open_study


def test_a_result_is_reused_until_the_store_marks_move(tmp_path, store_target):
    db = new_store(store_target)
    study = open_study(db, "s", None)
    calls = []

    def compute():
        calls.append(1)
        return {"value": len(calls)}

    first = shared_result(study, ("agreement",), compute)
    again = shared_result(study, ("agreement",), compute)
    assert again is first and len(calls) == 1
    # Another key (other page choices) is its own entry.
    other = shared_result(study, ("compare", "bm25", "dense"), compute)
    assert other is not first and len(calls) == 2
    # A label moves the marks: the next read recomputes.
    record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=2, annotator="ann")
    fresh = shared_result(study, ("agreement",), compute)
    assert fresh is not first and fresh["value"] == 3


def test_the_shared_cache_is_bounded(tmp_path, store_target):
    """The least recently used results are dropped beyond MAX_ENTRIES: the first is computed
    again, the latest is not."""
    db = new_store(store_target)
    study = open_study(db, "s", None)
    computed = []

    def result(i):
        return shared_result(study, ("k", i), lambda: computed.append(i) or i)

    for i in range(shared_results.MAX_ENTRIES + 10):
        result(i)
    result(shared_results.MAX_ENTRIES + 9)
    assert computed.count(shared_results.MAX_ENTRIES + 9) == 1
    result(0)
    assert computed.count(0) == 2


def test_a_shared_result_is_handed_only_to_a_viewer_who_may_read_the_study(tmp_path, store_target):
    """The computation is shared across sessions; the authorization is not: a result is
    reached only through a handle on its study, which a stranger (or nobody) cannot open,
    and a handle on another study finds nothing of it."""
    from access_fixtures import ANNOTATOR, OUTSIDER, team_store

    from evalcore.access.decisions import PermissionDenied

    db, _ = team_store(store_target)
    member = open_study(db, "s", ANNOTATOR)
    secret = shared_result(member, ("agreement",), lambda: {"kappa": 0.42})
    for stranger in (OUTSIDER, None):
        with pytest.raises(PermissionDenied):
            open_study(db, "s", stranger)
    elsewhere = open_study(db, "g", OUTSIDER)  # the stranger's own study
    assert shared_results.ready_result(elsewhere, ("agreement",)) is None
    assert shared_result(elsewhere, ("agreement",), lambda: {"kappa": -1}) == {"kappa": -1}
    assert shared_results.ready_result(member, ("agreement",)) is secret


def test_results_kept_alone_do_not_push_out_the_others(tmp_path, store_target):
    """Large results (``alone``) have their own cache of ALONE_KEPT: two sessions comparing
    different choices keep both; a third choice forgets the least recently used; the other
    results stay whatever the large ones do."""
    db = new_store(store_target)
    study = open_study(db, "s", None)
    computed = []
    kept = shared_result(study, ("agreement",), lambda: ["kept"])

    def pair(*choice):
        return shared_result(study, ("pair", *choice),
                             lambda: computed.append(choice) or list(choice),
                             alone=True)

    assert shared_results.ALONE_KEPT == 2
    pair("a", "b"), pair("a", "c"), pair("a", "b"), pair("a", "c")
    assert computed == [("a", "b"), ("a", "c")]
    assert shared_results.ready_result(study, ("pair", "a", "b"),
                                       alone=True) == ["a", "b"]  # now the most recently used
    pair("b", "c")  # forgets ("a", "c")
    pair("a", "b")
    assert computed == [("a", "b"), ("a", "c"), ("b", "c")]
    pair("a", "c")
    assert computed[-1] == ("a", "c")
    assert shared_result(study, ("agreement",), lambda: ["again"]) is kept
    record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=2, annotator="ann")
    assert shared_results.ready_result(study, ("pair", "a", "c"),
                                       alone=True) is None  # new marks: not computed yet
    pair("a", "c")
    assert computed[-1] == ("a", "c") and len(computed) == 5


def test_a_second_session_waits_for_the_computation_under_way(tmp_path, monkeypatch, store_target):
    """Two sessions asking for one result at once compute it once; a background computation
    is started once per marks, and again after it failed."""
    import threading
    import time

    db = new_store(store_target)
    study = open_study(db, "s", None)
    computed, release = [], threading.Event()

    def slow():
        computed.append(1)
        release.wait(30)
        return "done"

    first = threading.Thread(target=lambda: shared_result(study, ("once",), slow))
    first.start()
    while not computed:
        time.sleep(0.01)
    release.set()
    assert shared_result(study, ("once",), slow) == "done"
    first.join(30)
    assert computed == [1]

    failed = []  # the threads' uncaught errors, each once its thread has ended
    monkeypatch.setattr(threading, "excepthook", lambda args: failed.append(args.exc_value))

    def failing(own):
        raise RuntimeError("once")

    for expected in (1, 2):
        shared_results.compute_in_background(study, ("bg",), failing)
        deadline = time.monotonic() + 30
        while len(failed) < expected and time.monotonic() < deadline:
            time.sleep(0.01)
    assert [str(error) for error in failed] == ["once", "once"]
