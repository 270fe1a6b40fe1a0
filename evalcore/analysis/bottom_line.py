"""The bottom line of a comparison: one sentence a lead can repeat, and one compact table.

Every surface that compares two runs (the Compare page, the reports, ``evalcore compare``)
shows it first and builds it here, from a
:class:`~evalcore.analysis.pair_comparison.PairComparison`, so the words, the signs and
the named baseline agree everywhere. A difference is always *candidate − baseline*: the
pair's ``run_a`` is the candidate, ``run_b`` the baseline. Each measure is ``decided``
(better, worse or tied whatever the missing labels are), ``open`` (with about how many
labels would settle it) or ``cannot be decided yet`` (with what is missing); the words
are defined once in :data:`GLOSSARY`. An estimate from a random sample of labels
(contract section 13) is written ``estimated: ...`` apart from the verdict and never
makes a measure ``decided``. For example::

    bm25-title-boost vs bm25-plain (baseline): better on P@10 and nDCG@10 whatever the
    missing labels are; worse on RR@10; R@10 still open — about 40 labels would settle it
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from evalcore.analysis.compare import MetricComparison
from evalcore.analysis.decision import ZERO
from evalcore.analysis.pair_comparison import MeasureVerdict, PairComparison
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.reasons import reason_words

Status = Literal["decided", "open", "cannot be decided yet"]
Word = Literal["better", "worse", "tied", "open", "cannot be decided yet"]

#: How a difference is written on every surface.
DIFFERENCE = "candidate \N{MINUS SIGN} baseline"
#: What a decided verdict means, said once wherever the verdicts are.
WHATEVER = "whatever the missing labels are"

#: The words of the bottom line, for the Compare page's tooltip and the report's glossary.
GLOSSARY: dict[str, str] = {
    "decided": (
        "the evidence settles it whatever the missing labels are: for every way the "
        "unlabeled results could turn out, the candidate's mean stays better (or worse, or "
        "equal) than the baseline's over all the queries."
    ),
    "open": (
        "not decided yet: the interval of the mean difference still spans 0, so labels "
        "could tip it either way; the table says about how many labels would settle it."
    ),
    "cannot be decided yet": (
        "on some queries a run's value has no bounds at all (for example a query with no "
        "label), so no interval can be given; the table says what is missing and what to do."
    ),
    "estimated": (
        "a confidence interval from a random sample of labels: a different kind of "
        "statement, shown apart, never called decided."
    ),
    "unavailable": (
        "a value (a mean, an interval) that the evidence cannot give; never shown as 0."
    ),
    DIFFERENCE: (
        "every interval and difference is the candidate's value minus the baseline's: a "
        "positive number means the candidate scores higher."
    ),
    "paired test": (
        "significance over the sample of queries, computed only on the queries where both "
        "runs have the value: a separate question from the verdict."
    ),
}


EstimateDirection = Literal["a_better", "b_better", "unclear"]


class Estimate(FrozenModel):
    """A design-based estimate of the mean difference ``run_a - run_b`` on one measure from
    a random sample of labels (evidence contract section 13): never evidence and never a
    decided verdict."""

    measure: str
    run_a: str
    run_b: str
    point: float
    lower: float
    upper: float
    level: float
    #: Units in the sample's answered draws (labeled + non-response).
    n_sampled: int
    n_labeled: int
    #: Unknown units of the design's population when it was drawn.
    n_unknown: int
    #: Sampled units skipped or judged "can't judge" (taken at their worst case).
    n_nonresponse: int
    #: Sampled units not answered yet (their queries are left out until answered).
    n_pending: int
    n_queries: int
    n_queries_sampled: int
    #: The worst-case (decided) interval on the same evidence, for comparison.
    worst_lower: float
    worst_upper: float
    #: The design and estimator.
    method: str
    #: The automatic source used as a predictor, if any (never evidence).
    automatic: str | None = None
    #: Its weight in the prediction, from 0 (ignored) to 1 (trusted as calibrated), chosen
    #: by the sample (:func:`~evalcore.estimation.estimator.power_tuned`); None without.
    predictor_weight: float | None = None

    @property
    def direction(self) -> EstimateDirection:
        if self.lower > 0:
            return "a_better"
        if self.upper < 0:
            return "b_better"
        return "unclear"

    def text(self) -> str:
        """``estimated: A better (95% CI +0.012 to +0.041; 120 of 2,512 unknown units
        sampled, 3 non-response; <method>)``."""
        word = {
            "a_better": f"{self.run_a} better",
            "b_better": f"{self.run_b} better",
            "unclear": "no clear difference",
        }[self.direction]
        counts = (
            f"{self.n_sampled:,} of {self.n_unknown:,} unknown units sampled, "
            f"{self.n_nonresponse:,} non-response"
        )
        if self.n_pending:
            counts += f", {self.n_pending:,} not yet labeled"
        return (
            f"estimated: {word} ({self.level:.0%} CI {interval(self.lower, self.upper)}; "
            f"{counts}; {self.method})"
        )


class MeasureLine(FrozenModel):
    """One measure of the bottom line: one row of its table."""

    measure: str
    #: The Decision's code (``a_better``: the candidate is better), kept for machines.
    verdict: str
    status: Status
    word: Word
    #: The mean difference candidate − baseline (None: cannot be decided yet).
    lower: float | None
    upper: float | None
    #: "−0.064 to +0.064", or "unavailable".
    interval: str
    #: What would settle it, in plain words.
    settle: str
    #: About how many labels would settle an open measure (None: not estimated).
    labels_to_settle: int | None
    n_unknown_units: int
    #: ``estimated: ...`` from a random sample of labels, apart from the verdict.
    estimate: str | None = None
    #: The estimate's weight of its automatic predictor (None: no estimate or no predictor).
    predictor_weight: float | None = None
    #: Why a decided verdict and a paired mean of the opposite sign can both be true.
    note: str | None = None

    @property
    def verdict_cell(self) -> str:
        """The table's verdict word: ``decided: better``, ``open``, ``cannot be decided yet``."""
        return f"decided: {self.word}" if self.status == "decided" else self.word


