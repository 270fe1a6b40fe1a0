"""The annotate page, driven through AppTest on a small study.

q1's pool is d1..d4 (runs r1 and r2, k = 3); q2's pool is d5, d6.
"""

import pytest
from app_harness import grade_button, item_caption, keyed

from app.components.safe_text import escape_markdown
from evalcore.store.completeness import is_complete
from evalcore.store.resolution import resolve_query
from evalcore.store.study_handle import open_study

PAGE = "views/annotate.py"


def _shown_unit(at) -> str:
    """The unit id of the item on screen (from the caption 'item i of n · <unit> · ...')."""
    caption = item_caption(at)
    return caption.split(" · ")[1]


def _progress_texts(at) -> list[str]:
    return [p.proto.text for p in at.get("progress")]


def _mine(db, annotator: str, query: str = "q1") -> dict[str, int]:
    return {
        unit: label.annotators[annotator]
        for unit, label in resolve_query(open_study(db, "s1", None), query).items()
        if annotator in label.annotators
    }


def _grade(at, gain: int):
    grade_button(at, gain).click().run()
    assert not at.exception, at.exception
    return at


def _note(at):
    return keyed(at.text_input, "rl_note_")


def test_without_annotator_the_page_asks_for_a_name(small_store, new_app) -> None:
    at = new_app(page=PAGE)
    assert "Enter your name" in at.info[0].value
    assert not at.button


def test_label_by_button_is_persisted_and_advances(small_store, new_app) -> None:
    _, db = small_store
    at = new_app("ann", PAGE)
    first = _shown_unit(at)
    _grade(at, 2)
    assert _mine(db, "ann") == {first: 2}
    second = _shown_unit(at)
    assert second != first
    assert "This query: you labeled 1 of 4 pooled items" in _progress_texts(at)
    assert "Study: you labeled 1 of 6 pooled items" in _progress_texts(at)
    # the live metrics moved from missing_reference to unlabeled_returned
    chips = " ".join(m.value for m in at.markdown if "badge" in m.value)
    assert "no label at all" not in chips and "unlabeled results in the top k" in chips
    assert "\\_" not in chips  # plain words, never reason codes, on screen


def test_label_by_state_labels_the_item_the_cursor_is_on(small_store, new_app) -> None:
    from app.components.queue import WalkState

    _, db = small_store
    at = new_app("ann", PAGE)
    at.session_state["_rl_walks"] = {("s1", "ann", "q1"): WalkState(cursor="d4")}
    at.run()
    assert _shown_unit(at) == "d4"
    _grade(at, 4)
    assert _mine(db, "ann") == {"d4": 4}


def test_note_is_saved_with_the_label_then_cleared(small_store, new_app) -> None:
    _, db = small_store
    at = new_app("ann", PAGE)
    unit = _shown_unit(at)
    _note(at).set_value("half of it is outdated").run()
    _grade(at, 1)
    notes = [r[0] for r in db.execute(
        "SELECT note FROM label_events WHERE unit_id = ? AND annotator = 'ann'", [unit])]
    assert notes == ["half of it is outdated"]
    assert _note(at).value == ""
    at.button(key="previous").click().run()  # the note is shown with the label afterwards
    assert _shown_unit(at) == unit
    assert "your note: half of it is outdated" in item_caption(at)


def test_undo_cancels_the_last_label_and_returns_to_it(small_store, new_app) -> None:
    _, db = small_store
    at = new_app("ann", PAGE)
    first = _shown_unit(at)
    _grade(at, 3)
    second = _shown_unit(at)
    _grade(at, 0)
    assert _mine(db, "ann") == {first: 3, second: 0}
    at.button(key="undo").click().run()
    assert _mine(db, "ann") == {first: 3}
    assert _shown_unit(at) == second
    kinds = [r[0] for r in db.execute("SELECT kind FROM label_events ORDER BY event_id")]
    assert kinds == ["label", "label", "undo"]


def test_skip_and_cant_judge_leave_items_unlabeled(small_store, new_app) -> None:
    _, db = small_store
    at = new_app("ann", PAGE)
    first = _shown_unit(at)
    keyed(at.button, "skip_").click().run()
    second = _shown_unit(at)
    keyed(at.button, "cant_judge_").click().run()
    third = _shown_unit(at)
    assert len({first, second, third}) == 3
    assert _mine(db, "ann") == {}
    audit = db.execute("SELECT actor, action, detail_json FROM audit_log").fetchall()
    assert audit[0][:2] == ("ann", "cant_judge") and second in audit[0][2]


