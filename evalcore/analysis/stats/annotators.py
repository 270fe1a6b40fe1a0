"""Agreement between the annotators of a study, from their current labels (one
:class:`AnnotatorLabel` per annotator and unit; adjudications are not a judgement).

:func:`summarize_agreement` gives the quadratic-weighted kappa of every pair of annotators
with its confusion matrix, ordinal Krippendorff's alpha overall and per query, the queries
below ``low_agreement_threshold`` (default 0.667, Krippendorff's lowest level for
tentative conclusions) or not computable, and the units whose annotators disagree.
"""

from collections import defaultdict
from collections.abc import Iterable
from itertools import combinations

import numpy as np

from evalcore.analysis.stats.agreement import (
    GAIN_CATEGORIES,
    AgreementResult,
    cohen_kappa_quadratic,
    krippendorff_alpha,
)
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.observation import Gain
from evalcore.contract.query_order import natural_key

#: Krippendorff (2004): alpha >= 0.8 reliable, >= 0.667 tentative conclusions only.
LOW_AGREEMENT_THRESHOLD = 0.667


class AnnotatorLabel(FrozenModel):
    """One annotator's current gain for one unit of one query."""

    query_id: str
    unit_id: str
    annotator: str
    gain: Gain


class PairAgreement(FrozenModel):
    """Two annotators on the units both labeled."""

    annotator_a: str
    annotator_b: str
    n_units: int
    kappa: AgreementResult
    #: confusion[i][j]: units annotator_a labeled GAIN_CATEGORIES[i] and annotator_b [j].
    confusion: list[list[int]]


class QueryAgreement(FrozenModel):
    """Krippendorff's alpha over one query's multiply-labeled units."""

    query_id: str
    n_units: int
    n_annotators: int
    alpha: AgreementResult
    low_agreement: bool
    why_flagged: str | None = None


class Conflict(FrozenModel):
    """A unit whose annotators disagree: the candidates for adjudication."""

    query_id: str
    unit_id: str
    gains: dict[str, int]
    spread: int


class AgreementSummary(FrozenModel):
    """Everything the evaluator-comparison view shows."""

    annotators: list[str]
    n_units_multiply_labeled: int
    overall_alpha: AgreementResult
    pairs: list[PairAgreement]
    per_query: list[QueryAgreement]
    conflicts: list[Conflict]
    low_agreement_threshold: float


def summarize_agreement(
    labels: Iterable[AnnotatorLabel],
    *,
    low_agreement_threshold: float = LOW_AGREEMENT_THRESHOLD,
    annotators: Iterable[str] = (),
) -> AgreementSummary:
    """Kappa per annotator pair, alpha overall and per query, flags and conflicts.

    ``annotators``: annotators to include beside those of ``labels`` (their labels on
    units nobody else labeled need not be passed: such units never count).

    Raises ``ValueError`` if an annotator has two labels for the same unit
    (the caller must pass resolved, current labels).
    """
    by_unit: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for label in labels:
        cell = by_unit[(label.query_id, label.unit_id)]
        if label.annotator in cell:
            raise ValueError(
                f"annotator {label.annotator!r} has two labels for unit {label.unit_id!r} of "
                f"query {label.query_id!r}; pass each annotator's current label only"
            )
        cell[label.annotator] = label.gain
    annotators = sorted({a for cell in by_unit.values() for a in cell} | set(annotators))
    column = {a: i for i, a in enumerate(annotators)}
    multi = sorted(key for key, cell in by_unit.items() if len(cell) >= 2)

    matrix = np.full((len(multi), len(annotators)), np.nan)
    for row, key in enumerate(multi):
        for annotator, gain in by_unit[key].items():
            matrix[row, column[annotator]] = gain
    overall = krippendorff_alpha(matrix, "ordinal")

    pairs = [_pair(a, b, [by_unit[key] for key in multi]) for a, b in combinations(annotators, 2)]

    rows_by_query: dict[str, list[int]] = defaultdict(list)
    for row, (query_id, _unit) in enumerate(multi):
        rows_by_query[query_id].append(row)
    per_query = []
    for query_id in sorted(rows_by_query, key=natural_key):
        sub = matrix[rows_by_query[query_id]]
        alpha = krippendorff_alpha(sub, "ordinal")
        if not alpha.computed:
            flagged, why = True, f"alpha not computable: {alpha.reason}"
        elif alpha.value is not None and alpha.value < low_agreement_threshold:
            flagged, why = True, f"alpha {alpha.value:.3f} < {low_agreement_threshold}"
        else:
            flagged, why = False, None
        per_query.append(
            QueryAgreement(
                query_id=query_id,
                n_units=len(rows_by_query[query_id]),
                n_annotators=int((~np.isnan(sub)).any(axis=0).sum()),
                alpha=alpha,
                low_agreement=flagged,
                why_flagged=why,
            )
        )

    conflicts = [
        Conflict(
            query_id=key[0],
            unit_id=key[1],
            gains=dict(sorted(by_unit[key].items())),
            spread=max(by_unit[key].values()) - min(by_unit[key].values()),
        )
        for key in multi
        if len(set(by_unit[key].values())) > 1
    ]
    conflicts.sort(key=lambda c: (-c.spread, natural_key(c.query_id), c.unit_id))
    return AgreementSummary(
        annotators=annotators,
        n_units_multiply_labeled=len(multi),
        overall_alpha=overall,
        pairs=pairs,
        per_query=per_query,
        conflicts=conflicts,
        low_agreement_threshold=low_agreement_threshold,
    )


def _pair(a: str, b: str, cells: list[dict[str, int]]) -> PairAgreement:
    both = [(cell[a], cell[b]) for cell in cells if a in cell and b in cell]
    ga = [x for x, _ in both]
    gb = [y for _, y in both]
    confusion = np.zeros((len(GAIN_CATEGORIES), len(GAIN_CATEGORIES)), dtype=int)
    for x, y in both:
        confusion[x, y] += 1
    return PairAgreement(
        annotator_a=a,
        annotator_b=b,
        n_units=len(both),
        kappa=cohen_kappa_quadratic(ga, gb),
        confusion=confusion.tolist(),
    )
