"""Plotly figures of a report. Unavailable values are drawn as such, never as 0.

Every per-query figure has two rows sharing the query axis: the values that exist, and
below them an "unavailable" strip with one marker per run and query whose value is
unavailable, its reasons on hover. Text from the data is HTML-escaped (plotly renders a
subset of HTML in labels). Figures are plain dicts with numpy arrays, rendered by
:func:`figure_html` without plotly's per-element validation (tens of thousands of points
per trace at 10,000 queries).
"""

import textwrap
from html import escape
from typing import Any

import numpy as np
import plotly.io as pio

from evalcore.analysis.compare import MetricComparison, aggregate_text, cutoff_label
from evalcore.contract.query_order import natural_key
from evalcore.contract.reasons import reason_words
from evalcore.contract.results import MetricName
from evalcore.live import chart_style as style
from evalcore.report.model import Report

Figure = dict[str, Any]
_UP, _DOWN = "#2b8a3e", "#c92a2a"
_ZERO = "#868e96"
#: Up to this many paired queries the delta chart draws one bar per query.
_BARS_UP_TO = 500
#: Up to this many bars each one is labelled with its query id on the axis.
_QUERY_TICKS_UP_TO = 40


def _wrapped(text: str) -> str:
    """Escaped ``text`` broken into ``<br>``-separated lines for a plotly title."""
    return "<br>".join(escape(line) for line in textwrap.wrap(text, 120)) or escape(text)


def _strings(values: list[str]) -> np.ndarray:
    return np.asarray(values, dtype=object)


def per_query_figure(report: Report, metric: MetricName) -> Figure:
    """Each run's per-query values of ``metric``; unavailable queries in their own strip."""
    evaluations = [run.evaluation for run in report.runs]
    label = cutoff_label(metric, evaluations, aggregate=False)
    query_ids = sorted({q.query_id for ev in evaluations for q in ev.queries}, key=natural_key)
    position = {query_id: i for i, query_id in enumerate(query_ids)}
    layout = style.two_row_layout(
        (f"{label} (available values)", "unavailable (not 0; reasons on hover)"),
        (0.75, 0.25), 0.1, shared_x=True, template=True,
    )
    data = []
    for index, run in enumerate(report.runs):
        x_ok, y_ok, text_ok, x_na, text_na = [], [], [], [], []
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
                text_na.append(f"{escape(q.query_id)}: {escape(reasons)}")
        data.append({
            "type": "scatter", "mode": "markers", "name": name, "legendgroup": name,
            "x": np.asarray(x_ok, dtype=np.int64), "y": np.asarray(y_ok, dtype=np.float64),
            "text": _strings(text_ok), **style.TOP_ROW, "offsetgroup": name,
            "marker": {**style.run_marker(index), "color": style.run_color(index)},
            "hovertemplate": f"%{{text}}<br>{label} = %{{y:.4f}}<extra>{name}</extra>",
        })
        data.append({
            "type": "scatter", "mode": "markers", "name": f"{name}: unavailable ({len(x_na)})",
            "legendgroup": name, "x": np.asarray(x_na, dtype=np.int64),
            "y": _strings([name] * len(x_na)), "text": _strings(text_na),
            **style.BOTTOM_ROW, "marker": {**style.UNAVAILABLE_MARKER, "color": style.run_color(index)},
            "hovertemplate": "%{text}<extra>" + name + " unavailable</extra>",
        })
    layout["yaxis"].update(title={"text": label}, range=[-0.03, 1.03], automargin=True)
    layout["yaxis2"].update(type="category", automargin=True)
    layout["xaxis"].update(style.query_axis(query_ids))
    layout["xaxis2"].update(style.query_axis(query_ids))
    layout["xaxis2"].update(title={"text": f"query (sorted by id, {len(query_ids)} queries)"})
    layout.update(height=520 + style.LEGEND_ROOM, margin={"t": 60, "b": style.LEGEND_ROOM},
                  legend=style.LEGEND_BELOW, **style.GROUPED_MARKERS)
    return {"data": data, "layout": layout}


def per_query_metrics_figure(report: Report, metrics: list[MetricName]) -> Figure:
    """:func:`per_query_figure` for several metrics in one chart, with a metric menu.

    Only the selected metric's traces are visible, so the browser draws one
    metric's points at a time (at 10,000 queries x 3 runs, 30,000 markers).
    """
    figures = [per_query_figure(report, metric) for metric in metrics]
    evaluations = [run.evaluation for run in report.runs]
    labels = [cutoff_label(metric, evaluations, aggregate=False) for metric in metrics]
    data: list[dict] = []
    owner: list[int] = []
    for index, figure in enumerate(figures):
        for trace in figure["data"]:
            data.append({**trace, "visible": index == 0})
            owner.append(index)
    layout = figures[0]["layout"]
    buttons = [
        {
            "label": label,
            "method": "update",
            "args": [
                {"visible": [o == index for o in owner]},
                {"yaxis.title.text": label, "annotations[0].text": f"{label} (available values)"},
            ],
        }
        for index, label in enumerate(labels)
    ]
    layout["updatemenus"] = [{
        "type": "buttons", "direction": "right", "buttons": buttons, "showactive": True,
        "x": 0.0, "xanchor": "left", "y": 1.12, "yanchor": "bottom",
    }]
    layout["margin"] = {"t": 90, "b": style.LEGEND_ROOM}
    return {"data": data, "layout": layout}


