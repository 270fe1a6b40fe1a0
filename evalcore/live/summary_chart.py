"""A large study's dashboard figure: each run's distribution of per-query values.

From :data:`SUMMARY_FROM` queries a point per query and run is unreadable and costly to
draw; the dashboard draws this instead (and the per-query chart for a chosen subset,
:mod:`evalcore.live.query_subsets`). Top row: a histogram per run of its **available**
values (bins of :data:`BIN_WIDTH`; exactly 1 is in the last bin). Bottom row: one bar per
run split into its available and unavailable queries, reasons on hover: an unavailable
value is counted there, never binned as 0. Built from the state's arrays, a few dozen
numbers per run whatever the study's size; run names are HTML-escaped.
"""

from html import escape
from typing import Any

import numpy as np

from evalcore.contract.measures import Measure
from evalcore.contract.reasons import reason_words
from evalcore.live.chart_style import (
    BOTTOM_ROW,
    LEGEND_BELOW,
    LEGEND_ROOM,
    TOP_ROW,
    run_color,
    two_row_layout,
)
from evalcore.live.dashboard import LiveDashboard

#: From this many queries the dashboard draws the summary, not a point per query.
SUMMARY_FROM = 500
BIN_WIDTH = 0.05
_EDGES = np.linspace(0.0, 1.0, round(1 / BIN_WIDTH) + 1)
_UNAVAILABLE_COLOR = "#9e9e9e"
#: The count bars' row: one offset group, horizontal, on the second row's axes.
_COUNTS: dict[str, Any] = {"type": "bar", "orientation": "h", "offsetgroup": "counts",
                           **BOTTOM_ROW}


def shows_summary(state: LiveDashboard) -> bool:
    """Whether the study is large enough for the summary figure."""
    return len(state.query_ids) >= SUMMARY_FROM


def _reasons_text(reasons: dict[str, int]) -> str:
    return "<br>".join(f"{escape(reason_words(code))}: {n:,}" for code, n in sorted(reasons.items()))


def summary_figure(state: LiveDashboard, measure: Measure, label: str) -> dict[str, Any]:
    """Each run's histogram of available values of ``measure`` (named ``label``) and its
    count of unavailable queries."""
    layout = two_row_layout((f"{escape(label)}: available values (bins of {BIN_WIDTH:g})",
                             "queries available / unavailable (not 0)"), (0.7, 0.3), 0.16)
    centers = ((_EDGES[:-1] + _EDGES[1:]) / 2).tolist()
    bins = [f"{lo:.2f}-{hi:.2f}" for lo, hi in zip(_EDGES[:-1], _EDGES[1:], strict=True)]
    names = []
    data: list[dict[str, Any]] = []
    for index, run in enumerate(state.run_names):
        name = escape(run)
        names.append(name)
        color = run_color(index)
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
            **TOP_ROW,
        })
        data.append({
            **_COUNTS, "x": [n_ok], "y": [name], "legendgroup": name, "showlegend": False,
            "marker": {"color": color}, "text": [f"{n_ok:,} available"],
            "textposition": "inside", "insidetextanchor": "middle",
            "hovertemplate": f"{name}: {n_ok:,} available<extra></extra>",
        })
        data.append({
            **_COUNTS, "x": [n_na], "base": [n_ok], "y": [name], "legendgroup": name,
            "showlegend": False,
            "marker": {"color": _UNAVAILABLE_COLOR, "pattern": {"shape": "/"}},
            "text": [f"{n_na:,} unavailable"], "textposition": "inside",
            "insidetextanchor": "middle",
            "hovertemplate": (f"{name}: {n_na:,} unavailable (not 0); reasons (a query "
                              "may have several):<br>" + _reasons_text(cols.reasons)
                              + "<extra></extra>"),
        })
    n = len(state.query_ids)
    layout["xaxis"].update(range=[0, 1])
    layout["yaxis"].update(title={"text": "queries"}, rangemode="tozero")
    layout["xaxis2"].update(title={"text": f"queries (of {n:,})"}, range=[0, n])
    layout["yaxis2"].update(type="category", categoryorder="array",
                            categoryarray=names[::-1], automargin=True)
    layout.update(barmode="group", height=480 + LEGEND_ROOM,
                  margin={"t": 50, "b": LEGEND_ROOM}, legend=LEGEND_BELOW,
                  uniformtext={"minsize": 10, "mode": "hide"})  # no unreadable bar text
    return {"data": data, "layout": layout}
