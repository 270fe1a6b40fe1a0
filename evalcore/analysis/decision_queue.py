r"""The "to decide A vs B" queue: which unknown units to label so the comparison decides.

Candidates are the unknown units (unlabeled, or in conflict across the measure's
threshold; any conflict for nDCG) in either run's cut on a query whose difference is
still open. ``removes`` is the width of the query's pair interval
(:func:`evalcore.analysis.pair_bounds.pair_interval`) the unit's label removes in the
worst case of its lowest and highest gain, divided by the number of queries.

Order: most ``progress`` first: how far the label is expected to move the end of the
mean interval that must cross 0 (the lower end when its midpoint is above 0, else the
upper end); worst-case width alone would treat a label that can only lower the upper
bound like one that can lift the lower bound.

* P, RBP, RR, Success: the label's two outcomes weighted by the chance the unit is
  relevant (:func:`_scores`).
* nDCG, R, AP (:data:`RATIO_FAMILIES`): one label narrows a ratio over a shared IDCG or
  \|R\| little and a query's last label collapses it, so queries are taken whole: a
  unit scores its query's expected move once every unknown is labeled
  (:func:`_completion_progress`), divided by the query's number of unknown units.

Ties: most ``removes``; then the unit automatic sources judge more relevant (a hint,
never evidence, contract section 13); then units both runs return; then the best rank;
then query and unit id. Units whose label removes nothing stay in the queue (last): for
nDCG, R and AP the verdict also reads each run's own bounds, which they can narrow.

On a population not declared complete (contract section 12) the queue holds only units
either run returned; a comparison the outside units keep open has no queue that decides
it. ``labels_to_decide`` ("about N labels") simulates the queue on completions drawn from
the labeled units' gains (:func:`labels_to_decide`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from evalcore.analysis.decision import ZERO, PairEvaluation, open_rows, verdict_of
from evalcore.analysis.pair_bounds import (
    OPEN_MARGIN,
    PAIR_FAMILIES,
    cut_and_cutoffs,
    first_sure_ranks,
    net_weight,
    pair_interval,
    pair_interval_ends,
    relevance_threshold,
)
from evalcore.analysis.pair_units import PairUnits
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.gains import MAX_GAIN


class DecideItem(FrozenModel):
    """One unknown unit and what its label can do to the comparison."""

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


class DecideQueue(FrozenModel):
    measure: str
    items: list[DecideItem]
    #: All candidates (``items`` may be cut to a limit).
    n_candidates: int
    #: Estimated labels still needed (None: decided already, or the head cannot reach it).
    labels_to_decide: int | None


def _scenarios(pair: PairEvaluation, name: str, rows: np.ndarray
               ) -> tuple[np.ndarray, ...]:
    """Per row: the query's pair interval now (lo, hi), with the unit at its lowest gain
    (lo, hi) and at its highest gain (lo, hi).

    P and RBP in closed form: the interval is ``known + sum min(c, 0)`` to ``known + sum
    max(c, 0)`` over the units of unknown relevance (net weight ``c``), so a label takes the
    unit's term out of both sums and, at the highest gain, adds ``c``. The other families on
    what-if copies of the rows their interval can read (:func:`_relevant_rows`)."""
    u = pair.units
    measure = pair.measures[name]
    lower, upper = pair_interval(u, measure, pair.protocol)
    q = u.query[rows]
    lo, hi = lower[q], upper[q]
    if measure.family in ("P", "RBP"):
        t = relevance_threshold(measure, pair.protocol)
        c = net_weight(u, measure, pair.protocol)[rows]
        maybe = (u.high[rows] >= t) & (u.low[rows] < t)
        neg = np.where(maybe, np.minimum(c, 0.0), 0.0)
        pos = np.where(maybe, np.maximum(c, 0.0), 0.0)
        out = [lo, hi, lo - neg, hi - pos, lo + pos, hi + neg]
    else:
        keep = _relevant_rows(pair, name)
        out = [lo, hi]
        sub = u if keep is None else u.subset(keep)
        sub_rows = rows if keep is None else np.cumsum(keep)[rows] - 1
        moves = np.ones(rows.size, dtype=bool) if keep is None else keep[rows]
        for gains in (u.low[rows], u.high[rows]):
            lo, hi = lower[q].copy(), upper[q].copy()  # a row no copy reads: nothing moves
            if moves.any():
                lo[moves], hi[moves] = pair_interval(
                    sub.what_if(sub_rows[moves], gains[moves]), measure, pair.protocol)
            out += [lo, hi]
    return tuple(np.nan_to_num(a, nan=0.0) for a in out)


def _relevant_rows(pair: PairEvaluation, name: str) -> np.ndarray | None:
    """bool[U]: for RR and Success, the rows their pair interval can read in any scenario
    (possibly relevant, in a run's cut, not after that run's first certainly relevant unit,
    which a label can only move up); the others change nothing. None (every row) for the
    other families."""
    measure = pair.measures[name]
    if measure.family not in ("RR", "Success"):
        return None
    u = pair.units
    in_a, in_b, _, _ = cut_and_cutoffs(u, measure)
    t = relevance_threshold(measure, pair.protocol)
    first_a, first_b = first_sure_ranks(u, u.low >= t, in_a, in_b)
    return (u.high >= t) & ((in_a & (u.rank_a <= first_a[u.query]))
                            | (in_b & (u.rank_b <= first_b[u.query])))


#: Rank bands of a unit's class: not returned, 1-2, 3-5, 6-10, 11-20, deeper.
RANK_BANDS = np.array([1, 3, 6, 11, 21])


def _labeled_classes(units: PairUnits) -> tuple[np.ndarray, np.ndarray, int]:
    """(each unit's class for the priors, bool[U] labeled units either run returned: what
    the priors are read from, the number of classes). A class is the band of the unit's
    rank in run A and in run B: relevance falls with rank in each run and rises with
    agreement between them."""
    band_a = np.where(units.rank_a > 0, np.searchsorted(RANK_BANDS, units.rank_a, "right"), 0)
    band_b = np.where(units.rank_b > 0, np.searchsorted(RANK_BANDS, units.rank_b, "right"), 0)
    cls = band_a * (RANK_BANDS.size + 1) + band_b
    known = ~units.unknown & ((units.rank_a > 0) | (units.rank_b > 0))
    return cls, known, int(cls.max(initial=0)) + 1


def _scores(pair: PairEvaluation, name: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row (not yet divided by the number of queries): the worst-case width of the
    query's pair interval its label removes, and its ``progress`` (module docstring). For
    P, RBP, RR and Success the label's two outcomes are weighted by the chance the unit is
    relevant: the share of relevant units among the labeled ones of its class (Laplace
    smoothed)."""
    if rows.size == 0 or pair.measures[name].family not in PAIR_FAMILIES:
        return np.zeros(rows.size), np.zeros(rows.size)
    lo, hi, lo_low, hi_low, lo_high, hi_high = _scenarios(pair, name, rows)
    removes = ((hi - lo) - np.maximum(hi_low - lo_low, hi_high - lo_high)).clip(min=0.0)
    lower, upper, _, _ = pair.intervals(name)
    towards_a = float(np.nanmean(lower) + np.nanmean(upper)) >= 0
    if pair.measures[name].family in RATIO_FAMILIES:
        return removes, _completion_progress(pair, name, rows, lower, upper, towards_a)
    u = pair.units
    t = relevance_threshold(pair.measures[name], pair.protocol)
    cls, known, size = _labeled_classes(u)
    labeled_n = np.bincount(cls[known], minlength=size).astype(np.float64)
    relevant_n = np.bincount(cls[known & (u.low >= t)], minlength=size).astype(np.float64)
    p = ((relevant_n + 1.0) / (labeled_n + 2.0))[cls[rows]]
    if towards_a:
        return removes, p * (lo_high - lo) + (1 - p) * (lo_low - lo)
    return removes, p * (hi - hi_high) + (1 - p) * (hi - hi_low)


