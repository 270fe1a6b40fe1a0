"""Label events, resolution, adjudication, undo, completeness and auto-reopen."""



import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import new_store

from evalcore.store.completeness import (
    completeness_history,
    completeness_states,
    is_complete,
    mark_complete,
    reopen,
)
from evalcore.store.dialect import integrity_errors
from evalcore.store.labels import adjudicate, label_history, record_label, undo_last_label
from evalcore.store.resolution import (
    conflicts,
    resolve_query,
    resolve_study,
    resolve_unit_in_store,
    resolved_gains,
)
from evalcore.store.studies import StudyNotFoundError
from evalcore.store.study_handle import open_study


@pytest.fixture
def db(tmp_path, store_target):
    return new_store(store_target)


def lab(db, unit, gain, who, query="q1"):
    return record_label(db, study_id="s", query_id=query, unit_id=unit, gain=gain, annotator=who)


def test_single_annotator_latest_label_stands(db):
    lab(db, "A", 1, "ann")
    lab(db, "A", 3, "ann")
    r = resolve_query(open_study(db, "s", None), "q1")["A"]
    assert (r.gain, r.state, r.annotators) == (3, "labeled", {"ann": 3})
    assert [e.gain for e in label_history(open_study(db, "s", None), "q1", "A")] == [1, 3]


@pytest.mark.parametrize("gain", [-1, 5, 2.5, "3", True, None])
def test_invalid_gain_refused_and_nothing_written(db, gain):
    with pytest.raises(ValueError, match="0..4"):
        lab(db, "A", gain, "ann")
    assert label_history(open_study(db, "s", None), "q1") == []


def test_empty_annotator_refused(db):
    with pytest.raises(ValueError, match="annotator"):
        lab(db, "A", 1, " ")


def test_unknown_study_refused(db):
    with pytest.raises(StudyNotFoundError, match="known studies: s"):
        record_label(db, study_id="zz", query_id="q", unit_id="A", gain=1, annotator="a")


def test_agreeing_annotators_are_labeled(db):
    lab(db, "A", 2, "a")
    lab(db, "A", 2, "b")
    r = resolve_query(open_study(db, "s", None), "q1")["A"]
    assert (r.gain, r.state) == (2, "labeled")


def test_disagreement_is_conflict_and_unlabeled(db):
    lab(db, "A", 0, "a")
    lab(db, "A", 2, "b")
    lab(db, "B", 1, "a")
    r = resolve_query(open_study(db, "s", None), "q1")["A"]
    assert (r.gain, r.state, r.annotators) == (None, "conflict", {"a": 0, "b": 2})
    assert resolved_gains(open_study(db, "s", None)) == {"q1": {"B": 1}}
    assert [c.unit_id for c in conflicts(open_study(db, "s", None))["q1"]] == ["A"]


def test_adjudication_settles_then_newer_disagreeing_label_reopens_conflict(db):
    lab(db, "A", 0, "a")
    lab(db, "A", 2, "b")
    adjudicate(db, study_id="s", query_id="q1", unit_id="A", gain=1, reviewer="rev")
    r = resolve_query(open_study(db, "s", None), "q1")["A"]
    assert (r.gain, r.state, r.reviewer) == (1, "adjudicated", "rev")
    # A newer label that agrees with the adjudication keeps it standing.
    lab(db, "A", 1, "c")
    assert resolve_query(open_study(db, "s", None), "q1")["A"].state == "adjudicated"
    # A newer label that disagrees re-opens the conflict.
    lab(db, "A", 3, "a")
    r = resolve_query(open_study(db, "s", None), "q1")["A"]
    assert (r.gain, r.state) == (None, "conflict")
    # Undoing it lets the adjudication stand again.
    undo_last_label(db, study_id="s", query_id="q1", annotator="a")
    assert resolve_query(open_study(db, "s", None), "q1")["A"].gain == 1
    # A newer adjudication settles it again.
    lab(db, "A", 4, "b")
    adjudicate(db, study_id="s", query_id="q1", unit_id="A", gain=4, reviewer="rev2")
    r = resolve_query(open_study(db, "s", None), "q1")["A"]
    assert (r.gain, r.state, r.reviewer) == (4, "adjudicated", "rev2")


def test_adjudication_without_any_label(db):
    adjudicate(db, study_id="s", query_id="q1", unit_id="A", gain=0, reviewer="rev")
    assert resolved_gains(open_study(db, "s", None)) == {"q1": {"A": 0}}


def test_undo_pops_in_reverse_order_across_units(db):
    lab(db, "A", 1, "a")
    lab(db, "B", 2, "a")
    lab(db, "A", 3, "a")
    lab(db, "A", 0, "b")
    u = undo_last_label(db, study_id="s", query_id="q1", annotator="a")
    assert (u.kind, u.unit_id, u.gain) == ("undo", "A", None)
    assert resolve_query(open_study(db, "s", None), "q1")["A"].annotators == {"a": 1, "b": 0}
    assert undo_last_label(db, study_id="s", query_id="q1", annotator="a").unit_id == "B"
    assert "B" not in resolve_query(open_study(db, "s", None), "q1")
    assert undo_last_label(db, study_id="s", query_id="q1", annotator="a").unit_id == "A"
    assert resolve_query(open_study(db, "s", None), "q1")["A"].annotators == {"b": 0}
    assert undo_last_label(db, study_id="s", query_id="q1", annotator="a") is None
    # Undo is itself an event: the history keeps everything.
    assert len(label_history(open_study(db, "s", None), "q1")) == 7


