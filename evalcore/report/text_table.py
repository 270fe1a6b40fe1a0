"""An :class:`~evalcore.contract.results.EvaluationReport` as a plain-text table: the
protocol (with every assumption that is on spelled out), one row per query, the aggregates,
the diagnostics. An unavailable value never shows a number in a value's place; its bounds
are printed as ``(lower..upper)``. Control characters in data-borne text are escaped so a
crafted id cannot rewrite the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalcore.contract.results import (
    METRIC_LABELS,
    METRICS,
    AggregateValue,
    EvaluationReport,
    MetricValue,
)

#: Blocking IDs shown per cell before "+N more".
MAX_IDS_SHOWN = 3

COMPATIBILITY_TEXT = (
    "unjudged_as_nonrelevant: ON (compatibility policy for reproducing trec_eval: "
    "unlabeled returned units are counted as non-relevant, so numbers may be lower "
    "than the evidence supports)"
)


TREC_EVAL_TEXT = (
    "trec_eval: ON (compatibility mode: unlabeled returned units count as non-relevant, every "
    "population is complete, and a query with no relevant unit is 0, as trec_eval values it)"
)


def render_table(report: EvaluationReport) -> str:
    """The whole report as text (ends with a newline)."""
    k_label = _k_label(report)
    legacy = [m for m in METRICS if m in report.aggregates]
    metrics = legacy + [m for m in report.aggregates if m not in METRICS] or list(METRICS)
    out: list[str] = ["Relevance Ledger evaluation"]
    out.extend(protocol_lines(report))
    out.append("")
    out.extend(_query_rows(report, metrics, k_label))
    out.append("")
    out.extend(aggregate_lines(report, metrics, k_label))
    diag = diagnostics_lines(report)
    if diag:
        out.append("")
        out.extend(diag)
    return "\n".join(out) + "\n"


COMPLETENESS_TEXT = (
    "populations_declared_complete: ON (--complete: every qrels query's labeled units are "
    "assumed to be all its relevant units; recall and nDCG rest on that assumption)"
)


def protocol_lines(report: EvaluationReport) -> list[str]:
    """The protocol header, with every assumption that is on spelled out."""
    p = report.protocol
    lines = [f"protocol: relevance_threshold={p.relevance_threshold}, gain={p.gain}"]
    if p.unjudged_as_nonrelevant:
        lines.append(COMPATIBILITY_TEXT)
    if p.trec_eval:
        lines.append(TREC_EVAL_TEXT)
    if p.populations_declared_complete:
        lines.append(COMPLETENESS_TEXT)
    return lines


def _k_label(report: EvaluationReport) -> str:
    ks = {q.k for q in report.queries}
    return str(next(iter(ks))) if len(ks) == 1 else "k"


def metric_cell(value: MetricValue) -> str:
    """One per-query value: the number, or why it is unavailable (and its bounds)."""
    if value.available and value.value is not None:
        return f"{value.value:.4f}"
    text = "unavailable: " + ", ".join(value.reasons)
    if value.blocking_ids:
        shown = [clean(x) for x in value.blocking_ids[:MAX_IDS_SHOWN]]
        more = len(value.blocking_ids) - len(shown)
        text += " [" + ", ".join(shown) + (f", +{more} more" if more > 0 else "") + "]"
    if value.lower is not None and value.upper is not None:
        text += f" ({value.lower:.4f}..{value.upper:.4f})"
    return text


def aggregate_cell(value: AggregateValue) -> str:
    """One aggregate: the mean, or unavailable with what is missing; never a subset mean."""
    if value.available and value.value is not None:
        return f"{value.value:.4f}"
    if value.n_queries == 0:
        return "unavailable (no queries)"
    reasons = ", ".join(
        r if n == value.n_missing else f"{r} x{n}" for r, n in value.reasons.items()
    )
    text = f"unavailable ({value.n_missing} of {value.n_queries} missing: {reasons})"
    if value.lower is not None and value.upper is not None:
        text += f" bounds {value.lower:.4f}..{value.upper:.4f}"
    return text


def _query_rows(report: EvaluationReport, metrics: Sequence[str], k_label: str) -> list[str]:
    header = ["query", "k", *(_label(m, k_label) for m in metrics), "notes"]
    rows = [header]
    for q in report.queries:
        notes = []
        if not q.valid:
            notes.append("invalid: " + ", ".join(q.reasons))
        if q.duplicates:
            notes.append(f"{len(q.duplicates)} returned duplicate(s)")
        cells = [metric_cell(q.metrics[m]) for m in metrics]
        rows.append([clean(q.query_id), str(q.k), *cells, "; ".join(notes)])
    if len(rows) == 1:
        return ["(no queries)"]
    return _align(rows)


def aggregate_lines(report: EvaluationReport, metrics: Sequence[str], k_label: str) -> list[str]:
    n = len(report.queries)
    lines = [f"aggregate over {n} quer{'y' if n == 1 else 'ies'}"]
    rows = [
        ["  " + _label(m, k_label), aggregate_cell(report.aggregates[m])]
        for m in metrics
        if m in report.aggregates
    ]
    return lines + _align(rows)


def _label(name: str, k_label: str) -> str:
    """A column's label: ``P@10`` for a section-7 key, the canonical name for a measure, in
    the aggregate block too (``RR@10``, as the JSON's keys and the verdicts name it)."""
    return METRIC_LABELS[name].format(k=k_label) if name in METRIC_LABELS else name


def diagnostics_lines(report: EvaluationReport) -> list[str]:
    d = report.diagnostics
    lines: list[str] = []
    if d.tied_score_pairs:
        lines.append(
            f"tied score pairs: {d.tied_score_pairs} (ordered by doc ID descending, as trec_eval)"
        )
    if d.returned_duplicates:
        lines.append(f"returned duplicates: {d.returned_duplicates} (keep their rank, add no gain)")
    lines.extend(f"note: {clean(n)}" for n in d.notes)
    return (["diagnostics"] + ["  " + x for x in lines]) if lines else []


def _align(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def clean(text: str) -> str:
    """Escape control characters (terminal escapes, newlines) in data-borne text."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
