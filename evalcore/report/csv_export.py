"""A report as CSV: one row per run and query, every metric's value or why it is missing.

Columns: ``run, comparable, query_id, k, valid, query_reasons``, then for each
metric ``<metric>_status, <metric>_value, <metric>_reasons,
<metric>_blocking_ids, <metric>_lower, <metric>_upper``. An unavailable
value's cell is empty (never 0); lists are joined with ``;``. The CSV never
holds internal data (annotators, notes, row ids). Text cells a spreadsheet would run
as a formula (a run named ``=HYPERLINK(...)``) start with a quote
(:mod:`evalcore.io.spreadsheet_cells`).
"""

import io

from evalcore.contract.results import METRICS
from evalcore.io.spreadsheet_cells import csv_writer
from evalcore.report.model import Report

_FIELDS = ("status", "value", "reasons", "blocking_ids", "lower", "upper")


def csv_header() -> list[str]:
    head = ["run", "comparable", "query_id", "k", "valid", "query_reasons"]
    return head + [f"{metric}_{field}" for metric in METRICS for field in _FIELDS]


def _number(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def render_csv(report: Report) -> str:
    """The per-query CSV text (RFC 4180, ``\\r\\n`` line ends)."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(csv_header())
    for run in report.runs:
        for q in run.evaluation.queries:
            row = [run.name, str(run.comparable).lower(), q.query_id, q.k,
                   str(q.valid).lower(), ";".join(q.reasons)]
            for metric in METRICS:
                value = q.metrics.get(metric)
                if value is None:
                    row += ["not_computed", "", "", "", "", ""]
                    continue
                row += [
                    value.status,
                    _number(value.value) if value.available else "",
                    ";".join(value.reasons),
                    ";".join(value.blocking_ids),
                    _number(value.lower),
                    _number(value.upper),
                ]
            writer.writerow(row)
    return out.getvalue()
