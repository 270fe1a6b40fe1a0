"""Reports: pinned, immutable records of how runs scored, and their exports.

* :func:`evalcore.report.build.build_report` — runs' evaluations -> :class:`Report`
* :func:`evalcore.report.from_store.report_from_store` — the same, from the store
* :func:`evalcore.report.html.render_html`, :func:`evalcore.report.json_export.render_json`,
  :func:`evalcore.report.csv_export.render_csv` — exports
* :mod:`evalcore.store.reports` — save / load in the ``reports`` table
"""

from evalcore.report.model import Report, ReportInternal, ReportRun

__all__ = ["Report", "ReportInternal", "ReportRun"]
