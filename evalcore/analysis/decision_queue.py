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

Order: most ``removes`` first; then units both runs return; then the best
rank; then query and unit id. Units whose label removes nothing are left out.
AP has no pair method: its queue is ordered by ``1/rank_A + 1/rank_B`` (a
heuristic; ``removes`` is then 0).

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


def row_scores(pair: PairEvaluation, name: str, rows: np.ndarray) -> np.ndarray:
    """Worst-case width (of the query's pair interval, not yet divided by the number of
    queries) removed by labeling each of ``rows``."""
    u = pair.units
    measure = pair.measures[name]
    if rows.size == 0:
        return np.zeros(0)
    if measure.family not in PAIR_FAMILIES:
        return np.zeros(rows.size)
    lower, upper = pair_interval(u, measure, pair.protocol)
    width = (upper - lower)[u.query[rows]]
    worst = np.zeros(rows.size)
    for gains in (u.low[rows], u.high[rows]):
        scen = u.what_if(rows, gains)
        lo, hi = pair_interval(scen, measure, pair.protocol)
        worst = np.maximum(worst, hi - lo)
    return np.nan_to_num(width - worst, nan=0.0).clip(min=0.0)


def candidate_rows(pair: PairEvaluation, name: str) -> np.ndarray:
    """Row indices of the unknown units that can still move the comparison."""
    lower, upper, _, _ = pair.intervals(name)
    open_query = ~np.isnan(lower) & ((upper - lower) > ZERO)
    return np.flatnonzero(open_rows(pair, name, open_query))


def order_rows(pair: PairEvaluation, name: str, rows: np.ndarray, scores: np.ndarray
               ) -> np.ndarray:
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
    return np.lexsort((rows, best, ~both, -scores))


def decide_queue(pair: PairEvaluation, name: str, limit: int | None = 20) -> DecideQueue:
    """The queue of ``name`` (see the module docstring); the first ``limit`` items."""
    u = pair.units
    n = u.n
    rows = candidate_rows(pair, name)
    scores = row_scores(pair, name, rows)
    heuristic = pair.measures[name].family not in PAIR_FAMILIES
    keep = scores > ZERO if not heuristic else np.ones(rows.size, dtype=bool)
    rows, scores = rows[keep], scores[keep]
    order = order_rows(pair, name, rows, scores)
    rows, scores = rows[order], scores[order]
    needed = labels_to_decide(pair, name, scores / max(n, 1)) if not heuristic else None
    qids = pair.query_ids
    head = rows if limit is None else rows[:limit]
    items = [
        DecideItem(
            query_id=qids[int(u.query[r])],
            unit_id=u.unit_id(r),
            removes=float(s) / max(n, 1),
            rank_a=int(u.rank_a[r]),
            rank_b=int(u.rank_b[r]),
            kind="conflict" if bool(u.conflict[r]) else "unlabeled",
        )
        for r, s in zip(head.tolist(), scores[: head.size].tolist(), strict=True)
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