def test_mark_complete_refused_then_allowed(small_store, new_app) -> None:
    _, db = small_store
    at = new_app("ann", PAGE)
    button = at.button(key="mark_complete")
    assert button.disabled and "4 pooled items remain" in button.label
    for _ in range(3):
        _grade(at, 1)
    button = at.button(key="mark_complete")
    assert button.disabled and "1 pooled item remain" in button.label
    # the library refuses too, not only the disabled button
    from evalcore.annotation.progress import PoolNotFullyLabeledError, mark_pool_complete

    with pytest.raises(PoolNotFullyLabeledError, match="1 of 4 pooled units"):
        mark_pool_complete(db, study_id="s1", query_id="q1", actor="ann")
    _grade(at, 0)
    assert any("every pooled item" in s.value for s in at.success)
    button = at.button(key="mark_complete")
    assert not button.disabled and button.label == "Mark relevant set complete"
    button.click().run()
    assert is_complete(open_study(db, "s1", None), "q1")
    events = db.execute("SELECT state, actor FROM completeness_events").fetchall()
    assert events == [("complete", "ann")]
    # recall is now computable for r1: all of its top 3 are labeled and the set is complete
    chips = " ".join(m.value for m in at.markdown if "badge" in m.value)
    assert ":green-badge[R\\@3" in chips


def test_reopen_needs_a_reason_and_is_recorded(small_store, new_app) -> None:
    _, db = small_store
    at = new_app("ann", PAGE)
    for _ in range(4):
        _grade(at, 1)
    at.button(key="mark_complete").click().run()
    assert at.button(key="reopen").disabled
    at.text_input(key="reopen_reason_q1").set_value("found a newer article").run()
    at.button(key="reopen").click().run()
    assert not is_complete(open_study(db, "s1", None), "q1")
    events = db.execute("SELECT state, actor, reason FROM completeness_events").fetchall()
    assert events[-1] == ("reopened", "ann", "found a newer article")


def test_two_annotators_disagreeing_create_a_conflict(small_store, new_app) -> None:
    from app.components.queue import WalkState

    _, db = small_store
    alice = new_app("alice", PAGE)
    alice.session_state["_rl_walks"] = {("s1", "alice", "q1"): WalkState(cursor="d2")}
    alice.run()
    _grade(alice, 3)
    bob = new_app("bob", PAGE)
    bob.session_state["_rl_walks"] = {("s1", "bob", "q1"): WalkState(cursor="d2")}
    bob.run()
    _grade(bob, 0)
    resolved = resolve_query(open_study(db, "s1", None), "q1")["d2"]
    assert resolved.state == "conflict" and resolved.gain is None
    assert resolved.annotators == {"alice": 3, "bob": 0}
    assert "(1 in conflict)" in bob.button(key="mark_complete").label


def test_blind_order_differs_per_annotator_and_unblind_shows_ranks(small_store, new_app) -> None:
    orders = {}
    for who in ("ann", "zed", "kim"):
        at = new_app(who, PAGE)
        seen = []
        for _ in range(4):
            seen.append(_shown_unit(at))
            at.button(key="next").click().run()
        orders[who] = seen
        assert sorted(seen) == ["d1", "d2", "d3", "d4"]
    assert len({tuple(o) for o in orders.values()}) > 1
    at = new_app("ann", PAGE)
    assert "rank" not in item_caption(at)
    at.toggle(key="rl_unblind").set_value(True).run()
    caption = item_caption(at)
    assert "rank" in caption and (" in r1" in caption or " in r2" in caption)


def test_switching_query_keeps_the_annotator(small_store, new_app) -> None:
    at = new_app("ann", PAGE)
    at.selectbox(key="rl_query").set_value("q2").run()
    assert _shown_unit(at) in {"d5", "d6"}
    assert "This query: you labeled 0 of 2 pooled items" in _progress_texts(at)


def test_corpus_search_finds_and_labels_a_unit_no_run_returned(small_store, new_app) -> None:
    _, db = small_store
    at = new_app("ann", PAGE)
    at.text_input(key="rl_search").set_value("password part 7").run()
    assert not at.exception, at.exception
    found = [m.value for m in at.markdown if "Password" in m.value and "guide" in m.value]
    assert any("7" in f for f in found), found
    at.button(key="search_d7_3").click().run()
    assert _mine(db, "ann") == {"d7": 3}
    note = db.execute("SELECT note FROM label_events WHERE unit_id = 'd7'").fetchone()[0]
    assert note == "found by corpus search"
    # a label outside the pool does not move the pool's progress
    assert "This query: you labeled 0 of 4 pooled items" in _progress_texts(at)
    assert any("1 more labeled units found outside the pool" in c.value for c in at.caption)


def test_hostile_search_text_is_harmless(small_store, new_app) -> None:
    at = new_app("ann", PAGE)
    for text in ('"unbalanced', "NEAR(a b", "title:x OR *", "<script>alert(1)</script>", "\x00"):
        at.text_input(key="rl_search").set_value(text).run()
        assert not at.exception, (text, at.exception)


