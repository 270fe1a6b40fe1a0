"""The run comparison page through AppTest."""

from evalcore.analysis.bottom_line import paired_words
from evalcore.analysis.compare import compare_metric
from evalcore.analysis.run_evaluation import evaluate_run
from evalcore.report.from_store import report_from_store
from evalcore.store.labels import record_label
from evalcore.store.runs import add_run
from evalcore.store.study_handle import open_study

PAGE = "views/compare.py"


def _label_all(db) -> None:
    gains = {"d1": 2, "d2": 0, "d3": 1, "d4": 3, "d5": 1, "d6": 0}
    for unit, gain in gains.items():
        query = "q1" if unit in {"d1", "d2", "d3", "d4"} else "q2"
        record_label(db, study_id="s1", query_id=query, unit_id=unit, gain=gain, annotator="a")


def _results_tables(at) -> list:
    """The results tables (rows = runs) among the page's tables."""
    return [d.value for d in at.dataframe if "run" in d.value.columns]


def _paired_table(at):
    """The paired-tests table (one row per measure)."""
    (table,) = [d.value for d in at.table if "paired queries" in d.value.columns]
    return table


def _all_text(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption]).replace(
        "\\", "")


def test_table_and_paired_tests_come_from_compare(small_store, new_app) -> None:
    _, db = small_store
    _label_all(db)
    at = new_app(page=PAGE)
    assert not at.exception, at.exception
    (table,) = _results_tables(at)
    assert list(table["run"]) == ["(a) r1", "(b) r2"]
    # one name per measure: the catalogue's canonical name, as the verdicts say it
    assert list(table.columns) == ["run", "P@3", "R@3", "nDCG@3", "RR@3"]
    # candidate r2 minus the baseline r1 (the first run chosen), as every surface says it
    expected = compare_metric(
        "precision",
        "r2",
        evaluate_run(open_study(db, "s1", None), "r2"),
        "r1",
        evaluate_run(open_study(db, "s1", None), "r1"),
    )
    paired = _paired_table(at).loc["P@3"]
    assert paired["paired queries"] == "2 of 2"
    assert paired_words(expected) == "2 of 2 queries"  # none left out: no line says so
    assert paired["p: randomization / t-test"] == (
        f"{expected.tests['randomization'].p_value:.4g} / "
        f"{expected.tests['paired_t'].p_value:.4g}")
    text = _all_text(at)
    assert "**r2 − r1 (baseline)** on P@3" in text
    assert "paired on 2 of 2 queries (the chart's lower strip" in text
    assert len(at.get("plotly_chart")) == 1


def test_exclusions_are_stated_in_words(small_store, new_app) -> None:
    _, db = small_store
    record_label(db, study_id="s1", query_id="q2", unit_id="d5", gain=1, annotator="a")
    record_label(db, study_id="s1", query_id="q2", unit_id="d6", gain=0, annotator="a")
    at = new_app(page=PAGE)
    where = "1 of 2 queries (1 left out: 1 with no label at all in both runs)"
    assert _paired_table(at).loc["P@3", "paired queries"] == "1 of 2"
    text = _all_text(at)
    assert f"P@3: {where}" in text
    assert text.count(f"P@3: {where}") == 1  # said once
    assert "missing_reference" not in text  # codes stay in JSON and CSV; plain words here
    (table,) = _results_tables(at)
    assert table["P@3"][0] == "unavailable (1 of 2 missing)"


