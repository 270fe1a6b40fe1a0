"""The annotator agreement page through AppTest."""

from evalcore.analysis.agreement import study_agreement
from evalcore.store.labels import label_history, record_label
from evalcore.store.resolution import resolve_query
from evalcore.store.study_handle import open_study

PAGE = "views/agreement.py"


def _two_annotators(db) -> None:
    alice = {"d1": 2, "d2": 0, "d3": 1, "d4": 3}
    bob = {"d1": 2, "d2": 3, "d3": 1, "d4": 4}
    for unit in alice:
        record_label(db, study_id="s1", query_id="q1", unit_id=unit, gain=alice[unit],
                     annotator="alice")
        record_label(db, study_id="s1", query_id="q1", unit_id=unit, gain=bob[unit],
                     annotator="bob")


def test_coefficients_equal_the_library(small_store, new_app) -> None:
    _, db = small_store
    _two_annotators(db)
    at = new_app(page=PAGE)
    assert not at.exception, at.exception
    summary = study_agreement(open_study(db, "s1", None))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Krippendorff's alpha (ordinal)"] == f"{summary.overall_alpha.value:.3f}"
    assert metrics["Units labeled by two or more"] == "4"
    pairs = next(d.value for d in at.dataframe if "shared units" in d.value.columns)
    assert pairs["weighted kappa (quadratic)"][0] == f"{summary.pairs[0].kappa.value:.3f}"
    per_query = next(d.value for d in at.dataframe if "alpha" in d.value.columns)
    assert list(per_query["query"]) == ["q1"]
    assert bool(per_query["low agreement"][0]) == summary.per_query[0].low_agreement
    assert len(at.get("plotly_chart")) == 1


def test_adjudication_settles_a_conflict(small_store, new_app) -> None:
    _, db = small_store
    _two_annotators(db)
    at = new_app(annotator="rev", page=PAGE)
    # d2 (0 vs 3) has the larger spread: listed first
    assert at.button(key="rl_adj_q1_d2").disabled is False
    at.selectbox(key="rl_adj_q1_d2_gain").set_value(1)
    at.text_input(key="rl_adj_q1_d2_note").set_value("marginal: half outdated")
    at.button(key="rl_adj_q1_d2").click().run()
    assert not at.exception, at.exception
    resolved = resolve_query(open_study(db, "s1", None), "q1")["d2"]
    assert (resolved.state, resolved.gain, resolved.reviewer) == ("adjudicated", 1, "rev")
    event = label_history(open_study(db, "s1", None), "q1", "d2")[-1]
    assert (event.kind, event.note) == ("adjudicate", "marginal: half outdated")
    assert any("adjudicated: gain 1 by rev" in s.value.replace("\\", "") for s in at.success)
    assert not any(b.key == "rl_adj_q1_d2" for b in at.button)


def test_without_a_reviewer_name_adjudication_is_disabled(small_store, new_app) -> None:
    _, db = small_store
    _two_annotators(db)
    at = new_app(page=PAGE)
    assert at.button(key="rl_adj_q1_d2").disabled
    assert any("Enter your name" in i.value for i in at.info)


def test_no_overlap_says_so(small_store, new_app) -> None:
    _, db = small_store
    record_label(db, study_id="s1", query_id="q1", unit_id="d1", gain=2, annotator="alice")
    at = new_app(page=PAGE)
    assert any("No two annotators" in i.value for i in at.info)
    assert any("No unit is in conflict" in s.value for s in at.success)


def test_an_alpha_that_cannot_be_computed_says_why_in_full(small_store, new_app) -> None:
    _, db = small_store
    at = new_app(page=PAGE)
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Krippendorff's alpha (ordinal)"] == "not computable"
    reason = str(study_agreement(open_study(db, "s1", None)).overall_alpha.reason)
    assert any(c.value.replace("\\", "") == reason for c in at.caption)


def _conflict_with_notes(db) -> None:
    """d2 on q1: alice 0 with a note, bob 3 without one (and bob's earlier 1, undone)."""
    from evalcore.store.labels import undo_last_label

    record_label(db, study_id="s1", query_id="q1", unit_id="d2", gain=0, annotator="alice",
                 note="only mentions *passwords* in passing <b>x</b>")
    record_label(db, study_id="s1", query_id="q1", unit_id="d2", gain=1, annotator="bob",
                 note="undone note")
    undo_last_label(db, study_id="s1", query_id="q1", annotator="bob")
    record_label(db, study_id="s1", query_id="q1", unit_id="d2", gain=3, annotator="bob")


