"""How per-query charts stay readable, for the dashboard's figure and the report's.

The query axis keeps positions as x, labelled with the (escaped) query ids, an evenly
spaced subset beyond :data:`QUERY_TICKS_UP_TO`. Runs with equal values do not hide each
other: markers of one query sit side by side (one offset group per run; SVG traces only)
and each run has its own open or filled symbol. Axes grow their margins to fit their
labels and the legend sits below everything (:data:`LEGEND_BELOW`).
"""

import copy
from functools import cache
from html import escape
from math import ceil
from typing import Any

from plotly.colors import qualitative

#: Up to this many queries every query id is an axis label; beyond, an evenly spaced subset.
QUERY_TICKS_UP_TO = 50
#: One symbol and size per run, cycled: open and filled shapes of different sizes,
#: so a marker drawn over another one leaves it visible.
_RUN_SYMBOLS = (
    ("circle", 7),
    ("diamond-open", 10),
    ("square-open", 9),
    ("triangle-up", 7),
    ("cross-thin-open", 10),
    ("star-open", 10),
)
#: A horizontal legend at the bottom of the whole figure, below the axis title (which
#: ``automargin`` places under the tick labels, however tall): the caller leaves this much
#: bottom margin beyond it.
LEGEND_BELOW: dict[str, Any] = {
    "orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom",
    "x": 0.0, "xanchor": "left",
}
LEGEND_ROOM = 60
#: Layout keys that set the runs' markers of one query side by side.
GROUPED_MARKERS: dict[str, Any] = {"scattermode": "group", "scattergap": 0.5}


#: A trace's axes in a :func:`two_row_layout`: the top row, the bottom row.
TOP_ROW: dict[str, Any] = {"xaxis": "x", "yaxis": "y"}
BOTTOM_ROW: dict[str, Any] = {"xaxis": "x2", "yaxis": "y2"}
#: The marker of a run's unavailable values in a chart's "unavailable" strip.
UNAVAILABLE_MARKER = {"symbol": "x-thin-open", "size": 7, "line": {"width": 1.5}}


def run_color(index: int) -> str:
    """The colour of the ``index``-th run (plotly's default palette, cycled)."""
    return qualitative.Plotly[index % len(qualitative.Plotly)]


def run_marker(index: int) -> dict[str, Any]:
    """The marker of the ``index``-th run (symbol and size; the colour is the caller's)."""
    symbol, size = _RUN_SYMBOLS[index % len(_RUN_SYMBOLS)]
    marker: dict[str, Any] = {"symbol": symbol, "size": size}
    if symbol.endswith("-open"):
        marker["line"] = {"width": 2}
    return marker


def query_axis(query_ids: list[str]) -> dict[str, Any]:
    """Axis settings labelling positions ``0..n-1`` with the (escaped) query ids."""
    n = len(query_ids)
    step = max(1, ceil(n / QUERY_TICKS_UP_TO))
    positions = list(range(0, n, step))
    axis: dict[str, Any] = {
        "tickmode": "array",
        "tickvals": positions,
        "ticktext": [escape(query_ids[i]) for i in positions],
        "automargin": True,
        "zeroline": False,
    }
    if n:  # half a position of room either side, so the first and last markers are whole
        axis["range"] = [-0.6, n - 0.4]
    return axis


def two_row_layout(titles: tuple[str, str], heights: tuple[float, float], spacing: float,
                   shared_x: bool = False, *, template: bool = False) -> dict[str, Any]:
    """The axes and subplot titles of two rows, one column, from ``make_subplots(rows=2,
    cols=1, row_heights=heights, vertical_spacing=spacing, shared_xaxes=shared_x)``: row 1 on
    axes x/y, row 2 on x2/y2; with plotly's own template "plotly" only if ``template`` (the
    app's charts take Streamlit's). The template is named, not the process default, which
    importing Streamlit changes: a report's figures are the same from the app and the CLI.
    ``titles`` are written as given (escape data)."""
    made = _two_rows(tuple(heights), spacing, shared_x)
    layout = {"template": _plotly_template()} if template else {}
    layout.update(copy.deepcopy({k: v for k, v in made.items() if k != "template"}))
    for annotation, title in zip(layout["annotations"], titles, strict=True):
        annotation["text"] = title
    return layout


@cache
def _two_rows(heights: tuple[float, ...], spacing: float, shared_x: bool) -> dict[str, Any]:
    from plotly.subplots import make_subplots  # imported by the first figure, not at start-up

    return make_subplots(rows=2, cols=1, row_heights=list(heights), vertical_spacing=spacing,
                         shared_xaxes=shared_x, subplot_titles=("top", "bottom")
                         ).layout.to_plotly_json()


def _plotly_template() -> dict[str, Any]:
    import plotly.io as pio

    return pio.templates["plotly"].to_plotly_json()
