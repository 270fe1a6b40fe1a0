"""The reports page through AppTest: freeze, generate, list, not comparable, exports."""

import pytest

from evalcore.report.stored import load_report
from evalcore.store.labels import record_label
from evalcore.store.references import list_references
from evalcore.store.reports import list_reports
from evalcore.store.runs import add_run
from evalcore.store.study_handle import open_study

PAGE = "views/reports.py"


def _label(db) -> None:
    for unit, gain in {"d1": 2, "d2": 0, "d3": 1, "d4": 3}.items():
        record_label(db, study_id="s1", query_id="q1", unit_id=unit, gain=gain, annotator="a",
                     note=f"secret note on {unit}")


def test_freeze_then_generate_a_pinned_report(small_store, new_app) -> None:
    _, db = small_store
    _label(db)
    at = new_app(annotator="lead", page=PAGE)
    assert not at.exception, at.exception
    at.text_input(key="rl_freeze_name").set_value("v1")
    at.button(key="rl_freeze").click().run()
    assert not at.exception, at.exception
    (version,) = list_references(open_study(db, "s1", None))
    assert (version.name, version.created_by, version.n_labels) == ("v1", "lead", 4)
    assert at.selectbox(key="rl_report_reference").value == "v1"
    at.text_input(key="rl_report_name").set_value("first report")
    at.button(key="rl_report_generate").click().run()
    assert not at.exception, at.exception
    (stored,) = list_reports(open_study(db, "s1", None))
    report = load_report(open_study(db, "s1", None), stored.report_id)
    assert (report.name, report.reference_version, report.created_by) == (
        "first report", "v1", "lead")
    assert [r.name for r in report.runs] == ["r1", "r2"]
    assert at.checkbox(key=f"rl_report_internal_{stored.report_id}").value is False
    assert len(at.get("download_button")) == 4  # HTML, JSON, CSV per query, verdicts CSV
    assert any(s.value.replace("\\", "").startswith("Report first report generated")
               for s in at.success)


def test_reusing_a_version_name_is_refused_with_a_message(small_store, new_app) -> None:
    _, db = small_store
    _label(db)
    at = new_app(annotator="lead", page=PAGE)
    for _ in range(2):
        at.text_input(key="rl_freeze_name").set_value("v1")
        at.button(key="rl_freeze").click().run()
    assert len(list_references(open_study(db, "s1", None))) == 1
    assert any("already exists" in e.value.replace("\\", "") for e in at.error)


def test_run_on_another_corpus_is_marked_not_comparable(small_store, new_app) -> None:
    _, db = small_store
    _label(db)
    add_run(db, study_id="s1", name="other", source="imported", k=3,
            corpus_fingerprint="sha256:elsewhere", results=[("q1", 1, "d1", 1.0)])
    at = new_app(annotator="lead", page=PAGE)
    at.multiselect(key="rl_report_runs").set_value(["r1", "r2", "other"])
    at.button(key="rl_report_generate").click().run()
    assert not at.exception, at.exception
    runs = next(d.value for d in at.dataframe if "comparable" in d.value.columns)
    # r1 (the baseline) records no fingerprint: unknown is not different.
    assert list(runs["comparable"]) == ["yes", "yes", "NOT VERIFIED"]
    assert "is not verified" in runs["why not"][2] and "different" not in runs["why not"][2]
    results = next(d.value for d in at.dataframe if "P@3" in d.value.columns)
    assert list(results["run"]) == ["r1", "r2", "other"]  # each run's own numbers
    assert [line.candidate for line in load_report(
        open_study(db, "s1", None), at.session_state["rl_report_show"]).bottom_lines] == ["r2"]  # "other" not compared


def test_the_lead_accepts_a_run_whose_comparability_is_not_verified(small_store,
                                                                      new_app) -> None:
    _, db = small_store
    _label(db)
    add_run(db, study_id="s1", name="other", source="imported", k=3,
            corpus_fingerprint="sha256:elsewhere", results=[("q1", 1, "d1", 1.0)])
    at = new_app(annotator="lead", page=PAGE)
    at.multiselect(key="rl_report_runs").set_value(["r1", "other"])
    at.checkbox(key="rl_report_accept_unverified").check()
    at.button(key="rl_report_generate").click().run()
    assert not at.exception, at.exception
    runs = next(d.value for d in at.dataframe if "comparable" in d.value.columns)
    assert list(runs["comparable"]) == ["yes", "yes (accepted, not verified)"]
    results = next(d.value for d in at.dataframe if "P@3" in d.value.columns)
    assert list(results["run"]) == ["r1", "other"]
    stored = load_report(open_study(db, "s1", None), at.session_state["rl_report_show"])
    assert stored.run("other").accepted_unverified
    assert any("lead accepted run 'other'" in w.value.replace("\\", "") for w in at.warning)