def _words(reasons: list[str]) -> str:
    """A run's reasons on an excluded query, in plain words (escaped), or ``available``."""
    return escape(", ".join(reason_words(r) for r in reasons)) or "available"


def delta_figure(comparison: MetricComparison) -> Figure:
    """Per-query deltas on the paired queries, sorted; excluded queries in their own strip."""
    deltas = np.asarray(comparison.deltas, dtype=np.float64)
    order = np.argsort(deltas, kind="stable")
    query_ids = _strings([escape(q) for q in comparison.query_ids])
    a, b = escape(comparison.run_a), escape(comparison.run_b)
    layout = style.two_row_layout(
        (
            f"{comparison.label}: {a} − {b} (baseline) per paired query<br>(sorted by Δ; "
            "hover for the query)",
            f"excluded queries ({comparison.n_excluded}; not 0 — reasons on hover)",
        ),
        (0.8, 0.2), 0.2, shared_x=False, template=True,
    )
    excluded_text = [
        f"{escape(e.query_id)}: {a} [{_words(e.reasons_a)}], {b} [{_words(e.reasons_b)}]"
        for e in comparison.excluded
    ]
    sorted_deltas = deltas[order]
    positions = np.arange(order.size)
    if order.size <= _BARS_UP_TO:
        delta_traces = [{
            "type": "bar", "name": "Δ on paired queries", **style.TOP_ROW,
            "x": positions, "y": sorted_deltas, "text": query_ids[order], "textposition": "none",
            "hovertemplate": "%{text}: Δ = %{y:.4f}<extra></extra>",
            # a zero delta is a flat bar: its outline keeps it visible (a paired query, not a gap)
            "marker": {"color": _sign_colors(sorted_deltas),
                       "line": {"color": _sign_colors(sorted_deltas), "width": 2}},
        }]
        if order.size <= _QUERY_TICKS_UP_TO:
            layout["xaxis"].update(tickmode="array", tickvals=positions,
                                   ticktext=query_ids[order])
    else:
        # Many queries: one filled curve per sign (a single SVG path each, not one bar per query).
        delta_traces = [
            {
                "type": "scatter", "mode": "lines", "fill": "tozeroy", "name": name,
                **style.TOP_ROW, "x": positions[mask], "y": sorted_deltas[mask],
                "text": query_ids[order][mask], "line": {"color": color, "width": 1},
                "hovertemplate": "%{text}: Δ = %{y:.4f}<extra></extra>",
            }
            for name, color, mask in (
                ("Δ < 0", _DOWN, sorted_deltas < 0), ("Δ ≥ 0", _UP, sorted_deltas >= 0)
            )
        ]
    data = [
        *delta_traces,
        {
            "type": "scatter", "mode": "markers", "name": "excluded", **style.BOTTOM_ROW,
            "x": np.arange(len(excluded_text)),
            "y": _strings(["excluded"] * len(excluded_text)), "text": _strings(excluded_text),
            "marker": style.UNAVAILABLE_MARKER, "hovertemplate": "%{text}<extra></extra>",
        },
    ]
    layout["yaxis"].update(title={"text": "Δ"}, range=_padded_range(sorted_deltas))
    layout["yaxis2"].update(type="category")
    layout["xaxis2"].update(showticklabels=False)
    title = _wrapped(comparison.summary)
    layout.update(
        height=460 + 16 * title.count("<br>"), showlegend=False,
        margin={"t": 90 + 16 * title.count("<br>"), "b": 30},
        title={"text": title, "font": {"size": 12}, "x": 0.01, "xanchor": "left"},
    )
    return {"data": data, "layout": layout}


def _padded_range(deltas: np.ndarray) -> list[float]:
    """A y range holding 0 and every delta, with room so a bar at 0 is not on the frame."""
    low = min(float(deltas.min()) if deltas.size else 0.0, 0.0)
    high = max(float(deltas.max()) if deltas.size else 0.0, 0.0)
    pad = 0.15 * ((high - low) or 1.0)
    return [low - pad, high + pad]


def _sign_colors(deltas: np.ndarray) -> np.ndarray:
    """Green above 0, red below, grey at 0."""
    return np.where(deltas > 0, _UP, np.where(deltas < 0, _DOWN, _ZERO)).astype(object)


