"""AP@k: the sum of P@i over the ranks i <= k holding a relevant unit (first
occurrence), divided by \\|R\\|.

Unavailable, like recall, for ``unlabeled_returned`` in 1..k,
``label_conflict`` (a reference unit in conflict across the threshold),
``population_incomplete`` and ``no_relevant_units``; under ``trec_eval`` a
query with \\|R\\| = 0 is 0 (trec_eval's ``map_cut``).

Bounds range over every completion (contract sections 10 and 12: an unlabeled
unit in 1..k over 0..MAX_GAIN as if it were in the reference set with that gain,
a conflict over its annotators' gains, and on a population not declared
complete up to ``U_out`` unlabeled units outside 1..k relevant). A completion
with \\|R\\| = 0 is left out; when every one has it there are no bounds (NaN). A
completion makes a set X of the unknown units in 1..k relevant and y of the
``v + U_out`` unknown units outside 1..k (conflicts and unlabeled units)::

    AP = (sum_{i in C} P@i + sum_{j in X} P@j) / (Rc + |X| + y)

with C the certainly relevant ranks and Rc the certainly relevant reference
units. Each P@i lies between its value with no unknown relevant (plus 1/j
for j itself) and its value with every unknown relevant, so AP lies between
means of two fixed pools of numbers, and the extreme mean over the choice of
X takes the t largest (upper) or smallest (lower) pool values for some t;
every t is tried (``y = 0`` for the upper bound, ``y = v + U_out`` for the lower:
0 when ``U_out`` is unbounded).
Sound, and exact when there is no unknown in 1..k, but **not the tightest
possible** otherwise: P@i is bounded for every rank at once, not per
completion.
"""

from __future__ import annotations

import numpy as np

from evalcore.compute.measures.base import MeasureArrays, population_measure, ratio
from evalcore.compute.measures.ranking import Cut, segment_cumsum, segment_reduce, segment_sum
from evalcore.contract.measures import Measure


def best_mean(
    query: np.ndarray,
    pool: np.ndarray,
    base: np.ndarray,
    den: np.ndarray,
    upper: bool,
    zero_ok: bool,
) -> np.ndarray:
    """Per query, the largest (``upper``) or smallest ``(base + sum of t pool values) / (den + t)``
    over t = 0..len(pool) (t = 0 only where ``den > 0``), taking the t best pool values.

    ``query`` is grouped (sorted). Each query's pool is one row of a padded matrix,
    sorted within rows (many short sorts, not one long argsort); a query whose pool is
    much longer than the others' would make the matrix large, so then one global sort
    by (query, value) is used instead.
    """
    start = np.where(den > 0, base / np.where(den > 0, den, 1), -np.inf if upper else np.inf)
    if zero_ok:  # trec_eval: a completion with |R| = 0 is valued 0
        start = np.where(den > 0, start, 0.0)
    if pool.size == 0:
        return start
    n = base.size
    size = np.bincount(query, minlength=n)
    width = int(size.max())
    key = -pool if upper else pool  # ascending key: the best pool values first
    if n * width > 4 * pool.size + 4096:
        return _best_mean_flat(query, key, base, den, upper, start)
    first = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(size, out=first[1:])
    rows = np.full((n, width), np.inf)
    rows[query, np.arange(query.size) - first[query]] = key
    rows.sort(axis=1)
    taken = np.cumsum(rows, axis=1)
    if upper:
        taken = -taken
    t = np.arange(1, width + 1)
    with np.errstate(invalid="ignore"):
        candidate = (base[:, None] + taken) / (den[:, None] + t)
    fill = -np.inf if upper else np.inf
    candidate = np.where(t <= size[:, None], candidate, fill)
    best = candidate.max(axis=1) if upper else candidate.min(axis=1)
    return np.maximum(start, best) if upper else np.minimum(start, best)


def _best_mean_flat(query: np.ndarray, key: np.ndarray, base: np.ndarray, den: np.ndarray,
                    upper: bool, start: np.ndarray) -> np.ndarray:
    """:func:`best_mean` by one sort of every pool value by (query, ``key``)."""
    order = np.lexsort((key, query))
    q, vals = query[order], key[order]
    taken = segment_cumsum(q, vals)
    if upper:
        taken = -taken
    t = segment_cumsum(q, np.ones(q.size, dtype=np.int64))
    candidate = (base[q] + taken) / (den[q] + t)
    return segment_reduce(np.maximum if upper else np.minimum, q, candidate, start)


def compute(cut: Cut, measure: Measure) -> MeasureArrays:
    n = cut.n
    q, rank = cut.query, cut.rank
    sure, maybe = cut.sure, cut.maybe
    # One running count per query holds both: the certainly relevant units up to each
    # rank (low 32 bits) and those of unknown relevance (the bits above).
    both = segment_cumsum(q, sure.astype(np.int64) | (maybe.astype(np.int64) << 32))
    sure_before = both & 0xFFFFFFFF
    at = np.flatnonzero(sure)
    sq, srank = q[at], rank[at]
    exact = segment_sum(sq, sure_before[at] / srank, n)
    rc, maybe_ref = cut.n_sure_ref, cut.n_maybe_ref
    w = cut.u_out
    value = ratio(exact, rc, 0.0)
    trec = cut.protocol.trec_eval
    if not (cut.any_unlabeled.any() or cut.any_maybe_conflict.any() or maybe_ref.any()
            or w.any()):
        lower = upper = value
        defined = trec | (rc > 0)
    else:
        known_or_not = sure_before + (both >> 32)
        high = segment_sum(sq, known_or_not[at] / srank, n)
        am = np.flatnonzero(maybe)
        mq, mrank = q[am], rank[am]
        v = maybe_ref - cut.n_maybe_conflict
        upper = best_mean(mq, known_or_not[am] / mrank, high, rc.astype(np.float64), True, trec)
        lower = best_mean(mq, (sure_before[am] + 1) / mrank, exact, rc + v + w, False, trec)
        # No pool and nothing certain: every completion with |R| > 0 has its relevant
        # units outside 1..k (AP = 0), or none exists (no_relevant_units, no bounds).
        upper = np.where(np.isfinite(upper), np.minimum(upper, 1.0), 0.0)
        lower = np.where(np.isfinite(lower), lower, 0.0)
        defined = trec | (rc + maybe_ref + cut.n_maybe + w > 0)
    no_relevant = rc + maybe_ref == 0
    return population_measure(cut, value, maybe_ref > 0, no_relevant, (lower, upper, defined))
