"""Reason codes: why a metric, a query or an aggregate is unavailable.

The codes are part of the evidence contract (``evidence-contract.md`` sections
3, 5, 6 and 9) and appear verbatim in every JSON output and every screen.
"""

from enum import StrEnum


class Reason(StrEnum):
    # Validity of a whole observation (section 3): every metric of the query.
    PARTIAL_SCAN = "partial_scan"
    PERMISSION_VIOLATION = "permission_violation"
    DUPLICATE_REFERENCE = "duplicate_reference"
    MISSING_REFERENCE = "missing_reference"
    # Per-metric reasons (section 5).
    UNLABELED_RETURNED = "unlabeled_returned"
    LABEL_CONFLICT = "label_conflict"
    POPULATION_INCOMPLETE = "population_incomplete"
    NO_RELEVANT_UNITS = "no_relevant_units"
    # Aggregates (section 6).
    NO_QUERIES = "no_queries"


#: Reasons that invalidate the whole observation, in the order they are reported.
OBSERVATION_REASONS: tuple[Reason, ...] = (
    Reason.PARTIAL_SCAN,
    Reason.PERMISSION_VIOLATION,
    Reason.DUPLICATE_REFERENCE,
    Reason.MISSING_REFERENCE,
)

#: One-line explanations, for tables, tooltips and reports.
REASON_TEXT: dict[Reason, str] = {
    Reason.PARTIAL_SCAN: "the retrieval scan did not cover the whole corpus",
    Reason.PERMISSION_VIOLATION: "a returned unit is outside the permitted set",
    Reason.DUPLICATE_REFERENCE: "a unit is labeled twice in the reference set",
    Reason.MISSING_REFERENCE: "no labels and the population is not declared complete",
    Reason.UNLABELED_RETURNED: "a returned unit in the top k has no label",
    Reason.LABEL_CONFLICT: "annotators disagree on a unit's label and no reviewer has decided",
    Reason.POPULATION_INCOMPLETE: "the relevant set is not declared complete",
    Reason.NO_RELEVANT_UNITS: "the reference set holds no relevant unit",
    Reason.NO_QUERIES: "the query set is empty",
}

#: Short plain words for each code, for screens and HTML/text reports, where a code such
#: as ``unlabeled_returned`` means nothing to a reader (JSON and CSV keep the codes).
#: Written to follow "N queries with ..." or "... in run X".
REASON_WORDS: dict[str, str] = {
    Reason.PARTIAL_SCAN: "a retrieval that did not scan the whole corpus",
    Reason.PERMISSION_VIOLATION: "a result outside the permitted set",
    Reason.DUPLICATE_REFERENCE: "a unit labeled twice in the reference",
    Reason.MISSING_REFERENCE: "no label at all",
    Reason.UNLABELED_RETURNED: "unlabeled results in the top k",
    Reason.LABEL_CONFLICT: "a label in conflict",
    Reason.POPULATION_INCOMPLETE: "a relevant set not declared complete",
    Reason.NO_RELEVANT_UNITS: "no relevant unit known",
    Reason.NO_QUERIES: "no queries",
    # Why a query is left out of a paired test (not metric reasons).
    "not_in_run": "the query missing from the run",
    "different_k": "a different cutoff in each run",
}


def reason_words(code: str) -> str:
    """The plain words of a reason code (:data:`REASON_WORDS`); an unknown code with its
    underscores read as spaces."""
    return REASON_WORDS.get(code, code.replace("_", " "))