#: Families whose pair interval is a ratio over a shared IDCG or \|R\|: one label narrows
#: it little, labeling a whole query collapses it, so their queue completes queries.
RATIO_FAMILIES = frozenset({"nDCG", "R", "AP"})


def _completion_progress(pair: PairEvaluation, name: str, rows: np.ndarray, lower: np.ndarray,
                         upper: np.ndarray, towards_a: bool) -> np.ndarray:
    """Per row: how far labeling its whole query is expected to move the end of the query's
    interval that must cross 0, per unknown unit of the query still to label. The query is
    completed with each unknown unit at its expected gain (rounded): the mean label of the
    labeled units of its class (Laplace smoothed towards 1), scaled by its query's rate
    (labeled gain sum against the class means)."""
    u = pair.units
    cls, known, size = _labeled_classes(u)
    gain = u.low.astype(np.float64)
    n_cls = np.bincount(cls[known], minlength=size)
    by_class = (np.bincount(cls[known], weights=gain[known], minlength=size) + 1.0) / (n_cls + 1.0)
    predicted = np.bincount(u.query[known], weights=by_class[cls[known]], minlength=u.n)
    observed = np.bincount(u.query[known], weights=gain[known], minlength=u.n)
    scale = (observed + 1.0) / (predicted + 1.0)
    expected = np.where(u.unknown, np.clip(by_class[cls] * scale[u.query], u.low, u.high), gain)
    guess = np.rint(expected).astype(np.int8)
    completed = dataclasses.replace(u, low=guess, high=guess)
    est_lo, est_hi = pair_interval(completed, pair.measures[name], pair.protocol)
    # On an open population the outside units stay unknown: the end that must cross 0.
    est = est_lo if towards_a else est_hi
    est = np.clip(np.nan_to_num(est, nan=0.0), lower, upper)
    q = u.query[rows]
    n_open = np.bincount(q, minlength=u.n)[q]
    move = (est - lower)[q] if towards_a else (upper - est)[q]
    return np.nan_to_num(move, nan=0.0) / np.maximum(n_open, 1)