def aggregate_figure(report: Report, metrics: list[MetricName]) -> Figure:
    """Each run's aggregates, and how many queries each one stands on.

    Top row: the mean as a bar when every query has the metric; otherwise the
    bounds the mean lies in as a hatched floating bar (never a bar of a subset
    mean), or, without bounds, the label "no bounds" in the bar's place. Bottom row: per run and metric,
    the share of queries that have the metric, labelled "available of all", so
    an unavailable aggregate is always drawn as how much is missing.
    """
    evaluations = [run.evaluation for run in report.runs]
    labels = [cutoff_label(m, evaluations, aggregate=False) for m in metrics]
    layout = style.two_row_layout(
        ("mean when every query has it; otherwise the bounds it lies in (hatched)",
         "queries with the metric (available of all)"),
        (0.62, 0.38), 0.16, shared_x=True, template=True,
    )
    data = []
    for index, run in enumerate(report.runs):
        name, color = escape(run.name), style.run_color(index)
        values, bases, texts, patterns, counts, count_texts = [], [], [], [], [], []
        for metric in metrics:
            agg = run.evaluation.aggregates.get(metric)
            if agg is not None and agg.available and agg.value is not None:
                values.append(agg.value)
                bases.append(0.0)
                patterns.append("")
                texts.append(f"{agg.value:.3f}")
            elif agg is not None and agg.lower is not None and agg.upper is not None:
                values.append(agg.upper - agg.lower)
                bases.append(agg.lower)
                patterns.append("/")
                texts.append(f"{agg.lower:.3f}–<br>{agg.upper:.3f}")  # two short lines fit a slot
            else:  # no value and no bounds: an empty bar that says so (never a 0)
                values.append(None)
                bases.append(0.0)
                patterns.append("")
                texts.append("")
            n_queries = agg.n_queries if agg is not None else 0
            n_available = agg.n_available if agg is not None else 0
            counts.append(n_available / n_queries if n_queries else 0.0)
            count_texts.append(f"{n_available}/{n_queries}" if n_queries else "no queries")
        hover = [escape(aggregate_text(run.evaluation.aggregates[m]))
                 if m in run.evaluation.aggregates else "not computed" for m in metrics]
        data.append({
            "type": "bar", "x": labels, "y": values, "base": bases, "name": name,
            "legendgroup": name, "offsetgroup": name, **style.TOP_ROW,
            "text": texts, "textposition": "outside", "cliponaxis": False,
            "customdata": hover,
            "marker": {"color": color, "pattern": {"shape": patterns, "fillmode": "overlay",
                                                   "fgcolor": "white", "solidity": 0.35}},
            "hovertemplate": "%{x}: %{customdata}<extra>" + name + "</extra>",
        })
        unbounded = [v is None for v in values]
        if any(unbounded):  # same slot as the run's bars; vertical text fits a narrow slot
            data.append({
                "type": "bar", "x": labels, "y": [0.0 if u else None for u in unbounded],
                "name": f"{name}: no bounds", "legendgroup": name, "offsetgroup": name,
                "showlegend": False, **style.TOP_ROW,
                "text": ["no bounds" if u else "" for u in unbounded], "textangle": -90,
                "textposition": "outside", "cliponaxis": False, "customdata": hover,
                "marker": {"color": color},
                "hovertemplate": "%{x}: %{customdata}<extra>" + name + "</extra>",
            })
        data.append({
            "type": "bar", "x": labels, "y": counts, "name": f"{name}: queries with the metric",
            "legendgroup": name, "offsetgroup": name, "showlegend": False,
            **style.BOTTOM_ROW, "text": count_texts, "textposition": "outside",
            "cliponaxis": False, "marker": {"color": color, "opacity": 0.55},
            "hovertemplate": "%{x}: %{text} queries have it<extra>" + name + "</extra>",
        })
    layout["yaxis"].update(range=[0, 1.15], title={"text": "aggregate"}, automargin=True)
    layout["yaxis2"].update(range=[0, 1.3], tickformat=".0%", title={"text": "queries"},
                            automargin=True)
    layout["xaxis"].update(automargin=True)
    layout["xaxis2"].update(automargin=True)
    layout.update(
        barmode="group", height=460 + style.LEGEND_ROOM, margin={"t": 70, "b": style.LEGEND_ROOM},
        title={"text": "Aggregates per run", "font": {"size": 13}, "x": 0.01, "xanchor": "left"},
        legend=style.LEGEND_BELOW,
    )
    return {"data": data, "layout": layout}


def figure_html(figure: Figure, *, include_plotlyjs: bool) -> str:
    """A ``<div>`` drawing ``figure``; with ``include_plotlyjs`` the plotly.js bundle inline."""
    return pio.to_html(
        figure,
        full_html=False,
        include_plotlyjs=include_plotlyjs,
        include_mathjax=False,
        validate=False,
        config={"displaylogo": False, "responsive": True},
    )
