"""A label is bound to the item that was on screen (evalcore.annotation.item_token).

The write is checked twice: the token must be the one on screen for the
session, and no label event may have been recorded on the unit since it was
shown (checked inside the write transaction). A refused write leaves nothing.
"""

import threading

import pytest
from store_fixtures import new_store, table_snapshot

from evalcore.annotation.item_token import (
    ItemToken,
    OffScreenError,
    label_as_shown,
    show_item,
)
from evalcore.store.completeness import is_complete, mark_complete
from evalcore.store.connection import open_store
from evalcore.store.drafts import drafts, save_draft
from evalcore.store.labels import ItemChangedError, label_history, record_label
from evalcore.store.study_handle import open_study


@pytest.fixture
def db(tmp_path, store_target):
    return new_store(store_target)


def _show(db, unit, who="kim", query="q1", previous=None) -> ItemToken:
    return show_item(open_study(db, "s", None), query_id=query, unit_id=unit, annotator=who,
                     previous=previous)


def test_a_token_on_screen_and_unchanged_writes_the_label_on_its_own_query(db):
    record_label(db, study_id="s", query_id="q2", unit_id="A", gain=1, annotator="kim")
    token = _show(db, "A")
    outcome = label_as_shown(db, token, 3, on_screen=token, note="why")
    assert (outcome.event.query_id, outcome.event.unit_id, outcome.event.gain) == ("q1", "A", 3)
    assert outcome.event.note == "why" and not outcome.in_conflict and not outcome.reopened


def test_a_press_for_an_item_that_left_the_screen_writes_nothing(db):
    first = _show(db, "A")
    second = _show(db, "B", previous=first)
    assert second.showing == first.showing + 1
    before = table_snapshot(db)
    with pytest.raises(OffScreenError, match="A had left the screen"):
        label_as_shown(db, first, 2, on_screen=second)
    assert table_snapshot(db) == before


def test_the_same_item_in_the_same_state_keeps_its_showing_a_newer_state_gets_a_new_one(db):
    token = _show(db, "A")
    assert _show(db, "A", previous=token) is token
    record_label(db, study_id="s", query_id="q1", unit_id="A", gain=2, annotator="bob")
    newer = _show(db, "A", previous=token)
    assert newer.showing == token.showing + 1 and newer.seen_event > token.seen_event


def test_a_label_recorded_since_the_item_was_shown_refuses_the_write_and_names_it(db):
    token = _show(db, "A")
    record_label(db, study_id="s", query_id="q1", unit_id="A", gain=2, annotator="bob")
    before = table_snapshot(db)
    with pytest.raises(ItemChangedError) as refused:
        label_as_shown(db, token, 4, on_screen=token)
    assert [(e.annotator, e.gain) for e in refused.value.newer] == [("bob", 2)]
    assert "bob said 2" in str(refused.value)
    assert table_snapshot(db) == before
    # after seeing bob's label the annotator may still write theirs
    seen = token.model_copy(update={"seen_event": refused.value.newer[-1].event_id})
    outcome = label_as_shown(db, seen, 4, on_screen=seen)
    assert outcome.in_conflict and outcome.conflict_with == {"bob": 2}


def test_an_own_label_in_another_tab_also_counts_as_a_change(db):
    tab_a = _show(db, "A")
    tab_b = _show(db, "A")
    label_as_shown(db, tab_a, 2, on_screen=tab_a)
    with pytest.raises(ItemChangedError):
        label_as_shown(db, tab_b, 4, on_screen=tab_b)
    assert [e.gain for e in label_history(open_study(db, "s", None), "q1", "A")] == [2]