class BottomLine(FrozenModel):
    """The bottom line of one pair of runs: the sentence, then one row per measure."""

    candidate: str
    baseline: str
    difference: str = DIFFERENCE
    sentence: str
    measures: list[MeasureLine]
    #: One line each, said once under the table: sign notes and estimates.
    notes: list[str]


#: Per Decision verdict: the bottom line's status and word.
_LINE: dict[str, tuple[Status, Word]] = {
    "a_better": ("decided", "better"),
    "b_better": ("decided", "worse"),
    "tied": ("decided", "tied"),
    "undecided": ("open", "open"),
    "undecidable": ("cannot be decided yet", "cannot be decided yet"),
}


def bottom_line(pc: PairComparison, estimates: Mapping[str, Estimate] | None = None) -> BottomLine:
    """The bottom line of ``pc`` (its ``run_a`` is the candidate, ``run_b`` the baseline),
    with the optional section-13 ``estimates`` per measure shown apart."""
    lines = [measure_line(item, (estimates or {}).get(item.measure)) for item in pc.measures]
    notes = [line.note for line in lines if line.note]
    notes += [f"{line.measure}: {line.estimate}" for line in lines if line.estimate]
    return BottomLine(
        candidate=pc.run_a,
        baseline=pc.run_b,
        sentence=sentence(pc.run_a, pc.run_b, lines),
        measures=lines,
        notes=notes,
    )


def measure_line(item: MeasureVerdict, estimate: Estimate | None = None) -> MeasureLine:
    """One measure's row: status, word, interval, what would settle it, sign note."""
    d = item.decision
    status, word = _LINE[d.verdict]
    labels = None
    if status == "open" and item.queue is not None and item.queue.labels_to_decide:
        labels = item.queue.labels_to_decide
    shown = "unavailable" if d.lower is None or d.upper is None else interval(d.lower, d.upper)
    if d.lower is not None and d.upper is not None and (
        (d.lower_open and abs(d.lower) <= ZERO) or (d.upper_open and abs(d.upper) <= ZERO)
    ):
        shown += " (0 itself excluded)"  # an open end: no completion reaches it
    return MeasureLine(
        measure=d.measure,
        verdict=d.verdict,
        status=status,
        word=word,
        lower=d.lower,
        upper=d.upper,
        interval=shown,
        settle=_settle(item, status, labels),
        labels_to_settle=labels,
        n_unknown_units=d.n_unknown_units,
        estimate=None if estimate is None else estimate.text(),
        predictor_weight=None if estimate is None else estimate.predictor_weight,
        note=_sign_note(item),
    )


def _settle(item: MeasureVerdict, status: Status, labels: int | None) -> str:
    d = item.decision
    if d.verdict == "tied":
        return "nothing: every query's difference is known to be 0"
    if status == "decided":
        return f"nothing: decided {WHATEVER}"
    if status == "cannot be decided yet":
        return "; ".join(c.text for c in item.causes) or "no query to compare"
    units = d.n_unknown_units
    if labels is not None:
        return f"about {labels} label{_s(labels)} (of {units} unknown unit{_s(units)})"
    if units:
        return f"labels on some of the {units} unknown unit{_s(units)}"
    return "labels on results neither run returned (the relevant sets are not declared complete)"


