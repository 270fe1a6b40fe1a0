"""Bounds on each query's difference ``A - B`` taken directly over the shared unknowns.

Each run's own bounds give ``[lower_A - upper_B, upper_A - lower_B]`` (the *naive*
interval): it lets one unlabeled unit returned by both runs be relevant for A and
non-relevant for B at once. Here every unknown unit has ONE gain in a completion, and the
difference is bounded over those joint completions
(:class:`~evalcore.analysis.pair_units.PairUnits`). :data:`METHODS` says how each family
is bounded and where it is exact (docs/decided-comparisons.md, "Bounds per measure",
gives the table and the nDCG search); each family's function gives its argument.

**Open populations** (contract section 12): besides the unknown units in the cuts, up
to ``U_out`` outside units (:meth:`PairUnits.outside`: unlabeled, in neither cut) may be
relevant with any gain, in both runs' population alike. They enter nDCG's IDCG (at most
min(k, ``U_out``) of them, at the highest gain) and R's and AP's \\|R\\| (any number
0..``U_out``). With ``U_out`` unbounded an R or AP difference that is positive with no
outside unit relevant stays positive in every completion and only approaches 0: that end
is *open* (:func:`pair_interval_ends`), and a verdict may rest on it
(``Decision.lower_open``). A completion in which no unit is relevant counts as a
difference of 0.

NaN marks a query the pair method does not cover (the caller uses the naive interval).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from evalcore.analysis.ndcg_difference import exact_difference
from evalcore.analysis.pair_units import PairUnits
from evalcore.compute.measures.average_precision import best_mean
from evalcore.compute.measures.ndcg import gain_values, idcg_from_counts, ideal_dcg
from evalcore.compute.measures.ranking import (
    discounts,
    level_counts,
    segment_cumsum,
    segment_reduce,
    segment_sum,
)
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.measures import Measure

#: How each family's difference is bounded (printed by the CLI and the benchmark).
METHODS: dict[str, str] = {
    "P": "exact: each shared unknown unit at the gain that moves A - B its way",
    "RBP": "exact: each shared unknown unit at the gain that moves A - B its way",
    "RR": "exact: every choice of the other run's first relevant unit is tried",
    "Success": "exact: every choice of the other run's first relevant unit is tried",
    "nDCG": "exact: joint search of (DCG_A - DCG_B) / IDCG over the shared unknown gains",
    "R": "exact: relevant counts of each run's own unknowns over the shared |R|",
    "AP": "per-unit shares of both runs' precision sums over the shared |R| (exact when "
          "the cuts are labeled)",
    "Judged": "exact: known (no unknowns)",
}
#: Families whose pair interval comes from :func:`pair_interval`.
PAIR_FAMILIES = frozenset({"P", "RBP", "RR", "Success", "nDCG", "R", "AP"})
#: Two, three and four parallel arrays (per query or per row), as most functions here return.
Arrays2 = tuple[np.ndarray, np.ndarray]
Arrays3 = tuple[np.ndarray, np.ndarray, np.ndarray]
Arrays4 = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def cut_and_cutoffs(units: PairUnits, measure: Measure) -> Arrays4:
    """(in A's cut, in B's cut, A's cutoff per row, B's cutoff per row)."""
    q = units.query
    ka = units.k_a if measure.k is None else np.full(units.n, measure.k, dtype=np.int64)
    kb = units.k_b if measure.k is None else np.full(units.n, measure.k, dtype=np.int64)
    in_a = (units.rank_a > 0) & (units.rank_a <= ka[q])
    in_b = (units.rank_b > 0) & (units.rank_b <= kb[q])
    return in_a, in_b, ka, kb


def relevance_threshold(measure: Measure, protocol: EvalProtocol) -> int:
    """The gain from which a unit counts as relevant for ``measure`` (nDCG: any positive)."""
    if measure.family == "nDCG":
        return 1
    return protocol.relevance_threshold if measure.rel is None else measure.rel


def _relevance(units: PairUnits, measure: Measure, protocol: EvalProtocol) -> Arrays2:
    """bool[U] (certainly relevant, of unknown relevance) at the measure's threshold."""
    t = relevance_threshold(measure, protocol)
    sure = units.low >= t
    return sure, (units.high >= t) & ~sure


