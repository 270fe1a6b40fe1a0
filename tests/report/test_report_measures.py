"""Reports show the study's chosen measures with Judged@k beside each (issue 13 item 6,
issue 14 items 4-5): HTML, text, JSON and CSV; ``evalcore report -m`` overrides them;
a bad name exits 2; a report stored before reports had measures still loads."""

import csv
import io
import json

import pytest
from click.testing import CliRunner
from report_builders import DEMO_RUNS, demo_store

from evalcore.analysis.interval_text import aggregate_value_text, unknown_counts
from evalcore.analysis.pair_comparison import COMPAT_LABEL
from evalcore.cli import main
from evalcore.report.csv_export import render_csv
from evalcore.report.from_store import report_from_store
from evalcore.report.html import render_html
from evalcore.report.measure_table import render_measures_text
from evalcore.report.model import Report, render_json
from evalcore.report.stored import canonical_json, load_report
from evalcore.store.reports import ReportRecord, find_report, save_report_body
from evalcore.store.study_handle import open_study
from evalcore.store.study_measures import set_study_measures

RUNS = DEMO_RUNS
CHOSEN = ["Success@2", "nDCG@3", "RBP(p=0.8)@3"]
SHOWN = [*CHOSEN, "Judged@2", "Judged@3"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path, db = demo_store(tmp_path_factory)
    default = report_from_store(open_study(db, "demo", "lead"), runs=RUNS, created_by="lead")
    set_study_measures(db, study_id="demo", measures=CHOSEN, actor=None)
    chosen = report_from_store(open_study(db, "demo", "lead"), runs=RUNS, created_by="lead")
    return path, db, default, chosen


def _section(html: str, heading: str) -> str:
    start = html.index(f"<h2>{heading}")
    end = html.find("<h2>", start + 4)
    return html[start:end]


def _expected_texts(run) -> dict[str, str]:
    """Each shown measure's text, from the run's own values and the one interval writer."""
    values = run.measure_values
    out = {}
    for name in SHOWN:
        unlabeled, conflicts = unknown_counts(q.metrics[name] for q in values.queries)
        out[name] = aggregate_value_text(values.aggregates[name], unlabeled, conflicts)
    return out


def test_default_set_is_the_four_at_each_runs_k_with_judged(store) -> None:
    _, _, report, _ = store
    assert report.measures == ["P", "R", "nDCG", "RR"]
    assert [m.measure for m in report.decisions[0].measures] == ["P@10", "R@10", "nDCG@10",
                                                                 "RR@10"]
    section = _section(render_html(report), "Measures")
    heads = [h.split("</th>")[0] for h in section.split("<th>")[2:]]
    # one name per measure, as the verdicts say it (RR@10, never MRR@10 beside it)
    assert heads == ["P@k", "R@k", "nDCG@k", "RR@k", "Judged@k"]
    for label in ("P@10", "R@10", "nDCG@10", "RR@10", "Judged@10"):
        assert f"<strong>{label}</strong>" in section
    assert "MRR@" not in render_html(report)
    assert render_measures_text(report).startswith("measures: P@k, R@k, nDCG@k, RR@k (")


def test_chosen_measures_are_exactly_what_every_export_shows(store) -> None:
    _, _, _, report = store
    assert report.measures == CHOSEN
    assert [m.measure for m in report.decisions[0].measures] == CHOSEN
    for run in report.runs:
        assert set(run.measure_values.aggregates) == set(SHOWN)

    html = render_html(report)
    meta = html[:html.index("<h2>Runs")]
    assert "<td>Measures</td><td><code>Success@2, nDCG@3, RBP(p=0.8)@3 (Judged@k" in meta
    section = _section(html, "Measures")
    heads = [h.split("</th>")[0] for h in section.split("<th>")[2:]]
    assert heads == SHOWN
    assert "P@10" not in section and "MRR@" not in section
    texts = {run.name: _expected_texts(run) for run in report.runs}
    for run_texts in texts.values():
        for text in run_texts.values():
            assert text in section
    # RBP is unavailable but bounded on the demo: its interval and unknown count are shown
    rbp = texts["bm25-plain"]["RBP(p=0.8)@3"]
    assert rbp.startswith("unavailable · ") and " to " in rbp and "unlabeled" in rbp

    text = render_measures_text(report)
    assert text.startswith("measures: Success@2, nDCG@3, RBP(p=0.8)@3")
    for run in report.runs:
        for name, value in texts[run.name].items():
            assert f"{name}" in text and value in text
    assert "P@10" not in text

    body = json.loads(render_json(report))
    assert body["measures"] == CHOSEN
    assert set(body["runs"][0]["measure_values"]["aggregates"]) == set(SHOWN)

    rows = list(csv.DictReader(io.StringIO(render_csv(report))))
    extra = [c for c in rows[0] if "@" in c]
    assert extra == [f"{name}_{f}" for name in SHOWN for f in ("status", "value", "lower",
                                                                "upper")]
    assert not any("compat" in c or "trec_eval" in c for c in rows[0])
    run = report.runs[0]
    by_id = {q.query_id: q.metrics for q in run.measure_values.queries}
    for row in (r for r in rows if r["run"] == run.name):
        value = by_id[row["query_id"]]["RBP(p=0.8)@3"]
        assert row["RBP(p=0.8)@3_status"] == value.status
        if value.available:
            assert float(row["RBP(p=0.8)@3_value"]) == value.value
        else:
            assert row["RBP(p=0.8)@3_value"] == ""  # never 0 in a value's place
            assert float(row["RBP(p=0.8)@3_lower"]) == value.lower
            assert float(row["RBP(p=0.8)@3_upper"]) == value.upper


def test_compat_numbers_stay_in_their_own_section(store) -> None:
    _, _, _, report = store
    html = render_html(report)
    compat = _section(html, COMPAT_LABEL.capitalize())
    assert all(name in compat for name in CHOSEN)
    assert COMPAT_LABEL not in _section(html, "Measures")
    assert "compat" not in render_csv(report).splitlines()[0]


def test_explicit_measures_override_the_studys(store) -> None:
    _, db, _, _ = store
    report = report_from_store(open_study(db, "demo", "lead"), runs=RUNS, created_by="lead", measures=["P@5", "MRR@10"])
    assert report.measures == ["P@5", "RR@10"]
    assert set(report.runs[0].measure_values.aggregates) == {"P@5", "RR@10", "Judged@5",
                                                             "Judged@10"}


def test_a_measure_deeper_than_the_runs_is_left_out_with_a_warning(store) -> None:
    _, db, _, _ = store
    report = report_from_store(open_study(db, "demo", "lead"), runs=RUNS, created_by="lead", measures=["P@5", "P@50"])
    assert "P@50" not in report.runs[0].measure_values.aggregates
    assert any("P@50 is deeper than run 'bm25-plain'" in w for w in report.warnings)
    assert [m.measure for m in report.decisions[0].measures] == ["P@5"]
    assert "deeper than the run" in _section(render_html(report), "Measures")


def test_cli_m_overrides_and_prints_the_measures(store, tmp_path) -> None:
    path, db, _, _ = store
    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, [
        "report", "--db", str(path), "--study", "demo", "--runs", ",".join(RUNS),
        "-m", "P@5", "-m", "Success@2", "--name", "cli-m", "--out", str(out), "--by", "lead"])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["measures"] == ["P@5", "Success@2"]
    assert "measures: P@5, Success@2" in result.output
    assert "Judged@5" in result.output and "Success@2" in result.output
    demo = open_study(db, "demo", None)
    stored = load_report(demo, find_report(demo, "cli-m").report_id)
    assert stored.measures == ["P@5", "Success@2"]


