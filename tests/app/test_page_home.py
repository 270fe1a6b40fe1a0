"""The study home page: study facts, coverage, completeness, runs."""

from evalcore.store.completeness import mark_complete
from evalcore.store.labels import record_label


def _markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_home_shows_study_runs_and_coverage(small_store, new_app) -> None:
    _, db = small_store
    record_label(db, study_id="s1", query_id="q1", unit_id="d1", gain=2, annotator="ann")
    record_label(db, study_id="s1", query_id="q1", unit_id="d2", gain=1, annotator="ann")
    record_label(db, study_id="s1", query_id="q1", unit_id="d2", gain=3, annotator="bob")
    mark_complete(db, study_id="s1", query_id="q2", actor="ann")
    at = new_app()
    assert at.title[0].value == "Small study"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Runs"] == "2"
    assert metrics["Queries marked complete"] == "1 of 2"
    assert metrics["Conflicts"] == "1"
    # pool: q1 = d1..d4, q2 = d5, d6 -> 6 pooled; labeled: d1 only (d2 is in conflict)
    texts = [p.proto.text for p in at.get("progress")]
    assert any("1 of 6 pooled returned items labeled" in t for t in texts), texts
    assert any("1 in conflict (need a reviewer) · 4 unlabeled" in t for t in texts), texts
    runs = at.dataframe[0].value
    assert list(runs["run"]) == ["r1", "r2"]


def test_home_escapes_study_name(tmp_path, monkeypatch, new_app, new_store_target) -> None:
    from evalcore.store.connection import open_store
    from evalcore.store.studies import StudyIn
    from evalcore.store.study_setup import create_study

    path = new_store_target("x.sqlite")
    db = open_store(path)
    create_study(db, StudyIn(study_id="x", name="**bold** <script>x</script>", corpus_id="c"))
    monkeypatch.setenv("RELEVANCE_LEDGER_DB", str(path))
    at = new_app()
    assert at.title[0].value == r"\*\*bold\*\* \<script\>x\<\/script\>"


def test_large_study_home_draws_at_once_and_its_counts_when_ready(small_store, new_app,
                                                                  monkeypatch) -> None:
    """A large study's first visit: the page is drawn without waiting for the label counts
    (counted in the background), then with them; row addresses are those of address_params."""
    from app_harness import wait_for_background_progress

    import app.components.state as state

    path, db = small_store
    monkeypatch.setattr(state, "LARGE_STUDY_QUERIES", 0)  # the small study counts as large
    at = new_app("ann")
    assert not at.exception, at.exception
    assert [s.value for s in at.subheader][:1] == ["Label coverage"]
    table = at.dataframe[-1].value
    assert table["annotate"].tolist()[0] == "annotate?study=s1&annotator=ann&query=q1"
    if "pooled" not in table.columns:  # not counted yet: said so, no counts shown
        assert any("in the background" in i.value for i in at.info)
    wait_for_background_progress(db, path, "s1", "")
    at.run()
    assert not at.exception, at.exception
    table = at.dataframe[-1].value
    assert "pooled" in table.columns and table["annotate"].tolist()[0].endswith("&query=q1")
    assert not any("in the background" in i.value for i in at.info)
