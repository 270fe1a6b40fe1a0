"""Bounds on each query's difference ``A - B`` taken directly over the shared unknowns.

Each run's own bounds give ``[lower_A - upper_B, upper_A - lower_B]`` (the
*naive* interval): it lets one unlabeled unit returned by both runs be relevant
for A and non-relevant for B at once. Here every unknown unit has ONE gain in a
completion, and the difference is bounded over those joint completions
(:class:`~evalcore.analysis.pair_units.PairUnits`). Per family:

* **P@k, RBP@k** (a sum over positions of weight x relevance): ``A - B`` is a
  sum over units of ``(w_A(u) - w_B(u)) * rel(u)``; its extremes take each
  unknown unit relevant or not by the sign of its own net weight. **Exact**
  (both ends are attained by a completion). A unit both runs return at the same
  rank does not move the difference at all.
* **RR@k, Success@k** (a decreasing function of the first relevant rank):
  the minimum of ``A - B`` is attained with B's first relevant unit at one of
  its unknown units before its first certainly relevant one (or none), that unit
  relevant, everything else unknown non-relevant; every candidate is tried, so
  the bounds are **exact** (the maximum is the same with A and B swapped).
* **nDCG@k** (the two runs share one IDCG): **exact** when every unknown unit in
  the cuts is unlabeled: :mod:`evalcore.analysis.ndcg_difference` finds the least and
  greatest ``(DCG_A - DCG_B) / IDCG`` over the joint completions (sign phases, monotone
  gain assignments, a chain programme inside Dinkelbach's iteration); a unit in
  conflict there is searched over every gain (sound, not always tight). It is
  intersected with the box bound below (so never wider than it), which is also the
  fallback where the search does not settle.
* **R@k** (the runs share \\|R\\|), and nDCG's box bound:
  ``A - B = N / D`` with ``N = DCG_A - DCG_B`` (or the relevant-count
  difference), bounded exactly per unit as above, and ``D`` (IDCG or \\|R\\|)
  between its values with every unknown at its lowest and at its highest gain
  (at least 1 in a completion where it is positive). The box ``N / D`` is
  **sound and exact in sign** (the interval excludes 0 exactly when every
  completion has the same sign of difference) but not the tightest in size. The
  result is intersected with the naive interval. nDCG needs both runs at the
  same cutoff on the query (IDCG@k), else the naive interval is used.
* **AP@k**: no pair method; the naive interval (sound, not tight).
* **Judged@k**: has no unknowns (its difference is known).

All arithmetic is numpy over the unit rows; NaN marks a query the pair method
does not cover (the caller uses the naive interval there).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from evalcore.analysis.ndcg_difference import exact_difference
from evalcore.analysis.pair_units import PairUnits
from evalcore.compute.measures.ndcg import gain_values, ideal_dcg
from evalcore.compute.measures.ranking import (
    discounts,
    segment_cumsum,
    segment_reduce,
    segment_sum,
)
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import Measure

#: How each family's difference is bounded (printed by the CLI and the benchmark).
METHODS: dict[str, str] = {
    "P": "exact: each shared unknown unit at the gain that moves A - B its way",
    "RBP": "exact: each shared unknown unit at the gain that moves A - B its way",
    "RR": "exact: every choice of the other run's first relevant unit is tried",
    "Success": "exact: every choice of the other run's first relevant unit is tried",
    "nDCG": "exact: joint search of (DCG_A - DCG_B) / IDCG over the shared unknown gains",
    "R": "exact in sign: relevant-count difference per unit over the shared |R| range",
    "AP": "naive: lower_A - upper_B (no pair method)",
    "Judged": "exact: known (no unknowns)",
}
#: Families whose pair interval comes from :func:`pair_interval`.
PAIR_FAMILIES = frozenset({"P", "RBP", "RR", "Success", "nDCG", "R"})


def _cut(units: PairUnits, measure: Measure) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(in A's cut, in B's cut, A's cutoff per row, B's cutoff per row)."""
    q = units.query
    ka = units.k_a if measure.k is None else np.full(units.n, measure.k, dtype=np.int64)
    kb = units.k_b if measure.k is None else np.full(units.n, measure.k, dtype=np.int64)
    in_a = (units.rank_a > 0) & (units.rank_a <= ka[q])
    in_b = (units.rank_b > 0) & (units.rank_b <= kb[q])
    return in_a, in_b, ka, kb


