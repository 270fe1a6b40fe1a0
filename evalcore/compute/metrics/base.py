"""What a metric module returns: per-query arrays, not objects.

A metric's reasons here are the section-5 reasons only; section-3
(observation) reasons are combined by :mod:`evalcore.compute.evaluate`. A metric is
available for a query when its ``reason_bits`` and the observation's bits are
both zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcore.contract.reasons import Reason
from evalcore.contract.results import MetricName

#: Section-5 reasons in the order they are reported.
METRIC_REASONS: tuple[Reason, ...] = (
    Reason.UNLABELED_RETURNED,
    Reason.POPULATION_INCOMPLETE,
    Reason.NO_RELEVANT_UNITS,
)
METRIC_BITS: dict[Reason, int] = {r: 1 << i for i, r in enumerate(METRIC_REASONS)}
UNLABELED_BIT = METRIC_BITS[Reason.UNLABELED_RETURNED]
POPULATION_BIT = METRIC_BITS[Reason.POPULATION_INCOMPLETE]
NO_RELEVANT_BIT = METRIC_BITS[Reason.NO_RELEVANT_UNITS]

#: ``blocking_limit`` value meaning "every unlabeled unit in 1..k blocks".
NO_LIMIT = np.iinfo(np.int64).max


@dataclass(frozen=True, eq=False)
class MetricArrays:
    """One metric over a batch.

    ``value`` is the metric where it is defined (NaN otherwise; only meaningful
    where ``reason_bits == 0``). ``lower`` / ``upper`` are NaN where no bounds
    are defined. The blocking unit IDs of query ``q`` are the distinct
    unlabeled units at ranks below ``blocking_limit[q]``.
    """

    name: MetricName
    value: np.ndarray  # float64[n]
    reason_bits: np.ndarray  # uint8[n]
    lower: np.ndarray  # float64[n]
    upper: np.ndarray  # float64[n]
    blocking_limit: np.ndarray  # int64[n]


def reason_bits(*flags: tuple[Reason, np.ndarray]) -> np.ndarray:
    """Combine per-query boolean masks into a reason bitmask."""
    out = np.zeros(flags[0][1].shape, dtype=np.uint8)
    for reason, mask in flags:
        out[mask] |= np.uint8(METRIC_BITS[reason])
    return out


def no_bounds(n: int) -> np.ndarray:
    return np.full(n, np.nan, dtype=np.float64)


def population_metric(
    name: MetricName,
    value: np.ndarray,
    any_unlabeled: np.ndarray,
    population_complete: np.ndarray,
    no_relevant: np.ndarray,
) -> MetricArrays:
    """A metric measured against the whole relevant population (recall, nDCG).

    Unavailable for every reason that applies: an unlabeled unit anywhere in
    1..k (all of them block), the population not declared complete, or
    nothing relevant to measure against. No bounds.
    """
    n = value.shape[0]
    return MetricArrays(
        name=name,
        value=value,
        reason_bits=reason_bits(
            (Reason.UNLABELED_RETURNED, any_unlabeled),
            (Reason.POPULATION_INCOMPLETE, ~population_complete),
            (Reason.NO_RELEVANT_UNITS, no_relevant),
        ),
        lower=no_bounds(n),
        upper=no_bounds(n),
        blocking_limit=np.full(n, NO_LIMIT, dtype=np.int64),
    )