def test_label_events_are_append_only(db):
    lab(db, "A", 1, "a")
    with pytest.raises(integrity_errors(), match="append-only"):
        db.execute("UPDATE label_events SET gain = 2")
    with pytest.raises(integrity_errors(), match="append-only"):
        db.execute("DELETE FROM label_events")
    mark_complete(db, study_id="s", query_id="q1", actor="lead")
    with pytest.raises(integrity_errors(), match="append-only"):
        db.execute("DELETE FROM completeness_events")


def test_completeness_claims(db):
    assert not is_complete(open_study(db, "s", None), "q1")
    first = mark_complete(db, study_id="s", query_id="q1", actor="lead", reason="pooled to 100")
    assert first is not None and is_complete(open_study(db, "s", None), "q1")
    assert mark_complete(db, study_id="s", query_id="q1", actor="lead") is None
    with pytest.raises(ValueError, match="reason"):
        reopen(db, study_id="s", query_id="q1", actor="lead", reason="")
    assert reopen(db, study_id="s", query_id="q1", actor="lead", reason="new docs") is not None
    assert reopen(db, study_id="s", query_id="q1", actor="lead", reason="again") is None
    assert [e.state for e in completeness_history(open_study(db, "s", None), "q1")] == ["complete", "reopened"]
    lab(db, "A", 0, "a", query="q2")
    assert completeness_states(open_study(db, "s", None)) == {"q1": False, "q2": False}


def test_new_relevant_label_reopens_complete_query_in_same_transaction(db):
    lab(db, "A", 2, "a")
    lab(db, "B", 0, "a")
    mark_complete(db, study_id="s", query_id="q1", actor="lead")
    # Non-relevant label: the claim holds.
    lab(db, "C", 0, "b")
    assert is_complete(open_study(db, "s", None), "q1")
    # Relevant label on a unit already relevant: the claim holds.
    lab(db, "A", 3, "b")
    assert is_complete(open_study(db, "s", None), "q1")
    # Relevant label on a unit that was non-relevant: a counterexample.
    event = lab(db, "B", 1, "b")
    assert not is_complete(open_study(db, "s", None), "q1")
    last = completeness_history(open_study(db, "s", None), "q1")[-1]
    assert last.state == "reopened"
    assert last.reason == "new relevant label on B by b"
    assert last.actor == "b"
    assert last.event_id > 0 and event.event_id > 0
    # Already reopened: a further relevant label appends nothing.
    lab(db, "D", 4, "b")
    assert len(completeness_history(open_study(db, "s", None), "q1")) == 2


def test_reopen_respects_study_threshold(tmp_path, store_target):
    db = new_store(store_target, relevance_threshold=2)
    mark_complete(db, study_id="s", query_id="q1", actor="lead")
    lab(db, "A", 1, "a")
    assert is_complete(open_study(db, "s", None), "q1")
    lab(db, "A", 2, "a")
    assert not is_complete(open_study(db, "s", None), "q1")


def test_relevant_adjudication_reopens_complete_query(db):
    lab(db, "A", 0, "a")
    lab(db, "A", 2, "b")
    mark_complete(db, study_id="s", query_id="q1", actor="lead")
    adjudicate(db, study_id="s", query_id="q1", unit_id="A", gain=2, reviewer="rev")
    assert not is_complete(open_study(db, "s", None), "q1")


def test_resolve_study_matches_per_query_resolution(db):
    for q in ("q1", "q2", "q3"):
        lab(db, "A", 1, "a", query=q)
        lab(db, "B", 2, "a", query=q)
        lab(db, "B", 3, "b", query=q)
    whole = resolve_study(open_study(db, "s", None))
    assert whole == {q: resolve_query(open_study(db, "s", None), q) for q in ("q1", "q2", "q3")}
    assert resolve_study(open_study(db, "s", None), ["q2"]) == {"q2": whole["q2"]}


# --- property: the fast whole-study paths agree with event-by-event replay ------------------

actions = st.lists(
    st.tuples(
        st.sampled_from(["label", "label", "label", "undo", "adjudicate"]),
        st.sampled_from(["q1", "q2"]),
        st.sampled_from(["A", "B", "C"]),
        st.integers(0, 4),
        st.sampled_from(["a", "b", "c"]),
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=actions)
def test_property_fast_resolution_equals_replay(tmp_path_factory, steps):
    db = new_store(tmp_path_factory.mktemp("r"))
    for kind, q, u, g, who in steps:
        if kind == "label":
            record_label(db, study_id="s", query_id=q, unit_id=u, gain=g, annotator=who)
        elif kind == "undo":
            undo_last_label(db, study_id="s", query_id=q, annotator=who)
        else:
            adjudicate(db, study_id="s", query_id=q, unit_id=u, gain=g, reviewer="rev")
    replayed = {}
    for q in ("q1", "q2"):
        for u in ("A", "B", "C"):
            r = resolve_unit_in_store(open_study(db, "s", None), q, u)
            if r is not None:
                replayed.setdefault(q, {})[u] = r
    assert resolve_study(open_study(db, "s", None)) == replayed
    assert {q: resolve_query(open_study(db, "s", None), q) for q in replayed} == replayed
    gains = {q: {u: r.gain for u, r in units.items() if r.gain is not None}
             for q, units in replayed.items()}
    gains = {q: units for q, units in gains.items() if units}
    assert resolved_gains(open_study(db, "s", None)) == gains
    assert resolved_gains(open_study(db, "s", None), ["q1", "q2"]) == gains
    with_conflicts = {q: {u: r.conflict_gains if r.gain is None else r.gain
                          for u, r in units.items()} for q, units in replayed.items()}
    assert resolved_gains(open_study(db, "s", None), conflicts=True) == with_conflicts
    assert resolved_gains(open_study(db, "s", None), ["q1", "q2"], conflicts=True) == with_conflicts