def _threshold(measure: Measure, protocol: EvalProtocol) -> int:
    return protocol.relevance_threshold if measure.rel is None else measure.rel


def _relevance(units: PairUnits, measure: Measure, protocol: EvalProtocol
               ) -> tuple[np.ndarray, np.ndarray]:
    """bool[U] (certainly relevant, of unknown relevance) at the measure's threshold."""
    t = _threshold(measure, protocol)
    sure = units.low >= t
    return sure, (units.high >= t) & ~sure


def _additive(units: PairUnits, c: np.ndarray, maybe: np.ndarray, sure: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Extremes of sum_u c_u * rel_u with rel_u = 1 (sure), 0/1 (maybe), 0 otherwise."""
    q, n = units.query, units.n
    known = segment_sum(q[sure], c[sure], n)
    m = maybe & (c != 0)
    cm = c[m]
    return (known + segment_sum(q[m], np.minimum(cm, 0.0), n),
            known + segment_sum(q[m], np.maximum(cm, 0.0), n))


def _weights(units: PairUnits, measure: Measure, in_a: np.ndarray, in_b: np.ndarray,
             ka: np.ndarray, kb: np.ndarray) -> np.ndarray:
    q = units.query
    if measure.family == "P":
        wa = np.where(in_a, 1.0 / ka[q], 0.0)
        wb = np.where(in_b, 1.0 / kb[q], 0.0)
    else:  # RBP
        p = float(measure.p)  # type: ignore[arg-type]
        wa = np.where(in_a, (1.0 - p) * np.power(p, units.rank_a - 1.0), 0.0)
        wb = np.where(in_b, (1.0 - p) * np.power(p, units.rank_b - 1.0), 0.0)
    return wa - wb


def net_weight(units: PairUnits, measure: Measure, protocol: EvalProtocol) -> np.ndarray:
    """float[U]: how much each row's relevance (P, RBP, R: 0/1) or gain unit (nDCG: per
    unit of gain value, before dividing by IDCG) moves ``A - B``; used to score labels."""
    in_a, in_b, ka, kb = _cut(units, measure)
    if measure.family in ("P", "RBP"):
        return _weights(units, measure, in_a, in_b, ka, kb)
    if measure.family == "nDCG":
        disc = discounts(int(max(units.rank_a.max(initial=0), units.rank_b.max(initial=0))))
        return np.where(in_a, disc[units.rank_a], 0.0) - np.where(in_b, disc[units.rank_b], 0.0)
    return in_a.astype(np.float64) - in_b.astype(np.float64)


def _first_relevant(units: PairUnits, measure: Measure, protocol: EvalProtocol
                    ) -> tuple[np.ndarray, np.ndarray]:
    n, q = units.n, units.query
    in_a, in_b, _, _ = _cut(units, measure)
    sure, maybe = _relevance(units, measure, protocol)

    def f(rank: np.ndarray) -> np.ndarray:
        if measure.family == "RR":
            return np.where(rank > 0, 1.0 / np.maximum(rank, 1), 0.0)
        return (rank > 0).astype(np.float64)

    big = np.iinfo(np.int64).max
    first_a = segment_reduce(np.minimum, q, np.where(sure & in_a, units.rank_a, big),
                             np.full(n, big, dtype=np.int64))
    first_b = segment_reduce(np.minimum, q, np.where(sure & in_b, units.rank_b, big),
                             np.full(n, big, dtype=np.int64))
    base = f(np.where(first_a == big, 0, first_a)) - f(np.where(first_b == big, 0, first_b))

    def min_difference(first_x, first_y, rank_x, rank_y, in_x, in_y, start):
        # min of X - Y: Y's first relevant is one of its unknown units before its first
        # certainly relevant one (or there is none of them relevant: ``start``); that unit
        # is relevant, every other unknown is not (X is non-decreasing in each relevance).
        cand = maybe & in_y & (rank_y < first_y[q])
        x_first = np.minimum(first_x[q], np.where(in_x, rank_x, big))[cand]
        value = f(np.where(x_first == big, 0, x_first)) - f(rank_y[cand])
        return segment_reduce(np.minimum, q[cand], value, start)

    lower = min_difference(first_a, first_b, units.rank_a, units.rank_b, in_a, in_b, base.copy())
    upper = -min_difference(first_b, first_a, units.rank_b, units.rank_a, in_b, in_a, -base)
    return lower, upper


def _ratio_box(n_lo: np.ndarray, n_hi: np.ndarray, d_lo: np.ndarray, d_hi: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of N / D for N in [n_lo, n_hi], D in [d_lo, d_hi] with 0 < d_lo <= d_hi."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(n_lo >= 0, n_lo / d_hi, n_lo / d_lo)
        upper = np.where(n_hi >= 0, n_hi / d_lo, n_hi / d_hi)
    return lower, upper


def _ndcg(units: PairUnits, measure: Measure, protocol: EvalProtocol,
          needed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    n, q = units.n, units.query
    in_a, in_b, ka, kb = _cut(units, measure)
    table = gain_values(protocol.gain)
    c = net_weight(units, measure, protocol)
    at_low, at_high = c * table[units.low], c * table[units.high]
    n_lo = segment_sum(q, np.minimum(at_low, at_high), n)
    n_hi = segment_sum(q, np.maximum(at_low, at_high), n)
    # The shared IDCG: the reference labels, plus the unlabeled units either run has in its
    # cut (a completion labels them), each at its lowest / highest gain.
    added = units.unlabeled & (in_a | in_b)
    depth = int(max(ka.max(initial=1), kb.max(initial=1)))
    disc = discounts(depth)
    k = np.minimum(ka, depth)
    rq = np.concatenate((units.ref_query, q[added]))
    d_lo = ideal_dcg(rq, np.concatenate((units.ref_low, units.low[added])), k, table, disc)
    d_hi = ideal_dcg(rq, np.concatenate((units.ref_high, units.high[added])), k, table, disc)
    # A positive IDCG is at least the smallest positive gain at rank 1 (1).
    lower, upper = _ratio_box(n_lo, n_hi, np.maximum(d_lo, 1.0), d_hi)
    # IDCG@k is also at least each run's DCG@k (a run's top k is one arrangement of
    # reference units), so A - B <= max(0, 1 - DCG_B / DCG_A) in every completion.
    da = np.where(in_a, disc[np.minimum(units.rank_a, depth)], 0.0)
    db = np.where(in_b, disc[np.minimum(units.rank_b, depth)], 0.0)
    g_lo, g_hi = table[units.low], table[units.high]
    upper = np.minimum(upper, np.maximum(0.0, 1.0 - _min_ratio(units, da, db, g_lo, g_hi)))
    lower = np.maximum(lower, -np.maximum(0.0, 1.0 - _min_ratio(units, db, da, g_lo, g_hi)))
    # The joint search over the shared unknowns (exact where it runs; NaN where too large).
    exact_lo, exact_hi = exact_difference(units, in_a, in_b, k, table, disc, needed)
    lower = np.where(np.isnan(exact_lo), lower, np.maximum(lower, exact_lo))
    upper = np.where(np.isnan(exact_hi), upper, np.minimum(upper, exact_hi))
    covered = (ka == kb) & (d_hi > 0)
    return (np.where(covered, np.maximum(lower, -1.0), np.nan),
            np.where(covered, np.minimum(upper, 1.0), np.nan))


def _min_ratio(units: PairUnits, wx: np.ndarray, wy: np.ndarray, g_lo: np.ndarray,
               g_hi: np.ndarray) -> np.ndarray:
    """Per query, the least ``DY / DX`` over completions with ``DX > 0`` (inf if none), where
    ``DX = sum wx * g``, ``DY = sum wy * g`` and each row's gain ``g`` lies in [g_lo, g_hi].

    A linear-fractional minimum over a box is at a vertex that raises to their highest
    gain exactly the rows with the smallest ``wy / wx`` (a prefix in that order): every
    prefix is tried.
    """
    n, q = units.n, units.query
    x0 = segment_sum(q, wx * g_lo, n)
    y0 = segment_sum(q, wy * g_lo, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        best = np.where(x0 > 0, y0 / np.where(x0 > 0, x0, 1.0), np.inf)
        step = g_hi - g_lo
        rows = np.flatnonzero((step > 0) & (wx > 0))
        if rows.size == 0:
            return best
        key = wy[rows] / wx[rows]
        rows = rows[np.lexsort((key, q[rows]))]
        rq = q[rows]
        x = x0[rq] + segment_cumsum(rq, wx[rows] * step[rows])
        y = y0[rq] + segment_cumsum(rq, wy[rows] * step[rows])
        ratio = np.where(x > 0, y / np.where(x > 0, x, 1.0), np.inf)
    return segment_reduce(np.minimum, rq, ratio, best)


def _recall(units: PairUnits, measure: Measure, protocol: EvalProtocol
            ) -> tuple[np.ndarray, np.ndarray]:
    n, q = units.n, units.query
    in_a, in_b, _, _ = _cut(units, measure)
    sure, maybe = _relevance(units, measure, protocol)
    c = in_a.astype(np.float64) - in_b.astype(np.float64)
    n_lo, n_hi = _additive(units, c, maybe, sure)
    # The shared |R|: the reference labels, plus the unlabeled units either run has in its
    # cut (a completion labels them).
    added = units.unlabeled & (in_a | in_b)
    t = _threshold(measure, protocol)
    d_lo = (np.bincount(units.ref_query[units.ref_low >= t], minlength=n)
            + np.bincount(q[added & sure], minlength=n)).astype(np.float64)
    d_hi = (np.bincount(units.ref_query[units.ref_high >= t], minlength=n)
            + np.bincount(q[added & (units.high >= t)], minlength=n)).astype(np.float64)
    lower, upper = _ratio_box(n_lo, n_hi, np.maximum(d_lo, 1.0), d_hi)
    covered = d_hi > 0
    return (np.where(covered, np.maximum(lower, -1.0), np.nan),
            np.where(covered, np.minimum(upper, 1.0), np.nan))


def _top(units: PairUnits, measure: Measure, protocol: EvalProtocol
         ) -> tuple[np.ndarray, np.ndarray]:
    in_a, in_b, ka, kb = _cut(units, measure)
    sure, maybe = _relevance(units, measure, protocol)
    return _additive(units, _weights(units, measure, in_a, in_b, ka, kb), maybe, sure)


_FAMILY: dict[str, Callable[[PairUnits, Measure, EvalProtocol], tuple[np.ndarray, np.ndarray]]] = {
    "P": _top,
    "RBP": _top,
    "RR": _first_relevant,
    "Success": _first_relevant,
    "nDCG": _ndcg,
    "R": _recall,
}


def pair_interval(units: PairUnits, measure: Measure, protocol: EvalProtocol,
                  needed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per query, (lower, upper) of ``A - B`` by the pair method; NaN where not covered.

    ``needed`` (bool[n], None: all): the queries whose interval the caller reads. The
    others' values stay sound but may be wider: nDCG's joint search (the costly part) is
    skipped there; every needed query's interval is bit for bit the same either way."""
    method = _FAMILY.get(measure.family)
    if method is None:
        nan = np.full(units.n, np.nan)
        return nan, nan.copy()
    if method is _ndcg:
        return _ndcg(units, measure, protocol, needed)
    return method(units, measure, protocol)
