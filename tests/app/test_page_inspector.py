"""The ranking inspector page through AppTest."""

from evalcore.store.labels import record_label

PAGE = "views/inspector.py"


def _frames(at):
    return [d.value for d in at.dataframe]


def test_ranked_list_with_labels_and_flags(small_store, new_app) -> None:
    _, db = small_store
    record_label(db, study_id="s1", query_id="q1", unit_id="d1", gain=2, annotator="alice")
    record_label(db, study_id="s1", query_id="q1", unit_id="d2", gain=0, annotator="alice")
    record_label(db, study_id="s1", query_id="q1", unit_id="d2", gain=3, annotator="bob")
    at = new_app(page=PAGE)
    assert not at.exception, at.exception
    (frame,) = _frames(at)
    assert list(frame["unit"]) == ["d1", "d2", "d3"]
    assert list(frame["label"]) == ["2", "—", "—"]  # unlabeled is shown as such, never as None or 0
    assert list(frame.columns)[:4] == ["rank", "unit", "label", "state"]  # visible side by side
    assert list(frame["state"]) == ["labeled", "conflict", "unlabeled"]
    assert list(frame["conflict"]) == [False, True, False]
    assert list(frame["unlabeled"]) == [False, True, True]
    assert frame["annotators"][1] == "alice: 0, bob: 3"
    chips = " ".join(m.value for m in at.markdown if "badge" in m.value)
    assert "unlabeled\\_returned" in chips and "bounds" in chips


def test_side_by_side_marks_rank_changes(small_store, new_app) -> None:
    at = new_app(page=PAGE)
    at.selectbox(key="rl_inspect_run_b").set_value("r2").run()
    assert not at.exception, at.exception
    left, right = _frames(at)
    assert list(left["unit"]) == ["d1", "d2", "d3"]
    # r2: d2 d4 d1 against r1: d1 d2 d3
    assert list(right["change"]) == ["↑1", "new", "↓2"]
    assert any("Dropped by r2 from r1's top 3: d3 (was #3)" in c.value.replace("\\", "")
               for c in at.caption)


def test_switching_query_and_hostile_text_stays_plain(small_store, new_app) -> None:
    from evalcore.store.studies import QueryIn
    from evalcore.store.study_setup import add_queries

    _, db = small_store
    add_queries(db, "s1", [QueryIn(query_id="q3", text="<script>x</script> **b**")])
    at = new_app(page=PAGE)
    at.selectbox(key="rl_inspect_query").set_value("q3").run()
    assert not at.exception, at.exception
    assert not any("<script>" in m.value for m in at.markdown)
    assert any("This run returned nothing" in i.value for i in at.info)
