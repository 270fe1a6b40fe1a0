"""The measures of the units in 1..k alone: P, RR, Success, RBP and Judged (one function
each, ``compute(cut, measure) -> MeasureArrays``; the families over the whole relevant set,
R, nDCG and AP, have a module each)."""

from __future__ import annotations

import numpy as np

from evalcore.compute.measures.base import MeasureArrays, reason_bits, top_measure
from evalcore.compute.measures.ranking import Cut, counts_in, first_rank, segment_sum
from evalcore.contract.measures import Measure
from evalcore.contract.reasons import Reason


def precision(cut: Cut, measure: Measure) -> MeasureArrays:
    """P@k: relevant units in 1..k divided by k (``P(rel=r)@k`` with threshold r).

    The denominator is k even when fewer than k units were returned. Unavailable
    when an unlabeled unit is in 1..k (``unlabeled_returned``) or a unit in
    conflict there has gains on both sides of the threshold (``label_conflict``).

    Bounds (tight, both ends attained): ``lower`` takes every unit of unknown
    relevance as non-relevant, ``upper`` takes each distinct one as relevant.
    """
    k = cut.k
    value = cut.n_sure / k
    return top_measure(cut, value, value, (cut.n_sure + cut.n_maybe) / k)


def reciprocal_rank(cut: Cut, measure: Measure) -> MeasureArrays:
    """RR@k: 1 / rank of the first relevant unit in 1..k (its mean is MRR).

    0 when no unit in 1..k is relevant and all of 1..k are known. Unavailable
    when a unit of unknown relevance (unlabeled: ``unlabeled_returned``; a
    conflict across the threshold: ``label_conflict``) comes before the first
    certainly relevant one, or anywhere in 1..k when none is; only those units
    block. Bounds (tight, both ends attained): ``lower`` takes the blocking units
    as non-relevant (the first certainly relevant unit found, or 0), ``upper``
    takes them as relevant (1 / rank of the first blocking unit).
    """
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
    bits = reason_bits((Reason.UNLABELED_RETURNED, unlabeled), (Reason.LABEL_CONFLICT, conflict))
    return top_measure(cut, value, value, upper, reason_bits=bits, blocking_limit=limit)


def success(cut: Cut, measure: Measure) -> MeasureArrays:
    """Success@k: 1 if a relevant unit is in 1..k, else 0.

    Known as soon as a certainly relevant unit is in 1..k. Otherwise unavailable
    when a unit of unknown relevance is there (``unlabeled_returned`` /
    ``label_conflict``), with bounds [0, 1] (tight: both ends attained).
    """
    found = cut.n_sure > 0
    value = found.astype(np.float64)
    upper = (found | (cut.n_maybe > 0)).astype(np.float64)
    out = top_measure(cut, value, value, upper)
    out.reason_bits[found] = 0
    return out


def rbp(cut: Cut, measure: Measure) -> MeasureArrays:
    """RBP(p)@k: rank-biased precision, ``(1 - p) * sum_{i <= k} p^(i-1) * rel(unit_i)``.

    Returned duplicates contribute 0. Unavailable when a unit of unknown relevance
    is in 1..k (``unlabeled_returned`` / ``label_conflict``). Bounds (tight, both
    ends attained): ``lower`` takes those units as non-relevant, ``upper`` as
    relevant. ``residual = upper - lower + p^k`` is reported on every valid query
    (Moffat and Zobel): the most the value could still move, counting the ranks
    beyond k.
    """
    p = float(measure.p)  # type: ignore[arg-type]  # Measure fills RBP's p
    weight = (1.0 - p) * np.power(p, cut.rank - 1.0)
    lower = segment_sum(cut.query[cut.sure], weight[cut.sure], cut.n)
    upper = lower + segment_sum(cut.query[cut.maybe], weight[cut.maybe], cut.n)
    residual = upper - lower + np.power(p, cut.k.astype(np.float64))
    return top_measure(cut, lower, lower, upper, residual=residual)


def judged(cut: Cut, measure: Measure) -> MeasureArrays:
    """Judged@k: distinct units in 1..k with a resolved label, divided by k.

    A unit in conflict is not judged (section 9); returned duplicates count once;
    the denominator is k even when fewer were returned. The compatibility policies
    do not change it (it measures the labels, not the protocol's reading of them).
    Unavailable only when the observation is invalid (section 3).
    """
    value = counts_in(cut.offsets, cut.judged & cut.counted) / cut.k
    return top_measure(cut, value, value, value, reason_bits=np.zeros(cut.n, dtype=np.uint8))