def test_a_locked_store_says_the_label_was_not_saved_and_stays_on_the_item(
    small_store, new_app
) -> None:
    import sqlite3

    import pytest

    import evalcore.store.labels as labels

    _, db = small_store
    at = new_app("ann", PAGE)
    unit = _shown_unit(at)

    def locked(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(labels, "record_label", locked)
        at.run()  # the buttons' callbacks are bound on the run that renders them
        _grade(at, 2)
        assert at.error[0].value == escape_markdown(
            f"Key 2 not saved on {unit} (press the key again): database is locked")
        assert _shown_unit(at) == unit
    at.run()
    _grade(at, 2)
    assert _mine(db, "ann") == {unit: 2}


def test_cant_judge_items_come_last_in_a_later_session(small_store, new_app) -> None:
    at = new_app("ann", PAGE)
    first = _shown_unit(at)
    keyed(at.button, "cant_judge_").click().run()
    later = new_app("ann", PAGE)  # a new session of the same annotator
    assert _shown_unit(later) != first
    for _ in range(3):
        _grade(later, 1)
    assert _shown_unit(later) == first  # offered again once nothing else is left


def test_the_chosen_query_survives_a_visit_to_another_page(small_store, new_app) -> None:
    at = new_app("ann", PAGE)
    at.selectbox(key="rl_query").set_value("q2").run()
    at.toggle(key="rl_unblind").set_value(True).run()
    at.switch_page("views/home.py").run()
    at.switch_page(PAGE).run()
    assert at.selectbox(key="rl_query").value == "q2"
    assert at.toggle(key="rl_unblind").value is True
    assert _shown_unit(at) in {"d5", "d6"}


def test_a_label_that_creates_a_conflict_says_so_where_it_was_given(small_store, new_app) -> None:
    from app.components.queue import WalkState

    alice = new_app("alice", PAGE)
    alice.session_state["_rl_walks"] = {("s1", "alice", "q1"): WalkState(cursor="d2")}
    alice.run()
    _grade(alice, 2)
    assert not [w for w in alice.warning if "conflict" in w.value]
    bob = new_app("bob", PAGE)
    bob.session_state["_rl_walks"] = {("s1", "bob", "q1"): WalkState(cursor="d2")}
    bob.run()
    _grade(bob, 0)
    said = " ".join(w.value for w in bob.warning)
    assert escape_markdown("alice said 2; you said 0: d2 is now in conflict and needs a "
                           "reviewer") in said, said
    progress = " ".join(_progress_texts(bob))
    assert "(1 in conflict between annotators)" in progress


def test_a_relevant_search_label_that_reopens_a_complete_query_says_why(small_store,
                                                                       new_app) -> None:
    _, db = small_store
    at = new_app("ann", PAGE)
    for _ in range(4):
        _grade(at, 0)
    at.button(key="mark_complete").click().run()
    assert is_complete(open_study(db, "s1", None), "q1")
    at.text_input(key="rl_search").set_value("password part 7").run()
    hit = [c.value for c in at.caption if c.value.startswith("d7")]
    assert hit == [escape_markdown("d7 · not in the pool · not labeled by you")], hit
    at.button(key="search_d7_3").click().run()
    assert not is_complete(open_study(db, "s1", None), "q1")
    said = " ".join(w.value for w in at.warning)
    assert "reopened it" in said and "was not complete" in said, said
    assert escape_markdown("d7 · not in the pool · your label: 3 (highly relevant)") in [
        c.value for c in at.caption]


def test_search_hits_show_a_snippet_with_the_terms_highlighted(small_store, new_app) -> None:
    at = new_app("ann", PAGE)
    at.text_input(key="rl_search").set_value("reset").run()
    snippets = [m.value for m in at.markdown if "part" in m.value and "How to" in m.value]
    assert snippets and all(":orange-background[**reset**]" in s for s in snippets), snippets


def test_a_stale_selector_entry_of_the_open_query_never_switches_query() -> None:
    """The browser sends the entry text; one sent before a label holds old counts."""
    from app.components.queue import picked_query, query_option
    from evalcore.annotation.progress import QueryProgress

    def progress(qid: str, mine: int) -> QueryProgress:
        return QueryProgress(query_id=qid, pooled=10, labeled=mine, conflicts=0, mine=mine,
                             outside_pool=0, complete=False)

    ids = ["q01", "q1", "q13"]
    stale = query_option("q13", progress("q13", 2), "webhook signature verify")
    assert stale == "q13 · you 2/10 · webhook signature verify"
    assert picked_query(stale, ids) == "q13"  # not ids[0]
    assert picked_query("q1 · you 0/10 · x", ids) == "q1"
    assert picked_query("q13", ids) == "q13"
    assert picked_query("nonsense", ids) is None


def test_a_note_over_the_limit_is_refused_with_the_label_and_nothing_is_saved(
        small_store, new_app) -> None:
    _, db = small_store
    at = new_app("ann", PAGE)
    unit = _shown_unit(at)
    _note(at).set_value("x" * 2_500).run()
    assert any("2,500 characters" in e.value for e in at.error), [e.value for e in at.error]
    _grade(at, 2)
    assert db.execute("SELECT count(*) FROM label_events").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM annotation_drafts").fetchone()[0] == 0
    said = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "Key 2 not saved" in said and "2,500" in said and unit in said, said
    assert _shown_unit(at) == unit  # the item stays: shorten the note, press again
    _note(at).set_value("x" * 2_000).run()
    _grade(at, 2)
    assert [r[0] for r in db.execute("SELECT length(note) FROM label_events")] == [2_000]
