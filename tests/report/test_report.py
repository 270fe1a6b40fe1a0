"""Reports: comparability, exports (HTML self-contained and escaped, JSON, CSV),
internal-data stripping, unavailable values never drawn as zeros."""

import csv
import io
import json
import re
from datetime import UTC, datetime

import pytest
from report_builders import report_from

from evalcore.analysis.compare import ComparisonSettings, compare_metric
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.report.build import RunInput, build_report
from evalcore.report.charts import delta_figure, per_query_figure, per_query_metrics_figure
from evalcore.report.csv_export import csv_header, render_csv
from evalcore.report.html import aggregate_detail, render_html
from evalcore.report.model import AnnotatorNote, ReportInternal, render_json

XSS = "<script>alert(1)</script>"
UNL = ["unlabeled_returned"]
FP = "sha256:" + "a" * 64
OTHER_FP = "sha256:" + "b" * 64


def _runs(fp_c: str = OTHER_FP) -> dict[str, RunInput]:
    a = report_from({"q1": 0.5, "q2": 0.25, XSS: 0.75, "q4": UNL})
    b = report_from({"q1": 0.25, "q2": 0.5, XSS: 0.5, "q4": 0.0})
    c = report_from({"q1": 1.0, "q2": 1.0, XSS: 1.0, "q4": 1.0})
    return {
        "A": RunInput(evaluation=a, corpus_fingerprint=FP),
        "B": RunInput(evaluation=b, corpus_fingerprint=FP),
        "C": RunInput(evaluation=c, corpus_fingerprint=fp_c),
    }


def _report(**kwargs):
    internal = ReportInternal(
        run_ids={"A": 101, "B": 102, "C": 103},
        reference_created_by="lead-lena",
        annotators={"q1": ["annotator-alice", "annotator-bob"]},
        notes=[
            AnnotatorNote(query_id="q1", unit_id="d1", annotator="annotator-alice",
                          note="secret-note-text", created_at="2026-06-30T00:00:00Z",
                          event_id=987654321)
        ],
    )
    defaults = dict(
        name=f"weekly {XSS}",
        study_id="study-1",
        protocol=EvalProtocol(),
        created_by="lead-lena",
        reference_version="v1",
        reference_hash="sha256:" + "c" * 64,
        query_texts={XSS: f"text {XSS}", "q1": "what is <b>bold</b>?"},
        internal=internal,
        settings=ComparisonSettings(permutations=500),
        created_at=datetime(2026, 7, 1, 12, 0, tzinfo=UTC),
    )
    defaults.update(kwargs)
    return build_report(_runs(), **defaults)


def test_run_with_a_different_fingerprint_is_marked_and_not_compared() -> None:
    report = _report()
    assert report.corpus_fingerprint == FP
    c = report.run("C")
    assert not c.comparable
    assert "differs from the report's" in (c.not_comparable_reason or "")
    assert report.comparison is not None
    assert report.comparison.runs == ["A", "B"]
    assert all("C" not in (x.run_a, x.run_b) for x in report.comparison.comparisons)
    assert [row.run for row in report.comparison.table.rows] == ["A", "B"]
    html = render_html(report)
    assert "not comparable" in html and "Not compared (see Runs): C" in html


def test_protocol_or_cutoff_mismatch_is_not_comparable() -> None:
    runs = _runs(fp_c=FP)
    runs["C"] = RunInput(
        evaluation=report_from({"q1": 0.5}, protocol=EvalProtocol(gain="exponential")),
        corpus_fingerprint=FP,
    )
    runs["D"] = RunInput(evaluation=report_from({"q1": 0.5}, k=5), corpus_fingerprint=FP)
    report = build_report(runs, name="r", study_id="s", protocol=EvalProtocol(), created_by="x",
                          settings=ComparisonSettings(permutations=100))
    assert "protocol" in (report.run("C").not_comparable_reason or "")
    assert "cutoff k=5" in (report.run("D").not_comparable_reason or "")
    assert report.comparison is not None and report.comparison.runs == ["A", "B"]


def test_explicit_fingerprint_can_exclude_the_baseline() -> None:
    report = build_report(_runs(), name="r", study_id="s", protocol=EvalProtocol(),
                          created_by="x", corpus_fingerprint=OTHER_FP, settings=ComparisonSettings(permutations=100))
    assert [r.comparable for r in report.runs] == [False, False, True]
    assert report.comparison is None
    assert "1 comparable run" in (report.comparison_note or "")
    assert "No comparison" in render_html(report)


def test_missing_fingerprints_are_compared_with_a_warning() -> None:
    runs = {n: RunInput(evaluation=r.evaluation) for n, r in _runs().items()}
    report = build_report(runs, name="r", study_id="s", protocol=EvalProtocol(),
                          created_by="x", settings=ComparisonSettings(permutations=100))
    assert all(r.comparable for r in report.runs)
    assert any("not verified" in w for w in report.warnings)


