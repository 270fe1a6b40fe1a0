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
