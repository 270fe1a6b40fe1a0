"""P@k: relevant units in 1..k divided by k (``P(rel=r)@k`` with threshold r).

The denominator is k even when fewer than k units were returned. Unavailable
when an unlabeled unit is in 1..k (``unlabeled_returned``) or a unit in
conflict there has gains on both sides of the threshold (``label_conflict``).

Bounds (tight, both ends attained): ``lower`` takes every unit of unknown
relevance as non-relevant, ``upper`` takes each distinct one as relevant.
"""

from __future__ import annotations

from evalcore.compute.measures.base import MeasureArrays, top_measure
from evalcore.compute.measures.ranking import Cut
from evalcore.contract.measures import Measure

FAMILY = "P"


def compute(cut: Cut, measure: Measure) -> MeasureArrays:
    k = cut.k
    value = cut.n_sure / k
    return top_measure(cut, value, value, (cut.n_sure + cut.n_maybe) / k)
