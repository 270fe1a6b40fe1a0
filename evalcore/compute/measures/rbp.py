"""RBP(p)@k: rank-biased precision, ``(1 - p) * sum_{i <= k} p^(i-1) * rel(unit_i)``.

Returned duplicates contribute 0. Unavailable when a unit of unknown relevance
is in 1..k (``unlabeled_returned`` / ``label_conflict``). Bounds (tight, both
ends attained): ``lower`` takes those units as non-relevant, ``upper`` as
relevant. ``residual = upper - lower + p^k`` is reported on every valid query
(Moffat and Zobel): the most the value could still move, counting the ranks
beyond k.
"""

from __future__ import annotations

import numpy as np

from evalcore.compute.measures.base import MeasureArrays, top_measure
from evalcore.compute.measures.ranking import Cut, segment_sum
from evalcore.contract.measures import Measure

FAMILY = "RBP"


def compute(cut: Cut, measure: Measure) -> MeasureArrays:
    p = float(measure.p)  # type: ignore[arg-type]  # Measure fills RBP's p
    weight = (1.0 - p) * np.power(p, cut.rank - 1.0)
    lower = segment_sum(cut.query[cut.sure], weight[cut.sure], cut.n)
    upper = lower + segment_sum(cut.query[cut.maybe], weight[cut.maybe], cut.n)
    residual = upper - lower + np.power(p, cut.k.astype(np.float64))
    return top_measure(cut, lower, lower, upper, residual=residual)
