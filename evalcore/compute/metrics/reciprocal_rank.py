"""Reciprocal rank at k: 1 / rank of the first relevant unit in 1..k.

0 when no unit in 1..k is relevant and all of 1..k are labeled. Unavailable
(``unlabeled_returned``) when an unlabeled unit comes before the first
relevant one, or anywhere in 1..k when none is relevant; only those units
block. Bounds: ``lower`` takes the blocking units as gain 0 (the first
relevant unit found, or 0), ``upper`` takes them as relevant (1 / rank of the
first blocking unit).
"""

from __future__ import annotations

import numpy as np

from evalcore.compute.metrics.base import MetricArrays, reason_bits
from evalcore.compute.metrics.ranking import RankingArrays, segment_count
from evalcore.contract.reasons import Reason

NAME = "reciprocal_rank"


def first_rank(query: np.ndarray, rank: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    """Per-query smallest rank where ``mask`` holds; 0 where it never does."""
    at = np.flatnonzero(mask)
    out = np.zeros(n, dtype=np.int64)
    if at.size:
        q = query[at]
        first = np.empty(at.size, dtype=bool)
        first[0] = True
        np.not_equal(q[1:], q[:-1], out=first[1:])
        out[q[first]] = rank[at[first]]
    return out


def compute(r: RankingArrays) -> MetricArrays:
    first_rel = first_rank(r.query, r.rank, r.relevant, r.n)
    found = first_rel > 0
    limit = np.where(found, first_rel, np.iinfo(np.int64).max)
    before = r.unlabeled & (r.rank < limit[r.query])
    blocked = segment_count(r.query, before, r.n) > 0
    value = np.where(found, 1.0 / np.maximum(first_rel, 1), 0.0)
    first_unl = first_rank(r.query, r.rank, r.unlabeled, r.n)
    lower = np.where(blocked, value, np.nan)
    upper = np.where(blocked, 1.0 / np.maximum(first_unl, 1), np.nan)
    return MetricArrays(
        name=NAME,
        value=value,
        reason_bits=reason_bits((Reason.UNLABELED_RETURNED, blocked)),
        lower=lower,
        upper=upper,
        blocking_limit=limit,
    )