def candidate_rows(pair: PairEvaluation, name: str) -> np.ndarray:
    """Row indices of the unknown units that can still move the comparison."""
    lower, upper, _, _ = pair.intervals(name)
    open_query = ~np.isnan(lower) & ((upper - lower) > ZERO)
    return np.flatnonzero(open_rows(pair, name, open_query))


#: The automatic hint of a unit no automatic source judged (between gains 0 and 1).
NO_HINT = 0.5


def mean_automatic_gains(
    sources: Mapping[str, Mapping[tuple[str, str], int]],
) -> dict[tuple[str, str], float]:
    """(query id, unit id) -> the mean gain of the automatic sources that judged it."""
    total: dict[tuple[str, str], list[int]] = {}
    for labels in sources.values():
        for key, gain in labels.items():
            total.setdefault(key, []).append(gain)
    return {key: sum(g) / len(g) for key, g in total.items()}


def queue_keys(pair: PairEvaluation, name: str, rows: np.ndarray, scores: np.ndarray,
               progress: np.ndarray, hint: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """The keys of :func:`order_rows` but the unit id, last first (``np.lexsort``'s order):
    query, best rank, returned by one run only, the automatic ``hint`` (when given), score,
    progress (AP: the heuristic score)."""
    u = pair.units
    ra, rb = u.rank_a[rows], u.rank_b[rows]
    both = (ra > 0) & (rb > 0)
    best = np.where(ra > 0, ra, np.iinfo(np.int64).max)
    best = np.minimum(best, np.where(rb > 0, rb, np.iinfo(np.int64).max))
    if pair.measures[name].family not in PAIR_FAMILIES:
        scores = np.where(ra > 0, 1.0 / np.maximum(ra, 1), 0.0) + np.where(
            rb > 0, 1.0 / np.maximum(rb, 1), 0.0)
    if hint is None:
        return u.query[rows], best, ~both, -scores, -np.round(progress, 15)
    return u.query[rows], best, ~both, -hint, -scores, -np.round(progress, 15)


def order_rows(pair: PairEvaluation, name: str, rows: np.ndarray, scores: np.ndarray,
               progress: np.ndarray, head: int | None = None,
               hint: np.ndarray | None = None) -> np.ndarray:
    """``rows`` (and parallel ``scores``) sorted into queue order; returns the permutation.

    The last tie-break is the unit id; only the rows that need it are named: with ``head``,
    those tied with one of the first ``head`` positions (the positions from there on are
    in queue order up to the unit ids of rows tied on every other key, which share their
    score, progress, query and ranks); without it, every row."""
    keys = queue_keys(pair, name, rows, scores, progress, hint)
    order = np.lexsort(keys)  # stable: rows tied on every key stay in ``rows`` order
    if order.size < 2 or (head is not None and head <= 0):
        return order
    # Rows tied on every key form runs of ``order``; the unit id orders each run.
    tied = np.ones(order.size - 1, dtype=bool)
    for key in keys:
        ordered = key[order]
        same = ordered[1:] == ordered[:-1]
        if ordered.dtype.kind == "f":  # lexsort holds NaNs equal (last)
            same |= np.isnan(ordered[1:]) & np.isnan(ordered[:-1])
        tied &= same
    run = np.concatenate(([0], np.cumsum(~tied)))
    end = order.size if head is None or head >= order.size else int(
        np.searchsorted(run, run[max(head, 1) - 1], side="right"))
    named = order[:end]
    if not tied[: max(end - 1, 0)].any():
        return order
    names = np.array(pair.units.unit_ids(rows[named]), dtype=object)
    by_name = np.empty(end, dtype=np.int64)
    by_name[np.argsort(names, kind="stable")] = np.arange(end)
    order[:end] = named[np.lexsort((by_name, run[:end]))]
    return order


def decide_queue(pair: PairEvaluation, name: str, limit: int | None = 20, *,
                 estimate: bool = True,
                 automatic: Mapping[tuple[str, str], float] | None = None) -> DecideQueue:
    """The queue of ``name`` (see the module docstring); the first ``limit`` items; without
    ``estimate``, ``labels_to_decide`` is left None (not computed). ``automatic``
    ((query id, unit id) -> automatic gain; :data:`NO_HINT` where none) only breaks ties of
    the order: the queue's items, their scores and ``labels_to_decide`` do not depend on it."""
    u = pair.units
    qids = pair.query_ids
    rows = candidate_rows(pair, name)
    scores, progress = _scores(pair, name, rows)
    hint = None
    if automatic:
        keys = zip(u.query[rows].tolist(), u.unit_ids(rows), strict=True)
        hint = np.array([automatic.get((qids[q], unit), NO_HINT) for q, unit in keys],
                        dtype=np.float64)
    order = order_rows(pair, name, rows, scores, progress, head=limit, hint=hint)
    rows, scores, progress = rows[order], scores[order], progress[order]
    needed = labels_to_decide(pair, name, rows, progress, scores) if estimate else None
    head = rows if limit is None else rows[:limit]
    n = max(u.n, 1)
    items = [
        DecideItem(query_id=qids[int(u.query[r])], unit_id=unit, removes=float(s) / n,
                   progress=float(g) / n, rank_a=int(u.rank_a[r]), rank_b=int(u.rank_b[r]),
                   kind="conflict" if bool(u.conflict[r]) else "unlabeled")
        for r, unit, s, g in zip(head.tolist(), u.unit_ids(head), scores[: head.size].tolist(),
                                 progress[: head.size].tolist(), strict=True)
    ]
    return DecideQueue(measure=name, items=items, n_candidates=int(rows.size),
                       labels_to_decide=needed)


#: Completions drawn by :func:`labels_to_decide` (the median of their counts is reported).
ESTIMATE_DRAWS = 3
#: The share of the simulated count reported for :data:`RATIO_FAMILIES`: re-planning the
#: queue after every label (as the Annotate page does) saves about a third of their labels.
REPLANNED_SHARE = 2 / 3
#: Labels :func:`labels_to_decide` simulates at once (bounds the what-if copies held).
ESTIMATE_CHUNK = 2048


def smoothed_gain_counts(keys: np.ndarray, gains: np.ndarray, size: int) -> np.ndarray:
    """float[size, MAX_GAIN + 1]: how many labeled units of each key (0..size-1) have each
    gain, smoothed towards the share of each gain among all of them (as if two more units
    of every key were labeled so)."""
    levels = MAX_GAIN + 1
    counts = np.bincount(keys * levels + gains.astype(np.int64),
                         minlength=size * levels).reshape(size, levels).astype(np.float64)
    overall = (counts.sum(axis=0) + 1.0) / (counts.sum() + levels)
    return counts + 2.0 * overall


def gain_distribution(pair: PairEvaluation, rows: np.ndarray) -> np.ndarray:
    """float[len(rows), MAX_GAIN + 1]: each row's chance of every gain, from the labeled
    units either run returned: the share of each gain among the labeled units of the
    row's class (:func:`_labeled_classes`), smoothed towards the share among all of them (as if
    two more units of the class were labeled so), restricted to the row's possible gains
    (a unit in conflict: its annotators' range)."""
    u = pair.units
    cls, known, size = _labeled_classes(u)
    probs = smoothed_gain_counts(cls[known], u.low[known], size)[cls[rows]]
    gains = np.arange(MAX_GAIN + 1)
    possible = (gains >= u.low[rows, None]) & (gains <= u.high[rows, None])
    probs = np.where(possible, probs, 0.0)
    return probs / probs.sum(axis=1, keepdims=True)


def labels_to_decide(pair: PairEvaluation, name: str, rows: np.ndarray, progress: np.ndarray,
                     scores: np.ndarray) -> int | None:
    """About how many labels, taken from the queue in its order, the comparison still
    needs: 0 when settled (decided or tied), None when it is undecidable or labeling every
    queued unit is not expected to decide it (docs/decided-comparisons.md, "About N labels").

    The median, over :data:`ESTIMATE_DRAWS` completions drawn from :func:`gain_distribution`,
    of the first count at which the mean interval settles. Ties of the order and each
    unit's drawn gain (a hash of its query and ranks) do not depend on unit ids: the
    estimate is the same however the pair was read."""
    lower, upper, _, _ = pair.intervals(name)
    if lower.size == 0 or np.isnan(lower).any() or np.isnan(upper).any():
        return None
    lower_open, upper_open = pair.open_ends(name)
    verdict = verdict_of(float(lower.mean()), float(upper.mean()), bool(lower_open.any()),
                         bool(upper_open.any()))
    if verdict != "undecided":  # decided or tied
        return 0
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size == 0:
        return None
    u = pair.units
    keys = queue_keys(pair, name, rows, scores, progress)
    rows = rows[np.lexsort((u.rank_b[rows], u.rank_a[rows], *keys))]
    cum = np.cumsum(gain_distribution(pair, rows), axis=1)
    pick = np.stack([_uniform(u.query[rows], u.rank_a[rows], u.rank_b[rows], d)
                     for d in range(ESTIMATE_DRAWS)])
    gains = np.minimum((pick[:, :, None] >= cum[None]).sum(axis=2), MAX_GAIN).astype(np.int8)
    found = _labels_until_settled(pair, name, rows, gains, (lower, upper, lower_open,
                                                            upper_open))
    counts = sorted(np.inf if c is None else c for c in found)
    middle = counts[(len(counts) - 1) // 2]
    if middle == np.inf:
        return None
    if pair.measures[name].family in RATIO_FAMILIES:
        middle = max(1, round(middle * REPLANNED_SHARE))
    return int(middle)


def _uniform(query: np.ndarray, rank_a: np.ndarray, rank_b: np.ndarray, draw: int
             ) -> np.ndarray:
    """float[...] in [0, 1): a fixed pseudo-random number per (query, ranks, draw)
    (splitmix64's mixing of the four)."""
    with np.errstate(over="ignore"):
        x = (query.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
             ^ rank_a.astype(np.uint64) * np.uint64(0xBF58476D1CE4E5B9)
             ^ rank_b.astype(np.uint64) * np.uint64(0x94D049BB133111EB)
             ^ np.uint64(draw + 1) * np.uint64(0xD6E8FEB86659FD93))
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (x >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def _labels_until_settled(pair: PairEvaluation, name: str, rows: np.ndarray,
                          gains: np.ndarray, now: tuple[np.ndarray, ...]) -> list[int | None]:
    """Per draw (a row of ``gains``, parallel to ``rows``): the number of labels of
    ``rows`` (in order) after which the mean interval settles; None if it never does.
    ``now``: the per-query (lower, upper, lower open, upper open) before any of them.
    Every draw's copies are valued by one :func:`pair_interval_ends` call per chunk."""
    u = pair.units
    measure = pair.measures[name]
    n_draws = gains.shape[0]
    states = [[a.copy() for a in now] for _ in range(n_draws)]
    found: list[int | None] = [None] * n_draws
    chunk = max(1, ESTIMATE_CHUNK // n_draws)
    for start in range(0, rows.size, chunk):
        left = [d for d in range(n_draws) if found[d] is None]
        if not left:
            break
        steps = np.arange(start, min(start + chunk, rows.size))
        draw = np.repeat(np.asarray(left, dtype=np.int64), steps.size)
        step = np.tile(steps, len(left))
        ends = pair_interval_ends(u.what_if_prefix(rows, gains, step, draw), measure,
                                  pair.protocol)
        q = u.query[rows[steps]]
        for i, d in enumerate(left):
            part = slice(i * steps.size, (i + 1) * steps.size)
            done = _settle_steps(q, steps, [e[part] for e in ends], states[d])
            if done is not None:
                found[d] = start + done + 1
    return found


def _running(q: np.ndarray, order: np.ndarray, values: np.ndarray, current: np.ndarray,
             opened: np.ndarray, current_open: np.ndarray, upper: bool
             ) -> tuple[np.ndarray, ...]:
    """One end of the queries ``q`` after each step (``values`` and their openness
    ``opened``, in step order) intersected with what was known before (``current``, per
    query) and with the query's earlier steps: (the end per step in ``order``, its change,
    its openness, the change of the count of open ends). Offsets by query keep each
    query's running max / min apart (every value lies in [-1, 1])."""
    sign = -1.0 if upper else 1.0  # the upper end is a running min: the max of negations
    oq = q[order]
    mine = sign * np.where(np.isnan(values), -sign * np.inf, values)[order]
    mine = np.maximum(mine, sign * current[oq])
    run = sign * (np.maximum.accumulate(mine + 4.0 * oq) - 4.0 * oq)
    first = np.ones(order.size, dtype=bool)
    first[1:] = oq[1:] != oq[:-1]
    before = np.where(first, current[oq], np.roll(run, 1))
    # The step's own end is the running one where it is at least as tight: its openness.
    own = sign * np.where(np.isnan(values), -sign * np.inf, values)[order]
    is_open = np.where(own >= sign * run - OPEN_MARGIN, opened[order], False)
    was_open = np.where(first, current_open[oq], np.roll(is_open, 1))
    return run, run - before, is_open, is_open.astype(np.int64) - was_open


def _settle_steps(q: np.ndarray, steps: np.ndarray, ends: list[np.ndarray],
                  state: list[np.ndarray]) -> int | None:
    """Apply the ends (lower, upper, lower open, upper open) of the queries ``q`` after
    each of ``steps`` labels to the per-query ``state`` (the same four, updated in
    place); the index among the steps at which the mean interval settles, or None."""
    n = state[0].size
    order = np.lexsort((steps, q))
    (run_lo, d_lo, open_lo, d_open_lo), (run_hi, d_hi, open_hi, d_open_hi) = (
        _running(q, order, ends[i], state[i], ends[i + 2], state[i + 2], upper=i == 1)
        for i in (0, 1))
    back = np.empty(order.size, dtype=np.int64)
    back[order] = np.arange(order.size)  # step order from the sorted one

    def total(start: float, change: np.ndarray) -> np.ndarray:
        return start + np.cumsum(change[back])

    mean_lo = total(float(state[0].sum()), d_lo) / n
    mean_hi = total(float(state[1].sum()), d_hi) / n
    any_lo = total(float(state[2].sum()), d_open_lo) > 0
    any_hi = total(float(state[3].sum()), d_open_hi) > 0
    done = np.flatnonzero(
        (mean_lo > ZERO) | (any_lo & (mean_lo >= -ZERO))
        | (mean_hi < -ZERO) | (any_hi & (mean_hi <= ZERO))
        | ((np.abs(mean_lo) <= ZERO) & (np.abs(mean_hi) <= ZERO) & ~any_lo & ~any_hi))
    last = np.ones(order.size, dtype=bool)
    last[:-1] = q[order][1:] != q[order][:-1]
    at = q[order][last]
    state[0][at], state[1][at] = run_lo[last], run_hi[last]
    state[2][at], state[3][at] = open_lo[last], open_hi[last]
    return int(done[0]) if done.size else None