def _additive(units: PairUnits, c: np.ndarray, maybe: np.ndarray, sure: np.ndarray) -> Arrays2:
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
    in_a, in_b, ka, kb = cut_and_cutoffs(units, measure)
    if measure.family in ("P", "RBP"):
        return _weights(units, measure, in_a, in_b, ka, kb)
    if measure.family == "nDCG":
        disc = discounts(int(max(units.rank_a.max(initial=0), units.rank_b.max(initial=0))))
        return np.where(in_a, disc[units.rank_a], 0.0) - np.where(in_b, disc[units.rank_b], 0.0)
    return in_a.astype(np.float64) - in_b.astype(np.float64)


def first_sure_ranks(units: PairUnits, sure: np.ndarray, in_a: np.ndarray,
                     in_b: np.ndarray) -> Arrays2:
    """Per query, each run's first rank in its cut holding a ``sure`` row (int64 max: none)."""
    big = np.iinfo(np.int64).max

    def first(in_x: np.ndarray, rank: np.ndarray) -> np.ndarray:
        return segment_reduce(np.minimum, units.query, np.where(sure & in_x, rank, big),
                              np.full(units.n, big, dtype=np.int64))

    return first(in_a, units.rank_a), first(in_b, units.rank_b)


def _first_relevant(units: PairUnits, measure: Measure, protocol: EvalProtocol) -> Arrays2:
    q = units.query
    in_a, in_b, _, _ = cut_and_cutoffs(units, measure)
    sure, maybe = _relevance(units, measure, protocol)

    def f(rank: np.ndarray) -> np.ndarray:
        if measure.family == "RR":
            return np.where(rank > 0, 1.0 / np.maximum(rank, 1), 0.0)
        return (rank > 0).astype(np.float64)

    big = np.iinfo(np.int64).max
    first_a, first_b = first_sure_ranks(units, sure, in_a, in_b)
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


def _ratio_box(n_lo: np.ndarray, n_hi: np.ndarray, d_lo: np.ndarray, d_hi: np.ndarray) -> Arrays2:
    """Bounds of N / D for N in [n_lo, n_hi], D in [d_lo, d_hi] with 0 < d_lo <= d_hi."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(n_lo >= 0, n_lo / d_hi, n_lo / d_lo)
        upper = np.where(n_hi >= 0, n_hi / d_lo, n_hi / d_hi)
    return lower, upper


def _ndcg(units: PairUnits, measure: Measure, protocol: EvalProtocol,
          needed: np.ndarray | None = None) -> Arrays2:
    """nDCG@k (the runs share one IDCG): the joint search of
    :mod:`evalcore.analysis.ndcg_difference` (exact when every unknown unit in the cuts is
    unlabeled; a unit in conflict is searched over every gain: sound), intersected with the
    box bound ``N / D`` (``N = DCG_A - DCG_B`` exact per unit, ``D`` the IDCG between its
    values with every unknown at its lowest and highest gain: sound, exact in sign), its
    fallback. NaN where the runs' cutoffs differ on the query (IDCG@k is not shared)."""
    n, q = units.n, units.query
    in_a, in_b, ka, kb = cut_and_cutoffs(units, measure)
    table = gain_values(protocol.gain)
    c = net_weight(units, measure, protocol)
    at_low, at_high = c * table[units.low], c * table[units.high]
    n_lo = segment_sum(q, np.minimum(at_low, at_high), n)
    n_hi = segment_sum(q, np.maximum(at_low, at_high), n)
    # The shared IDCG: the reference labels, plus the unlabeled units either run has in its
    # cut (a completion labels them), each at its lowest / highest gain, plus (section 12)
    # up to min(k, U_out) outside units at the highest gain.
    added = units.unlabeled & (in_a | in_b)
    depth = int(max(ka.max(initial=1), kb.max(initial=1)))
    disc = discounts(depth)
    k = np.minimum(ka, depth)
    outside = np.minimum(k, units.outside(in_a, in_b)).astype(np.int64)
    rq = np.concatenate((units.ref_query, q[added]))
    d_lo = ideal_dcg(rq, np.concatenate((units.ref_low, units.low[added])), k, table, disc)
    high_levels = level_counts(rq, np.concatenate((units.ref_high, units.high[added])), n)
    high_levels[:, MAX_GAIN] += outside
    d_hi = idcg_from_counts(high_levels, k, table, disc)
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
    exact_lo, exact_hi = exact_difference(units, in_a, in_b, k, table, disc, needed, outside)
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