def _sign_note(item: MeasureVerdict) -> str | None:
    """One line when a decided verdict sits beside a paired mean of the opposite sign."""
    d, paired = item.decision, item.paired
    mean = paired.mean_delta
    if mean is None or d.verdict not in ("a_better", "b_better"):
        return None
    if (d.verdict == "a_better") == (mean > 0) or mean == 0:
        return None
    word = _LINE[d.verdict][1]
    return (
        f"{d.measure}: decided {word} over all {d.n_queries} queries, while the paired "
        f"mean is {signed(mean)}: that mean is over the "
        f"{paired.n_paired} fully labeled queries only; both are true"
    )


def sentence(candidate: str, baseline: str, lines: Sequence[MeasureLine]) -> str:
    """``X vs Y (baseline): better on ... whatever the missing labels are; worse on ...;
    R@10 still open — about 40 labels would settle it``."""
    head = f"{candidate} vs {baseline} (baseline): "
    if not lines:
        return head + "no measure compared"
    clauses: list[str] = []
    decided = False
    for word in ("better", "worse", "tied"):
        names = [line.measure for line in lines if line.word == word]
        if names:
            clauses.append(f"{word} on {_join(names)}" + ("" if decided else f" {WHATEVER}"))
            decided = True
    open_lines = [line for line in lines if line.status == "open"]
    if open_lines:
        clauses.append(_open_clause(open_lines))
    for line in lines:
        if line.status == "cannot be decided yet":
            clauses.append(f"{line.measure} cannot be decided yet{_short_cause(line)}")
    return head + "; ".join(clauses)


def _open_clause(lines: Sequence[MeasureLine]) -> str:
    names = _join([line.measure for line in lines])
    counts = [line.labels_to_settle for line in lines]
    if any(c is None for c in counts):
        return f"{names} still open"
    if len(lines) == 1:
        return (
            f"{names} still open \N{EM DASH} about {counts[0]} label{_s(counts[0] or 0)} "
            "would settle it"
        )
    return (
        f"{names} still open \N{EM DASH} about {_join([str(c) for c in counts])} labels "
        "respectively would settle them"
    )


def _short_cause(line: MeasureLine) -> str:
    """`` — 3 queries have no label at all`` from the first cause, else ''."""
    first = line.settle.split("; ")[0]
    return f" \N{EM DASH} {first.split(':')[0]}" if first and ":" in first else ""


def _join(names: Sequence[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def table_rows(line: BottomLine) -> list[dict[str, str]]:
    """The compact table under the sentence: measure, verdict, interval, what settles it."""
    return [
        {
            "measure": m.measure,
            "verdict": m.verdict_cell,
            f"{DIFFERENCE} (mean)": m.interval,
            "what would settle it": m.settle,
        }
        for m in line.measures
    ]


def interval(lower: float, upper: float) -> str:
    """``−0.040 to +0.120`` (true minus signs; a difference within float noise of 0 is 0)."""
    return f"{signed(lower)} to {signed(upper)}"


def signed(value: float, digits: int = 3) -> str:
    """``+0.040`` / ``−0.040`` (a true minus sign)."""
    if abs(value) <= ZERO:
        return f"{0:.{digits}f}"
    text = f"{value:+.{digits}f}"
    return "\N{MINUS SIGN}" + text[1:] if text.startswith("-") else text


def paired_words(paired: MetricComparison) -> str:
    """Where a paired test was computed, in plain words: ``5 of 25 queries (20 left out:
    20 with unlabeled results in the top k in both runs)``."""
    text = f"{paired.n_paired} of {paired.n_queries} queries"
    if not paired.n_excluded:
        return text
    why = ", ".join(f"{e.n} with {reason_words(e.reason)} in {e.side}" for e in paired.exclusions)
    return f"{text} ({paired.n_excluded} left out: {why})"


def render_text(line: BottomLine, escape: Callable[[str], str] = str) -> str:
    """The sentence, then the table as aligned plain text, then the notes (no final
    newline); ``escape`` is applied to every piece of text (data-borne names)."""
    rows = [{escape(k): escape(v) for k, v in r.items()} for r in table_rows(line)]
    out = [escape(line.sentence)]
    if rows:
        head = list(rows[0])
        widths = [max(len(h), *(len(r[h]) for r in rows)) for h in head[:-1]]
        for cells in [dict(zip(head, head, strict=True)), *rows]:
            out.append(
                "  "
                + "  ".join(cells[h].ljust(w) for h, w in zip(head, widths, strict=False))
                + "  "
                + cells[head[-1]]
            )
    out += [f"  note: {escape(n)}" for n in line.notes]
    return "\n".join(out)
