"""The annotator agreement page through AppTest."""

from evalcore.analysis.agreement import study_agreement
from evalcore.store.labels import label_history, record_label
from evalcore.store.resolution import resolve_query

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
    summary = study_agreement(db, "s1")
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
    resolved = resolve_query(db, "s1", "q1")["d2"]
    assert (resolved.state, resolved.gain, resolved.reviewer) == ("adjudicated", 1, "rev")
    event = label_history(db, "s1", "q1", "d2")[-1]
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
    reason = str(study_agreement(db, "s1").overall_alpha.reason)
    assert any(c.value.replace("\\", "") == reason for c in at.caption)
