"""Judged@k: distinct units in 1..k with a resolved label, divided by k.

A unit in conflict is not judged (section 9); returned duplicates count once;
the denominator is k even when fewer were returned. The compatibility policies
do not change it (it measures the labels, not the protocol's reading of them).
Unavailable only when the observation is invalid (section 3).
"""

from __future__ import annotations

import numpy as np

from evalcore.compute.measures.base import MeasureArrays
from evalcore.compute.measures.ranking import Cut, counts_in
from evalcore.contract.measures import Measure

FAMILY = "Judged"


def compute(cut: Cut, measure: Measure) -> MeasureArrays:
    n = cut.n
    value = counts_in(cut.offsets, cut.judged & cut.counted) / cut.k
    return MeasureArrays(
        value=value,
        reason_bits=np.zeros(n, dtype=np.uint8),
        lower=value,
        upper=value,
        blocking_limit=cut.limit,
        threshold=cut.threshold,
    )
