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
    # the reasons are explained under the chips; the bounds are the interval beside the word
    captions = " ".join(c.value for c in at.caption)
    assert "a returned unit in the top k has no label" in captions
    assert "unlabeled\\_returned" not in captions + chips  # plain words on screen
    assert "P\\@3 unavailable · 0\\.33 to 1\\.00\\, 1 unlabeled\\, 1 in conflict" in chips
    # the population is not declared complete: nDCG is bounded all the same (section 12)
    assert "nDCG\\@3 unavailable · 0\\.23 to 1\\.00\\, 1 unlabeled\\, 1 in conflict" in chips
    assert ":green-badge[Judged\\@3 0\\.333]" in chips


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


def test_rows_show_notes_and_link_to_the_item_and_its_conflict(small_store, new_app) -> None:
    from urllib.parse import parse_qs, urlsplit

    from evalcore.store.labels import adjudicate

    _, db = small_store
    record_label(db, study_id="s1", query_id="q1", unit_id="d1", gain=2, annotator="alice",
                 note="covers the reset steps")
    record_label(db, study_id="s1", query_id="q1", unit_id="d2", gain=0, annotator="alice",
                 note="about <b>usernames</b>")
    record_label(db, study_id="s1", query_id="q1", unit_id="d2", gain=3, annotator="bob")
    record_label(db, study_id="s1", query_id="q1", unit_id="d3", gain=1, annotator="alice")
    record_label(db, study_id="s1", query_id="q1", unit_id="d3", gain=2, annotator="bob")
    adjudicate(db, study_id="s1", query_id="q1", unit_id="d3", gain=2, reviewer="rev",
               note="step 3 answers it")
    at = new_app(annotator="lee", page=PAGE)
    assert not at.exception, at.exception
    (frame,) = _frames(at)
    assert list(frame["notes"]) == ["alice: covers the reset steps", "alice: about <b>usernames</b>",
                                    "rev (reviewer): step 3 answers it"]

    def target(href: object) -> tuple[str, dict[str, str]] | None:
        if not href:  # an empty cell: no link
            return None
        parts = urlsplit(href)
        return parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()}

    item = {"study": "s1", "annotator": "lee", "query": "q1"}
    assert [target(h) for h in frame["annotate"]] == [
        ("annotate", {**item, "unit": u}) for u in ("d1", "d2", "d3")]
    # only the unit in conflict links to its adjudication (d3 is settled)
    assert [target(h) for h in frame["adjudicate"]] == [
        None, ("agreement", {**item, "unit": "d2"}), None]


def test_a_frozen_reference_has_no_annotator_notes(small_store, new_app) -> None:
    from evalcore.store.references import freeze_reference

    _, db = small_store
    record_label(db, study_id="s1", query_id="q1", unit_id="d1", gain=2, annotator="alice",
                 note="covers the reset steps")
    freeze_reference(db, study_id="s1", name="v1", actor="lead")
    at = new_app(page=PAGE)
    at.selectbox(key="rl_inspect_reference").set_value("v1").run()
    assert not at.exception, at.exception
    (frame,) = _frames(at)
    assert list(frame["notes"]) == ["", "", ""]
    assert frame["annotate"][0].startswith("annotate?")