def test_a_run_without_a_fingerprint_is_not_verified_until_the_lead_accepts_it() -> None:
    runs = _runs()
    runs["A"] = RunInput(evaluation=runs["A"].evaluation)  # the baseline records none
    report = build_report(runs, name="r", study_id="s", protocol=EvalProtocol(),
                          created_by="lead-lena", settings=ComparisonSettings(permutations=100))
    b = report.run("B")
    assert not b.comparable and b.not_comparable_reason is None and not b.accepted_unverified
    assert b.status()[0] == "comparability not verified"
    assert "different corpus" not in (b.not_verified_reason or "")
    assert "the report's corpus fingerprint is not recorded" in (b.not_verified_reason or "")
    html = render_html(report)
    assert "comparability not verified" in html and "different corpus" not in html
    assert report.comparison is None  # only A (the baseline itself) is compared

    accepted = build_report(runs, name="r", study_id="s", protocol=EvalProtocol(),
                            created_by="lead-lena", accept_unverified=["B", "C"],
                            settings=ComparisonSettings(permutations=100))
    assert accepted.run("B").comparable and accepted.run("B").accepted_unverified
    assert accepted.run("C").accepted_unverified
    assert accepted.comparison is not None
    assert [r.run for r in accepted.comparison.table.rows] == ["A", "B", "C"]
    assert any("lead-lena accepted run 'B'" in w for w in accepted.warnings)
    body = json.loads(render_json(accepted))
    assert [r["accepted_unverified"] for r in body["runs"]] == [False, True, True]
    assert body["runs"][1]["not_verified_reason"] == accepted.run("B").not_verified_reason
    assert "accepted without verification" in render_html(accepted)
    # Acceptance never turns a different corpus into a comparable one.
    refused = build_report(_runs(), name="r", study_id="s", protocol=EvalProtocol(),
                           created_by="x", accept_unverified=["C"],
                           settings=ComparisonSettings(permutations=100))
    assert not refused.run("C").comparable and not refused.run("C").accepted_unverified
    with pytest.raises(ValueError, match="cannot accept 'Z'"):
        build_report(_runs(), name="r", study_id="s", protocol=EvalProtocol(), created_by="x",
                     accept_unverified=["Z"])


def test_build_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="at least one run"):
        build_report({}, name="r", study_id="s", protocol=EvalProtocol(), created_by="x")
    with pytest.raises(ValueError, match="created_by"):
        build_report(_runs(), name="r", study_id="s", protocol=EvalProtocol(), created_by=" ")
    with pytest.raises(ValueError, match="baseline 'Z'"):
        build_report(_runs(), name="r", study_id="s", protocol=EvalProtocol(), created_by="x",
                     baseline="Z")


def test_html_is_self_contained_and_embeds_plotly_once() -> None:
    html = render_html(_report())
    assert not re.search(r"<script[^>]*\bsrc\s*=", html, flags=re.IGNORECASE)
    assert not re.search(r"<link[^>]*https?://", html, flags=re.IGNORECASE)
    assert "cdn.plot.ly" not in html.split("Plotly.newPlot")[0].split("<body>")[0]
    assert html.count("Plotly.newPlot(") >= 5
    # The plotly.js bundle is inline exactly once.
    assert html.count("plotly.js v") == 1 or html.count("* plotly.js") == 1


def test_html_escapes_every_data_string() -> None:
    html = render_html(_report())
    assert XSS not in html
    assert "<b>bold</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "what is &lt;b&gt;bold&lt;/b&gt;?" in html


def test_html_shows_unavailable_with_reasons_never_as_zero() -> None:
    report = _report()
    html = render_html(report)
    detail = aggregate_detail(report.run("A").evaluation.aggregates["precision"])
    # plain words on the page; the codes stay in the JSON and CSV exports
    assert detail.startswith(
        "unavailable — 1 of 4 queries missing (1 with unlabeled results in the top k)")
    assert "available on 3 of 4" in detail
    assert detail in html or detail.replace("—", "&mdash;") in html
    assert "unavailable (unlabeled results in the top k)" in html
    assert "unavailable (unlabeled_returned)" not in html
    assert "unavailable (1 of 4 missing)" in html


def test_per_query_chart_draws_unavailable_queries_in_their_own_strip() -> None:
    report = _report()
    fig = per_query_figure(report, "precision")
    by_name = {t["name"]: t for t in fig["data"]}
    values, missing = by_name["A"], by_name["A: unavailable (1)"]
    q4 = sorted({q.query_id for r in report.runs for q in r.evaluation.queries}).index("q4")
    assert q4 not in list(values["x"]) and len(values["x"]) == 3
    assert list(missing["x"]) == [q4] and list(missing["y"]) == ["A"]
    assert missing["yaxis"] == "y2" and values["yaxis"] == "y"
    assert "unlabeled_returned" in missing["text"][0]
    # The strip is its own category axis, not a position on the value axis.
    assert fig["layout"]["yaxis2"]["type"] == "category"