def test_without_a_name_nothing_can_be_frozen_or_generated(small_store, new_app) -> None:
    at = new_app(page=PAGE)
    assert at.button(key="rl_freeze").disabled
    assert at.button(key="rl_report_generate").disabled
    assert any("Enter your name" in i.value for i in at.info)


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """file name -> the text the app last offered for download under that name.

    Wraps ``download_button`` of Streamlit's public container class (what
    ``st.download_button`` and ``st.columns(...)[i].download_button`` are).
    """
    from streamlit.delta_generator import DeltaGenerator

    seen: dict[str, str] = {}
    original = DeltaGenerator.download_button

    def capture(self, label, data, file_name=None, *args, **kwargs):
        if file_name is not None and isinstance(data, bytes | str):
            seen[file_name] = data if isinstance(data, str) else data.decode()
        return original(self, label, data, file_name, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", capture)
    return seen


def test_exports_hold_no_notes_unless_asked(small_store, new_app, downloads) -> None:
    _, db = small_store
    _label(db)
    at = new_app(annotator="lead", page=PAGE)
    at.text_input(key="rl_report_name").set_value("r")
    at.button(key="rl_report_generate").click().run()
    (stored,) = list_reports(open_study(db, "s1", None))
    assert set(downloads) == {"r.html", "r.json", "r.csv", "r-verdicts.csv"}
    assert downloads["r-verdicts.csv"].startswith("candidate,baseline,difference,measure,")
    assert "\r\nr2,r1,candidate − baseline,P@3," in downloads["r-verdicts.csv"]
    for text in downloads.values():
        assert "secret note" not in text
    assert "r1,true,q1,3," in downloads["r.csv"] and "<html" in downloads["r.html"]
    at.checkbox(key=f"rl_report_internal_{stored.report_id}").check().run()
    assert "secret note on d1" in downloads["r.json"]
    assert "secret note on d1" in downloads["r.html"]


def test_stored_report_shows_the_verdict_before_the_results(small_store, new_app) -> None:
    from evalcore.report.from_store import report_from_store
    from evalcore.report.stored import save_report
    from evalcore.store.labels import record_label

    _, db = small_store
    for unit, gain in {"d1": 2, "d2": 0, "d3": 1, "d4": 3, "d5": 1, "d6": 0}.items():
        record_label(db, study_id="s1", query_id="q1" if unit < "d5" else "q2", unit_id=unit,
                     gain=gain, annotator="a")
    save_report(db, report_from_store(open_study(db, "s1", "lead"), runs=["r1", "r2"], created_by="lead"))
    at = new_app(annotator="lead", page="views/reports.py")
    assert not at.exception, at.exception
    texts = [m.value.replace("\\", "") for m in at.markdown]
    assert any(t.startswith("**r2 vs r1 (baseline): worse on P@3") for t in texts)
    table = at.table[0].value  # the bottom line's, before the results table
    assert list(table.index) == ["P@3", "R@3", "nDCG@3", "RR@3"]
    assert table.loc["P@3", "verdict"] == "decided: worse"  # r2 - r1 on P@3: -1/6
    assert table.loc["P@3", "candidate − baseline (mean)"] == "−0.167 to −0.167"
    (results,) = [d.value for d in at.dataframe if "P@3" in d.value.columns]  # one table
    assert list(results.columns) == ["run", "P@3", "R@3", "nDCG@3", "RR@3", "Judged@3"]


def test_stored_report_shows_the_chosen_measures_with_judged(small_store, new_app) -> None:
    from evalcore.report.from_store import report_from_store
    from evalcore.report.stored import save_report
    from evalcore.store.study_measures import set_study_measures

    _, db = small_store
    _label(db)
    set_study_measures(db, study_id="s1", measures=["Success@2", "RBP(p=0.8)@3"], actor=None)
    save_report(db, report_from_store(open_study(db, "s1", "lead"), runs=["r1", "r2"], created_by="lead"))
    at = new_app(annotator="lead", page=PAGE)
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if "Success@2" in d.value.columns)
    assert list(table.columns) == ["run", "Success@2", "RBP(p=0.8)@3", "Judged@2", "Judged@3"]
    assert list(table["run"]) == ["r1", "r2"]
    assert any("Measures: Success@2, RBP(p=0.8)@3" in c.value.replace("\\", "")
               for c in at.caption)