def test_the_seen_check_is_inside_the_write_transaction(tmp_path, store_target):
    """Two sessions that saw the same state: exactly one write lands, the other is refused."""
    new_store(store_target).conn.close()
    path = store_target  # new_store's file
    token = show_item(open_study(open_store(path), "s", None), query_id="q1", unit_id="A",
                      annotator="kim")
    results: list[str] = []
    barrier = threading.Barrier(4)

    def press(gain: int) -> None:
        db = open_store(path)
        barrier.wait()
        try:
            label_as_shown(db, token, gain, on_screen=token)
            results.append("written")
        except ItemChangedError:
            results.append("refused")

    threads = [threading.Thread(target=press, args=(g,)) for g in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["refused"] * 3 + ["written"]
    assert len(label_history(open_study(open_store(path), "s", None), "q1", "A")) == 1


def test_a_relevant_label_on_a_complete_query_says_it_reopened_it(db):
    record_label(db, study_id="s", query_id="q1", unit_id="A", gain=0, annotator="kim")
    mark_complete(db, study_id="s", query_id="q1", actor="kim", reason="done")
    token = _show(db, "Z")
    outcome = label_as_shown(db, token, 3, on_screen=None, check_screen=False)
    assert outcome.reopened and not is_complete(open_study(db, "s", None), "q1")


def test_a_label_clears_its_items_draft_but_a_refused_one_keeps_it(db):
    save_draft(db, study_id="s", query_id="q1", unit_id="A", annotator="kim",
               note="half outdated", skipped=True)
    token = _show(db, "A")
    record_label(db, study_id="s", query_id="q1", unit_id="A", gain=1, annotator="bob")
    with pytest.raises(ItemChangedError):
        label_as_shown(db, token, 2, on_screen=token, note="half outdated")
    assert drafts(open_study(db, "s", None), "q1", "kim")["A"].note == "half outdated"
    fresh = _show(db, "A", previous=token)
    label_as_shown(db, fresh, 2, on_screen=fresh, note="half outdated")
    assert drafts(open_study(db, "s", None), "q1", "kim") == {}


@pytest.mark.parametrize("failure", ["a statement the store refuses", "an exception in Python"])
def test_a_write_that_fails_after_its_event_was_sent_stores_nothing(db, failure):
    """The event (and the query's registration) were sent before the failure; on
    PostgreSQL they travel unread in the batch with the COMMIT, which never runs: the whole
    transaction is rolled back, and the connection writes the next label."""
    def fail() -> None:
        if failure == "an exception in Python":
            raise ValueError("the draft could not be cleared")
        db.execute("INSERT INTO no_such_table (x) VALUES (1)")

    before = table_snapshot(db)
    with pytest.raises(Exception) as raised:
        record_label(db, study_id="s", query_id="new-query", unit_id="A", gain=2,
                     annotator="kim", seen_event=0, also=fail)
    assert (type(raised.value) is ValueError) == (failure == "an exception in Python")
    assert table_snapshot(db) == before
    event = record_label(db, study_id="s", query_id="new-query", unit_id="A", gain=2,
                         annotator="kim", seen_event=0)
    assert [e.event_id for e in label_history(open_study(db, "s", None), "new-query")] == [
        event.event_id]


def test_a_membership_revoked_while_the_save_waits_for_the_lock_refuses_it(store_target):
    """The annotator passed the checks made before the write lock (a member then); the lead
    removes them in a transaction that holds the lock meanwhile; the save, once it gets the
    lock, reads the membership again and is refused, storing nothing (on PostgreSQL that
    read travels in the round trip that takes the lock)."""
    from access_fixtures import ANNOTATOR, LEAD, team_store

    from evalcore.access import PermissionDenied
    from evalcore.store.members import remove_member
    from evalcore.store.transaction import write_transaction

    db, _ = team_store(store_target)
    token = show_item(open_study(db, "s", ANNOTATOR), query_id="q1", unit_id="b2",
                      annotator=ANNOTATOR)
    before = table_snapshot(db)
    waiting = threading.Event()  # the save's first statement under the lock was issued
    db.conn.set_trace_callback(lambda sql: waiting.set() if sql.startswith(
        ("BEGIN IMMEDIATE", "SELECT EXISTS (SELECT 1 FROM queries")) else None)
    outcome: list[BaseException | None] = []

    def save() -> None:
        try:
            label_as_shown(db, token, 2, on_screen=token)
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - asserted below
            outcome.append(error)

    lead = open_store(store_target)
    with write_transaction(lead):
        assert remove_member(lead, study_id="s", user=ANNOTATOR, actor=LEAD)
        saver = threading.Thread(target=save)
        saver.start()
        assert waiting.wait(10)
    saver.join(30)
    lead.conn.close()
    db.conn.set_trace_callback(None)
    assert len(outcome) == 1 and isinstance(outcome[0], PermissionDenied)
    after = table_snapshot(db)
    for table in ("label_events", "queries", "completeness_events", "annotation_drafts"):
        assert after[table] == before[table]
