"""A report as CSV: one row per run and query, every metric's value or why it is missing.

Columns: ``run, comparable, query_id, k, valid, query_reasons``, then for each
metric ``<metric>_status, <metric>_value, <metric>_reasons,
<metric>_blocking_ids, <metric>_lower, <metric>_upper``, then for each of the
report's measures with Judged@k beside each (:mod:`evalcore.report.measure_table`)
``<measure>_status, <measure>_value, <measure>_lower, <measure>_upper`` (a measure
without a cutoff named at the runs' k, ``P@k`` when they differ), then, when the report
records its query set, ``query_set``: the set every row is in (``judged (42 of 50 ...)``). Every value
column holds evidence-backed values only: the trec_eval-compatible numbers are
never in this CSV (they are per pair, in the report's own section). An unavailable
value's cell is empty (never 0); lists are joined with ``;``. The CSV never
holds internal data (annotators, notes, row ids). Text cells a spreadsheet would run
as a formula (a run named ``=HYPERLINK(...)``) start with a quote
(:mod:`evalcore.io.spreadsheet_cells`).
"""

import io

from evalcore.contract.measures import Measure
from evalcore.contract.results import METRICS, MetricValue
from evalcore.io.spreadsheet_cells import csv_writer
from evalcore.report.measure_table import report_measures
from evalcore.report.model import Report
from evalcore.store.study_measures import measure_label

_FIELDS = ("status", "value", "reasons", "blocking_ids", "lower", "upper")
_MEASURE_FIELDS = ("status", "value", "lower", "upper")


def csv_header(report: Report | None = None) -> list[str]:
    head = ["run", "comparable", "query_id", "k", "valid", "query_reasons"]
    head += [f"{metric}_{field}" for metric in METRICS for field in _FIELDS]
    if report is None:
        return head
    ks = {run.k for run in report.runs}
    k = next(iter(ks)) if len(ks) == 1 else None
    labels = [measure_label(m, k) for m in report_measures(report)]
    head += [f"{label}_{field}" for label in labels for field in _MEASURE_FIELDS]
    return head + (["query_set"] if report.query_set is not None else [])


def _value_cells(value: MetricValue | None, *, lists: bool) -> list[str]:
    """A value's status, value, (with ``lists``: reasons and blocking ids,) lower, upper."""
    if value is None:
        return ["not_computed"] + [""] * (5 if lists else 3)
    listed = [";".join(value.reasons), ";".join(value.blocking_ids)] if lists else []
    shown = _number(value.value) if value.available else ""
    return [value.status, shown, *listed, _number(value.lower), _number(value.upper)]


def _number(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def render_csv(report: Report) -> str:
    """The per-query CSV text (RFC 4180, ``\\r\\n`` line ends)."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(csv_header(report))
    measures: list[Measure] = report_measures(report)
    described = report.query_set.describe() if report.query_set is not None else None
    query_set = described.removeprefix("queries: ") if described is not None else None
    for run in report.runs:
        queries = run.measure_values.queries if run.measure_values is not None else []
        chosen = {q.query_id: q.metrics for q in queries}
        comparable = str(run.comparable).lower()
        for q in run.evaluation.queries:
            row = [run.name, comparable, q.query_id, q.k, str(q.valid).lower(), ";".join(q.reasons)]
            for metric in METRICS:
                row += _value_cells(q.metrics.get(metric), lists=True)
            for m in measures:
                row += _value_cells(chosen.get(q.query_id, {}).get(m.canonical), lists=False)
            if query_set is not None:
                row.append(query_set)
            writer.writerow(row)
    return out.getvalue()


#: Columns of :func:`render_verdicts_csv`.
VERDICT_FIELDS = tuple("candidate baseline difference measure status verdict verdict_code lower "
                       "upper labels_to_settle what_would_settle_it sentence estimate".split())


def render_verdicts_csv(report: Report) -> str:
    """The bottom line as CSV: one row per compared pair and measure, the interval of
    candidate − baseline (``lower``, ``upper``; empty when it cannot be decided yet), the
    status words and the Decision's code (``a_better``: the candidate is better), what
    would settle it, the pair's sentence on each of its rows, and the estimate from a
    named sample (``estimated: ...``, empty without one: never part of the verdict)."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(VERDICT_FIELDS)
    for line in report.pair_bottom_lines():
        pair = [line.candidate, line.baseline, line.difference]
        for m in line.measures:
            verdict = [m.measure, m.status, m.verdict_cell, m.verdict]
            settle = ["" if m.labels_to_settle is None else m.labels_to_settle, m.settle]
            bounds = [_number(m.lower), _number(m.upper)]
            writer.writerow([*pair, *verdict, *bounds, *settle, line.sentence, m.estimate or ""])
    return out.getvalue()
