"""The live dashboard's figures. Unavailable values are drawn as such, never as 0.

:func:`per_query_figure`: two rows share the query axis: each run's available values, and
below them an "unavailable" strip with one marker per run and query whose value is
unavailable (reasons on hover). An unavailable value with bounds is also drawn in the top
row as a vertical segment from its lower to its upper bound (a range, never a point).
Large studies use WebGL markers.

:func:`summary_figure`: from :data:`SUMMARY_FROM` queries a point per query and run is
unreadable and costly to draw, so the dashboard draws each run's histogram of its
**available** values (bins of :data:`BIN_WIDTH`; exactly 1 is in the last bin) over one
bar per run split into its available and unavailable queries (reasons on hover): an
unavailable value is counted there, never binned as 0. It is built from the state's
arrays, a few dozen numbers per run whatever the study's size. The per-query chart then
shows a chosen subset (:mod:`evalcore.live.query_subsets`).

Text from the data is HTML-escaped: plotly renders a subset of HTML in labels.
"""

from collections.abc import Sequence
from html import escape
from typing import Any

import numpy as np

from evalcore.analysis.interval_text import metric_value_text
from evalcore.contract.measures import Measure
from evalcore.contract.reasons import reason_words
from evalcore.contract.results import MetricValue
from evalcore.live import chart_style as style
from evalcore.live.dashboard import LiveDashboard

Figure = dict[str, Any]
_WEBGL_FROM = 2000


def _values(state: LiveDashboard, run: str, metric: str | Measure,
            queries: Sequence[str] | None) -> list[tuple[str, MetricValue]]:
    """The run's values of ``metric``: of ``queries`` only when given (their results alone
    are made on a large study)."""
    if isinstance(metric, Measure):
        return state.measure_values(run, metric, queries)
    return [(r.query_id, r.metrics[metric]) for r in state.runs[run].results]


def per_query_figure(state: LiveDashboard, metric: str | Measure, label: str,
                     queries: Sequence[str] | None = None, subset: str = "") -> Figure:
    """Each run's per-query values of ``metric`` (a section-7 key or a study measure),
    named ``label`` (e.g. ``P@10``): of every query, or of ``queries`` only (in that order;
    ``subset`` says which they are, e.g. ``the 50 lowest of run A``). A plotly figure dict
    (``{"data": [...], "layout": {...}}``), written without plotly's validators."""
    query_ids = state.query_ids if queries is None else list(queries)
    position = state.index if queries is None else {q: i for i, q in enumerate(query_ids)}
    n = len(query_ids)
    webgl = n * max(1, len(state.runs)) >= _WEBGL_FROM
    scatter = "scattergl" if webgl else "scatter"
    layout = style.two_row_layout((f"{escape(label)}: available values",
                             "unavailable (not 0; reasons on hover)"),
                            (0.72, 0.28), 0.05, shared_x=True)
    data: list[dict[str, Any]] = []
    for index, run in enumerate(state.run_names):
        name = escape(run)
        color = style.run_color(index)  # the run's points, ranges and strip alike
        # Scattergl has no offset groups: plotly refuses the property, even given as None.
        group = {} if webgl else {"offsetgroup": name}
        x_ok, y_ok, t_ok, x_na, t_na = [], [], [], [], []
        x_iv: list[int | None] = []
        y_iv: list[float | None] = []
        t_iv: list[str | None] = []
        for query_id, mv in _values(state, run, metric, queries):
            i = position.get(query_id)  # position among the queries shown
            if i is None:
                continue
            if mv.available and mv.value is not None:
                x_ok.append(i)
                y_ok.append(mv.value)
                t_ok.append(escape(query_id))
                continue
            x_na.append(i)
            t_na.append(f"{escape(query_id)}: {escape(', '.join(map(reason_words, mv.reasons)))}")
            if mv.lower is not None and mv.upper is not None:
                text = f"{escape(query_id)}: {escape(metric_value_text(mv))}"
                x_iv += [i, i, None]
                y_iv += [mv.lower, mv.upper, None]
                t_iv += [text, text, None]
        data.append({
            "type": scatter, "x": x_ok, "y": y_ok, "mode": "markers",
            "name": f"{name} ({len(x_ok)} available)", "legendgroup": name, "text": t_ok,
            "marker": {**style.run_marker(index), "color": color}, **group,
            "hovertemplate": "%{text}: %{y:.4f}<extra>" + name + "</extra>",
            **style.TOP_ROW,
        })
        if x_iv:
            data.append({
                "type": scatter, "x": x_iv, "y": y_iv, "mode": "lines",
                "name": f"{name}: interval of {len(x_iv) // 3} unavailable",
                "legendgroup": name, "text": t_iv, "line": {"width": 3, "color": color},
                "opacity": 0.55, "connectgaps": False, **group,
                "hovertemplate": "%{text}<extra>" + name + "</extra>",
                **style.TOP_ROW,
            })
        data.append({
            "type": scatter, "x": x_na, "y": [name] * len(x_na), "mode": "markers",
            "name": f"{name}: unavailable ({len(x_na)})", "legendgroup": name, "text": t_na,
            "marker": {**style.UNAVAILABLE_MARKER, "color": color},
            "hovertemplate": "%{text}<extra>" + name + " unavailable</extra>",
            **style.BOTTOM_ROW,
        })
    axis = style.query_axis(query_ids)
    shown = f"{n} queries" if queries is None else f"{escape(subset) or 'chosen'}: {n} queries"
    layout["xaxis"].update(axis)
    # Two lines: a subset's description would run past a phone's width on one.
    layout["xaxis2"].update(axis, title={"text": f"query (sorted by id)<br>{shown}"})
    layout["yaxis"].update(title={"text": escape(label)}, range=[-0.03, 1.03], automargin=True)
    layout["yaxis2"].update(type="category", automargin=True)
    layout.update(height=480 + style.LEGEND_ROOM, margin={"t": 50, "b": style.LEGEND_ROOM},
                  legend=style.LEGEND_BELOW)
    if not webgl:
        layout.update(style.GROUPED_MARKERS)
    return {"data": data, "layout": layout}


