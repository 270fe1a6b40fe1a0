"""nDCG@k: DCG@k / IDCG@k.

DCG sums ``gain / log2(rank + 1)`` over the counted positions 1..k (returned
duplicates keep their rank but add nothing). IDCG takes the gains of the
*whole* reference set, sorted descending, first k.

Gains are the label values (linear) or ``2^g - 1`` (``gain="exponential"``).
The relevance threshold does **not** change nDCG gains: a label below the
threshold still contributes its value to DCG and IDCG, as in trec_eval's
``ndcg_cut``. nDCG is unavailable when the population is not complete
(``population_incomplete``), when a unit in 1..k is unlabeled
(``unlabeled_returned``), when any reference unit is in conflict
(``label_conflict``: its gain is unknown, so IDCG is), or when IDCG is 0
(``no_relevant_units``: no reference label can have a positive gain). Under
``trec_eval`` a query with IDCG = 0 is 0.

Bounds, when the only reasons are unknown gains (an unlabeled unit in 1..k
ranges over 0..MAX_GAIN as if in the reference set with that gain, a
conflict over its annotators' lowest..highest gain). Let G be the unknown
units in 1..k at ranks j (discount d_j), N0 the DCG of the known positions,
x = sum over G of gain_j * d_j. Each bound is the best of two sound ones:

* lower: ``DCG_low / IDCG_high`` (every gain at its lowest in DCG, at its
  highest in IDCG), and ``min over G's gains of (N0 + x) / (IDCG(L_high) +
  sum of G's gains)``, since IDCG(L and G) <= IDCG(L) + IDCG(G) <= IDCG(L) +
  the sum of G's gains (L: the reference labels at their highest gain). This
  linear-fractional minimum is at a vertex where the deepest units of G take
  their highest gain and the others their lowest: every split is tried.
* upper: ``min(1, DCG_high / IDCG_low)``, and ``max over x of (N0 + x) / (C +
  x)`` where C places the known reference labels (conflicts left out), best
  first, on the ranks 1..k that G does not hold: that arrangement is one of
  the candidates IDCG maximises over, so IDCG >= C + x.

Sound; **not the tightest possible** when an unknown unit is in 1..k (its
gain moves DCG and IDCG together and the two are bounded apart); exact when
the unknowns are only outside 1..k (conflicts in the reference set: DCG is
then known and the bounds are IDCG's extremes), and in the worked
single-unknown cases of the tests.
"""

from __future__ import annotations

import numpy as np

from evalcore.compute.measures.base import MeasureArrays, population_measure, ratio
from evalcore.compute.measures.ranking import (
    Cut,
    discounts,
    level_counts,
    segment_cumsum,
    segment_reduce,
    segment_sum,
)
from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.measures import Measure
from evalcore.contract.protocol_choices import GainMode


def gain_values(mode: GainMode) -> np.ndarray:
    """Lookup table: label 0..MAX_GAIN -> gain used in DCG."""
    labels = np.arange(MAX_GAIN + 1, dtype=np.float64)
    return labels if mode == "linear" else np.exp2(labels) - 1.0


def idcg_from_counts(counts: np.ndarray, k: np.ndarray, table: np.ndarray, disc: np.ndarray
                     ) -> np.ndarray:
    """Per query, IDCG@k of the gains counted per level in ``counts`` (:func:`level_counts`).

    Sorted descending, the labels of one gain g fill a contiguous block of ideal
    ranks, so IDCG is a sum over the MAX_GAIN + 1 gain levels of ``table[g]`` times
    the discounts of that block (cut at k), read from cumulative discounts.
    """
    cum = np.cumsum(disc)  # cum[r] = sum of discounts of ranks 1..r (disc[0] is 0)
    out = np.zeros(k.size, dtype=np.float64)
    start = np.zeros(k.size, dtype=np.int64)
    for g in range(MAX_GAIN, 0, -1):
        end = start + counts[:, g]
        if table[g]:
            out += table[g] * (cum[np.minimum(end, k)] - cum[np.minimum(start, k)])
        start = end
    return out


def ideal_dcg(
    query: np.ndarray, gain: np.ndarray, k: np.ndarray, table: np.ndarray, disc: np.ndarray
) -> np.ndarray:
    """Per-query IDCG@k of the gains ``gain`` held by query ``query``, without a sort."""
    return idcg_from_counts(level_counts(query, gain, k.size), k, table, disc)


def _fill_value(cut: Cut, g: np.ndarray, table: np.ndarray, disc: np.ndarray) -> np.ndarray:
    """Per query: the known reference labels (no conflicts), best first, on the ranks
    1..k not held by the flat positions ``g`` (sorted by query, then rank).

    Labels of one gain fill a block of free ranks; the discount sum of the first t
    free ranks is ``cum[p] - (discounts of the held ranks before p)`` with p = t + c,
    c the held ranks whose count of free ranks before them is below t (a search over
    the held ranks, not an array of every rank).
    """
    r = cut.ranking
    n = cut.n
    if r.has_conflict:
        known = ~r.label_conflict
        counts = level_counts(r.label_query[known], r.label_low[known], n)
    else:
        counts = r.label_levels
    gq, held = cut.query[g], cut.rank[g]
    n_held = np.bincount(gq, minlength=n)
    first = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(n_held, out=first[1:])
    # Free ranks before each held rank (non-decreasing within a query), as one sorted key.
    stride = int(cut.k.max(initial=0)) + 2
    key = gq * stride + (held - (np.arange(gq.size) - first[gq]) - 1)
    # Each query's running sum of its held ranks' discounts, started afresh per query.
    held_cum = np.concatenate(([0.0], segment_cumsum(gq, disc[held])))
    cum = np.cumsum(disc)
    n_free = cut.k - n_held
    queries = np.arange(n, dtype=np.int64)

    def filled(t: np.ndarray) -> np.ndarray:  # discount sum of the first t free ranks
        c = np.searchsorted(key, queries * stride + t, side="left") - first[:-1]
        return cum[t + c] - np.where(c > 0, held_cum[first[:-1] + c], 0.0)

    out = np.zeros(n, dtype=np.float64)
    end = np.zeros(n, dtype=np.int64)
    before = np.zeros(n, dtype=np.float64)
    for level in range(MAX_GAIN, 0, -1):  # labels of one gain fill a block of free ranks
        end = end + counts[:, level]
        after = filled(np.minimum(end, n_free))
        out += table[level] * (after - before)
        before = after
    return out


