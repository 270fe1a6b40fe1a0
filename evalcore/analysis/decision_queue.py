r"""The "to decide A vs B" queue: which unknown units to label so the comparison decides.

Candidates are the unknown units (unlabeled, or in conflict across the
measure's threshold; any conflict for nDCG) in either run's cut on a query
whose difference is still open. Each is scored by what its label does to the
query's difference interval (:func:`evalcore.analysis.pair_bounds.pair_interval`):
the interval is recomputed with the unit fixed at its lowest and at its
highest possible gain, and ``removes`` is the width removed **in the worst
case** of the two, divided by the number of queries (so it is in units of the
mean difference). For P and RBP that is exactly the unit's own net weight
\\|w_A - w_B\\|: a unit both runs return at the same rank removes nothing.

Order: most ``progress`` first: how far the label is expected to move the end
of the mean interval that must cross 0 (the lower end when the interval's
midpoint is above 0: the evidence leans to A, so the labels that can lift the
lower bound come first; else the upper end), weighting the two outcomes (unit
at its lowest / highest gain) by the share of relevant units among the labeled
ones of its class (best rank, returned by one run or both). Ordering by worst-case width alone treats a label that
can only lower the upper bound like one that can lift the lower bound; on the
simulation of ``benchmarks/bench_decision.py`` it needed 0.64 of the blocking
order's labels for P@10, the expected progress order far fewer. Ties: most
``removes``; then units both runs return; then the best rank; then query and unit id.
Units whose label removes nothing from the pair interval stay in the queue (last):
for nDCG and R the verdict also reads each run's own bounds, which they can narrow.
AP has no pair method: its queue is ordered by ``1/rank_A + 1/rank_B`` (a
heuristic; ``removes`` and ``progress`` are then 0).

``labels_to_decide`` estimates how many labels (from the head of the queue)
are still needed: the fewest whose worst-case removals add up to the distance
from 0 to the nearer end of the mean interval. It is optimistic (each label
removes at least its worst case, but only part of it may move the nearer
end), so read it as "at least about".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from evalcore.analysis.decision import ZERO, PairEvaluation, open_rows
from evalcore.analysis.pair_bounds import PAIR_FAMILIES, pair_interval


class DecideItem(BaseModel):
    """One unknown unit and what its label can do to the comparison."""

    model_config = ConfigDict(frozen=True)

    query_id: str
    unit_id: str
    #: Width of the mean-difference interval its label removes in the worst case.
    removes: float
    #: How far its label is expected to move the end of the mean interval that must cross 0.
    progress: float
    #: Its rank in each run's ranking (0: not returned).
    rank_a: int
    rank_b: int
    #: "unlabeled" or "conflict".
    kind: str


class DecideQueue(BaseModel):
    model_config = ConfigDict(frozen=True)

    measure: str
    items: list[DecideItem]
    #: All candidates (``items`` may be cut to a limit).
    n_candidates: int
    #: Estimated labels still needed (None: decided already, or the head cannot reach it).
    labels_to_decide: int | None


def _scenarios(pair: PairEvaluation, name: str, rows: np.ndarray
               ) -> tuple[np.ndarray, ...]:
    """Per row: the query's pair interval now (lo, hi), with the unit at its lowest gain
    (lo, hi) and at its highest gain (lo, hi)."""
    u = pair.units
    measure = pair.measures[name]
    lower, upper = pair_interval(u, measure, pair.protocol)
    q = u.query[rows]
    out = [lower[q], upper[q]]
    for gains in (u.low[rows], u.high[rows]):
        lo, hi = pair_interval(u.what_if(rows, gains), measure, pair.protocol)
        out += [lo, hi]
    return tuple(np.nan_to_num(a, nan=0.0) for a in out)


def row_scores(pair: PairEvaluation, name: str, rows: np.ndarray) -> np.ndarray:
    """Worst-case width (of the query's pair interval, not yet divided by the number of
    queries) removed by labeling each of ``rows``."""
    if rows.size == 0 or pair.measures[name].family not in PAIR_FAMILIES:
        return np.zeros(rows.size)
    lo, hi, lo_low, hi_low, lo_high, hi_high = _scenarios(pair, name, rows)
    return ((hi - lo) - np.maximum(hi_low - lo_low, hi_high - lo_high)).clip(min=0.0)


def relevance_prior(pair: PairEvaluation, name: str, rows: np.ndarray) -> np.ndarray:
    """Per row: the chance its unit is relevant, estimated from the labels at hand as the
    share of labeled units of its class (best rank in either run, and whether both runs
    returned it) that are relevant (Laplace smoothed): relevance correlates with rank and
    with agreement between runs, and the labels at hand say how strongly."""
    u = pair.units
    measure = pair.measures[name]
    t = 1 if measure.family == "nDCG" else (
        pair.protocol.relevance_threshold if measure.rel is None else measure.rel)
    big = np.iinfo(np.int64).max
    best = np.minimum(np.where(u.rank_a > 0, u.rank_a, big), np.where(u.rank_b > 0, u.rank_b, big))
    # The class of a unit: its best rank, and whether both runs returned it.
    cls = np.where(best == big, 0, best) * 2 + ((u.rank_a > 0) & (u.rank_b > 0))
    known = ~u.unknown & (best != big)
    size = int(cls.max(initial=0)) + 1
    labeled = np.bincount(cls[known], minlength=size).astype(np.float64)
    relevant = np.bincount(cls[known & (u.low >= t)], minlength=size).astype(np.float64)
    return (relevant[cls[rows]] + 1.0) / (labeled[cls[rows]] + 2.0)


def expected_progress(pair: PairEvaluation, name: str, rows: np.ndarray) -> np.ndarray:
    """Per row: how far its label is expected to move the end of the query's interval that
    must cross 0 for a decision (the lower end when the mean interval's midpoint is above
    0, else the upper end), weighting its two outcomes by :func:`relevance_prior`."""
    if rows.size == 0 or pair.measures[name].family not in PAIR_FAMILIES:
        return np.zeros(rows.size)
    lower, upper, _, _ = pair.intervals(name)
    towards_a = float(np.nanmean(lower) + np.nanmean(upper)) >= 0
    lo, hi, lo_low, hi_low, lo_high, hi_high = _scenarios(pair, name, rows)
    p = relevance_prior(pair, name, rows)
    if towards_a:
        return p * (lo_high - lo) + (1 - p) * (lo_low - lo)
    return p * (hi - hi_high) + (1 - p) * (hi - hi_low)


def candidate_rows(pair: PairEvaluation, name: str) -> np.ndarray:
    """Row indices of the unknown units that can still move the comparison."""
    lower, upper, _, _ = pair.intervals(name)
    open_query = ~np.isnan(lower) & ((upper - lower) > ZERO)
    return np.flatnonzero(open_rows(pair, name, open_query))


def order_rows(pair: PairEvaluation, name: str, rows: np.ndarray, scores: np.ndarray,
               progress: np.ndarray) -> np.ndarray:
    """``rows`` (and parallel ``scores``) sorted into queue order; returns the permutation."""
    u = pair.units
    ra, rb = u.rank_a[rows], u.rank_b[rows]
    both = (ra > 0) & (rb > 0)
    best = np.where(ra > 0, ra, np.iinfo(np.int64).max)
    best = np.minimum(best, np.where(rb > 0, rb, np.iinfo(np.int64).max))
    if pair.measures[name].family not in PAIR_FAMILIES:
        scores = np.where(ra > 0, 1.0 / np.maximum(ra, 1), 0.0) + np.where(
            rb > 0, 1.0 / np.maximum(rb, 1), 0.0)
    # lexsort: last key first
    names = np.array([u.unit_id(r) for r in rows.tolist()], dtype=object)
    by_name = np.empty(rows.size, dtype=np.int64)
    by_name[np.argsort(names, kind="stable")] = np.arange(rows.size)
    return np.lexsort((by_name, u.query[rows], best, ~both, -scores, -np.round(progress, 15)))


def decide_queue(pair: PairEvaluation, name: str, limit: int | None = 20) -> DecideQueue:
    """The queue of ``name`` (see the module docstring); the first ``limit`` items."""
    u = pair.units
    n = u.n
    rows = candidate_rows(pair, name)
    scores = row_scores(pair, name, rows)
    heuristic = pair.measures[name].family not in PAIR_FAMILIES
    progress = expected_progress(pair, name, rows)
    order = order_rows(pair, name, rows, scores, progress)
    rows, scores, progress = rows[order], scores[order], progress[order]
    needed = labels_to_decide(pair, name, scores / max(n, 1)) if not heuristic else None
    qids = pair.query_ids
    head = rows if limit is None else rows[:limit]
    items = [
        DecideItem(
            query_id=qids[int(u.query[r])],
            unit_id=u.unit_id(r),
            removes=float(s) / max(n, 1),
            progress=float(g) / max(n, 1),
            rank_a=int(u.rank_a[r]),
            rank_b=int(u.rank_b[r]),
            kind="conflict" if bool(u.conflict[r]) else "unlabeled",
        )
        for r, s, g in zip(head.tolist(), scores[: head.size].tolist(),
                           progress[: head.size].tolist(), strict=True)
    ]
    return DecideQueue(measure=name, items=items, n_candidates=int(rows.size),
                       labels_to_decide=needed)


def labels_to_decide(pair: PairEvaluation, name: str, removes: Sequence[float] | np.ndarray
                     ) -> int | None:
    """Fewest labels from the head of the queue whose worst-case removals reach the
    distance from 0 to the nearer end of the mean interval (None if already decided or
    never reached)."""
    lower, upper, _, _ = pair.intervals(name)
    if np.isnan(lower).any() or lower.size == 0:
        return None
    lo, hi = float(lower.mean()), float(upper.mean())
    if lo > ZERO or hi < -ZERO or (abs(lo) <= ZERO and abs(hi) <= ZERO):
        return 0
    gap = min(-lo, hi)
    reached = np.flatnonzero(np.cumsum(np.asarray(removes, dtype=np.float64)) >= gap - ZERO)
    return int(reached[0]) + 1 if reached.size else None