def _fraction(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with 0 where ``den`` is 0 (a completion in which the measure is undefined
    for both runs counts as a difference of 0) and where it is unbounded (the limit)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((den > 0) & np.isfinite(den), num / np.where(den > 0, den, 1.0), 0.0)


def _reference_counts(units: PairUnits, measure: Measure, protocol: EvalProtocol
                      ) -> tuple[np.ndarray, ...]:
    """What R and AP share: (in A's cut, in B's cut, certainly relevant rows, per query
    ``D0``: certainly relevant reference units, per query ``Y``: how many units outside both
    cuts may be relevant: the reference conflicts across the threshold there and the outside
    units of section 12, np.inf when unbounded; ``maybe``: bool[U], rows of unknown
    relevance in a cut)."""
    n, q = units.n, units.query
    in_a, in_b, _, _ = cut_and_cutoffs(units, measure)
    t = relevance_threshold(measure, protocol)
    sure, maybe = _relevance(units, measure, protocol)
    maybe = maybe & (in_a | in_b)
    # Certainly relevant: reference labels, and unlabeled units a what-if copy fixed.
    d0 = (np.bincount(units.ref_query[units.ref_low >= t], minlength=n)
          + np.bincount(q[units.unlabeled & sure & (in_a | in_b)], minlength=n)
          ).astype(np.float64)
    straddling = (units.ref_high >= t) & (units.ref_low < t)
    v_out = (np.bincount(units.ref_query[straddling], minlength=n)
             - np.bincount(q[maybe & ~units.unlabeled], minlength=n))
    return in_a, in_b, sure, d0, v_out + units.outside(in_a, in_b), maybe


def _recall(units: PairUnits, measure: Measure, protocol: EvalProtocol) -> tuple[np.ndarray, ...]:
    """R@k's difference, exact: ``(N0 + p - m) / (D0 + p + m + z)`` over the relevant counts
    ``p`` of the unknown units only A has in its cut (0..P), ``m`` only B (0..M) and ``z``
    of the unknown units both or neither have (0..Z: the shared ones, the reference
    conflicts outside both cuts, the outside units). Since \\|N\\| <= D, raising ``p``
    never lowers the ratio and raising ``m`` never raises it, and for fixed ``p, m`` it is
    monotone in ``z``: the least is at ``p = 0, m = M, z`` in {0, Z}, the greatest at
    ``p = P, m = 0, z`` in {0, Z}. A completion with \\|R\\| = 0 counts as 0."""
    n, q = units.n, units.query
    in_a, in_b, sure, d0, y, maybe = _reference_counts(units, measure, protocol)
    c = in_a.astype(np.float64) - in_b.astype(np.float64)
    known = sure & (in_a | in_b)
    n0 = segment_sum(q[known], c[known], n)
    p = np.bincount(q[maybe & in_a & ~in_b], minlength=n)
    m = np.bincount(q[maybe & in_b & ~in_a], minlength=n)
    z = np.bincount(q[maybe & in_a & in_b], minlength=n) + y
    return _ends(_fraction(n0 - m, d0 + m), _fraction(n0 - m, d0 + m + z),
                 _fraction(n0 + p, d0 + p), _fraction(n0 + p, d0 + p + z), np.isinf(y))


#: A bound at least this far from 0 (the other side) is open (:func:`_ends`).
OPEN_MARGIN = 1e-12


def _ends(lo_none: np.ndarray, lo_all: np.ndarray, hi_none: np.ndarray, hi_all: np.ndarray,
          unbounded: np.ndarray) -> tuple[np.ndarray, ...]:
    """(lower, upper, lower open, upper open) of a difference over the shared \\|R\\| from
    its extremes with no unit outside both cuts relevant (``*_none``) and with all of them
    (``*_all``; their limit 0 where ``unbounded``). Where unboundedly many outside units
    may be relevant and the difference is positive with none of them, every completion's
    difference is positive, only approaching 0: the lower end 0 is *open* (never
    attained), and so is the upper end 0 of a negative one."""
    lower = np.clip(np.minimum(lo_none, lo_all), -1.0, 1.0)
    upper = np.clip(np.maximum(hi_none, hi_all), -1.0, 1.0)
    return lower, upper, unbounded & (lo_none > OPEN_MARGIN), unbounded & (hi_none < -OPEN_MARGIN)


def _ap_terms(units: PairUnits, in_x: np.ndarray, rank_x: np.ndarray, sure: np.ndarray,
              maybe: np.ndarray) -> Arrays3:
    """Run X's AP numerator ``S_X`` split by unit (X's cut ``in_x``, ranks ``rank_x``): (per
    query ``base``: ``S_X`` with only the certainly relevant units relevant; per row
    ``alone``: what the row adds to ``S_X`` when it is the only unknown unit relevant;
    per row ``crowd``: the most the other unknown units before it in X can add to its
    share, ``(unknown units before it) / rank``; 0 outside X's cut).

    With a set X of unknown units relevant, ``S_X - base`` is the sum over u in X of
    ``alone(u)`` (the certain ranks after u, ``sum 1/i``, plus ``(certain before u + 1) /
    rank(u)``) and, for every pair of units of X, ``1 / rank`` of the later one in X."""
    n, q = units.n, units.query
    rows = np.flatnonzero(in_x & (sure | maybe))
    rows = rows[np.lexsort((rank_x[rows], q[rows]))]
    rq, inv = q[rows], 1.0 / rank_x[rows]
    s, m = sure[rows], maybe[rows]
    sure_upto = segment_cumsum(rq, s.astype(np.int64))
    maybe_before = segment_cumsum(rq, m.astype(np.int64)) - m
    sure_inv = np.where(s, inv, 0.0)
    after = segment_sum(rq, sure_inv, n)[rq] - segment_cumsum(rq, sure_inv)
    base = segment_sum(rq[s], sure_upto[s] * inv[s], n)
    alone = np.zeros(units.query.size)
    crowd = np.zeros(units.query.size)
    alone[rows] = np.where(m, (sure_upto + 1) * inv + after, 0.0)
    crowd[rows] = np.where(m, maybe_before * inv, 0.0)
    return base, alone, crowd


#: Queries with more unknown units in the cuts than this bound AP's pair terms per unit
#: only (:func:`_pair_terms` builds a table of every pair of them).
MAX_PAIR_UNITS = 64
#: Pair-table entries built at once.
_PAIR_BLOCK = 1 << 21


def _pair_terms(units: PairUnits, rows: np.ndarray, in_a: np.ndarray, in_b: np.ndarray) -> Arrays3:
    """For the unknown rows ``rows`` (grouped by query): (neg, pos, covered). Two relevant
    unknown units u, v add ``psi(u, v) = [both in A's cut] / (later rank in A) - [both in
    B's cut] / (later rank in B)`` to ``S_A - S_B``; each pair is given to the later of its
    two rows (row order), whose ``neg`` / ``pos`` sums the negative / positive parts over
    its earlier rows, so the pairs within any set X add between the sums of ``neg`` and of
    ``pos`` over X. ``covered``: the rows of queries with at most :data:`MAX_PAIR_UNITS`
    unknown rows (the others' terms are 0)."""
    q = units.query[rows]
    size = np.bincount(q, minlength=units.n)
    neg = np.zeros(rows.size)
    pos = np.zeros(rows.size)
    covered = size[q] <= MAX_PAIR_UNITS
    first = np.zeros(units.n + 1, dtype=np.int64)
    np.cumsum(size, out=first[1:])
    ra = np.where(in_a[rows], units.rank_a[rows], 0).astype(np.float64)
    rb = np.where(in_b[rows], units.rank_b[rows], 0).astype(np.float64)
    queries = np.flatnonzero((size > 1) & (size <= MAX_PAIR_UNITS))
    queries = queries[np.argsort(size[queries], kind="stable")]
    at = 0
    while at < queries.size:
        width = int(size[queries[at]])
        end = at + 1
        while end < queries.size and (end - at + 1) * int(size[queries[end]]) ** 2 <= _PAIR_BLOCK:
            end += 1
        block = queries[at:end]
        width = int(size[block].max())
        local = np.arange(width)
        idx = first[block][:, None] + local[None, :]  # (t, w): the block's rows
        valid = local[None, :] < size[block][:, None]
        idx = np.where(valid, idx, first[block][:, None])
        a, b = ra[idx], rb[idx]
        with np.errstate(divide="ignore"):
            pa = np.where((a[:, :, None] > 0) & (a[:, None, :] > 0),
                          1.0 / np.maximum(a[:, :, None], a[:, None, :]), 0.0)
            pb = np.where((b[:, :, None] > 0) & (b[:, None, :] > 0),
                          1.0 / np.maximum(b[:, :, None], b[:, None, :]), 0.0)
        psi = pa - pb
        earlier = (local[None, :] < local[:, None])[None, :, :] & valid[:, None, :]
        psi = np.where(earlier, psi, 0.0)  # [t, later row, earlier row]
        out = idx[valid]
        neg[out] = np.minimum(psi, 0.0).sum(axis=2)[valid]
        pos[out] = np.maximum(psi, 0.0).sum(axis=2)[valid]
        at = end
    return neg, pos, covered


def _average_precision(units: PairUnits, measure: Measure, protocol: EvalProtocol
                       ) -> tuple[np.ndarray, ...]:
    """AP@k's difference ``(S_A - S_B) / |R|`` over the shared \\|R\\|. With a set X of the
    unknown units in the cuts relevant and ``y`` (0..Y) of those outside both cuts,
    \\|R\\| is ``D0 + |X| + y`` and ``S_A - S_B`` is ``N0`` plus each unit's own share
    (:func:`_ap_terms`, exact) plus the pairs of units of X (:func:`_pair_terms`): so it
    lies between ``N0`` plus the sum over X of per-unit lows and of per-unit highs. The
    least mean over X of such a sum takes the t smallest row terms for some t, and is
    monotone in ``y`` (so ``y`` in {0, Y}); the greatest likewise. Sound; exact when the
    cuts hold no unknown unit (the numerator is then known) and when both runs rank the
    unknown units alike."""
    q = units.query
    in_a, in_b, sure, d0, y, maybe = _reference_counts(units, measure, protocol)
    base_a, alone_a, crowd_a = _ap_terms(units, in_a, units.rank_a, sure, maybe)
    base_b, alone_b, crowd_b = _ap_terms(units, in_b, units.rank_b, sure, maybe)
    # The rows in an order of their own (best rank, then ranks), not of their unit ids:
    # the pairs' attribution, hence the bound, is the same however the pair was read.
    rows = np.flatnonzero(maybe)
    ra, rb = units.rank_a[rows], units.rank_b[rows]
    best = np.minimum(np.where(in_a[rows], ra, np.iinfo(np.int64).max),
                      np.where(in_b[rows], rb, np.iinfo(np.int64).max))
    rows = rows[np.lexsort((rb, ra, best, q[rows]))]
    own = (alone_a - alone_b)[rows]
    neg, pos, covered = _pair_terms(units, rows, in_a, in_b)
    # A query with too many unknown units: every pair at its extreme in each run apart.
    low = own + np.where(covered, neg, -crowd_b[rows])
    high = own + np.where(covered, pos, crowd_a[rows])
    rq, n0 = q[rows], base_a - base_b
    return _ends(best_mean(rq, low, n0, d0, False, True),
                 best_mean(rq, low, n0, d0 + y, False, True),
                 best_mean(rq, high, n0, d0, True, True),
                 best_mean(rq, high, n0, d0 + y, True, True), np.isinf(y))


def _top(units: PairUnits, measure: Measure, protocol: EvalProtocol) -> Arrays2:
    """P@k and RBP@k, exact: ``A - B`` is a sum over units of ``(w_A - w_B) * rel``; its
    extremes take each unknown unit relevant or not by the sign of its net weight."""
    in_a, in_b, ka, kb = cut_and_cutoffs(units, measure)
    sure, maybe = _relevance(units, measure, protocol)
    return _additive(units, _weights(units, measure, in_a, in_b, ka, kb), maybe, sure)


_FAMILY: dict[str, Callable[[PairUnits, Measure, EvalProtocol], tuple[np.ndarray, ...]]] = {
    "P": _top,
    "RBP": _top,
    "RR": _first_relevant,
    "Success": _first_relevant,
    "nDCG": _ndcg,
    "R": _recall,
    "AP": _average_precision,
}


def pair_interval(units: PairUnits, measure: Measure, protocol: EvalProtocol) -> Arrays2:
    """Per query, (lower, upper) of ``A - B`` by the pair method; NaN where not covered."""
    lower, upper, _, _ = pair_interval_ends(units, measure, protocol)
    return lower, upper


def pair_interval_ends(units: PairUnits, measure: Measure, protocol: EvalProtocol,
                       needed: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """:func:`pair_interval` and, per query, whether its lower / upper end is open (never
    attained by a completion, only approached: R and AP when unboundedly many outside
    units may be relevant, :func:`_ends`).

    ``needed`` (bool[n], None: all): the queries whose interval the caller reads. The
    others' values stay sound but may be wider: nDCG's joint search (the costly part) is
    skipped there; every needed query's interval is bit for bit the same either way."""
    method = _FAMILY.get(measure.family)
    if method is None:
        nan = np.full(units.n, np.nan)
        closed = np.zeros(units.n, dtype=bool)
        return nan, nan.copy(), closed, closed.copy()
    ends = _ndcg(units, measure, protocol, needed) if method is _ndcg else method(
        units, measure, protocol)
    if len(ends) == 4:
        return ends
    closed = np.zeros(units.n, dtype=bool)
    return ends[0], ends[1], closed, closed.copy()
