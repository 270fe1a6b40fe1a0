"""Charts people can read: query ids on the query axis, equal values of two runs both
visible, labels that fit, and an aggregate chart that is never empty."""

from pathlib import Path

import plotly.graph_objects as go
from report_builders import aggregates_of, report_from

from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.results import METRICS, EvaluationReport, MetricValue, QueryResult
from evalcore.live.chart_style import QUERY_TICKS_UP_TO, query_axis
from evalcore.live.charts import per_query_figure as live_figure
from evalcore.live.dashboard import LiveDashboard
from evalcore.report.build import RunInput, build_report
from evalcore.report.charts import aggregate_figure, per_query_figure, per_query_metrics_figure
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries, create_study

FP = "sha256:" + "a" * 64
QUERIES = ["q01", "q02", "q10", "<b>q3</b>"]


def _report(runs: dict[str, EvaluationReport]):
    return build_report({n: RunInput(evaluation=e, corpus_fingerprint=FP) for n, e in runs.items()},
                        name="r", study_id="s", protocol=EvalProtocol(), created_by="lead")


def _same_values() -> dict[str, EvaluationReport]:
    cells = {"q01": 0.5, "q02": 0.5, "q10": 1.0, "<b>q3</b>": ["unlabeled_returned"]}
    return {"bm25": report_from(cells), "dense": report_from(cells)}


def _assert_runs_visible_side_by_side(traces: list[dict], layout: dict) -> None:
    """Two runs with equal values: distinct offset groups and distinct marker symbols."""
    assert layout["scattermode"] == "group"
    assert len({t["offsetgroup"] for t in traces}) == len(traces)
    assert len({t["marker"]["symbol"] for t in traces}) == len(traces)


def test_report_per_query_axis_shows_query_ids_and_both_runs() -> None:
    fig = per_query_figure(_report(_same_values()), "precision")
    layout = fig["layout"]
    ordered = sorted(QUERIES)
    for axis in ("xaxis", "xaxis2"):
        assert layout[axis]["ticktext"] == ["&lt;b&gt;q3&lt;/b&gt;", "q01", "q02", "q10"]
        assert list(layout[axis]["tickvals"]) == list(range(len(ordered)))
        assert layout[axis]["automargin"] is True
    values = [t for t in fig["data"] if t["yaxis"] == "y"]
    assert [list(t["y"]) for t in values] == [[0.5, 0.5, 1.0]] * 2  # the same values...
    _assert_runs_visible_side_by_side(values, layout)  # ...both drawn
    assert layout["yaxis"]["automargin"] is True and layout["yaxis2"]["automargin"] is True
    assert layout["legend"]["yref"] == "container"  # below the axis title, not over it
    menu = per_query_metrics_figure(_report(_same_values()), ["precision", "ndcg"])
    assert menu["layout"]["xaxis"]["ticktext"] == layout["xaxis"]["ticktext"]


def test_many_queries_label_an_even_subset_with_their_ids() -> None:
    ids = [f"q{i:05d}" for i in range(1000)]
    axis = query_axis(ids)
    assert 10 <= len(axis["ticktext"]) <= QUERY_TICKS_UP_TO
    assert all(ids[v] == t for v, t in zip(axis["tickvals"], axis["ticktext"], strict=True))
    assert query_axis(ids[:QUERY_TICKS_UP_TO])["ticktext"] == ids[:QUERY_TICKS_UP_TO]


def test_live_per_query_axis_shows_query_ids_and_both_runs(tmp_path: Path, new_store_target) -> None:
    db = open_store(new_store_target("c.sqlite"))
    create_study(db, StudyIn(study_id="s", name="s", corpus_id="c"))
    add_queries(db, "s", [QueryIn(query_id=q, text=q) for q in ("qa", "qb", "qc")])
    results = [("qa", 1, "x", 1.0), ("qb", 1, "y", 1.0), ("qc", 1, "z", 1.0)]
    for name in ("one", "two"):  # two runs returning the same: equal values everywhere
        add_run(db, study_id="s", name=name, source="imported", k=1, results=results)
    record_label(db, study_id="s", query_id="qa", unit_id="x", gain=2, annotator="ann")
    record_label(db, study_id="s", query_id="qb", unit_id="y", gain=0, annotator="ann")
    fig = go.Figure(
        live_figure(LiveDashboard.build(open_study(db, "s", None)), "precision", "P@1")
    ).to_plotly_json()
    layout = fig["layout"]
    assert list(layout["xaxis"]["ticktext"]) == ["qa", "qb", "qc"]
    assert list(layout["xaxis2"]["ticktext"]) == ["qa", "qb", "qc"]
    assert layout["xaxis"]["automargin"] and layout["yaxis"]["automargin"]
    values = [t for t in fig["data"] if t["yaxis"] == "y"]
    assert [list(t["y"]) for t in values] == [[1.0, 0.0]] * 2
    _assert_runs_visible_side_by_side(values, layout)


def _with_bounds(value: float | None, lower: float, upper: float) -> MetricValue:
    if value is not None:
        return MetricValue(status="available", value=value)
    return MetricValue(status="unavailable", reasons=["unlabeled_returned"], blocking_ids=["X"],
                       lower=lower, upper=upper)


def test_aggregate_chart_draws_bounds_and_counts_when_aggregates_are_unavailable() -> None:
    queries = [
        QueryResult(query_id=q, k=10, valid=True,
                    metrics={m: _with_bounds(v, 0.2, 0.6) for m in METRICS})
        for q, v in (("q1", 0.5), ("q2", None))
    ]
    bounded = EvaluationReport(protocol=EvalProtocol(), queries=queries,
                               aggregates=aggregates_of(queries))
    unbounded = report_from({"q1": 0.5, "q2": ["unlabeled_returned"]})
    complete = report_from({"q1": 0.5, "q2": 0.25})
    fig = aggregate_figure(_report({"bounded": bounded, "unbounded": unbounded,
                                    "complete": complete}), ["precision"])
    by_name = {t["name"]: t for t in fig["data"]}
    # bounds: a floating bar from the lower to the upper bound of the mean, never a mean
    low, high = bounded.aggregates["precision"].lower, bounded.aggregates["precision"].upper
    assert (by_name["bounded"]["base"][0], by_name["bounded"]["y"][0]) == (low, high - low)
    assert by_name["bounded"]["marker"]["pattern"]["shape"] == ["/"]
    # no bounds: no bar, and a label saying so in its place
    assert by_name["unbounded"]["y"] == [None]
    assert by_name["unbounded: no bounds"]["text"] == ["no bounds"]
    assert by_name["complete"]["y"] == [0.375] and by_name["complete"]["text"] == ["0.375"]
    # every run has its count of queries with the metric: the chart is never empty
    counts = {n.split(":")[0]: t for n, t in by_name.items() if n.endswith("with the metric")}
    assert {n: (t["y"], t["text"]) for n, t in counts.items()} == {
        "bounded": ([0.5], ["1/2"]), "unbounded": ([0.5], ["1/2"]), "complete": ([1.0], ["2/2"])}
    assert fig["layout"]["xaxis"]["automargin"] and fig["layout"]["yaxis"]["automargin"]
