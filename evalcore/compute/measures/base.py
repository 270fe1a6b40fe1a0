"""What a measure module returns: per-query arrays, not objects.

A measure's reasons here are the per-measure reasons only (sections 5, 9 and
10); section-3 (observation) reasons are combined by
:mod:`evalcore.compute.evaluate`. A measure is available for a query when its
``reason_bits`` and the observation's bits are both zero. :func:`reason_codes` and
:func:`reason_masks` are the one decoding of both bitmasks into reasons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from evalcore.compute.measures.ranking import Cut
from evalcore.compute.validity import OBSERVATION_BITS, observation_reasons
from evalcore.contract.reasons import OBSERVATION_REASONS, Reason

#: Per-measure reasons in the order they are reported.
METRIC_REASONS: tuple[Reason, ...] = (
    Reason.UNLABELED_RETURNED,
    Reason.LABEL_CONFLICT,
    Reason.POPULATION_INCOMPLETE,
    Reason.NO_RELEVANT_UNITS,
)
METRIC_BITS: dict[Reason, int] = {r: 1 << i for i, r in enumerate(METRIC_REASONS)}
UNLABELED_BIT = METRIC_BITS[Reason.UNLABELED_RETURNED]
CONFLICT_BIT = METRIC_BITS[Reason.LABEL_CONFLICT]
POPULATION_BIT = METRIC_BITS[Reason.POPULATION_INCOMPLETE]
NO_RELEVANT_BIT = METRIC_BITS[Reason.NO_RELEVANT_UNITS]
#: The reasons whose only cause is an unknown gain: labeling lifts them.
UNKNOWN_BITS = UNLABELED_BIT | CONFLICT_BIT
#: Reason-code list of every per-measure bitmask value.
METRIC_REASON_LISTS = [
    [r.value for r in METRIC_REASONS if b & METRIC_BITS[r]] for b in range(1 << len(METRIC_REASONS))
]

#: Which units in conflict block: those straddling the threshold, or any (a gain measure).
ConflictRule = Literal["relevance", "gain"]


@dataclass(frozen=True, eq=False)
class MeasureArrays:
    """One measure over a batch.

    ``value`` is the measure where it is defined (only meaningful where
    ``reason_bits == 0``). ``lower`` / ``upper`` are the sound bounds over every
    completion of the unknowns (contract sections 10 and 12), read where
    ``reason_bits != 0``; NaN where no completion defines the measure. The blocking units of
    query ``q`` are the distinct unlabeled units, and the units in conflict
    (per ``conflict_rule`` at ``threshold``), at ranks below
    ``blocking_limit[q]``; with ``reference_conflicts`` the conflicts of the
    whole reference set count too (measures that need \\|R\\| or IDCG).
    ``residual`` (RBP) is reported on every valid query.
    """

    value: np.ndarray  # float64[n]
    reason_bits: np.ndarray  # uint8[n]
    lower: np.ndarray  # float64[n]
    upper: np.ndarray  # float64[n]
    blocking_limit: np.ndarray  # int64[n]
    threshold: int
    conflict_rule: ConflictRule = "relevance"
    reference_conflicts: bool = False
    residual: np.ndarray | None = None


def reason_bits(*flags: tuple[Reason, np.ndarray]) -> np.ndarray:
    """Combine per-query boolean masks into a reason bitmask."""
    out = np.zeros(flags[0][1].shape, dtype=np.uint8)
    for reason, mask in flags:
        out[mask] |= np.uint8(METRIC_BITS[reason])
    return out


def reason_codes(observation_bits: int, metric_bits: int) -> list[str]:
    """Why one query lacks a measure (a fresh list): its observation's reasons when it is
    invalid, as they make every measure unavailable (section 3), else the measure's own."""
    if observation_bits:
        return observation_reasons(observation_bits)
    return list(METRIC_REASON_LISTS[metric_bits])


def reason_masks(
    observation_bits: np.ndarray, metric_bits: np.ndarray
) -> dict[Reason, np.ndarray]:
    """Per reason, the queries it keeps a measure from, in report order: the observation
    reasons, then the measure's own on valid observations only (as :func:`reason_codes`)."""
    out = {r: (observation_bits & OBSERVATION_BITS[r]) != 0 for r in OBSERVATION_REASONS}
    valid = observation_bits == 0
    out.update({r: valid & ((metric_bits & METRIC_BITS[r]) != 0) for r in METRIC_REASONS})
    return out


def ratio(num: np.ndarray, den: np.ndarray, where_zero: float | np.ndarray) -> np.ndarray:
    """``num / den``, ``where_zero`` where ``den`` is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), where_zero)


def top_measure(cut: Cut, value: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                **fields: object) -> MeasureArrays:
    """A measure of positions 1..k only (P, RR, Success, RBP, Judged) with the given bounds:
    blocked by an unlabeled unit or a conflict across the threshold in 1..k, and blocking
    before rank k + 1, unless ``fields`` give its own ``reason_bits`` / ``blocking_limit``."""
    if "reason_bits" not in fields:
        fields["reason_bits"] = reason_bits(
            (Reason.UNLABELED_RETURNED, cut.any_unlabeled),
            (Reason.LABEL_CONFLICT, cut.any_maybe_conflict),
        )
    fields.setdefault("blocking_limit", cut.limit)
    return MeasureArrays(value=value, lower=lower, upper=upper, threshold=cut.threshold,
                         **fields)  # type: ignore[arg-type]


def population_measure(
    cut: Cut,
    value: np.ndarray,
    conflict: np.ndarray,
    no_relevant: np.ndarray,
    bounds: tuple[np.ndarray, np.ndarray, np.ndarray],
    conflict_rule: ConflictRule = "relevance",
) -> MeasureArrays:
    """A measure against the whole relevant population (R, nDCG, AP).

    Its reasons: an unlabeled unit in 1..k, a reference unit in ``conflict``, a population
    not declared complete, and ``no_relevant`` (dropped under ``trec_eval``: the measure is
    then 0 there). ``bounds`` is (lower, upper, defined): the bounds hold only where some
    completion of the unknowns defines the measure (NaN elsewhere).
    """
    if cut.protocol.trec_eval:
        no_relevant = np.zeros_like(no_relevant)
    lower, upper, defined = bounds
    return MeasureArrays(
        value=value,
        reason_bits=reason_bits(
            (Reason.UNLABELED_RETURNED, cut.any_unlabeled),
            (Reason.LABEL_CONFLICT, conflict),
            (Reason.POPULATION_INCOMPLETE, ~cut.ranking.population_complete),
            (Reason.NO_RELEVANT_UNITS, no_relevant),
        ),
        lower=np.where(defined, lower, np.nan),
        upper=np.where(defined, upper, np.nan),
        blocking_limit=cut.limit,
        threshold=cut.threshold,
        conflict_rule=conflict_rule,
        reference_conflicts=True,
    )
