"""Reports: pinned, immutable records of how runs scored, and their exports.

* :func:`evalcore.report.build.build_report` — runs' evaluations -> :class:`~evalcore.report.model.Report`
* :func:`evalcore.report.from_store.report_from_store` — the same, from the store
* :func:`evalcore.report.html.render_html`, :func:`evalcore.report.model.render_json`,
  :func:`evalcore.report.csv_export.render_csv` — exports
* :mod:`evalcore.store.reports` — save / load in the ``reports`` table

Nothing is imported here, so a light module of the package (``evalcore evaluate`` prints
with :mod:`evalcore.report.text_table`) does not import the model, its comparisons and
statistics (scipy).
"""
