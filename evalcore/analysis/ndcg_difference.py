r"""Exact bounds on one query's ``nDCG_A@k - nDCG_B@k`` over the unknown gains both runs share
(docs/decided-comparisons.md, "nDCG's joint search", gives the argument).

The difference is ``f(g) = (DCG_A - DCG_B) / IDCG`` (0 in a completion where IDCG is 0),
where a completion ``g`` gives ONE gain to every unknown unit, entering both runs' DCG and
the IDCG they share. The IDCG population (contract sections 10-12): the reference labels
of known gain; those in conflict at one gain of their annotators' range (the *outside*
ones, in no run's cut, move the IDCG only); every unlabeled unit either run returns in its
cut; on a population not declared complete, up to min(k, U_out) outside units at any gain
(moving the IDCG only, like the outside conflicts).

With ``c_u = disc_A(u) - disc_B(u)``, the minimum of ``f`` (the maximum: A and B swapped)
is the least of two searches, each over the units of ONE sign of ``c_u`` (sign phases:
IDCG never falls when a gain rises), over monotone gain assignments only (IDCG depends on
the multiset of gains), by a chain programme inside Dinkelbach's iteration (:func:`_search`).
Both ends are **exact** when every active unit is unlabeled; one in conflict is searched
over 0..MAX_GAIN (sound, not always tight); a query not settled after :data:`MAX_STEPS`
steps is NaN (the caller keeps its cheaper bound there).
"""

from __future__ import annotations

import numpy as np

from evalcore.analysis.pair_units import PairUnits
from evalcore.compute.measures.ranking import level_counts, segment_sum
from evalcore.contract.gains import MAX_GAIN

