"""Plotly figures of a report. Unavailable values are drawn as such, never as 0.

Every per-query figure has two rows sharing the query axis: the values that
exist, and below them a separate strip ("unavailable") with one marker per
run and query whose metric is unavailable, its reasons on hover. Text taken
from the data (run names, query ids, reasons) is HTML-escaped before it goes
into a figure, since plotly renders a subset of HTML in labels.
"""

from html import escape

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from evalcore.compare import MetricComparison, aggregate_text, cutoff_label
from evalcore.report.model import Report
from evalcore.results import MetricName

_UNAVAILABLE_MARKER = {"symbol": "x-thin-open", "size": 7, "line": {"width": 1.5}}


def per_query_figure(report: Report, metric: MetricName) -> go.Figure:
    """Each run's per-query values of ``metric``; unavailable queries in their own strip."""
    evaluations = [run.evaluation for run in report.runs]
    label = cutoff_label(metric, evaluations, aggregate=False)
    query_ids = sorted({q.query_id for ev in evaluations for q in ev.queries})
    position = {query_id: i for i, query_id in enumerate(query_ids)}
    fig = make_subplots(
        rows=2, cols=1, shared_xaxes=True, row_heights=[0.75, 0.25], vertical_spacing=0.04,
        subplot_titles=(f"{label} (available values)", "unavailable (not 0; reasons on hover)"),
    )
    for run in report.runs:
        x_ok, y_ok, text_ok, x_na, y_na, text_na = [], [], [], [], [], []
        name = escape(run.name)
        for q in run.evaluation.queries:
            value = q.metrics.get(metric)
            if value is not None and value.available:
                x_ok.append(position[q.query_id])
                y_ok.append(value.value)
                text_ok.append(escape(q.query_id))
            else:
                reasons = ", ".join(value.reasons) if value is not None else "not computed"
                x_na.append(position[q.query_id])
                y_na.append(name)
                text_na.append(f"{escape(q.query_id)}: {escape(reasons)}")
        fig.add_trace(
            go.Scatter(
                x=x_ok, y=y_ok, mode="markers", name=name, legendgroup=name, text=text_ok,
                hovertemplate="%{text}<br>" + f"{label} = " + "%{y:.4f}<extra>" + name + "</extra>",
                marker={"size": 5},
            ),
            row=1, col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=x_na, y=y_na, mode="markers", name=f"{name}: unavailable ({len(x_na)})",
                legendgroup=name, text=text_na, marker=_UNAVAILABLE_MARKER,
                hovertemplate="%{text}<extra>" + name + " unavailable</extra>",
            ),
            row=2, col=1,
        )
    fig.update_yaxes(title_text=label, range=[-0.02, 1.02], row=1, col=1)
    fig.update_yaxes(type="category", row=2, col=1)
    fig.update_xaxes(title_text=f"query (sorted by id, {len(query_ids)} queries)", row=2, col=1)
    fig.update_layout(height=520, margin={"t": 60, "b": 40}, legend={"orientation": "h"})
    return fig


def delta_figure(comparison: MetricComparison) -> go.Figure:
    """Per-query deltas on the paired queries, sorted; excluded queries in their own strip."""
    order = sorted(range(len(comparison.deltas)), key=lambda i: comparison.deltas[i])
    a, b = escape(comparison.run_a), escape(comparison.run_b)
    fig = make_subplots(
        rows=2, cols=1, row_heights=[0.8, 0.2], vertical_spacing=0.12,
        subplot_titles=(
            f"{comparison.label}: {a} − {b} per paired query (sorted)",
            f"excluded queries ({comparison.n_excluded}; not 0 — reasons on hover)",
        ),
    )
    fig.add_trace(
        go.Bar(
            x=list(range(len(order))),
            y=[comparison.deltas[i] for i in order],
            text=[escape(comparison.query_ids[i]) for i in order],
            hovertemplate="%{text}: Δ = %{y:.4f}<extra></extra>",
            name="Δ on paired queries",
            marker={"color": ["#2b8a3e" if comparison.deltas[i] > 0 else "#c92a2a" for i in order]},
        ),
        row=1, col=1,
    )
    fig.add_trace(
        go.Scatter(
            x=list(range(len(comparison.excluded))),
            y=["excluded"] * len(comparison.excluded),
            mode="markers",
            marker=_UNAVAILABLE_MARKER,
            name="excluded",
            text=[
                f"{escape(e.query_id)}: {a} [{escape(', '.join(e.reasons_a)) or 'available'}], "
                f"{b} [{escape(', '.join(e.reasons_b)) or 'available'}]"
                for e in comparison.excluded
            ],
            hovertemplate="%{text}<extra></extra>",
        ),
        row=2, col=1,
    )
    fig.update_yaxes(title_text="Δ", row=1, col=1)
    fig.update_yaxes(type="category", row=2, col=1)
    fig.update_layout(
        height=440, showlegend=False, margin={"t": 70, "b": 30},
        title={"text": escape(comparison.summary), "font": {"size": 12}},
    )
    return fig


def aggregate_figure(report: Report, metrics: list[MetricName]) -> go.Figure:
    """Each run's aggregates; an unavailable aggregate is a labelled gap, not a bar."""
    evaluations = [run.evaluation for run in report.runs]
    labels = [cutoff_label(m, evaluations, aggregate=True) for m in metrics]
    fig = go.Figure()
    for run in report.runs:
        values, texts = [], []
        for metric in metrics:
            agg = run.evaluation.aggregates.get(metric)
            values.append(agg.value if agg is not None and agg.available else None)
            texts.append(aggregate_text(agg) if agg is not None else "not computed")
        fig.add_trace(
            go.Bar(
                x=labels, y=values, name=escape(run.name), text=texts,
                textposition="outside", cliponaxis=False,
                hovertemplate="%{x}: %{text}<extra>" + escape(run.name) + "</extra>",
            )
        )
    fig.update_layout(
        barmode="group", height=380, yaxis={"range": [0, 1.1], "title": "aggregate"},
        title={"text": "Aggregates (no bar = unavailable; the text says how much is missing)",
               "font": {"size": 13}},
        margin={"t": 60},
    )
    return fig
