"""The dashboard's per-query figure: unavailable queries in their own strip, never as 0.

The figures are dicts the app hands to Streamlit unchecked (app/components/figures.py):
here each kind is built with plotly's validation (``go.Figure`` raises on any invalid
property).
"""

from pathlib import Path

import plotly.graph_objects as go
import pytest

from evalcore.analysis.interval_text import aggregate_card
from evalcore.contract.results import AggregateValue
from evalcore.live.chart_style import two_row_layout
from evalcore.live.charts import per_query_figure
from evalcore.live.dashboard import LiveDashboard
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries, create_study


def test_unavailable_queries_are_markers_in_the_strip_not_zeros(tmp_path: Path, new_store_target) -> None:
    db = open_store(new_store_target("c.sqlite"))
    create_study(db, StudyIn(study_id="s", name="s", corpus_id="c"))
    add_queries(db, "s", [QueryIn(query_id=q, text=q) for q in ("a", "b", "c")])
    add_run(db, study_id="s", name="<i>run</i>", source="imported", k=1,
            results=[("a", 1, "x", 1.0), ("b", 1, "y", 1.0), ("c", 1, "z", 1.0)])
    record_label(db, study_id="s", query_id="a", unit_id="x", gain=0, annotator="ann")
    record_label(db, study_id="s", query_id="b", unit_id="y", gain=2, annotator="ann")
    state = LiveDashboard.build(open_study(db, "s", None))
    fig = go.Figure(per_query_figure(state, "precision", "P@1"))
    values, strip = fig.data
    assert list(values.x) == [0, 1] and list(values.y) == [0.0, 1.0]
    assert list(strip.x) == [2] and list(strip.text) == ["c: no label at all"]
    assert strip.yaxis == "y2" and values.yaxis == "y"
    assert "<i>" not in fig.to_json() and "&lt;i&gt;run&lt;/i&gt;" in values.name


def test_aggregate_card_never_shows_a_subset_mean() -> None:
    value = AggregateValue(status="unavailable", value=None, n_queries=50, n_available=37,
                           n_missing=13, reasons={"unlabeled_returned": 9,
                                                  "population_incomplete": 4},
                           lower=0.41, upper=0.63)
    card = aggregate_card(value)
    assert card.sentence == ("unavailable — 13 of 50 queries missing (9 unlabeled results in "
                             "the top k, 4 a relevant set not declared complete); bounds "
                             "0.4100–0.6300")
    ok = AggregateValue(status="available", value=0.5, n_queries=2, n_available=2, n_missing=0)
    assert aggregate_card(ok).sentence == "0.5000 — mean over 2 queries"
    empty = AggregateValue(status="unavailable", n_queries=0, n_available=0, n_missing=0,
                           reasons={"no_queries": 1})
    assert aggregate_card(empty).sentence == "unavailable — no queries"


def test_a_large_study_draws_its_points_with_webgl(tmp_path: Path, monkeypatch, new_store_target) -> None:
    """From _WEBGL_FROM points the chart uses Scattergl, which has no offset groups: the
    figure must still build (plotly refused the property and the dashboard page failed on
    every study of 1,000 queries and 2 runs or more)."""
    from evalcore.live import charts

    db = open_store(new_store_target("c.sqlite"))
    create_study(db, StudyIn(study_id="s", name="s", corpus_id="c"))
    add_queries(db, "s", [QueryIn(query_id=q, text=q) for q in ("a", "b")])
    for run in ("r1", "r2"):
        add_run(db, study_id="s", name=run, source="imported", k=2,
                results=[("a", 1, "x", 1.0), ("a", 2, "w", 0.5), ("b", 1, "y", 1.0)])
    record_label(db, study_id="s", query_id="a", unit_id="x", gain=1, annotator="ann")
    record_label(db, study_id="s", query_id="b", unit_id="y", gain=2, annotator="ann")
    state = LiveDashboard.build(open_study(db, "s", None))
    small = go.Figure(per_query_figure(state, "precision", "P@2"))
    monkeypatch.setattr(charts, "_WEBGL_FROM", 1)
    large = go.Figure(per_query_figure(state, "precision", "P@2"))
    assert {t.type for t in small.data} == {"scatter"}
    assert {t.type for t in large.data} == {"scattergl"}
    # The same points and intervals either way.
    assert [(list(t.x), list(t.y)) for t in large.data] == [
        (list(t.x), list(t.y)) for t in small.data]


@pytest.mark.parametrize(("heights", "spacing", "shared_x"),
                         [((0.72, 0.28), 0.05, True), ((0.7, 0.3), 0.16, False),
                          ((0.75, 0.25), 0.1, True), ((0.5, 0.5), 0.0, False)])
def test_the_two_row_layout_is_make_subplots_layout(heights, spacing, shared_x,
                                                    monkeypatch) -> None:
    """The figures' two rows are make_subplots' (built once per shape): the same axes and
    titles, whatever figure asked for that shape first."""
    import plotly.io as pio
    from plotly.subplots import make_subplots

    monkeypatch.setattr(pio.templates, "default", "plotly")  # importing Streamlit changes it

    made = make_subplots(rows=2, cols=1, row_heights=list(heights), vertical_spacing=spacing,
                         shared_xaxes=shared_x, subplot_titles=("top &lt;", "bottom"))
    expected = made.layout.to_plotly_json()
    assert two_row_layout(("top &lt;", "bottom"), heights, spacing, shared_x,
                          template=True) == expected
    expected.pop("template")
    assert two_row_layout(("top &lt;", "bottom"), heights, spacing, shared_x) == expected


def test_report_figures_take_plotly_template_whatever_the_process_default(monkeypatch) -> None:
    """Importing Streamlit makes its template plotly's default: a report exported from the
    app must still carry plotly's own template, as the CLI's does (the same figures from
    either), and a shape first built under another default must not keep that template."""
    import plotly.io as pio

    from evalcore.live import chart_style

    monkeypatch.setattr(pio.templates, "default", "ggplot2")
    chart_style._two_rows.cache_clear()
    try:
        layout = two_row_layout(("a", "b"), (0.6, 0.4), 0.1, True, template=True)
        bare = two_row_layout(("a", "b"), (0.6, 0.4), 0.1, True)
    finally:
        chart_style._two_rows.cache_clear()
    assert layout["template"] == pio.templates["plotly"].to_plotly_json()
    assert "template" not in bare
    assert next(iter(layout)) == "template"