def test_cli_bad_measure_exits_2_listing_the_known_ones(store, tmp_path) -> None:
    path, db, _, _ = store
    out = tmp_path / "bad.html"
    result = CliRunner().invoke(main, [
        "report", "--db", str(path), "--study", "demo", "--runs", ",".join(RUNS),
        "-m", "nDCG@10", "-m", "Precision@ten", "--name", "bad-m", "--out", str(out),
        "--by", "lead"])
    assert result.exit_code == 2, result.output
    assert "unknown measure 'Precision@ten'" in result.output
    assert "known measures" in result.output and "Traceback" not in result.output
    assert not out.exists()
    with pytest.raises(LookupError):
        find_report(open_study(db, "demo", None), "bad-m")


def test_a_report_stored_before_measures_still_loads_and_renders(store) -> None:
    _, db, report, _ = store
    body = json.loads(canonical_json(report))
    del body["measures"]
    for run in body["runs"]:
        del run["measure_values"]
    old = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    record = ReportRecord(study_id="demo", name="before measures", reference_version=None,
                          created_at=report.created_at, created_by="lead",
                          evalcore_version=report.evalcore_version)
    stored = save_report_body(db, record, old)
    loaded = load_report(open_study(db, "demo", "lead"), stored.report_id)
    assert loaded.measures == [] and all(r.measure_values is None for r in loaded.runs)
    assert loaded.decisions == report.decisions
    html = render_html(loaded)
    assert "<h2>Measures</h2>" not in html and "<h2>Decided comparisons</h2>" in html
    assert "@" not in "".join(next(csv.reader(io.StringIO(render_csv(loaded)))))
    assert render_measures_text(loaded) == ""
    assert isinstance(Report.model_validate_json(old), Report)


def test_html_per_query_measures_write_intervals_not_points(store) -> None:
    from evalcore.analysis.interval_text import metric_value_text

    _, _, _, report = store
    section = _section(render_html(report), "Per query: measures")
    run = report.runs[0]
    for name in SHOWN:
        assert f"{run.name}<br>{name}</th>" in section
    unavailable = [q.metrics["RBP(p=0.8)@3"] for q in run.measure_values.queries
                   if not q.metrics["RBP(p=0.8)@3"].available]
    assert unavailable
    for value in unavailable:
        text = metric_value_text(value)
        assert text.startswith("unavailable · ") and f">{text}</td>" in section


def test_cli_m_with_stored_is_refused(store, tmp_path) -> None:
    path, _, _, _ = store
    result = CliRunner().invoke(main, [
        "report", "--db", str(path), "--study", "demo", "--stored", "anything", "-m", "P@5",
        "--out", str(tmp_path / "x.html"), "--by", "lead"])
    assert result.exit_code == 2 and "not both" in result.output
