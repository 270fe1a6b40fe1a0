"""The comparison's per-query delta chart on a few queries: readable axis, no hidden pair."""

from report_builders import report_from

from evalcore.analysis.compare import compare_metric
from evalcore.report.charts import delta_figure


def test_few_paired_queries_are_named_on_the_axis_and_a_zero_delta_stays_visible() -> None:
    item = compare_metric("precision", "A", report_from({"q1": 0.5, "q2": 0.2, "q3": 0.9}),
                          "B", report_from({"q1": 0.5, "q2": 0.4, "q3": 0.6}), permutations=100)
    fig = delta_figure(item)
    bars = fig["data"][0]
    axis = fig["layout"]["xaxis"]
    assert list(axis["ticktext"]) == list(bars["text"])  # query ids, in the sorted bar order
    assert list(axis["tickvals"]) == list(bars["x"])
    zero = list(bars["y"]).index(0.0)
    assert bars["marker"]["line"]["width"] > 0
    assert bars["marker"]["color"][zero] not in (bars["marker"]["color"][0],
                                                  bars["marker"]["color"][-1])


def test_many_paired_queries_keep_a_numeric_axis() -> None:
    cells = {f"q{i:03d}": (i % 3) / 3 for i in range(60)}
    item = compare_metric("precision", "A", report_from(cells), "B",
                          report_from({q: 0.5 for q in cells}), permutations=100)
    assert "ticktext" not in delta_figure(item)["layout"]["xaxis"]


def test_every_kind_of_delta_chart_is_a_valid_plotly_figure() -> None:
    """The Compare page hands these dicts to Streamlit unchecked (app/components/figures.py):
    plotly's validation of each kind (bars, filled curves, excluded strip) is done here."""
    import plotly.graph_objects as go

    few = compare_metric("precision", "A", report_from({"q1": 0.5, "q2": ["unlabeled_returned"], "q3": 0.9}),
                         "B", report_from({"q1": 0.5, "q2": 0.4, "q3": 0.6}), permutations=100)
    cells = {f"q{i:04d}": (i % 7) / 7 for i in range(600)}
    many = compare_metric("precision", "A", report_from(cells), "B",
                          report_from({q: 0.5 for q in cells}), permutations=100)
    for item in (few, many):
        figure = delta_figure(item)
        validated = go.Figure(figure).to_plotly_json()  # raises on any invalid property
        assert [t["type"] for t in validated["data"]] == [t["type"] for t in figure["data"]]
