"""What the evidence decides about two runs, as plain text (``evalcore compare``, reports).

First the bottom line (:mod:`evalcore.analysis.bottom_line`), then per measure the
details: the verdict with its interval or its causes, the bounds used, the head of the
to-decide queue, the paired tests in plain words; the paired tests' caution once; the
trec_eval-compatible numbers last, under their own heading, never on a verdict's line.
Text from the data is printed with control characters escaped
(:func:`evalcore.report.text_table.clean`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evalcore.analysis.bottom_line import (
    DIFFERENCE,
    Estimate,
    bottom_line,
    measure_line,
    paired_words,
    render_text,
    signed,
)
from evalcore.analysis.pair_comparison import MeasureVerdict, PairComparison
from evalcore.analysis.stats.significance import TEST_LABELS
from evalcore.report.text_table import clean

#: The caveat of every paired test that left queries out, said once per comparison.
SELECTION_CAUTION = (
    "the paired tests use only the queries where both runs have the measure: those that "
    "happen to be fully labeled, a subset selected by judging completeness that can be "
    "biased; the verdicts above cover every query"
)


def measure_text(item: MeasureVerdict) -> str:
    """One measure's details: verdict, bounds, queue, paired tests (no final newline)."""
    decision, queue, paired = item.decision, item.queue, item.paired
    line = measure_line(item)
    head = f"{decision.measure}: {line.verdict_cell}"
    if line.lower is not None:
        head += f" \N{EM DASH} mean {DIFFERENCE}: {line.interval}"
    lines = [clean(head)]
    lines += [f"  to lift it: {clean(cause.text)}" for cause in item.causes]
    lines.append(f"  bounds: {decision.method}")
    if decision.naive_lower is not None and decision.naive_upper is not None:
        lines.append(
            f"  naive interval (each run's own bounds): {signed(decision.naive_lower, 4)} to "
            f"{signed(decision.naive_upper, 4)}"
        )
    if queue is not None and queue.items:
        needed = (
            f"; about {queue.labels_to_decide} labels would settle it"
            if queue.labels_to_decide and line.status == "open"
            else ""
        )
        lines.append(f"  to settle it ({len(queue.items)} of {queue.n_candidates} units{needed}):")
        for it in queue.items:
            where = ", ".join(
                f"{run}@{rank}"
                for run, rank in ((decision.run_a, it.rank_a), (decision.run_b, it.rank_b))
                if rank
            )
            lines.append(
                clean(
                    f"    {it.query_id!r} {it.unit_id!r} ({it.kind}, {where}): "
                    f"removes up to {it.removes:.4f}"
                )
            )
    lines.append(clean(f"  paired tests on {paired_words(paired)}"))
    for test in paired.tests.values():
        if test.status == "computed":
            lines.append(
                f"    {TEST_LABELS[test.test]} ({test.method}): mean {DIFFERENCE} "
                f"{signed(test.mean_delta, 4)} on the paired queries, "
                f"p = {test.p_value:.4g}"
            )
        else:
            lines.append(f"    {TEST_LABELS[test.test]}: not computable ({test.reason})")
    return "\n".join(lines)


def caution_text(items: Sequence[MeasureVerdict]) -> str | None:
    """The paired tests' caution, once, when any of them left queries out."""
    if not any(item.paired.selection_note for item in items):
        return None
    return f"caution: {SELECTION_CAUTION}"


def compat_text(pc: PairComparison) -> str:
    """The trec_eval-compatible means under their own heading (lines, no final newline)."""
    lines = [f"{pc.compat_label} -- not evidence, for reproducing trec_eval only:"]
    for row in pc.compat:
        a, b = ("not computable" if v is None else f"{v:.4f}" for v in (row.value_a, row.value_b))
        d = "not computable" if row.difference is None else signed(row.difference, 4)
        lines.append(
            clean(
                f"  {row.measure}: {pc.run_a} {a}, {pc.run_b} {b}, {DIFFERENCE} {d} "
                f"({row.n_queries_a} / {row.n_queries_b} queries)"
            )
        )
    lines += [f"  note: {clean(note)}" for note in pc.compat_notes]
    return "\n".join(lines)


def details_head(pc: PairComparison) -> str:
    return clean(f"Details: {pc.run_a} vs {pc.run_b} (baseline), differences {DIFFERENCE}")


def render_pair(pc: PairComparison, estimates: Mapping[str, Estimate] | None = None) -> str:
    """The bottom line (with the section-13 ``estimates`` apart from the verdicts, when a
    sample is named), every measure's details, the caution once, then the compatibility
    section (ends with a newline)."""
    blocks = [
        render_text(bottom_line(pc, estimates), clean),
        "",
        details_head(pc),
        *(measure_text(item) for item in pc.measures),
    ]
    caution = caution_text(pc.measures)
    if caution:
        blocks.append(caution)
    if pc.compat or pc.compat_notes:
        blocks.append(compat_text(pc))
    return "\n".join(blocks) + "\n"
