"""The report: a frozen, self-describing record of how runs scored.

A :class:`Report` records the study, the protocol, the reference version and its hash,
the corpus fingerprint every compared run must share, the evalcore version, who made it
and when, each run's :class:`EvaluationReport` and the comparison of the comparable runs.

**Comparability.** The report's corpus fingerprint is the one given, else the baseline
run's. A run that differs (fingerprint, protocol or cutoff:
:func:`evalcore.analysis.comparability.comparability`, the Compare page's rule too) is
*not comparable*: its numbers are shown, but it enters no comparison. A run whose
fingerprint, or the report's, is not recorded is *not verified* and left out unless the
lead accepted it (:attr:`ReportRun.accepted_unverified`, recorded in every export).

Every export shows first the bottom line of each compared pair
(:mod:`evalcore.analysis.bottom_line`), then the decided comparisons (verdicts before
significance), and the trec_eval-compatible numbers only in their own labeled section.
Internal data (annotator names and notes, database row ids) lives only in
:attr:`Report.internal`, left out of exports unless asked (:meth:`Report.for_export`);
``created_by`` is provenance and always kept.
"""

from pydantic import Field

from evalcore.analysis.bottom_line import BottomLine, bottom_line
from evalcore.analysis.compare import RunComparison
from evalcore.analysis.pair_comparison import PairComparison
from evalcore.analysis.query_set import QuerySetRecord
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.results import EvaluationReport

#: Version of the report's JSON shape (bumped on incompatible changes).
REPORT_FORMAT = 1


class ReportRun(FrozenModel):
    """One run of the report: its evaluation and whether it is compared."""

    name: str
    corpus_fingerprint: str | None
    k: int | None
    n_queries: int
    #: Whether the run enters the comparison (comparable, or accepted while not verified).
    comparable: bool
    not_comparable_reason: str | None = None
    #: Why the run's comparability is not verified (a corpus fingerprint not recorded).
    not_verified_reason: str | None = None
    #: The report's author accepted the run for comparison although it is not verified.
    accepted_unverified: bool = False
    evaluation: EvaluationReport
    #: The run on the report's measures (:attr:`Report.measures`) and Judged@k beside each,
    #: keyed by canonical name (a measure without a cutoff at the run's k); None in reports
    #: stored before reports had chosen measures.
    measure_values: EvaluationReport | None = None

    def status(self) -> tuple[str, str | None]:
        """(what the report says about the run's comparability, the reason or None).

        The label is ``comparable``, ``accepted without verification``,
        ``comparability not verified`` or ``not comparable``; every export and
        page shows this pair.
        """
        if self.not_comparable_reason is not None:
            return "not comparable", self.not_comparable_reason
        if self.not_verified_reason is not None:
            if self.accepted_unverified:
                return "accepted without verification", self.not_verified_reason
            return "comparability not verified", (
                f"{self.not_verified_reason}; not compared unless accepted explicitly"
            )
        return "comparable", None


class AnnotatorNote(FrozenModel):
    """A note an annotator left with a label (internal: exported only on request)."""

    query_id: str
    unit_id: str
    annotator: str
    note: str
    created_at: str
    event_id: int


class ReportInternal(FrozenModel):
    """Internal identifiers and annotator data, stripped from exports by default."""

    run_ids: dict[str, int] = Field(default_factory=dict)
    reference_created_by: str | None = None
    #: query_id -> annotators who labeled a unit of it (sorted).
    annotators: dict[str, list[str]] = Field(default_factory=dict)
    notes: list[AnnotatorNote] = Field(default_factory=list)


class Report(FrozenModel):
    """Everything a lead needs to defend a set of numbers; immutable once generated."""

    report_format: int = REPORT_FORMAT
    #: The bottom line of each compared pair, first (:mod:`evalcore.analysis.bottom_line`):
    #: the sentence a lead repeats, then per measure the verdict, the interval of
    #: candidate − baseline and what would settle it. Empty in reports stored before it.
    bottom_lines: list[BottomLine] = Field(default_factory=list)
    name: str
    study_id: str
    study_name: str = ""
    protocol: EvalProtocol
    reference_version: str | None
    reference_hash: str | None = None
    corpus_fingerprint: str | None
    evalcore_version: str
    created_at: str
    created_by: str
    baseline: str
    runs: list[ReportRun]
    comparison: RunComparison | None
    #: Why there is no comparison (e.g. fewer than two comparable runs), else None.
    comparison_note: str | None = None
    #: The measures the report shows, by canonical name (the study's chosen measures, or
    #: those asked for when it was generated; a name without a cutoff is taken at each run's
    #: k). Empty in reports stored before reports had chosen measures.
    measures: list[str] = Field(default_factory=list)
    #: What the evidence decides for each compared pair (empty: none computed).
    decisions: list[PairComparison] = Field(default_factory=list)
    #: The queries every number of the report is over (None: a report stored before
    #: reports recorded their query set, over all of the study's queries).
    query_set: QuerySetRecord | None = None
    query_texts: dict[str, str] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    #: What the numbers assume besides the labels, one line each (e.g. the corpus size that
    #: bounds R, nDCG and AP where a relevant set is not declared complete). Empty in
    #: reports stored before reports recorded them.
    notes: list[str] = Field(default_factory=list)
    internal: ReportInternal | None = None

    def run(self, name: str) -> ReportRun:
        for item in self.runs:
            if item.name == name:
                return item
        raise KeyError(f"no run {name!r} in report {self.name!r}")

    def pair_bottom_lines(self) -> list[BottomLine]:
        """:attr:`bottom_lines`, or, for a report stored before them, built from its
        :attr:`decisions` (the same function builds both)."""
        return self.bottom_lines or [bottom_line(pc) for pc in self.decisions]

    def for_export(self, include_internal: bool = False) -> "Report":
        """The report as exported: without :attr:`internal` unless asked for."""
        if include_internal or self.internal is None:
            return self
        return self.model_copy(update={"internal": None})


def render_json(report: Report, *, include_internal: bool = False, indent: int | None = 2) -> str:
    """The exported report as JSON text (UTF-8 characters kept as they are; internal data
    only if asked for)."""
    return report.for_export(include_internal).model_dump_json(indent=indent)
