"""Precision at k: relevant units in 1..k divided by k.

The denominator is k even when fewer than k units were returned. Unavailable
when an unlabeled unit is in 1..k (``unlabeled_returned``); then ``lower``
takes every blocking unit as gain 0 and ``upper`` takes each distinct one as
relevant.
"""

from __future__ import annotations

import numpy as np

from evalcore.compute.metrics.base import NO_LIMIT, MetricArrays, reason_bits
from evalcore.compute.metrics.ranking import RankingArrays
from evalcore.contract.reasons import Reason

NAME = "precision"


def compute(r: RankingArrays) -> MetricArrays:
    k = r.k.astype(np.float64)
    value = r.n_relevant_top / k
    blocked = r.n_unlabeled > 0
    lower = np.where(blocked, value, np.nan)
    upper = np.where(blocked, (r.n_relevant_top + r.n_unlabeled_units) / k, np.nan)
    return MetricArrays(
        name=NAME,
        value=value,
        reason_bits=reason_bits((Reason.UNLABELED_RETURNED, blocked)),
        lower=lower,
        upper=upper,
        blocking_limit=np.full(r.n, NO_LIMIT, dtype=np.int64),
    )
