"""What the evidence decides about two runs, as plain text (``evalcore compare``, reports).

Per measure, in this order: the verdict with its interval (or its undecidable
causes with what to do), the bounds used, the head of the to-decide queue, then
the paired tests with the queries left out and the selection caution. The
trec_eval-compatible numbers come last, under their own heading, never on a
verdict's line. Text from the data (run, query and unit ids) is printed with
control characters escaped (:func:`evalcore.report.text_table.clean`).
"""

from __future__ import annotations

from evalcore.analysis.pair_comparison import MeasureVerdict, PairComparison
from evalcore.analysis.stats.significance import TEST_LABELS
from evalcore.report.text_table import clean


def measure_text(item: MeasureVerdict) -> str:
    """One measure: verdict, bounds, queue, paired tests (lines, no final newline)."""
    decision, queue, paired = item.decision, item.queue, item.paired
    lines = [clean(decision.summary)]
    lines += [f"  to lift it: {clean(cause.text)}" for cause in item.causes]
    lines.append(f"  bounds: {decision.method}")
    if decision.naive_lower is not None and decision.naive_upper is not None:
        lines.append(
            f"  naive interval (each run's own bounds): [{decision.naive_lower:+.4f}, "
            f"{decision.naive_upper:+.4f}]"
        )
    if queue.items:
        needed = (
            f"; about {queue.labels_to_decide} or more labels to decide"
            if queue.labels_to_decide else ""
        )
        lines.append(f"  to decide ({len(queue.items)} of {queue.n_candidates} units{needed}):")
        for it in queue.items:
            where = ", ".join(
                f"{run}@{rank}" for run, rank in ((decision.run_a, it.rank_a),
                                                  (decision.run_b, it.rank_b)) if rank
            )
            lines.append(clean(
                f"    {it.query_id!r} {it.unit_id!r} ({it.kind}, {where}): "
                f"removes up to {it.removes:.4f}"
            ))
    lines.append(f"  paired tests: {clean(paired.summary)}")
    if paired.selection_note:
        lines.append(f"    caution: {paired.selection_note}")
    for test in paired.tests.values():
        if test.status == "computed":
            lines.append(f"    {TEST_LABELS[test.test]} ({test.method}): mean delta "
                         f"{test.mean_delta:+.4f}, p = {test.p_value:.4g}")
        else:
            lines.append(f"    {TEST_LABELS[test.test]}: not computable ({test.reason})")
    return "\n".join(lines)


def compat_text(pc: PairComparison) -> str:
    """The trec_eval-compatible means under their own heading (lines, no final newline)."""
    lines = [f"{pc.compat_label} -- not evidence, for reproducing trec_eval only:"]
    for row in pc.compat:
        a, b, d = (("not computable" if v is None else f"{v:{f}}")
                   for v, f in ((row.value_a, ".4f"), (row.value_b, ".4f"),
                                (row.difference, "+.4f")))
        lines.append(clean(f"  {row.measure}: {pc.run_a} {a}, {pc.run_b} {b}, A - B {d} "
                           f"({row.n_queries_a} / {row.n_queries_b} queries)"))
    lines += [f"  note: {clean(note)}" for note in pc.compat_notes]
    return "\n".join(lines)


def render_pair(pc: PairComparison) -> str:
    """Every measure of the pair, then the compatibility section (ends with a newline)."""
    head = clean(f"{pc.run_a} (A) vs {pc.run_b} (B), differences A - B")
    blocks = [head, *(measure_text(item) for item in pc.measures), compat_text(pc)]
    return "\n".join(blocks) + "\n"
