"""Figure dicts of :mod:`evalcore.report.charts` and of the live dashboard
(:mod:`evalcore.live.charts`, :mod:`evalcore.live.summary_chart`) handed to
``st.plotly_chart`` as they are.

Given a dict, ``st.plotly_chart`` checks it against plotly's schema by building a
``plotly.graph_objects.Figure``, which imports and runs plotly's validator of every
property the figure uses: most of the Compare page's first render in a fresh server
process (benchmarks/bench_app.py). The report's
figures are built from values already valid, and their tests build each kind with
validation (tests/report/test_report_delta_chart.py, tests/live/test_live_charts.py,
tests/live/test_live_summary_chart.py): here they are wrapped in a ``Figure``
without that second check (plotly's ``_validate=False``, the same figure JSON).
"""

from typing import Any

# The class itself, not the lazy ``plotly.graph_objects`` module (which loads on first use).
from plotly.graph_objs import Figure


def unchecked_figure(figure: dict[str, Any]) -> Figure:
    """``figure`` as a plotly ``Figure``, not validated again (it was when its kind was tested)."""
    return Figure(figure, _validate=False)