def test_per_query_chart_menu_shows_one_metric_at_a_time() -> None:
    fig = per_query_metrics_figure(_report(), ["precision", "ndcg"])
    assert len(fig["data"]) == 2 * 2 * 3  # metrics x (values, unavailable) x runs
    assert [t["visible"] for t in fig["data"]] == [True] * 6 + [False] * 6
    ndcg = fig["layout"]["updatemenus"][0]["buttons"][1]
    assert ndcg["label"] == "nDCG@10"
    assert ndcg["args"][0]["visible"] == [False] * 6 + [True] * 6


def test_delta_chart_shows_excluded_queries_apart() -> None:
    report = _report()
    assert report.comparison is not None
    item = report.comparison.comparison("precision", "B", "A")
    assert item.n_paired == 3 and item.n_excluded == 1
    fig = delta_figure(item)
    bars, excluded = fig["data"]
    assert bars["type"] == "bar" and len(bars["y"]) == 3 and len(excluded["x"]) == 1
    assert list(bars["y"]) == sorted(item.deltas)
    assert "q4" in excluded["text"][0] and excluded["yaxis"] == "y2"


def test_delta_chart_with_many_queries_draws_one_curve_per_sign() -> None:
    cells_a = {f"q{i:04d}": (i % 7) / 7 for i in range(700)}
    cells_b = {f"q{i:04d}": (i % 5) / 5 for i in range(700)}
    cells_a["q0000"] = UNL
    item = compare_metric("ndcg", "A", report_from(cells_a), "B", report_from(cells_b),
                          permutations=100)
    down, up, excluded = delta_figure(item)["data"]
    assert down["type"] == up["type"] == "scatter" and down["fill"] == "tozeroy"
    assert len(down["y"]) + len(up["y"]) == item.n_paired == 699
    assert (down["y"] < 0).all() and (up["y"] >= 0).all()
    assert len(excluded["x"]) == 1


def test_exports_strip_internal_data_unless_asked() -> None:
    report = _report()
    secrets = ["annotator-alice", "secret-note-text", "987654321", '"run_ids"', "lead-lena-internal"]
    html, text = render_html(report), render_json(report)
    csv_text = render_csv(report)
    for secret in secrets[:4]:
        assert secret not in html and secret not in text and secret not in csv_text
    assert json.loads(text)["internal"] is None
    full_html = render_html(report, include_internal=True)
    full_json = json.loads(render_json(report, include_internal=True))
    assert "annotator-alice" in full_html and "secret-note-text" in full_html
    assert full_json["internal"]["run_ids"] == {"A": 101, "B": 102, "C": 103}
    assert full_json["internal"]["notes"][0]["note"] == "secret-note-text"
    assert report.internal is not None  # the model itself keeps it (the store keeps it)


def test_json_export_keeps_the_contract_shape_per_run() -> None:
    body = json.loads(render_json(_report()))
    assert body["report_format"] == 1
    assert body["reference_version"] == "v1" and body["corpus_fingerprint"] == FP
    assert body["created_at"] == "2026-07-01T12:00:00Z" and body["evalcore_version"]
    evaluation = body["runs"][0]["evaluation"]
    assert evaluation["protocol"] == {
        "relevance_threshold": 1, "gain": "linear", "unjudged_as_nonrelevant": False
    }
    by_id = {q["query_id"]: q for q in evaluation["queries"]}
    assert by_id["q1"]["metrics"]["precision"] == {"status": "available", "value": 0.5}
    unavailable = by_id["q4"]["metrics"]["precision"]
    assert unavailable["status"] == "unavailable" and unavailable["value"] is None
    assert unavailable["reasons"] == UNL
    agg = evaluation["aggregates"]["precision"]
    assert agg["value"] is None and agg["n_missing"] == 1 and agg["reasons"] == {
        "unlabeled_returned": 1
    }
    comparison = body["comparison"]["comparisons"][0]
    assert comparison["summary"].startswith("computed on 3 of 4 queries")


def test_csv_has_one_row_per_run_and_query_and_blank_unavailable_values() -> None:
    rows = list(csv.DictReader(io.StringIO(render_csv(_report()))))
    assert len(rows) == 12
    assert list(rows[0].keys()) == csv_header()
    a_q4 = next(r for r in rows if r["run"] == "A" and r["query_id"] == "q4")
    assert a_q4["precision_status"] == "unavailable" and a_q4["precision_value"] == ""
    assert a_q4["precision_reasons"] == "unlabeled_returned"
    b_q4 = next(r for r in rows if r["run"] == "B" and r["query_id"] == "q4")
    assert b_q4["precision_value"] == "0.0"
    c_row = next(r for r in rows if r["run"] == "C")
    assert c_row["comparable"] == "false"
    assert any(r["query_id"] == XSS for r in rows)  # CSV holds data verbatim