#: Dinkelbach steps before a query is given up (NaN: the caller keeps its cheaper bound).
MAX_STEPS = 60
#: ``min (N - lambda * IDCG)`` at or above ``-TOLERANCE`` means ``lambda`` is the minimum.
TOLERANCE = 1e-11
#: Queries searched together (tables of about this many rows x 4 x their width).
SEARCH_BLOCK = 1024


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def _search(active_q: np.ndarray, active_c: np.ndarray, n0: np.ndarray, base: np.ndarray,
            k: np.ndarray, table: np.ndarray, cum: np.ndarray, todo: np.ndarray) -> np.ndarray:
    """Per query, the least ``N / IDCG`` over the monotone assignments of gains to its
    active units (``N = n0 + sum c_u * table[g_u]``; ``base``: the level counts of the rest
    of the population), for the queries ``todo`` (+inf elsewhere); NaN where
    :data:`MAX_STEPS` did not settle it.

    An assignment is the chain ``B_0 <= ... <= B_{MAX_GAIN-1} <= m`` (``B_j``: how many of
    the sorted units get a gain >= MAX_GAIN - j). Both parts are sums of one term per
    ``B_j``: ``N = n0 + sum_j s_j * P[B_j]`` (P: prefix sums of the sorted ``c``) and
    ``IDCG = sum_j s_j * cum[min(E_j + B_j, k)]`` (E_j: the rest of the population at gain
    >= MAX_GAIN - j), with ``s_j = T_j - T_j+1`` the step between consecutive gains. So
    ``min N - lambda * IDCG`` is a chain dynamic programme (prefix minima), and
    Dinkelbach's iteration (lambda <- N / IDCG of that minimiser) reaches the least ratio
    in a few steps: it stops when the minimum is >= 0, and lambda is then attained."""
    n = n0.size
    out = np.full(n, np.inf)
    out[todo] = np.nan
    # Each query's arithmetic is its own (a row of every table): the queries asked are
    # searched in blocks of similar numbers of active units, so a block's tables are as
    # wide as its widest query, not the study's, and small enough to stay in cache.
    if todo.size == 0:
        return out
    by_width = todo[np.argsort(np.bincount(active_q, minlength=n)[todo], kind="stable")]
    for block in np.array_split(by_width, -(-by_width.size // SEARCH_BLOCK)):
        out[block] = _search_block(active_q, active_c, n0, base, k, table, cum, block)
    return out


def _search_block(active_q: np.ndarray, active_c: np.ndarray, n0: np.ndarray,
                  base: np.ndarray, k: np.ndarray, table: np.ndarray, cum: np.ndarray,
                  todo: np.ndarray) -> np.ndarray:
    """:func:`_search` of the queries ``todo`` (one block), in their order."""
    n = n0.size
    row_of = np.full(n, -1, dtype=np.int64)
    row_of[todo] = np.arange(todo.size)
    keep = row_of[active_q] >= 0
    active_q, active_c = row_of[active_q[keep]], active_c[keep]
    n0, base, k, t = n0[todo], base[todo], k[todo], todo.size
    order = np.lexsort((active_c, active_q))
    aq, ac = active_q[order], active_c[order]
    m_of = np.bincount(aq, minlength=t)
    width = int(m_of.max(initial=0))
    first = np.zeros(t + 1, dtype=np.int64)
    np.cumsum(m_of, out=first[1:])
    prefix = np.zeros((t, width + 1))
    prefix[aq, np.arange(aq.size) - first[aq] + 1] = ac
    np.cumsum(prefix, axis=1, out=prefix)
    b = np.arange(width + 1)
    usable = b[None, :] <= m_of[:, None]
    gains_desc = table[::-1]
    step = (gains_desc[:-1] - gains_desc[1:])[None, :, None]  # s_j, j = 0..MAX_GAIN - 1
    rest = np.cumsum(base[:, ::-1], axis=1)[:, :-1]  # E_j
    num_terms = step * prefix[:, None, :]  # (t, MAX_GAIN, width + 1)
    den_terms = step * cum[np.minimum(rest[:, :, None] + b, k[:, None, None])]
    rows = np.arange(t)
    # Start from every active unit at the highest gain (IDCG > 0 there when m > 0).
    lam = _ratio(n0 + num_terms[rows, :, m_of].sum(axis=1), den_terms[rows, :, m_of].sum(axis=1))
    found = np.full(t, np.nan)
    left = rows  # the rows not settled yet
    for _ in range(MAX_STEPS):
        if left.size == 0:
            break
        all_left = left.size == t
        h = (den_terms if all_left else den_terms[left]) * lam[left][:, None, None]
        np.subtract(num_terms if all_left else num_terms[left], h, out=h)
        np.copyto(h, np.inf, where=~(usable if all_left else usable[left])[:, None, :])
        values = [h[:, 0]]
        for j in range(1, MAX_GAIN):
            values.append(h[:, j] + np.minimum.accumulate(values[-1], axis=1))
        at = np.argmin(values[-1], axis=1)
        sel = np.arange(left.size)
        least = n0[left] + values[-1][sel, at]
        done = least >= -TOLERANCE
        found[left[done]] = lam[left[done]]
        # The minimiser's chain, from the last gain level back (prefix argmin up to B_j+1).
        chain = [at]
        for j in range(MAX_GAIN - 2, -1, -1):
            masked = np.where(b[None, :] <= chain[-1][:, None], values[j], np.inf)
            chain.append(np.argmin(masked, axis=1))
        chain = chain[::-1]
        num = n0[left] + sum(num_terms[left, j, chain[j]] for j in range(MAX_GAIN))
        den = sum(den_terms[left, j, chain[j]] for j in range(MAX_GAIN))
        lam[left] = _ratio(num, den)
        left = left[~done]
    return found


def exact_difference(units: PairUnits, in_a: np.ndarray, in_b: np.ndarray, k: np.ndarray,
                     table: np.ndarray, disc: np.ndarray, needed: np.ndarray | None = None,
                     outside_units: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per query, the (lower, upper) of ``nDCG_A@k - nDCG_B@k`` over the joint completions
    (module docstring); NaN where a search would be too large. ``k``: int64[n], the cutoff
    both runs share on each query; ``disc``: discounts covering every rank in the cuts;
    ``needed`` (bool[n], None: all): the queries searched (NaN on the others; each searched
    query's bounds are bit for bit those of searching all); ``outside_units`` (int64[n],
    None: none): min(k, U_out), the outside units of section 12 that can enter IDCG@k
    (gain 0..MAX_GAIN, like reference conflicts outside both cuts)."""
    if needed is not None:  # only the needed queries' rows (per-query sums keep their order)
        keep = needed[units.query]
        units, in_a, in_b = units.subset(keep), in_a[keep], in_b[keep]
    n, q = units.n, units.query
    depth = disc.size - 1
    c = (np.where(in_a, disc[np.minimum(units.rank_a, depth)], 0.0)
         - np.where(in_b, disc[np.minimum(units.rank_b, depth)], 0.0))
    inside = in_a | in_b
    var = inside & (units.low != units.high)
    known = inside & (units.low == units.high)
    n0 = segment_sum(q[known], c[known] * table[units.low[known]], n)
    # The population: known reference labels, unlabeled units in a cut with a known
    # (what-if) gain, and the reference conflicts outside every cut at one end each.
    sure_ref = units.ref_low == units.ref_high
    fixed = (level_counts(units.ref_query[sure_ref], units.ref_low[sure_ref], n)
             + level_counts(q[known & units.unlabeled], units.low[known & units.unlabeled], n))
    in_conflict = var & ~units.unlabeled  # a reference label: leave it out of the outside ones
    outside = tuple(
        level_counts(units.ref_query[~sure_ref], ref_at[~sure_ref], n)
        - level_counts(q[in_conflict], at[in_conflict], n)
        for ref_at, at in ((units.ref_low, units.low), (units.ref_high, units.high))
    )
    if outside_units is not None:  # at their lowest gain (0) they add nothing
        outside[1][:, MAX_GAIN] += outside_units
    cum = np.cumsum(disc)
    # IDCG is 0 in some completion exactly when every gain can be 0 at once.
    lowest = fixed + outside[0] + level_counts(q[var], units.low[var], n)
    zero_possible = (lowest[:, 1:] * (table[1:] > 0)).sum(axis=1) == 0

    def least(c: np.ndarray, n0: np.ndarray) -> np.ndarray:
        """The least of ``f`` per query; ``c``: the net discounts of the objective (A - B,
        or B - A for the maximum); NaN on the queries not ``needed``."""
        best = np.where(zero_possible, 0.0, np.inf)
        if needed is None:
            todo = np.arange(n)
        else:
            best[~needed] = np.nan
            todo = np.flatnonzero(needed)
        for sign, at, out_counts in ((-1, units.low, outside[0]), (1, units.high, outside[1])):
            # sign -1: the phase "minimum below 0": active units have c < 0, the rest at lowest.
            active = var & (c * sign > 0)
            rest = var & ~active
            base = fixed + out_counts + level_counts(q[rest], at[rest], n)
            start = n0 + segment_sum(q[rest], c[rest] * table[at[rest]], n)
            found = _search(q[active], c[active], start, base, k, table, cum, todo)
            best = np.minimum(best, found)  # NaN (not settled) wins: the caller falls back
            # A minimum below 0 is the first phase's: the second only runs where it is not.
            todo = np.flatnonzero(best >= 0)
        return best

    return least(c, n0), -least(-c, -n0)
