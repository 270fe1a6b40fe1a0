"""The report's measures per run: each measure's aggregate, or unavailable with its interval
(:mod:`evalcore.analysis.interval_text`), and the line that says which measures were used.
A report stored before reports had chosen measures has none: the rows are empty.
"""

from __future__ import annotations

from evalcore.analysis.interval_text import aggregate_value_text, unknown_counts
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.measures import Measure, parse_measure
from evalcore.report.model import Report, ReportRun
from evalcore.report.text_table import clean
from evalcore.store.study_measures import measure_label, shown_measures


class MeasureCell(FrozenModel):
    """One measure of one run, as shown."""

    measure: str
    #: ``RR@10``: the measure's canonical name at the run's k (one name per measure: the
    #: verdicts and tables say the same)
    label: str
    #: ``0.5320`` or ``unavailable · 0.41 to 0.58, 23 unlabeled``
    text: str
    available: bool


def report_measures(report: Report) -> list[Measure]:
    """The measures the report shows, then Judged at each cutoff they use."""
    return shown_measures([parse_measure(name) for name in report.measures])


def measures_line(report: Report) -> str:
    """Which measures the report uses: ``Success@2, nDCG@3 (each with Judged@k beside it;
    a measure without a cutoff at each run's k)``; empty for a report without them."""
    if not report.measures:
        return ""
    chosen = [parse_measure(name) for name in report.measures]
    names = ", ".join(measure_label(m) for m in chosen)
    return f"{names} (Judged@k beside each; a measure without a cutoff is taken at each run's k)"


def run_cells(report: Report, run: ReportRun) -> list[MeasureCell]:
    """The run's measures in the report's order (those the run was evaluated on)."""
    values = run.measure_values
    if values is None:
        return []
    cells = []
    for m in report_measures(report):
        aggregate = values.aggregates.get(m.canonical)
        if aggregate is None:
            continue  # deeper than the run: left out, with a warning in the report
        missing = [q.metrics.get(m.canonical) for q in values.queries]
        unlabeled, conflicts = unknown_counts(missing)
        cells.append(MeasureCell(
            measure=m.canonical,
            label=measure_label(m, run.k),
            text=aggregate_value_text(aggregate, unlabeled, conflicts),
            available=aggregate.available,
        ))
    return cells


def render_measures_text(report: Report) -> str:
    """The measures line and each run's measures as plain text (ends with a newline;
    empty for a report without chosen measures)."""
    if not report.measures:
        return ""
    lines = [f"measures: {measures_line(report)}"]
    for run in report.runs:
        cells = run_cells(report, run)
        lines.append(clean(f"{run.name} (k={run.k if run.k is not None else 'mixed'})"))
        width = max((len(c.label) for c in cells), default=0)
        lines += [f"  {c.label.ljust(width)}  {c.text}" for c in cells]
    return "\n".join(lines) + "\n"
