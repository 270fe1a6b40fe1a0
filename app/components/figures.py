"""Figure dicts of :mod:`evalcore.report.charts` and :mod:`evalcore.live` handed to
``st.plotly_chart`` without plotly's validation of every property (slow on a first
render): the figures are built from valid values, and their tests build each kind with
validation (tests/report/test_report_delta_chart.py, tests/live/test_live_charts.py).
"""

from typing import Any

# The class itself, not the lazy ``plotly.graph_objects`` module (which loads on first use).
from plotly.graph_objs import Figure


def unchecked_figure(figure: dict[str, Any]) -> Figure:
    """``figure`` as a plotly ``Figure``, not validated again (it was when its kind was tested)."""
    return Figure(figure, _validate=False)
