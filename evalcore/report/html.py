"""A report as one self-contained HTML file.

The file embeds plotly.js inline (once, with the first chart), so it opens
and draws its charts with no network access. Every piece of text that comes
from data — study, run and query names, query text, unit ids, reasons — is
escaped with :func:`html.escape`. Unavailable values are written out with
their reasons ("unavailable — 13 of 50 queries missing (9
unlabeled_returned, 4 population_incomplete)"), never as zeros.
"""

from collections.abc import Callable, Mapping, Sequence
from html import escape

from evalcore.analysis.bottom_line import (
    DIFFERENCE,
    GLOSSARY,
    BottomLine,
    measure_line,
    paired_words,
    signed,
    table_rows,
)
from evalcore.analysis.compare import MetricComparison, RunComparison, aggregate_text, cutoff_label
from evalcore.analysis.interval_text import aggregate_value_text, metric_value_text, unknown_counts
from evalcore.analysis.pair_comparison import COMPAT_LABEL, MeasureVerdict, PairComparison
from evalcore.analysis.stats.correction import CORRECTION_LABELS
from evalcore.analysis.stats.significance import TEST_LABELS, SignificanceResult
from evalcore.contract.query_order import natural_key
from evalcore.contract.reasons import REASON_TEXT, Reason, reason_words
from evalcore.contract.results import METRICS, AggregateValue, MetricValue
from evalcore.report.charts import (
    aggregate_figure,
    delta_figure,
    figure_html,
    per_query_metrics_figure,
)
from evalcore.report.decision_text import SELECTION_CAUTION
from evalcore.report.measure_table import measures_line, report_measures, run_cells
from evalcore.report.model import Report
from evalcore.store.study_measures import measure_label

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1200px;
color:#1b1b1b;padding:0 1rem}
table{border-collapse:collapse;margin:0.5rem 0 1rem;display:block;overflow-x:auto;max-width:100%}
th,td{border:1px solid #ccc;padding:0.25rem 0.5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}
.unavailable{color:#8a4b00}
.notcomparable{color:#a51d2d;font-weight:600}
.unverified{color:#8a4b00;font-weight:600}
.warning{background:#fff4e5;border-left:4px solid #e8590c;padding:0.5rem 1rem}
.meta td:first-child{font-weight:600}
sup{color:#1864ab;font-weight:700}
code{font-size:0.9em}
.small{font-size:0.85em;color:#555}
.bottomline{font-size:1.15em;border-left:4px solid #1864ab;padding:0.25rem 0.75rem}
.wide{overflow-x:auto;max-width:100%}
dt{font-weight:600}
@media (max-width:600px){body{margin:0.5rem auto;padding:0 0.5rem}th,td{padding:0.2rem}}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def aggregate_detail(value: AggregateValue) -> str:
    """Plain text for an aggregate: the mean, or what is missing and why (with bounds)."""
    if value.available:
        return aggregate_text(value)
    if value.n_queries == 0:
        return "unavailable — no queries"
    reasons = ", ".join(
        f"{n} with {reason_words(reason)}" for reason, n in sorted(value.reasons.items())
    )
    text = (
        f"unavailable — {value.n_missing} of {value.n_queries} queries missing ({reasons}); "
        f"available on {value.n_available} of {value.n_queries}"
    )
    if value.lower is not None and value.upper is not None:
        text += f"; bounds [{value.lower:.4f}, {value.upper:.4f}]"
    return text


def metric_cell(value: MetricValue | None) -> str:
    """Plain text for a per-query value: the number, or 'unavailable (reasons)'."""
    if value is None:
        return "not computed"
    if value.available and value.value is not None:
        return f"{value.value:.4f}"
    text = f"unavailable ({', '.join(reason_words(r) for r in value.reasons)})"
    if value.lower is not None and value.upper is not None:
        text += f" [{value.lower:.4f}, {value.upper:.4f}]"
    return text


def _significance(result: SignificanceResult) -> str:
    if not result.computed:
        return f'<span class="unavailable">not computable: {_e(result.reason)}</span>'
    return f"{result.p_value:.4g}"


def render_html(report: Report, *, include_internal: bool = False) -> str:
    """The report as a standalone HTML page (internal data only if asked for)."""
    report = report.for_export(include_internal)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(report.name)} — Relevance Ledger report</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{_e(report.name)}</h1>",
        _bottom_line_section(report),
        _meta(report),
    ]
    if report.warnings:
        parts.append("".join(f'<p class="warning">{_e(w)}</p>' for w in report.warnings))
    if report.notes:
        parts.append("".join(f'<p class="note">note: {_e(n)}</p>' for n in report.notes))
    parts.append(_runs_table(report))
    if report.measures:
        parts.append(_measures_section(report))
    parts.append(_decisions_section(report))
    if not report.measures:  # a report stored before chosen measures: its only table
        parts.append(_results(report))
    figures = [aggregate_figure(report, list(METRICS))]
    figures.append(per_query_metrics_figure(report, list(METRICS)))
    if report.comparison is not None:
        if not report.decisions:  # else the decided comparisons hold the paired tests
            parts.append(_significance_section(report.comparison))
        parts.append(_compat_section(report))
        figures += [delta_figure(c) for c in report.comparison.comparisons]
    parts.append("<h2>Charts</h2>")
    for i, fig in enumerate(figures):
        parts.append(figure_html(fig, include_plotlyjs=(i == 0)))
    parts.append(_per_query_table(report))
    parts.append(_per_query_measures(report))
    parts.append(_glossary())
    if report.internal is not None:
        parts.append(_internal(report))
    parts.append(
        '<p class="small">Generated by evalcore '
        f"{_e(report.evalcore_version)}. A value is shown only when the evidence behind it is "
        "complete; otherwise it is unavailable, with how much is missing and why.</p>"
    )
    parts.append("</body></html>")
    return "\n".join(parts)


def _meta(report: Report) -> str:
    protocol = report.protocol
    query_set = []
    if report.query_set is not None:
        ids = report.query_set.query_ids
        shown = report.query_set.describe().removeprefix("queries: ")
        query_set = [("Query set", shown + (f": {', '.join(ids)}" if ids else ""))]
    rows = [
        ("Study", f"{report.study_id}" + (f" — {report.study_name}" if report.study_name else "")),
        ("Reference version", report.reference_version or "working labels (not frozen)"),
        ("Reference hash", report.reference_hash or "—"),
        ("Corpus fingerprint", report.corpus_fingerprint or "none recorded"),
        (
            "Protocol",
            f"relevance threshold {protocol.relevance_threshold}, gain {protocol.gain}, "
            f"unjudged_as_nonrelevant {'ON' if protocol.unjudged_as_nonrelevant else 'off'}"
            + (", trec_eval ON" if protocol.trec_eval else "")
            + (
                ", populations declared complete (assumed, not labeled)"
                if protocol.populations_declared_complete
                else ""
            ),
        ),
        *([("Measures", measures_line(report))] if report.measures else []),
        *query_set,
        ("Baseline", report.baseline),
        ("Generated", f"{report.created_at} by {report.created_by}"),
        ("evalcore version", report.evalcore_version),
    ]
    body = "".join(f"<tr><td>{_e(k)}</td><td><code>{_e(v)}</code></td></tr>" for k, v in rows)
    return f'<table class="meta">{body}</table>'


def _runs_table(report: Report) -> str:
    rows = []
    for run in report.runs:
        label, reason = run.status()
        css = ' class="unverified"' if run.comparable else ' class="notcomparable"'
        css = "" if label == "comparable" else css
        status = f"<span{css}>{_e(label)}</span>" + (f": {_e(reason)}" if reason else "")
        rows.append(
            f"<tr><td>{_e(run.name)}</td><td><code>{_e(run.corpus_fingerprint or 'none')}"
            f"</code></td><td>{_e(run.k if run.k is not None else 'mixed')}</td>"
            f"<td>{run.n_queries}</td><td>{status}</td></tr>"
        )
    return (
        "<h2>Runs</h2><table><tr><th>run</th><th>corpus fingerprint</th><th>k</th>"
        f"<th>queries</th><th>comparability</th></tr>{''.join(rows)}</table>"
    )


def _measures_section(report: Report) -> str:
    """Each run's chosen measures with Judged@k: the mean, or unavailable with its interval."""
    rows = []
    for run in report.runs:
        cells = {c.measure: c for c in run_cells(report, run)}
        tds = "".join(
            ('<td class="unavailable">' if not c.available else "<td>")
            + f"<strong>{_e(c.label)}</strong> {_e(c.text)}</td>"
            if c is not None
            else "<td>deeper than the run</td>"
            for c in (cells.get(m.canonical) for m in report_measures(report))
        )
        rows.append(f"<tr><td>{_e(run.name)}</td>{tds}</tr>")
    head = "".join(f"<th>{_e(measure_label(m))}</th>" for m in report_measures(report))
    return (
        "<h2>Measures</h2>"
        f"<p>{_e(measures_line(report))}. An unavailable mean shows the interval the truth "
        "lies in and how many returned units are unknown.</p>"
        f'<div class="wide"><table class="measures"><tr><th>run</th>{head}</tr>{"".join(rows)}</table>'
    )


def _results(report: Report) -> str:
    """A report without chosen measures: one table of every run's section-7 aggregates (an
    unavailable one with its interval, the one interval writer), marks for the compared."""
    out = ["<h2>Results</h2>"]
    if report.comparison is None:
        out.append(f"<p>{_e(report.comparison_note or '')}</p>")
    table = report.comparison.table if report.comparison is not None else None
    marked = {row.run: row for row in table.rows} if table is not None else {}
    evaluations = [r.evaluation for r in report.runs]
    head = "".join(f"<th>{_e(cutoff_label(m, evaluations, aggregate=False))}</th>"
                   for m in METRICS)
    rows = []
    for run in report.runs:
        row = marked.get(run.name)
        cells = []
        for metric in METRICS:
            agg = run.evaluation.aggregates.get(metric)
            if agg is None:
                cells.append("<td>not computed</td>")
                continue
            unknowns = unknown_counts(q.metrics.get(metric) for q in run.evaluation.queries)
            text = aggregate_value_text(agg, *unknowns)
            marks = row.cells[metric].marks if row is not None and metric in row.cells else []
            sup = f"<sup>{_e(''.join(marks))}</sup>" if marks else ""
            css = "" if agg.available else ' class="unavailable"'
            cells.append(f'<td{css} title="{_e(aggregate_detail(agg))}">{_e(text)}{sup}</td>')
        name = f"({row.letter}) {run.name}" if row is not None else run.name
        rows.append(f"<tr><td>{_e(name)}</td>{''.join(cells)}</tr>")
    out.append(f"<table><tr><th>run</th>{head}</tr>{''.join(rows)}</table>")
    if table is not None:
        out.append(f'<p class="small">{_e(table.legend)}</p>')
    not_compared = [r for r in report.runs if not r.comparable]
    if not_compared:
        names = ", ".join(r.name for r in not_compared)
        out.append(
            f'<p class="notcomparable">Not compared (see Runs): {_e(names)}. Their own '
            "aggregates are in the table, without marks.</p>"
        )
    return "".join(out)


def _significance_section(comparison: RunComparison) -> str:
    rows = []
    for item, adjusted in zip(comparison.comparisons, comparison.adjusted_p_values, strict=True):
        rows.append(_significance_row(item, adjusted))
    return (
        "<h2>Paired comparisons</h2>"
        f"<p>Two-sided tests on the queries where both runs have the metric available. Marks "
        f"use the {_e(TEST_LABELS[comparison.test])} at p &lt; {_e(comparison.alpha)} after "
        f"{_e(CORRECTION_LABELS[comparison.correction])}. Randomization test: "
        f"{_e(comparison.permutations)} random sign assignments (seed {_e(comparison.seed)}) "
        "when more than 20 queries are paired, all 2<sup>n</sup> assignments otherwise. "
        "Δ is the mean difference on the paired queries only, not a run's score.</p>"
        "<table><tr><th>metric</th><th>runs</th><th>paired queries</th><th>mean Δ (paired)</th>"
        "<th>randomization p</th><th>t-test p</th><th>adjusted p (marks)</th>"
        f"<th>computed on</th></tr>{''.join(rows)}</table>"
    )


def _significance_row(item: MetricComparison, adjusted: float | None) -> str:
    delta = "—" if item.mean_delta is None else f"{item.mean_delta:+.4f}"
    adj = "—" if adjusted is None else f"{adjusted:.4g}"
    return (
        f"<tr><td>{_e(item.label)}</td><td>{_e(item.run_a)} vs {_e(item.run_b)} (baseline)</td>"
        f"<td>{item.n_paired} of {item.n_queries}</td><td>{delta}</td>"
        f"<td>{_significance(item.tests['randomization'])}</td>"
        f"<td>{_significance(item.tests['paired_t'])}</td><td>{adj}</td>"
        f"<td>{_e(item.summary)}"
        + (
            f'<br><span class="unavailable">Caution: {_e(item.selection_note)}.</span>'
            if item.selection_note
            else ""
        )
        + "</td></tr>"
    )


def _bottom_line_section(report: Report) -> str:
    """First in the report: per compared pair the sentence, then one row per measure."""
    lines = report.pair_bottom_lines()
    if not lines:
        return ""
    out = ["<h2>Bottom line</h2>"]
    out += [_bottom_line(line) for line in lines]
    out.append(
        f'<p class="small">Every difference is {_e(DIFFERENCE)}: a positive number means '
        "the candidate scores higher. The words are explained in the Glossary.</p>"
    )
    return "".join(out)


def _bottom_line(line: BottomLine) -> str:
    rows = table_rows(line)
    head = "".join(f"<th>{_e(h)}</th>" for h in rows[0]) if rows else ""
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(v)}</td>" for v in row.values()) + "</tr>" for row in rows
    )
    notes = "".join(f'<p class="small">{_e(n)}</p>' for n in line.notes)
    return (
        f'<p class="bottomline"><strong>{_e(line.sentence)}</strong></p>'
        f'<div class="wide"><table class="bottomline-table"><tr>{head}</tr>{body}</table>'
        f"</div>{notes}"
    )


def _decisions_section(report: Report) -> str:
    """The details behind the bottom line, per compared pair and measure: the bounds used,
    the labels that would settle it, the paired tests (where computed, in plain words);
    the paired tests' caution once."""
    if not report.decisions:
        return ""
    out = [
        "<h2>Decided comparisons</h2>",
        "<p>The details behind the bottom line. Statistical significance over the sample of "
        "queries is a separate question from the verdict.</p>",
    ]
    caution = False
    for pc in report.decisions:
        out.append(f"<h3>{_e(pc.run_a)} vs {_e(pc.run_b)} (baseline)</h3>")
        rows = "".join(_detail_row(item) for item in pc.measures)
        out.append(
            '<div class="wide"><table class="verdicts"><tr><th>measure</th><th>verdict</th>'
            "<th>labels that would settle it</th><th>paired tests computed on</th>"
            f"<th>paired mean {_e(DIFFERENCE)}</th><th>randomization p</th><th>t-test p</th>"
            f"</tr>{rows}</table></div>"
        )
        caution = caution or any(item.paired.selection_note for item in pc.measures)
    if caution:
        out.append(f'<p class="unavailable">Caution: {_e(SELECTION_CAUTION)}.</p>')
    return "".join(out)


def _detail_row(item: MeasureVerdict) -> str:
    d, queue, paired = item.decision, item.queue, item.paired
    line = measure_line(item)
    if queue is not None and queue.items:
        first = ", ".join(f"{it.query_id} {it.unit_id}" for it in queue.items)
        needed = f"about {line.labels_to_settle}; " if line.labels_to_settle else ""
        labels = f"{needed}first: {first} ({queue.n_candidates} unknown units in all)"
    else:
        labels = line.settle
    mean = "—" if paired.mean_delta is None else signed(paired.mean_delta, 4)
    return (
        f"<tr><td>{_e(d.measure)}</td><td><strong>{_e(line.verdict_cell)}</strong></td>"
        f"<td>{_e(labels)}</td><td>{_e(paired_words(paired))}</td><td>{_e(mean)}</td>"
        f"<td>{_significance(paired.tests['randomization'])}</td>"
        f"<td>{_significance(paired.tests['paired_t'])}</td></tr>"
    )


def _glossary() -> str:
    """The words of the report, and the reason codes its JSON and CSV exports hold."""
    words = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in GLOSSARY.items())
    codes = "".join(
        f"<li><code>{_e(reason.value)}</code>: {_e(text)}</li>"
        for reason, text in REASON_TEXT.items()
        if reason is not Reason.NO_QUERIES
    )
    return (
        f"<h2>Glossary</h2><dl>{words}</dl><details><summary>Reason codes in the JSON and "
        f"CSV exports</summary><ul>{codes}</ul></details>"
    )


def _compat_section(report: Report) -> str:
    """The trec_eval-compatible means: their own section and table, never the evidence's."""
    if not report.decisions:
        return ""
    out = [
        f"<h2>{_e(COMPAT_LABEL.capitalize())}</h2>",
        '<p class="warning">Not evidence: here unjudged results count as non-relevant and '
        "queries without any label are left out, as trec_eval does. Use these numbers only "
        "to reproduce a trec_eval result; the decided comparisons above are what the labels "
        "support.</p>",
    ]
    for pc in report.decisions:
        out.append(f"<h3>{_e(pc.run_a)} vs {_e(pc.run_b)} (baseline)</h3>")
        out.append(_compat_table(pc))
    return "".join(out)


def _compat_table(pc: PairComparison) -> str:
    def number(value: float | None, fmt: str) -> str:
        return "not computable" if value is None else format(value, fmt)

    rows = "".join(
        f"<tr><td>{_e(row.measure)}</td><td>{number(row.value_a, '.4f')}</td>"
        f"<td>{number(row.value_b, '.4f')}</td><td>{'not computable' if row.difference is None else signed(row.difference, 4)}</td>"
        f"<td>{row.n_queries_a} / {row.n_queries_b}</td></tr>"
        for row in pc.compat
    )
    notes = "".join(f'<p class="small">{_e(n)}</p>' for n in pc.compat_notes)
    return (
        f'<table class="compat"><tr><th>measure (trec_eval compatibility)</th>'
        f"<th>{_e(pc.run_a)} (compat.)</th><th>{_e(pc.run_b)} (compat.)</th>"
        f"<th>{_e(DIFFERENCE)} (compat.)</th><th>queries</th></tr>{rows}</table>{notes}"
    )


def _value_cells(by_run: Sequence[Mapping[str, Mapping[str, MetricValue]]], query_id: str,
                 keys: Sequence[str], text: Callable[[MetricValue | None], str]) -> str:
    """One query's cells: each run's value of each key (``not in run`` for a query the run
    does not have), an unavailable one marked."""
    cells = []
    for values in by_run:
        metrics = values.get(query_id)
        for key in keys:
            value = metrics.get(key) if metrics is not None else None
            shown = text(value) if metrics is not None else "not in run"
            css = "" if value is not None and value.available else ' class="unavailable"'
            cells.append(f"<td{css}>{_e(shown)}</td>")
    return "".join(cells)


def _per_query_table(report: Report) -> str:
    query_ids = sorted(
        {q.query_id for run in report.runs for q in run.evaluation.queries}, key=natural_key
    )
    by_run = [{q.query_id: q.metrics for q in run.evaluation.queries} for run in report.runs]
    head = "".join(
        f"<th>{_e(run.name)}<br>{_e(cutoff_label(m, [run.evaluation], aggregate=False))}</th>"
        for run in report.runs
        for m in METRICS
    )
    rows = [
        f"<tr><td>{_e(q)}</td><td>{_e(report.query_texts.get(q, ''))}</td>"
        f"{_value_cells(by_run, q, METRICS, metric_cell)}</tr>"
        for q in query_ids
    ]
    return (
        f"<h2>Per query</h2><details><summary>{len(query_ids)} queries</summary><table>"
        f"<tr><th>query</th><th>text</th>{head}</tr>{''.join(rows)}</table></details>"
    )


def _per_query_measures(report: Report) -> str:
    """Each query's value of the chosen measures (and Judged@k) per run, an unavailable one
    with its interval (:func:`~evalcore.analysis.interval_text.metric_value_text`)."""
    if not report.measures:
        return ""
    measures = report_measures(report)
    runs = [r for r in report.runs if r.measure_values is not None]
    by_run = [
        {q.query_id: q.metrics for q in r.measure_values.queries}  # type: ignore[union-attr]
        for r in runs
    ]
    query_ids = sorted({q for values in by_run for q in values}, key=natural_key)
    head = "".join(
        f"<th>{_e(run.name)}<br>{_e(measure_label(m, run.k))}</th>"
        for run in runs
        for m in measures
    )
    keys = [m.canonical for m in measures]
    rows = [f"<tr><td>{_e(q)}</td>{_value_cells(by_run, q, keys, metric_value_text)}</tr>"
            for q in query_ids]
    return (
        f"<h2>Per query: measures</h2><details><summary>{len(query_ids)} queries</summary>"
        f'<table class="measures-per-query"><tr><th>query</th>{head}</tr>{"".join(rows)}'
        "</table></details>"
    )


def _internal(report: Report) -> str:
    internal = report.internal
    assert internal is not None
    run_ids = ", ".join(f"{name}: {rid}" for name, rid in internal.run_ids.items())
    notes = "".join(
        f"<tr><td>{_e(n.query_id)}</td><td>{_e(n.unit_id)}</td><td>{_e(n.annotator)}</td>"
        f"<td>{_e(n.note)}</td><td>{_e(n.created_at)}</td><td>{n.event_id}</td></tr>"
        for n in internal.notes
    )
    annotators = "".join(
        f"<tr><td>{_e(q)}</td><td>{_e(', '.join(names))}</td></tr>"
        for q, names in sorted(internal.annotators.items(), key=lambda item: natural_key(item[0]))
    )
    return (
        "<h2>Internal (included on request)</h2>"
        f"<p>Run ids: {_e(run_ids) or '—'}. Reference frozen by: "
        f"{_e(internal.reference_created_by or '—')}.</p>"
        "<details><summary>Annotators per query</summary><table><tr><th>query</th>"
        f"<th>annotators</th></tr>{annotators}</table></details>"
        "<details><summary>Annotator notes</summary><table><tr><th>query</th><th>unit</th>"
        "<th>annotator</th><th>note</th><th>time</th><th>event</th></tr>"
        f"{notes}</table></details>"
    )
