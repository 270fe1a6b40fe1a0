"""RR@k: 1 / rank of the first relevant unit in 1..k (its mean is MRR).

0 when no unit in 1..k is relevant and all of 1..k are known. Unavailable
when a unit of unknown relevance (unlabeled: ``unlabeled_returned``; a
conflict across the threshold: ``label_conflict``) comes before the first
certainly relevant one, or anywhere in 1..k when none is; only those units
block. Bounds (tight, both ends attained): ``lower`` takes the blocking units
as non-relevant (the first certainly relevant unit found, or 0), ``upper``
takes them as relevant (1 / rank of the first blocking unit).
"""

from __future__ import annotations

import numpy as np

from evalcore.compute.measures.base import MeasureArrays, reason_bits
from evalcore.compute.measures.ranking import Cut, counts_in, first_rank
from evalcore.contract.measures import Measure
from evalcore.contract.reasons import Reason

FAMILY = "RR"


def compute(cut: Cut, measure: Measure) -> MeasureArrays:
    n = cut.n
    first_rel = first_rank(cut.query, cut.rank, cut.sure, n)
    found = first_rel > 0
    limit = np.where(found, first_rel, cut.limit)
    before = cut.rank < limit[cut.query]
    unlabeled = counts_in(cut.offsets, cut.unlabeled & before) > 0
    conflict = counts_in(cut.offsets, cut.maybe & cut.conflict & before) > 0
    value = np.where(found, 1.0 / np.maximum(first_rel, 1), 0.0)
    first_unknown = first_rank(cut.query, cut.rank, cut.maybe | cut.unlabeled, n)
    upper = np.where(unlabeled | conflict, 1.0 / np.maximum(first_unknown, 1), value)
    return MeasureArrays(
        value=value,
        reason_bits=reason_bits(
            (Reason.UNLABELED_RETURNED, unlabeled), (Reason.LABEL_CONFLICT, conflict)
        ),
        lower=value,
        upper=upper,
        blocking_limit=limit,
        threshold=cut.threshold,
    )
