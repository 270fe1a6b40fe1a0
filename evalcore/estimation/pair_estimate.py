"""Samples and estimates of a compared pair (contract section 13).

:func:`draw_for_pair` draws a :class:`~evalcore.estimation.design.SampleDesign` from a
pair's unknown units; :func:`estimate_pair` estimates each measure's mean difference
from the pair (the evidence **without** the sample's answers), the sample's answers (a
gain, or ``None`` for a unit skipped or judged "can't judge") and, optionally, automatic
judgments used only as predictions (:mod:`evalcore.estimation.estimator`).

Automatic judgments never enter ``pair``: they are a separate mapping, read only to make
the prediction ``f_q``; the decided intervals, the worst-case bounds and every value
come from ``pair`` alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

import numpy as np

from evalcore.analysis.bottom_line import Estimate
from evalcore.analysis.decision import REFERENCE_FAMILIES, PairEvaluation
from evalcore.analysis.decision_queue import gain_distribution, smoothed_gain_counts
from evalcore.analysis.pair_bounds import (
    cut_and_cutoffs,
    net_weight,
    pair_interval_ends,
    relevance_threshold,
)
from evalcore.analysis.pair_units import PairUnits
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.gains import MAX_GAIN
from evalcore.estimation.design import METHOD, SampleDesign, draw_design, with_draws
from evalcore.estimation.estimator import StratifiedInput, stratified_difference

#: The method as printed: the design and the estimator.
ESTIMATOR = "difference estimator with finite-population correction"
#: A unit of a query: (query id, unit id).
UnitKey = tuple[str, str]


class NotEstimable(FrozenModel):
    """A measure the sample cannot estimate, and why."""

    measure: str
    reason: str


def unknown_units(pair: PairEvaluation, measures: Sequence[str]) -> dict[str, list[str]]:
    """Query id -> its unknown units (unlabeled or in conflict) that can move one of
    ``measures``, in the order of their best rank: in a run's cut, and for P and RBP (a sum
    over units) with a net weight other than 0 (not at the same weight in both runs)."""
    u = pair.units
    moves = np.zeros(u.query.size, dtype=bool)
    for name in measures:
        measure = pair.measures[name]
        in_a, in_b, _, _ = cut_and_cutoffs(u, measure)
        if measure.family in ("P", "RBP"):
            moves |= (in_a | in_b) & (np.abs(net_weight(u, measure, pair.protocol)) > 1e-15)
        else:
            moves |= in_a | in_b
    rows = np.flatnonzero(moves & u.unknown)
    best = np.minimum(
        np.where(u.rank_a[rows] > 0, u.rank_a[rows], 10**9),
        np.where(u.rank_b[rows] > 0, u.rank_b[rows], 10**9),
    )
    rows = rows[np.lexsort((best, u.query[rows]))]
    qids = pair.query_ids
    out: dict[str, list[str]] = {}
    for q, unit in zip(u.query[rows].tolist(), u.unit_ids(rows), strict=True):
        out.setdefault(qids[q], []).append(unit)
    return out


def spread_scores(pair: PairEvaluation, measures: Sequence[str]) -> dict[str, float]:
    """Query id -> the sum over ``measures`` of the standard deviation of its difference
    under the prior prediction (:func:`prediction` without automatic judgments), plus a
    tenth of its decided interval's width: how much its residual may vary, known before
    any label of the sample (1 per measure where the measure has no bounds)."""
    total = np.zeros(pair.units.n)
    empty = np.zeros(0, dtype=np.int64)
    for name in measures:
        lower, upper, _, _ = pair.intervals(name)
        if np.isnan(lower).any() or np.isnan(upper).any():
            bad = np.isnan(lower) | np.isnan(upper)
            total += np.where(bad, 1.0, np.nan_to_num(upper - lower))
            continue
        _, spread = prediction(pair, name, empty, empty, lower, upper)
        total += np.sqrt(spread) + 0.1 * (upper - lower)
    return dict(zip(pair.query_ids, total.tolist(), strict=True))


def draw_for_pair(
    pair: PairEvaluation,
    *,
    name: str,
    run_a: str,
    run_b: str,
    measures: Sequence[str] | None = None,
    size: int,
    seed: int,
    scores: Mapping[str, float] | None = None,
) -> SampleDesign:
    """A design over the pair's unknown units (see :mod:`evalcore.estimation.design`),
    stratified by :func:`spread_scores` (``scores``: those scores computed already)."""
    names = list(measures) if measures is not None else list(pair.measures)
    missing = [m for m in names if m not in pair.measures]
    if missing:
        raise ValueError(f"the pair was not evaluated on {missing}")
    return draw_design(
        name=name,
        run_a=run_a,
        run_b=run_b,
        measures=names,
        query_ids=pair.query_ids,
        units=unknown_units(pair, names),
        widths=dict(scores) if scores is not None else spread_scores(pair, names),
        size=size,
        seed=seed,
    )


def _rows(pair: PairEvaluation, *, every: bool = False) -> dict[UnitKey, int]:
    """(query id, unit id) -> the unit's row, for every unknown row (``every``: every row)."""
    u = pair.units
    rows = np.arange(u.query.size) if every else np.flatnonzero(u.unknown)
    qids = pair.query_ids
    return {
        (qids[q], unit): int(r)
        for q, unit, r in zip(u.query[rows].tolist(), u.unit_ids(rows), rows.tolist(), strict=True)
    }


