"""Success@k: 1 if a relevant unit is in 1..k, else 0.

Known as soon as a certainly relevant unit is in 1..k. Otherwise unavailable
when a unit of unknown relevance is there (``unlabeled_returned`` /
``label_conflict``), with bounds [0, 1] (tight: both ends attained).
"""

from __future__ import annotations

import numpy as np

from evalcore.compute.measures.base import MeasureArrays, top_measure
from evalcore.compute.measures.ranking import Cut
from evalcore.contract.measures import Measure

FAMILY = "Success"


def compute(cut: Cut, measure: Measure) -> MeasureArrays:
    found = cut.n_sure > 0
    value = found.astype(np.float64)
    upper = (found | (cut.n_maybe > 0)).astype(np.float64)
    out = top_measure(cut, value, value, upper)
    out.reason_bits[found] = 0
    return out
