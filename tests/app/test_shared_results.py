"""Study-wide results are computed once per state of the store and shared by sessions."""

from store_fixtures import new_store

from app.components import shared_results
from app.components.shared_results import shared_result
from evalcore.store.labels import record_label


def test_a_result_is_reused_until_the_store_marks_move(tmp_path):
    db = new_store(tmp_path)
    path = str(tmp_path / "store.db")
    calls = []

    def compute():
        calls.append(1)
        return {"value": len(calls)}

    first = shared_result(db, path, "s", ("agreement",), compute, viewer=None)
    again = shared_result(db, path, "s", ("agreement",), compute, viewer=None)
    assert again is first and len(calls) == 1
    # Another key (other page choices) is its own entry.
    other = shared_result(db, path, "s", ("compare", "bm25", "dense"), compute, viewer=None)
    assert other is not first and len(calls) == 2
    # A label moves the marks: the next read recomputes.
    record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=2, annotator="ann")
    fresh = shared_result(db, path, "s", ("agreement",), compute, viewer=None)
    assert fresh is not first and fresh["value"] == 3


def test_the_shared_cache_is_bounded(tmp_path):
    db = new_store(tmp_path)
    path = str(tmp_path / "bounded.db")
    for i in range(shared_results.MAX_ENTRIES + 10):
        shared_result(db, path, "s", ("k", i), lambda i=i: i, viewer=None)
    assert len(shared_results._results(path).entries) == shared_results.MAX_ENTRIES


def test_a_shared_result_is_handed_only_to_a_viewer_who_may_read_the_study(tmp_path):
    """The computation is shared across sessions; the authorization is per call: a result a
    member's session computed is refused to a stranger's session (and to nobody)."""
    import pytest
    from access_fixtures import ANNOTATOR, OUTSIDER, team_store

    from evalcore.access.decisions import PermissionDenied

    db, _ = team_store(tmp_path)
    path = str(tmp_path / "store.db")
    secret = shared_result(db, path, "s", ("agreement",), lambda: {"kappa": 0.42},
                           viewer=ANNOTATOR)
    for stranger in (OUTSIDER, None):
        with pytest.raises(PermissionDenied):
            shared_result(db, path, "s", ("agreement",), lambda: {"kappa": -1}, viewer=stranger)
        with pytest.raises(PermissionDenied):
            shared_results.ready_result(db, path, "s", ("agreement",), viewer=stranger)
        with pytest.raises(PermissionDenied):
            shared_results.compute_in_background(db, path, "s", ("other",), lambda conn: 1,
                                                 viewer=stranger)
    assert shared_results.ready_result(db, path, "s", ("agreement",), viewer=ANNOTATOR) is secret


def test_a_result_kept_alone_replaces_the_studys_others_of_its_kind(tmp_path):
    """A large result (``alone``) is kept once per study and kind: another choice or new
    marks replace it; other kinds keep theirs."""
    db = new_store(tmp_path)
    path = str(tmp_path / "alone.db")
    shared_result(db, path, "s", ("agreement",), lambda: "kept", viewer=None)
    first = shared_result(db, path, "s", ("pair", "a", "b"), lambda: ["ab"], viewer=None,
                          alone=True)
    assert shared_result(db, path, "s", ("pair", "a", "b"), lambda: ["again"], viewer=None,
                         alone=True) is first
    shared_result(db, path, "s", ("pair", "a", "c"), lambda: ["ac"], viewer=None, alone=True)
    record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=2, annotator="ann")
    shared_result(db, path, "s", ("pair", "a", "c"), lambda: ["ac, new marks"], viewer=None,
                  alone=True)
    kept = sorted((k[0], k[1], v if isinstance(v, str) else v[0])
                  for k, v in shared_results._results(path).entries.items())
    assert kept == [("s", ("agreement",), "kept"), ("s", ("pair", "a", "c"), "ac, new marks")]


def test_results_kept_alone_serve_two_choices_at_once(tmp_path, monkeypatch):
    """Two sessions comparing different choices keep both results (no recomputing each
    other's away); a third choice forgets the least recently used one; new marks forget all."""
    monkeypatch.setattr(shared_results, "ALONE_KEPT", 2)
    db = new_store(tmp_path)
    path = str(tmp_path / "alone2.db")
    computed = []

    def pair(*choice):
        return shared_result(db, path, "s", ("pair", *choice),
                             lambda: computed.append(choice) or list(choice), viewer=None,
                             alone=True)

    pair("a", "b"), pair("a", "c"), pair("a", "b"), pair("a", "c")
    assert computed == [("a", "b"), ("a", "c")]
    pair("a", "b")  # now the most recently used
    pair("b", "c")  # forgets ("a", "c")
    pair("a", "b")
    assert computed == [("a", "b"), ("a", "c"), ("b", "c")]
    pair("a", "c")
    assert computed[-1] == ("a", "c")
    record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=2, annotator="ann")
    pair("a", "b")
    kept = [k[1] for k in shared_results._results(path).entries]
    assert kept == [("pair", "a", "b")]


def test_a_result_is_computed_with_the_collector_paused_then_resumed(tmp_path):
    import gc
    import time

    db = new_store(tmp_path)
    path = str(tmp_path / "paused.db")
    assert gc.isenabled()
    seen = shared_result(db, path, "s", ("paused",), gc.isenabled, viewer=None)
    assert seen is False and gc.isenabled()
    background: list[bool] = []
    shared_results.compute_in_background(db, path, "s", ("paused", "bg"),
                                         lambda conn: background.append(gc.isenabled()),
                                         viewer=None)
    deadline = time.monotonic() + 30
    while not background and time.monotonic() < deadline:
        time.sleep(0.01)
    assert background == [False]
    while shared_results._results(path).running and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gc.isenabled()