def answered_draws(
    design: SampleDesign, responses: Mapping[UnitKey, int | None], still_unknown: set[UnitKey]
) -> int:
    """The longest prefix of the design's draws whose every unit is answered (a gain or a
    non-response) or known by now."""
    done = 0
    for q in design.sampled_queries():
        if all(
            (q.query_id, unit) in responses or (q.query_id, unit) not in still_unknown
            for unit in q.units
        ):
            done += 1
        else:
            break
    return done


def _nothing_relevant(units: PairUnits, pair: PairEvaluation, name: str) -> np.ndarray:
    """bool[n]: no unit of the query can be relevant (of positive gain for nDCG): no
    reference label, no unit in a cut and no outside unit."""
    measure = pair.measures[name]
    t = relevance_threshold(measure, pair.protocol)
    in_a, in_b, _, _ = cut_and_cutoffs(units, measure)
    maybe = np.bincount(units.query[(in_a | in_b) & (units.high >= t)], minlength=units.n)
    maybe += np.bincount(units.ref_query[units.ref_high >= t], minlength=units.n)
    return (maybe == 0) & (units.outside(in_a, in_b) == 0)


def _fixed_interval(
    pair: PairEvaluation,
    name: str,
    rows: np.ndarray,
    gains: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per query, the difference's interval once ``rows`` have ``gains``: the pair method
    on the fixed units, intersected with the sure interval ``[lower, upper]``."""
    if rows.size == 0:
        return lower.copy(), upper.copy()
    u = pair.units
    gains = np.clip(gains, u.low[rows], u.high[rows])  # inside each unit's possible range
    fixed = u.with_gains(rows, gains)
    measure = pair.measures[name]
    lo, hi, _, _ = pair_interval_ends(fixed, measure, pair.protocol)
    if measure.family in REFERENCE_FAMILIES:
        # No unit can be relevant: the measure is undefined for both runs, a difference of
        # 0 (as in decided comparisons' completions).
        none = _nothing_relevant(fixed, pair, name)
        lo = np.where(np.isnan(lo) & none, 0.0, lo)
        hi = np.where(np.isnan(hi) & none, 0.0, hi)
    lo = np.where(np.isnan(lo), lower, np.maximum(lo, lower))
    hi = np.where(np.isnan(hi), upper, np.minimum(hi, upper))
    crossed = lo > hi
    mid = (lo + hi) / 2
    return np.where(crossed, mid, lo), np.where(crossed, mid, hi)


@dataclass(frozen=True)
class QueryArrays:
    """One measure's per-query inputs of the estimator (float[n], the pair's query order):
    the sure interval before the sample's answers, the prediction, and the interval after
    the answers (read on sampled queries only)."""

    lower: np.ndarray
    upper: np.ndarray
    prediction: np.ndarray
    #: The spread of the prediction's own completions (its expected squared residual).
    prediction_spread: np.ndarray
    answered_lower: np.ndarray
    answered_upper: np.ndarray
    #: With automatic judgments: the prediction without them, and its spread (the
    #: estimator weighs the two, :func:`~evalcore.estimation.estimator.power_tuned`).
    baseline: np.ndarray | None = None
    baseline_spread: np.ndarray | None = None


def query_arrays(
    pair: PairEvaluation,
    name: str,
    answer_rows: np.ndarray,
    answer_gains: np.ndarray,
    auto_rows: np.ndarray,
    auto_gains: np.ndarray,
) -> QueryArrays | None:
    """:class:`QueryArrays` of ``name`` (None: some query has no bounds). A query's
    arrays depend only on its own units, so answers given on unsampled queries change
    nothing the estimator reads."""
    lower, upper, _, _ = pair.intervals(name)
    if np.isnan(lower).any() or np.isnan(upper).any():
        return None
    y_lo, y_hi = _fixed_interval(pair, name, answer_rows, answer_gains, lower, upper)
    baseline: tuple[np.ndarray | None, np.ndarray | None] = (None, None)
    if auto_rows.size:
        empty = np.zeros(0, dtype=np.int64)
        baseline = prediction(pair, name, empty, empty, lower, upper)
    return QueryArrays(
        lower,
        upper,
        *prediction(pair, name, auto_rows, auto_gains, lower, upper),
        y_lo,
        y_hi,
        *baseline,
    )


#: Completions drawn from the prior gain distribution to predict without automatic
#: judgments (and their seed: the prediction is a fixed function of the prior evidence).
PRIOR_DRAWS = 8
PRIOR_SEED = 20240531


#: Labeled units with an automatic judgment needed to calibrate it against human labels.
MIN_CALIBRATION = 20


def calibration(pair: PairEvaluation, auto: np.ndarray) -> np.ndarray | None:
    """float[5, 5]: the chance of each human gain given each automatic gain, counted on
    the labeled units either run returned that also have an automatic judgment (``auto``:
    int[U], -1 where none), smoothed towards the share of each human gain (as if two more
    units per automatic gain were labeled so); None below :data:`MIN_CALIBRATION` units."""
    u = pair.units
    known = ~u.unknown & ((u.rank_a > 0) | (u.rank_b > 0)) & (auto >= 0)
    if int(known.sum()) < MIN_CALIBRATION:
        return None
    smoothed = smoothed_gain_counts(auto[known], u.low[known], MAX_GAIN + 1)
    return smoothed / smoothed.sum(axis=1, keepdims=True)


def prediction(
    pair: PairEvaluation,
    name: str,
    auto_rows: np.ndarray,
    auto_gains: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """float[n] twice: each query's predicted difference and its variance over the
    :data:`PRIOR_DRAWS` completions it is the mean of, from the evidence before the sample
    alone (docs/estimation.md, "The estimator"). An unknown unit's gain is drawn from the
    human gains' chances given its automatic judgment (:func:`calibration`; its automatic
    gain itself when too few labeled units have one), else from
    :func:`~evalcore.analysis.decision_queue.gain_distribution`. Any prediction keeps the
    estimator valid; a better one narrows it."""
    u = pair.units
    rows = np.flatnonzero(u.unknown)
    if rows.size == 0:
        return (lower + upper) / 2, np.zeros(u.n)
    # Draws in the order of (query, unit id): the same evidence predicts the same, however
    # the rows were packed.
    ids = u.unit_ids(rows)
    rows = rows[np.lexsort((np.array(ids, dtype=str), u.query[rows]))]
    levels = MAX_GAIN + 1
    auto = np.full(u.query.size, -1, dtype=np.int64)
    auto[auto_rows] = np.clip(auto_gains, 0, MAX_GAIN)
    probs = np.zeros((rows.size, levels))
    judged = auto[rows] >= 0
    if (~judged).any():
        probs[~judged] = gain_distribution(pair, rows[~judged])
    if judged.any():
        table = calibration(pair, auto)
        if table is None:
            probs[judged, auto[rows[judged]]] = 1.0
        else:
            probs[judged] = table[auto[rows[judged]]]
    gains = np.arange(levels)
    possible = (gains >= u.low[rows, None]) & (gains <= u.high[rows, None])
    probs = np.where(possible, probs, 0.0)
    empty = probs.sum(axis=1) <= 0
    probs[empty] = possible[empty]
    cum = np.cumsum(probs / probs.sum(axis=1, keepdims=True), axis=1)
    rng = np.random.default_rng(PRIOR_SEED)
    values = np.empty((PRIOR_DRAWS, u.n))
    for d in range(PRIOR_DRAWS):
        pick = rng.random(rows.size)
        drawn = np.minimum((pick[:, None] >= cum).sum(axis=1), MAX_GAIN)
        lo, hi = _fixed_interval(pair, name, rows, drawn, lower, upper)
        values[d] = (lo + hi) / 2
    return values.mean(axis=0), values.var(axis=0, ddof=1)


def stratified_input(
    design: SampleDesign, draws: int, arrays: QueryArrays, query_index: Mapping[str, int]
) -> StratifiedInput:
    """The estimator's input when the first ``draws`` queries of ``design`` are answered:
    the queries outside the design's population at their sure interval, the design's by
    position (:class:`QueryArrays` lists its arrays in the order of the estimator's)."""
    population = np.array([query_index[q.query_id] for q in design.queries], dtype=np.int64)
    stratum = np.array([q.stratum for q in design.queries], dtype=np.int64)
    sampled = np.zeros(population.size, dtype=bool)
    sampled[:draws] = True
    outside = np.ones(arrays.lower.size, dtype=bool)
    outside[population] = False
    per_query = (getattr(arrays, f.name) for f in fields(arrays))
    return StratifiedInput(
        arrays.lower[outside], arrays.upper[outside], stratum, len(design.strata), sampled,
        *(None if a is None else a[population] for a in per_query),
    )


def estimate_pair(
    pair: PairEvaluation,
    design: SampleDesign,
    responses: Mapping[UnitKey, int | None],
    *,
    automatic: Mapping[UnitKey, int] | None = None,
    automatic_name: str | None = None,
    level: float = 0.95,
    measures: Sequence[str] | None = None,
) -> list[Estimate | NotEstimable]:
    """One estimate per measure (the design's, or ``measures``).

    ``pair`` is the evidence without the sample's answers; ``responses`` maps each
    answered sampled unit to its gain (None: skipped or "can't judge", non-response);
    ``automatic`` maps units to automatic gains, used only as predictions."""
    if pair.query_ids != design.query_ids:
        raise ValueError(
            f"sample {design.name!r} was drawn over another query set; draw a "
            "new sample for this comparison"
        )
    for what, given in (("answer", responses), ("automatic judgment", automatic or {})):
        wrong = [(k, g) for k, g in given.items() if g is not None and not 0 <= g <= MAX_GAIN]
        if wrong:
            (q, unit), g = wrong[0]
            raise ValueError(
                f"{what} {g!r} for unit {unit!r} of query {q!r} is not a gain from 0 to "
                f"{MAX_GAIN}; {len(wrong)} such value(s) in all"
            )
    names = list(measures) if measures is not None else list(design.measures)
    rows = _rows(pair)
    draws = answered_draws(design, responses, set(rows))
    used = with_draws(design, draws)
    sampled_units = [(q.query_id, unit) for q in used.sampled_queries() for unit in q.units]
    all_drawn = [(q.query_id, unit) for q in design.sampled_queries() for unit in q.units]
    labeled = [k for k in sampled_units if k in rows and responses.get(k) is not None]
    n_nonresponse = sum(1 for k in sampled_units if k in responses and responses[k] is None)
    answer_rows = np.array([rows[k] for k in labeled], dtype=np.int64)
    answer_gains = np.array([responses[k] for k in labeled], dtype=np.int64)
    every_row = _rows(pair, every=True) if automatic else {}
    auto_keys = [k for k in (automatic or {}) if k in every_row]
    auto_rows = np.array([every_row[k] for k in auto_keys], dtype=np.int64)
    auto_gains = np.array([automatic[k] for k in auto_keys] if automatic else [], dtype=np.int64)
    index = {q: i for i, q in enumerate(pair.query_ids)}
    common = {
        "run_a": design.run_a, "run_b": design.run_b, "level": level,
        "n_sampled": len(sampled_units), "n_labeled": len(labeled), "n_unknown": design.n_unknown,
        "n_nonresponse": n_nonresponse, "n_pending": len(all_drawn) - len(sampled_units),
        "n_queries": pair.units.n, "n_queries_sampled": draws,
        "automatic": automatic_name if auto_keys else None,
    }
    out: list[Estimate | NotEstimable] = []
    for name in names:
        if name not in pair.measures:
            out.append(NotEstimable(measure=name, reason="not evaluated for this comparison"))
            continue
        arrays = query_arrays(pair, name, answer_rows, answer_gains, auto_rows, auto_gains)
        if arrays is None:
            why = "undecidable: some query has the measure unavailable without bounds"
            out.append(NotEstimable(measure=name, reason=why))
            continue
        interval = stratified_difference(stratified_input(design, draws, arrays, index), level)
        method = f"{METHOD}, {ESTIMATOR}"
        weight = interval.predictor_weight if auto_keys else None
        if automatic_name and auto_keys:
            method += (f", automatic judgments '{automatic_name}' as predictor, weighted "
                       f"{weight:.2f} by the sample")
        # The interval's numbers by their names (the predictor's weight only with a predictor).
        found = {**vars(interval), "predictor_weight": weight}
        out.append(Estimate(measure=name, method=method, **found, **common))
    return out
