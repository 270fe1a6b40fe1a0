"""Metric chips: a metric's value, or "unavailable" with its reasons and bounds.

The chips only *format* what :mod:`evalcore` computed (a
:class:`~evalcore.contract.results.MetricValue` or
:class:`~evalcore.contract.results.AggregateValue`); they never compute a metric.
"""

from collections.abc import Mapping

import streamlit as st

from app.components.page import say
from app.components.safe_text import escape_markdown
from evalcore.analysis.interval_text import metric_value_text
from evalcore.contract.reasons import REASON_TEXT, Reason, reason_words
from evalcore.contract.results import METRIC_LABELS, METRICS, MetricValue, QueryResult


def metric_label(metric: str, k: int) -> str:
    """``P@10``, ``nDCG@10``... (the metric's readable name at cutoff ``k``)."""
    template = METRIC_LABELS.get(metric, metric + "@{k}")  # type: ignore[call-overload]
    return template.format(k=k)


def reason_text(code: str) -> str:
    try:
        return REASON_TEXT[Reason(code)]
    except ValueError:
        return code


def chip_text(name: str, value: MetricValue) -> str:
    """Plain text of one chip, e.g. ``P@10 0.700`` or
    ``P@10 unavailable: unlabeled results in the top k (3) · bounds 0.400–0.700`` (reasons
    in plain words; the codes stay in JSON and CSV exports)."""
    if value.available and value.value is not None:
        return f"{name} {value.value:.3f}"
    reasons = []
    for reason in value.reasons or ["unavailable"]:
        if reason == Reason.UNLABELED_RETURNED and value.blocking_ids:
            reasons.append(f"{reason_words(reason)} ({len(value.blocking_ids)})")
        else:
            reasons.append(reason_words(reason))
    text = f"{name} unavailable: {', '.join(reasons)}"
    if value.lower is not None and value.upper is not None:
        text += f" · bounds {value.lower:.3f}–{value.upper:.3f}"
    return text


def chip_markdown(name: str, value: MetricValue) -> str:
    """A Streamlit badge: green when available, orange when unavailable (text escaped)."""
    color = "green" if value.available else "orange"
    return f":{color}-badge[{escape_markdown(chip_text(name, value))}]"


def query_result_chips(result: QueryResult) -> str:
    """All metric chips of one query, in the contract's metric order."""
    chips = [
        chip_markdown(metric_label(metric, result.k), result.metrics[metric])
        for metric in METRICS
        if metric in result.metrics
    ]
    return " ".join(chips)


#: Streamlit draws a badge on one line and cuts what does not fit with an ellipsis
#: ("bounds 0.500…" at phone width); a chip's reasons and bounds must stay readable, so
#: badges wrap instead. A fixed style sheet: no data ever goes into it.
_WRAPPING_CHIPS = (
    "<style>.stMarkdownBadge{white-space:normal!important;overflow:visible!important;"
    "text-overflow:clip!important;max-width:100%;}</style>"
)


def allow_chips_to_wrap() -> None:
    """Let every badge of the page wrap onto several lines instead of being cut."""
    st.html(_WRAPPING_CHIPS)


def measure_chips(values: Mapping[str, MetricValue]) -> str:
    """A chip per named value, e.g. ``P@10 0.700`` or
    ``P@10 unavailable · 0.40 to 0.70, 3 unlabeled`` (the one interval text rule)."""
    return " ".join(
        f":{'green' if value.available else 'orange'}-badge"
        f"[{escape_markdown(f'{name} {metric_value_text(value, digits=3)}')}]"
        for name, value in values.items()
    )


def render_measure_values(values: Mapping[str, MetricValue], query_reasons: list[str]) -> None:
    """The study's measures of one query as chips, with the reasons explained underneath."""
    _show_chips(measure_chips(values), [*query_reasons, *_reasons_of(values)])


def render_query_result(result: QueryResult) -> None:
    """Chips for the query, plus the reasons explained in words underneath."""
    _show_chips(query_result_chips(result), [*result.reasons, *_reasons_of(result.metrics)])


def _show_chips(chips: str, reasons: list[str]) -> None:
    allow_chips_to_wrap()
    st.markdown(chips)
    if reasons:
        say("caption", "; ".join(reason_text(code) for code in dict.fromkeys(reasons)))


def _reasons_of(metrics: Mapping[str, MetricValue]) -> list[str]:
    return [reason for value in metrics.values() for reason in value.reasons]
