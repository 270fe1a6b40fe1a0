"""Reports: pinned, immutable records of how runs scored, and their exports.

* :func:`evalcore.report.build.build_report` — runs' evaluations -> :class:`Report`
* :func:`evalcore.report.from_store.report_from_store` — the same, from the store
* :func:`evalcore.report.html.render_html`, :func:`evalcore.report.json_export.render_json`,
  :func:`evalcore.report.csv_export.render_csv` — exports
* :mod:`evalcore.store.reports` — save / load in the ``reports`` table

The model's names are loaded on first use, so importing a light module of the
package (``evalcore evaluate`` prints with :mod:`evalcore.report.text_table`)
does not import the model, its comparisons and statistics (scipy).
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalcore.report.model import Report, ReportInternal, ReportRun

__all__ = ["Report", "ReportInternal", "ReportRun"]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module 'evalcore.report' has no attribute {name!r}")
    value = getattr(import_module("evalcore.report.model"), name)
    globals()[name] = value  # later look-ups skip this function
    return value