def test_run_on_another_corpus_is_not_compared(small_store, new_app) -> None:
    _, db = small_store
    add_run(db, study_id="s1", name="elsewhere", source="imported", k=3,
            corpus_fingerprint="sha256:other", results=[("q1", 1, "d1", 1.0)])
    at = new_app(page=PAGE)
    at.multiselect(key="rl_compare_runs").set_value(["r1", "r2", "elsewhere"]).run()
    assert not at.exception, at.exception
    # r1 (the baseline) records no fingerprint: "elsewhere" is not verified, not "different".
    warnings = [w.value.replace("\\", "") for w in at.warning]
    assert any("elsewhere's comparability is not verified" in w for w in warnings), warnings
    assert not any("different corpus" in w for w in warnings)
    (table,) = _results_tables(at)
    assert list(table["run"]) == ["(a) r1", "(b) r2"]
    report = report_from_store(open_study(db, "s1", "lead"), runs=["r1", "r2", "elsewhere"], created_by="lead")
    assert [r.name for r in report.runs if r.comparable] == ["r1", "r2"]
    # Accepting it explicitly compares it, as a report's --accept-unverified does.
    at.checkbox(key="rl_compare_accept_unverified").check().run()
    assert not at.exception, at.exception
    (table,) = _results_tables(at)
    assert list(table["run"]) == ["(a) r1", "(b) r2", "(c) elsewhere"]
    assert any("you accepted them): elsewhere" in c.value.replace("\\", "") for c in at.caption)
    accepted = report_from_store(open_study(db, "s1", "lead"), runs=["r1", "r2", "elsewhere"], created_by="lead", accept_unverified=["elsewhere"])
    assert [r.name for r in accepted.runs if r.comparable] == ["r1", "r2", "elsewhere"]


def test_a_run_cut_at_another_depth_is_refused_as_a_report_refuses_it(small_store,
                                                                      new_app) -> None:
    # Reports refuse a run whose cutoff differs from the baseline's; so does the page
    # (it used to compare such runs, pairing no query): one rule, one reason text.
    _, db = small_store
    add_run(db, study_id="s1", name="deep", source="imported", k=5,
            results=[("q1", 1, "d1", 1.0)])
    at = new_app(page=PAGE)
    at.multiselect(key="rl_compare_runs").set_value(["r1", "deep"]).run()
    assert not at.exception, at.exception
    report = report_from_store(open_study(db, "s1", "lead"), runs=["r1", "deep"], created_by="lead")
    reason = report.run("deep").not_comparable_reason
    assert reason is not None and "cutoff k=5 differs from the baseline 'r1'" in reason
    warnings = [w.value.replace("\\", "") for w in at.warning]
    assert f"Run deep is not comparable: {reason}; it is left out of the comparison." in warnings
    assert any("Fewer than two comparable runs" in i.value for i in at.info)
    assert not _results_tables(at)


def test_frozen_reference_is_compared_as_frozen(small_store, new_app) -> None:
    from evalcore.store.references import freeze_reference

    _, db = small_store
    _label_all(db)
    freeze_reference(db, study_id="s1", name="v1", actor="lead")
    record_label(db, study_id="s1", query_id="q1", unit_id="d1", gain=0, annotator="b")
    at = new_app(page=PAGE)
    working = _all_text(at)
    at.selectbox(key="rl_compare_reference").set_value("v1").run()
    assert not at.exception, at.exception
    frozen = _all_text(at)
    assert "paired on 2 of 2 queries" in frozen  # d1's new conflict is not in v1
    assert "paired on 1 of 2 queries" in working


def test_the_chosen_runs_measures_and_reference_survive_a_visit_to_another_page(
        small_store, new_app) -> None:
    _, db = small_store
    _label_all(db)
    from evalcore.store.references import freeze_reference

    freeze_reference(db, study_id="s1", name="v1", actor="lead")
    at = new_app(page=PAGE)
    at.multiselect(key="rl_compare_runs").set_value(["r2", "r1"]).run()
    at.multiselect(key="rl_compare_measures").set_value(["P@3"]).run()
    at.selectbox(key="rl_compare_reference").set_value("v1").run()
    at.switch_page("views/home.py").run()
    at.query_params.clear()  # the navigation's link holds no choice of the page
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.multiselect(key="rl_compare_runs").value == ["r2", "r1"]
    assert at.multiselect(key="rl_compare_measures").value == ["P@3"]
    assert at.selectbox(key="rl_compare_reference").value == "v1"