def _split_lower(cut: Cut, g: np.ndarray, known_dcg: np.ndarray, ref_high: np.ndarray,
                 low: np.ndarray, high: np.ndarray, d: np.ndarray, x_low: np.ndarray
                 ) -> np.ndarray:
    """min over m of (N0 + x_m) / (IDCG(L_high) + s_m): the m deepest units of G at their
    highest gain, the others at their lowest (x: discounted, s: plain gain sums; ``low``,
    ``high``: G's gains, ``d``: their discounts, ``x_low``: sum of low * d per query)."""
    n = cut.n
    q = cut.query[g]
    base_x = known_dcg + x_low
    base_s = ref_high + segment_sum(q, low, n)
    # IDCG 0 in a completion: undefined (skipped), or 0 under trec_eval.
    undefined = 0.0 if cut.protocol.trec_eval else np.inf
    best = ratio(base_x, base_s, undefined)
    step_s = (high - low)[::-1]  # positions come by (query, rank): deepest first
    q = q[::-1]
    x = base_x[q] + segment_cumsum(q, step_s * d[::-1])
    s = base_s[q] + segment_cumsum(q, step_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        candidate = np.where(s > 0, x / np.where(s > 0, s, 1), undefined)
    return segment_reduce(np.minimum, q, candidate, best)


#: Outside units (section 12) beyond this many in an ideal ranking are not placed rank by
#: rank: a query whose IDCG could hold more of them gets the lower bound 0 (sound).
MAX_OUTSIDE_RANKS = 1 << 20


def compute(cut: Cut, measure: Measure) -> MeasureArrays:
    r = cut.ranking
    n = cut.n
    table = gain_values(cut.protocol.gain)
    # Section 12: up to min(k, U_out) outside units of the highest gain can enter IDCG@k.
    outside = np.minimum(cut.k.astype(np.float64), cut.u_out)
    too_many = outside > MAX_OUTSIDE_RANKS
    outside = np.where(too_many, 0, outside).astype(np.int64)
    # Ranks never exceed the positions measured, the labels held (plus the unlabeled units
    # added to them for the bounds) and the outside units, whatever k is.
    depth = r.max_rank + int(np.diff(r.label_offsets).max(initial=0)) + int(
        outside.max(initial=0))
    disc = discounts(depth)
    weight = np.where(cut.counted, disc[cut.rank], 0.0)
    dcg_low = segment_sum(cut.query, table[cut.low] * weight, n)
    idcg_low = idcg_from_counts(r.label_levels, cut.k, table, disc)
    value = ratio(dcg_low, idcg_low, 0.0)
    trec = cut.protocol.trec_eval
    if not (cut.any_unlabeled.any() or r.has_conflict or outside.any() or too_many.any()):
        no_conflict = np.zeros(n, dtype=bool)
        bounds = (value, value, trec | (idcg_low > 0))
        return population_measure(cut, value, no_conflict, idcg_low <= 0, bounds, "gain")
    # G: the counted positions of unknown gain; only they differ between the extremes.
    g = np.flatnonzero(cut.counted & (cut.low != cut.high))
    gq, d = cut.query[g], weight[g]
    low, high = table[cut.low[g]], table[cut.high[g]]
    x_low = segment_sum(gq, low * d, n)
    x_high = segment_sum(gq, high * d, n)
    known_dcg = dcg_low - x_low
    dcg_high = known_dcg + x_high
    added = cut.unlabeled[g]  # the unlabeled counted positions (all of unknown gain)
    # The reference labels at their highest gain, with the outside units at the highest gain.
    ref_high_levels = r.label_levels_high.copy()
    ref_high_levels[:, MAX_GAIN] += outside
    idcg_high = idcg_from_counts(
        ref_high_levels + level_counts(gq[added], cut.high[g[added]], n), cut.k, table, disc)
    idcg_ref_high = idcg_from_counts(ref_high_levels, cut.k, table, disc)
    conflict = np.bincount(r.label_query[r.label_conflict], minlength=n) > 0
    lower = np.maximum(
        ratio(dcg_low, idcg_high, 0.0),
        _split_lower(cut, g, known_dcg, idcg_ref_high, low, high, d, x_low),
    )
    lower = np.where(too_many, 0.0, lower)
    fill = _fill_value(cut, g, table, disc)
    split_upper = np.maximum(
        ratio(known_dcg + x_low, fill + x_low, 1.0), ratio(known_dcg + x_high, fill + x_high, 1.0)
    )
    upper = np.minimum(np.minimum(1.0, ratio(dcg_high, idcg_low, 1.0)), split_upper)
    upper = np.where(dcg_high > 0, upper, 0.0)  # no gain possible in 1..k: 0 where defined
    # Some completion has IDCG > 0 (the measure defined) unless every gain is 0 at its highest.
    defined = trec | too_many | (idcg_high > 0)
    known_ideal = idcg_from_counts(r.label_levels_high, cut.k, table, disc)
    bounds = (np.minimum(lower, upper), upper, defined)
    return population_measure(cut, value, conflict, known_ideal <= 0, bounds, "gain")