def _plain(at) -> str:
    return "\n".join(m.value for m in at.markdown).replace("\\", "")


def test_a_conflict_shows_query_document_and_every_annotators_say(small_store, new_app) -> None:
    _, db = small_store
    _conflict_with_notes(db)
    at = new_app(annotator="rev", page=PAGE)
    assert not at.exception, at.exception
    text = _plain(at)
    assert "**Query:** reset password" in text
    assert "**Document:** Password guide 2" in text and "How to reset a password, part 2." in text
    assert "alice said 0 (not relevant)" in text and "bob said 3 (highly relevant)" in text
    assert "note: only mentions *passwords* in passing <b>x</b>" in text  # escaped, shown as typed
    assert "undone note" not in text  # an undone label is not what bob says now
    assert "no note" in text
    history = label_history(open_study(db, "s1", None), "q1", "d2")
    stamp = history[0].created_at[:16].replace("T", " ") + " UTC"
    assert stamp in text  # when each annotator said it
    assert not any("<b>" in m.value for m in at.markdown)


def test_no_gain_is_preselected_and_none_is_written_without_a_choice(small_store, new_app) -> None:
    _, db = small_store
    _conflict_with_notes(db)
    at = new_app(annotator="rev", page=PAGE)
    assert at.selectbox(key="rl_adj_q1_d2_gain").value is None
    before = len(label_history(open_study(db, "s1", None), "q1", "d2"))
    at.button(key="rl_adj_q1_d2").click().run()
    assert not at.exception, at.exception
    assert len(label_history(open_study(db, "s1", None), "q1", "d2")) == before  # nothing written
    assert any("choose a gain" in e.value for e in at.error)
    assert resolve_query(open_study(db, "s1", None), "q1")["d2"].state == "conflict"


def _open_address(params: dict[str, str]):
    """A new session (a new tab) opened on an address of the agreement page."""
    from app_harness import ENTRY
    from streamlit.testing.v1 import AppTest

    tab = AppTest.from_file(ENTRY, default_timeout=60)
    tab.query_params.update(params)
    tab.run()
    tab.switch_page(PAGE).run()
    assert not tab.exception, tab.exception
    return tab


def test_every_conflict_has_its_own_address(small_store, new_app) -> None:
    _, db = small_store
    _two_annotators(db)  # conflicts: d2 (0 vs 3, listed first) and d4 (3 vs 4)
    at = new_app(annotator="rev", page=PAGE)
    links = {p.proto.query_string for p in at.get("page_link")
             if p.proto.label == "Address of this conflict"}
    assert links == {"study=s1&annotator=rev&query=q1&unit=d2",
                     "study=s1&annotator=rev&query=q1&unit=d4"}
    tab = _open_address({"study": "s1", "annotator": "rev", "query": "q1", "unit": "d4"})
    assert any("The conflict this address names" in m.value for m in tab.markdown)
    # the named conflict comes first (d2 has the larger spread and would otherwise lead)
    assert [b.key for b in tab.button if b.key and b.key.startswith("rl_adj_")] == [
        "rl_adj_q1_d4", "rl_adj_q1_d2"]
    tab.selectbox(key="rl_adj_q1_d4_gain").set_value(4)
    tab.button(key="rl_adj_q1_d4").click().run()
    assert not tab.exception, tab.exception
    assert resolve_query(open_study(db, "s1", None), "q1")["d4"].state == "adjudicated"
    # the address still names it: it now says what became of it
    assert any("d4 on query q1 is not in conflict: adjudicated by rev: gain 4"
               in i.value.replace("\\", "") for i in tab.info)


def test_an_address_naming_no_conflict_says_so(small_store, new_app) -> None:
    _, db = small_store
    record_label(db, study_id="s1", query_id="q1", unit_id="d1", gain=2, annotator="alice")
    tab = _open_address({"study": "s1", "query": "q1", "unit": "d1"})
    assert any("d1 on query q1 is not in conflict: its annotators agree"
               in i.value.replace("\\", "") for i in tab.info)
    tab = _open_address({"study": "s1", "query": "q1", "unit": "nosuch"})
    assert any("nosuch on query q1 is not in conflict: nobody has a current label"
               in i.value.replace("\\", "") for i in tab.info)
