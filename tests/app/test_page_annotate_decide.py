"""The annotate page's "to decide A vs B" queue on the demo study (issue 14 item 3).

The address ``?queue=decide&run_a=A&run_b=B&measure=M`` opens the queue; its
items come in the library's order, every label lands on the item shown, and
the verdict panel follows each label without leaving the page.
"""

from pathlib import Path

import pytest
from app_harness import ENTRY, grade_button, item_caption
from store_fixtures import built_demo, shallow_demo_runs
from streamlit.testing.v1 import AppTest

from evalcore.demo.corpus import demo_documents
from evalcore.demo.study import DEMO_STUDY_ID, RUN_PROTOCOLS, simulated_gain
from evalcore.live.decide_state import decide_state, decide_target
from evalcore.store.connection import open_store
from evalcore.store.resolution import resolve_unit_in_store
from evalcore.store.study_handle import open_study

ANNOTATE = "views/annotate.py"
RUN_A, RUN_B = RUN_PROTOCOLS
DOCS = {d.doc_id: d for d in demo_documents()}


@pytest.fixture
def demo_store(built_store_target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the demo store that the app under test opens."""
    path = built_store_target("demo", built_demo, "ledger.sqlite")
    monkeypatch.setenv("RELEVANCE_LEDGER_DB", str(path))
    return path


def _open(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(ENTRY, default_timeout=60)
    at.query_params.update({"annotator": "lead", **params})
    at.run()
    at.switch_page(ANNOTATE).run()
    assert not at.exception, at.exception
    return at


def _decide(measure: str, **extra: str) -> AppTest:
    return _open({"queue": "decide", "run_a": RUN_A, "run_b": RUN_B, "measure": measure, **extra})


def _text(elements) -> str:
    return " ".join(e.value for e in elements).replace("\\", "")


def _shown(at: AppTest) -> tuple[str, str]:
    """(query, unit) of the item on screen."""
    heading = next(m.value for m in at.markdown if m.value.startswith("#### "))
    query = heading[5:].replace("\\", "").split(":")[0]
    return query, item_caption(at).split(" · ")[1]


def _param(at: AppTest, name: str) -> str | None:
    value = at.query_params.get(name)
    return value[-1] if isinstance(value, list) else value


def _state(path: Path, measure: str):
    db = open_store(path)
    try:
        return decide_state(open_study(db, DEMO_STUDY_ID, None), decide_target(open_study(db, DEMO_STUDY_ID, None), RUN_A, RUN_B, measure))
    finally:
        db.conn.close()


def _interval(state) -> str:
    d = state.decision
    return f"[{d.lower:+.4f}, {d.upper:+.4f}]"


def test_the_queue_follows_the_library_order_and_each_label_lands_on_the_item_shown(
        demo_store: Path) -> None:
    at = _decide("P@10")
    db = open_store(demo_store)
    for _ in range(4):
        state = _state(demo_store, "P@10")
        head = state.items[0]
        assert _shown(at) == (head.query_id, head.unit_id)
        assert _interval(state) in _text(at.markdown)
        gain = simulated_gain(head.query_id, DOCS[head.unit_id])
        grade_button(at, gain).click().run()
        assert not at.exception, at.exception
        label = resolve_unit_in_store(open_study(db, DEMO_STUDY_ID, None), head.query_id, head.unit_id)
        assert label is not None and label.annotators.get("lead") == gain
    assert _param(at, "queue") == "decide" and _param(at, "measure") == "P@10"
    assert _param(at, "query") is None


def test_the_verdict_panel_follows_each_label_until_decided_then_offers_the_next_measure(
        demo_store: Path) -> None:
    at = _decide("RR@10")
    panel = _text(at.markdown)
    assert "RR@10: undecided" in panel
    assert _interval(_state(demo_store, "RR@10")) == "[+0.0000, +0.0400]" and "[+0.0000, +0.0400]" in panel
    assert "about 2 labels still needed (an estimate)" in panel  # it takes 2, below
    seen = []
    for _ in range(10):
        state = _state(demo_store, "RR@10")
        if state.decision.verdict != "undecided":
            break
        query, unit = _shown(at)
        grade_button(at, simulated_gain(query, DOCS[unit])).click().run()
        assert not at.exception, at.exception
        after = _state(demo_store, "RR@10")
        if after.decision.verdict == "undecided":
            assert _interval(after) in _text(at.markdown)  # the new interval, same page
        seen.append(unit)
    assert seen[:2] == ["kb-hostile", "kb-0015"], seen
    assert "RR@10: tied" in _text(at.markdown)
    assert "RR@10 is decided: tied" in _text(at.success)
    following = _state(demo_store, "RR@10").next_undecided()
    assert following is not None
    at.button(key="next_measure").click().run()
    assert at.selectbox(key="rl_decide_measure").value == following
    assert _param(at, "measure") == following
    assert f"{following}: undecided" in _text(at.markdown)


@pytest.mark.parametrize(("params", "named", "valid"), [
    ({"run_a": "nope"}, "run_a='nope' is not a run of study 'demo'", f"{RUN_A}, {RUN_B}"),
    ({"run_b": "<b>x</b>"}, "run_b='<b>x</b>' is not a run", f"{RUN_A}, {RUN_B}"),
    ({"run_b": RUN_A}, f"run_b='{RUN_A}' is the same run as run_a", RUN_B),
    ({"measure": "Q@10"}, "measure='Q@10' is not a measure", "P@10, RR@10, Success@10"),
    ({"measure": "P@0"}, "measure='P@0' is not a measure", "P@10, RR@10"),
])
def test_a_bad_parameter_is_named_with_the_valid_values(demo_store: Path, params, named,
                                                        valid) -> None:
    at = _open({"queue": "decide", "run_a": RUN_A, "run_b": RUN_B, "measure": "P@10", **params})
    errors = _text(at.error)
    assert named in errors and valid in errors, errors
    assert "Traceback" not in errors
    assert at.radio(key="rl_queue_mode").value == "decide"  # the selectors stay usable


def test_an_unknown_queue_is_named_and_the_blocking_order_shown(demo_store: Path) -> None:
    at = _open({"queue": "fastest"})
    errors = _text(at.error)
    assert "queue='fastest'" in errors and "blocking, decide" in errors
    assert at.radio(key="rl_queue_mode").value == "blocking"
    assert at.selectbox(key="rl_query").value


def test_any_catalogue_measure_in_the_address_is_accepted(demo_store: Path) -> None:
    at = _decide("p@3")  # parsed, shown by its canonical name
    assert at.selectbox(key="rl_decide_measure").value == "P@3"
    assert "P@3:" in _text(at.markdown)
    assert _param(at, "measure") == "P@3"


def test_the_queue_is_selectable_in_the_page_and_switching_back_restores_blocking(
        demo_store: Path) -> None:
    at = _open({"query": "q05"})
    assert at.radio(key="rl_queue_mode").value == "blocking"
    at.radio(key="rl_queue_mode").set_value("decide").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="rl_decide_run_a").value == RUN_A
    assert at.selectbox(key="rl_decide_run_b").value == RUN_B
    assert _param(at, "queue") == "decide" and _param(at, "measure") == "P@10"
    at.selectbox(key="rl_decide_measure").set_value("RR@10").run()
    assert _shown(at) == ("q01", "kb-hostile")
    at.radio(key="rl_queue_mode").set_value("blocking").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="rl_query").value == "q05"  # the query open before
    assert _param(at, "queue") is None and _param(at, "run_a") is None
    assert _param(at, "query") == "q05"
    unit = item_caption(at).split(" · ")[1]
    grade_button(at, 2).click().run()
    db = open_store(demo_store)
    label = resolve_unit_in_store(open_study(db, DEMO_STUDY_ID, None), "q05", unit.replace("\\", ""))
    assert label is not None and label.annotators["lead"] == 2


def test_skip_moves_to_the_next_queue_item_and_it_comes_back_last(demo_store: Path) -> None:
    at = _decide("RR@10")
    first = _shown(at)
    at.button(key=next(b.key for b in at.button if b.key and b.key.startswith("skip_"))).click()
    at.run()
    second = _shown(at)
    assert second != first
    db = open_store(demo_store)
    assert resolve_unit_in_store(open_study(db, DEMO_STUDY_ID, None), *first) is None  # skipped: no label
    assert "RR@10: undecided" in _text(at.markdown)


def test_undo_in_the_queue_cancels_the_last_label_and_the_verdict_follows(
        demo_store: Path) -> None:
    at = _decide("RR@10")
    query, unit = _shown(at)
    grade_button(at, 1).click().run()
    assert "[+0.0000, +0.0200]" in _text(at.markdown)
    at.button(key="undo").click().run()
    assert not at.exception, at.exception
    db = open_store(demo_store)
    assert resolve_unit_in_store(open_study(db, DEMO_STUDY_ID, None), query, unit) is None
    assert "[+0.0000, +0.0400]" in _text(at.markdown)
    assert _shown(at) == (query, unit)


def test_the_decide_queue_survives_a_visit_to_another_page(demo_store: Path) -> None:
    at = _decide("RR@10")
    shown = _shown(at)
    at.switch_page("views/home.py").run()
    at.switch_page(ANNOTATE).run()
    assert not at.exception, at.exception
    assert at.radio(key="rl_queue_mode").value == "decide"
    assert at.selectbox(key="rl_decide_measure").value == "RR@10"
    assert _shown(at) == shown
    assert _param(at, "queue") == "decide" and _param(at, "measure") == "RR@10"


def test_the_queue_over_a_query_set_proposes_nothing_outside_it(demo_store: Path) -> None:
    at = _decide("P@10", queries="q03,q07")
    captions = _text(at.caption)
    assert "Queue over q03,q07 (2 of 25" in captions
    db = open_store(demo_store)
    target = decide_target(open_study(db, DEMO_STUDY_ID, None), RUN_A, RUN_B, "P@10")
    state = decide_state(open_study(db, DEMO_STUDY_ID, None), target, query_ids=["q03", "q07"])
    assert state.decision.n_queries == 2
    assert state.items and {item.query_id for item in state.items} <= {"q03", "q07"}
    assert _shown(at)[0] in {"q03", "q07"}
    at = _decide("P@10", queries="q03,nope")
    assert "not in study 'demo': 'nope'" in _text(at.warning)


def test_the_queues_stay_blind_when_the_blocking_order_shows_ranks(demo_store: Path) -> None:
    """The "Show ranks and runs" toggle is drawn in the blocking order only: the queues, which
    do not show it, never show ranks; back in the blocking order the choice is still on."""
    at = _open({})
    at.toggle(key="rl_unblind").set_value(True).run()
    assert "rank " in item_caption(at)
    at.radio(key="rl_queue_mode").set_value("decide").run()
    assert "rank " not in item_caption(at)
    at.run()
    assert "rank " not in item_caption(at)
    at.radio(key="rl_queue_mode").set_value("blocking").run()
    assert at.toggle(key="rl_unblind").value is True
    assert "rank " in item_caption(at)


def test_runs_stored_to_depth_3_are_offered_cutoffs_up_to_3_with_the_reason(
        demo_store: Path) -> None:
    """The decide panel never evaluates @10 or @5 on runs stored to depth 3: the measure
    picker offers cutoffs up to 3 with a caption naming each run's depth, and an address
    asking for P@10 on them is refused with that reason and the valid measures."""
    db = open_store(demo_store)
    try:
        a, b = shallow_demo_runs(db, 3)
    finally:
        db.conn.close()
    at = _open({"queue": "decide", "run_a": a, "run_b": b})
    picker = at.selectbox(key="rl_decide_measure")
    assert picker.options == ["P@3", "RR@3", "Success@3", "nDCG@3", "R@3"]
    assert picker.value == "P@3"
    captions = _text(at.caption)
    assert f"Cutoffs up to @3 only: {a} and {b} are stored to depth 3. Ranks past" in captions
    assert "@10" not in _text(at.markdown) + captions
    deep = _open({"queue": "decide", "run_a": a, "run_b": b, "measure": "P@10"})
    error = _text(deep.error)
    assert f"run {a!r} was stored to depth 3; P@10 would need ranks" in error
    assert "valid values: P@3, RR@3" in error


def test_switching_to_shallower_runs_carries_the_measure_to_their_depth(demo_store: Path) -> None:
    """A lead on P@10 over the demo runs (depth 10) who switches the panel to runs stored
    to depth 3 goes on with P@3 (the same family at the runs' depth), told so until they
    choose another measure; no error."""
    db = open_store(demo_store)
    try:
        a, b = shallow_demo_runs(db, 3)
    finally:
        db.conn.close()
    at = _decide("P@10")
    assert at.selectbox(key="rl_decide_measure").value == "P@10"
    at.selectbox(key="rl_decide_run_a").set_value(a).run()  # one run at a time, as in a browser
    assert "P@10 changed to P@3. Cutoffs up to @3 only:" in _text(at.caption)
    at.selectbox(key="rl_decide_run_b").set_value(b).run()
    assert not at.exception, at.exception
    assert not at.error, _text(at.error)
    picker = at.selectbox(key="rl_decide_measure")
    assert picker.value == "P@3"
    assert picker.options == ["P@3", "RR@3", "Success@3", "nDCG@3", "R@3"]
    captions = _text(at.caption)
    assert f"P@10 changed to P@3. Cutoffs up to @3 only: {a} and {b} are stored to" in captions
    assert _param(at, "measure") == "P@3" and _param(at, "run_a") == a
    at.selectbox(key="rl_decide_measure").set_value("R@3").run()  # the lead's next choice holds
    assert at.selectbox(key="rl_decide_measure").value == "R@3" and not at.error
    assert "changed to" not in _text(at.caption)