#: From this many queries the dashboard draws the summary, not a point per query.
SUMMARY_FROM = 500
BIN_WIDTH = 0.05
_EDGES = np.linspace(0.0, 1.0, round(1 / BIN_WIDTH) + 1)
_UNAVAILABLE_COLOR = "#9e9e9e"
#: The count bars' row: one offset group, horizontal, on the second row's axes.
_COUNTS: dict[str, Any] = {"type": "bar", "orientation": "h", "offsetgroup": "counts",
                           **style.BOTTOM_ROW}


def shows_summary(state: LiveDashboard) -> bool:
    """Whether the study is large enough for the summary figure."""
    return len(state.query_ids) >= SUMMARY_FROM


def _reasons_text(reasons: dict[str, int]) -> str:
    return "<br>".join(f"{escape(reason_words(code))}: {n:,}" for code, n in sorted(reasons.items()))


def summary_figure(state: LiveDashboard, measure: Measure, label: str) -> dict[str, Any]:
    """Each run's histogram of available values of ``measure`` (named ``label``) and its
    count of unavailable queries."""
    layout = style.two_row_layout((f"{escape(label)}: available values (bins of {BIN_WIDTH:g})",
                             "queries available / unavailable (not 0)"), (0.7, 0.3), 0.16)
    centers = ((_EDGES[:-1] + _EDGES[1:]) / 2).tolist()
    bins = [f"{lo:.2f}-{hi:.2f}" for lo, hi in zip(_EDGES[:-1], _EDGES[1:], strict=True)]
    names = []
    data: list[dict[str, Any]] = []
    for index, run in enumerate(state.run_names):
        name = escape(run)
        names.append(name)
        color = style.run_color(index)
        cols = state.measure_columns(run, measure)
        if cols is None:  # stored too shallow for the cutoff: nothing to count
            data.append({**_COUNTS, "x": [0], "y": [name], "name": f"{name}: not computed",
                         "marker": {"color": _UNAVAILABLE_COLOR}, "showlegend": True,
                         "hovertemplate": f"{name}: not computed (run too shallow)"
                                          "<extra></extra>"})
            continue
        values = np.clip(cols.value[cols.available], 0.0, 1.0)
        counts = np.histogram(values, bins=_EDGES)[0].tolist()
        n_ok, n_na = int(values.size), cols.n_unavailable
        data.append({
            "type": "bar", "x": centers, "y": counts,
            "width": BIN_WIDTH * 0.8 / max(1, len(state.run_names)),
            "name": f"{name} ({n_ok:,} available, {n_na:,} unavailable)",
            "legendgroup": name, "customdata": bins, "marker": {"color": color},
            "hovertemplate": "%{customdata}: %{y:,} queries<extra>" + name + "</extra>",
            **style.TOP_ROW,
        })
        # the run's bar of queries: available, then unavailable, each labelled inside
        bar = {**_COUNTS, "y": [name], "legendgroup": name, "showlegend": False,
               "textposition": "inside", "insidetextanchor": "middle"}
        data.append({**bar, "x": [n_ok], "marker": {"color": color}, "text": [f"{n_ok:,} available"],
                     "hovertemplate": f"{name}: {n_ok:,} available<extra></extra>"})
        reasons = f"reasons (a query may have several):<br>{_reasons_text(cols.reasons)}"
        data.append({**bar, "x": [n_na], "base": [n_ok], "text": [f"{n_na:,} unavailable"],
                     "marker": {"color": _UNAVAILABLE_COLOR, "pattern": {"shape": "/"}},
                     "hovertemplate": f"{name}: {n_na:,} unavailable (not 0); {reasons}<extra></extra>"})
    n = len(state.query_ids)
    layout["xaxis"].update(range=[0, 1])
    layout["yaxis"].update(title={"text": "queries"}, rangemode="tozero")
    layout["xaxis2"].update(title={"text": f"queries (of {n:,})"}, range=[0, n])
    layout["yaxis2"].update(type="category", categoryorder="array",
                            categoryarray=names[::-1], automargin=True)
    layout.update(barmode="group", height=480 + style.LEGEND_ROOM,
                  margin={"t": 50, "b": style.LEGEND_ROOM}, legend=style.LEGEND_BELOW,
                  uniformtext={"minsize": 10, "mode": "hide"})  # no unreadable bar text
    return {"data": data, "layout": layout}
