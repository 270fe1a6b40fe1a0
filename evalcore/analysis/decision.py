r"""Decided comparisons (evidence contract section 11): is A better than B whatever the
missing labels are?

For runs A and B over one query set and one measure, each query's difference
``A - B`` lies in an interval: its value where both runs have the measure,
else the tightest sound interval :mod:`evalcore.analysis.pair_bounds` gives over
the unknown units the two runs share, intersected with the naive
``[lower_A - upper_B, upper_A - lower_B]``. The mean difference lies in the
mean of those intervals (queries have distinct unknowns, so both ends are
attained when every per-query interval is exact). The verdict:

* ``a_better`` / ``b_better`` ("decided"): the whole interval is above / below 0
  (an *open* end at 0, never attained by a completion, decides too:
  ``Decision.lower_open``);
* ``tied``: the interval is exactly [0, 0] (every query's difference is known to be 0);
* ``undecided``: the interval contains 0 and is not [0, 0]; with the number of
  unknown units that can still move it;
* ``undecidable``: some query has the measure unavailable **without** bounds in a
  run (an invalid observation such as ``missing_reference``, or no completion that
  defines the measure), with the count of such queries and their reasons.

A completion gives every unknown unit one gain: each unlabeled unit either run
returns in the measure's cut (it then joins the reference set, so it can lower
the other run's nDCG, R or AP too), each unit in conflict and, on a population not
declared complete (contract section 12), any number up to ``U_out`` of the units
outside both cuts (:meth:`~evalcore.analysis.pair_units.PairUnits.outside`, from each
query's corpus size: ``ObservationBatch.with_corpus_size``; unbounded without one).
For nDCG, R and AP, a completion in which no unit of the query is relevant (the
measure is undefined for both runs) counts as a difference of 0.

Differences within :data:`ZERO` of 0 count as 0 (float noise from sums).
Statistical significance over the sample of queries is a separate question
(:mod:`evalcore.analysis.compare`); this module says what the evidence decides.

Entry points: :func:`decide_batches` (packed arrays) and :func:`decide` (a study's
stored runs against the working reference or a frozen version).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from evalcore.analysis.pair_bounds import (
    METHODS,
    PAIR_FAMILIES,
    cut_and_cutoffs,
    pair_interval_ends,
    relevance_threshold,
)
from evalcore.analysis.pair_units import PairUnits, align
from evalcore.analysis.shared_evidence import shared_evidence
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import BatchResult, compute, packing_depth
from evalcore.compute.measures.base import (
    NO_RELEVANT_BIT,
    POPULATION_BIT,
    UNKNOWN_BITS,
    reason_masks,
)
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.measures import Measure, parse_measure
from evalcore.store.observations import RunColumns, runs_as_columns
from evalcore.store.runs import get_run
from evalcore.store.study_handle import Study

#: Measures of the whole relevant population (\|R\| or IDCG): their value drops when a
#: unit only the other run returned turns out relevant.
REFERENCE_FAMILIES = frozenset({"nDCG", "R", "AP"})
#: |difference| at or below this is 0 (sums of float weights).
ZERO = 1e-12
Verdict = Literal["a_better", "b_better", "tied", "undecided", "undecidable"]


class Decision(FrozenModel):
    """What the evidence decides about ``run_a - run_b`` on one measure."""

    measure: str
    run_a: str
    run_b: str
    verdict: Verdict
    #: "decided: A better", "tied", "undecided", ... with the run names.
    verdict_text: str
    #: The mean-difference interval (None when undecidable).
    lower: float | None
    upper: float | None
    #: The interval from each run's own bounds (lower_A - upper_B, ...), for comparison.
    naive_lower: float | None
    naive_upper: float | None
    n_queries: int
    #: Queries whose difference is known exactly.
    n_known: int
    #: Distinct unknown units (per query) in a run's cut on a query whose difference is open.
    n_unknown_units: int
    #: Queries where a run has the measure unavailable without bounds, and why.
    n_undecidable: int
    undecidable_reasons: dict[str, int]
    #: Per reason, the queries where either run has it (a query counted once per reason).
    undecidable_queries: dict[str, int] = {}
    method: str
    summary: str
    #: The interval's end is open: no completion attains it (every completion's mean
    #: difference lies strictly inside), as on a population with unboundedly many units
    #: outside both cuts, where R and AP differences only approach 0.
    lower_open: bool = False
    upper_open: bool = False


@dataclass(frozen=True, eq=False)
class PairEvaluation:
    """Both runs' measures and their alignment: what decisions and the decide-queue read."""

    result_a: BatchResult
    result_b: BatchResult
    units: PairUnits
    protocol: EvalProtocol
    measures: dict[str, Measure]
    #: :meth:`intervals` per measure name, computed once (the pair is never changed).
    _intervals: dict[str, tuple[np.ndarray, ...]] = field(default_factory=dict, repr=False)

    @property
    def query_ids(self) -> list[str]:
        return self.result_a.batch.query_ids

    def intervals(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per query (lower, upper, naive lower, naive upper) of ``A - B``; NaN: undecidable.
        Computed once per measure (the decision and its queue read them several times);
        each call returns fresh copies."""
        lower, upper, naive_lo, naive_hi, _, _ = self._computed(name)
        return lower.copy(), upper.copy(), naive_lo.copy(), naive_hi.copy()

    def open_ends(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Per query, whether the lower / upper end of :meth:`intervals` is open: no
        completion attains it, the differences only approach it (R and AP on a population
        with unboundedly many outside units, :func:`~evalcore.analysis.pair_bounds._ends`)."""
        *_, lower_open, upper_open = self._computed(name)
        return lower_open.copy(), upper_open.copy()

    def _computed(self, name: str) -> tuple[np.ndarray, ...]:
        if name not in self._intervals:
            self._intervals[name] = self._compute_intervals(name)
        return self._intervals[name]

    def _compute_intervals(self, name: str) -> tuple[np.ndarray, ...]:
        lo_a, hi_a = _run_interval(self.result_a, name)
        lo_b, hi_b = _run_interval(self.result_b, name)
        measure = self.measures[name]
        undefined = None
        if measure.family in REFERENCE_FAMILIES:
            u = self.units
            in_a, in_b, _, _ = cut_and_cutoffs(u, measure)
            t = relevance_threshold(measure, self.protocol)
            # No completion defines the measure for this run alone, but one of the pair
            # does (a unit only the other run returns may be relevant): the value is in
            # [0, 1] where defined, and a completion with no relevant unit counts as 0.
            # May be relevant: an unlabeled unit in a run's cut, a reference label in
            # conflict, or, on an open population, an outside unit.
            rows = u.unlabeled & (in_a | in_b) & (u.high >= t)
            refs = (u.ref_high >= t) & (u.ref_low < t)
            maybe_some = ((np.bincount(u.query[rows], minlength=u.n)
                           + np.bincount(u.ref_query[refs], minlength=u.n)) > 0) | (
                               u.outside(in_a, in_b) > 0)
            own_bits = np.uint8(UNKNOWN_BITS | NO_RELEVANT_BIT | POPULATION_BIT)
            for result, lo, hi in ((self.result_a, lo_a, hi_a), (self.result_b, lo_b, hi_b)):
                bits = result.metrics[name].reason_bits
                only = result.valid & (bits != 0) & ((bits & ~own_bits) == 0)
                fixable = only & np.isnan(lo) & maybe_some
                lo[fixable] = 0.0
                hi[fixable] = 1.0
            # An unlabeled unit only the other run returns joins |R| / IDCG in a completion
            # where it is relevant, which can only lower this run's value: its lower bound
            # there is 0 (its upper bound stands). On an open population such a unit is
            # among the run's outside units already (section 12), unless the corpus size
            # is too small to hold it.
            possible = u.unlabeled & (u.high >= max(t, 1)) & u.overfull(in_a, in_b)[u.query]
            foreign_a = np.bincount(u.query[possible & in_b & ~in_a], minlength=u.n) > 0
            foreign_b = np.bincount(u.query[possible & in_a & ~in_b], minlength=u.n) > 0
            lo_a = np.where(foreign_a & ~np.isnan(lo_a), 0.0, lo_a)
            lo_b = np.where(foreign_b & ~np.isnan(lo_b), 0.0, lo_b)
            # Some completion has no relevant unit (|R| = 0, IDCG = 0) where no reference
            # label is certainly relevant (for nDCG: certainly of positive gain).
            undefined = np.bincount(u.ref_query[u.ref_low >= t], minlength=u.n) == 0
        naive_lo, naive_hi = lo_a - hi_b, hi_a - lo_b
        if undefined is not None:  # a completion where the measure is undefined counts as 0
            naive_lo = np.where(undefined, np.minimum(naive_lo, 0.0), naive_lo)
            naive_hi = np.where(undefined, np.maximum(naive_hi, 0.0), naive_hi)
        closed = np.zeros(naive_lo.size, dtype=bool)
        if measure.family not in PAIR_FAMILIES:
            return naive_lo, naive_hi, naive_lo, naive_hi, closed, closed
        # Where both naive ends are NaN the query stays undecidable whatever the pair
        # method gives (NaN wins below): its costly search is skipped there.
        needed = ~(np.isnan(naive_lo) & np.isnan(naive_hi))
        pair_lo, pair_hi, pair_lo_open, pair_hi_open = pair_interval_ends(
            self.units, measure, self.protocol, None if needed.all() else needed)
        lower = np.where(np.isnan(pair_lo), naive_lo, np.maximum(naive_lo, pair_lo))
        upper = np.where(np.isnan(pair_hi), naive_hi, np.minimum(naive_hi, pair_hi))
        # An open end of the pair interval stays open where it is the tighter one (no
        # completion attains it, so none attains the intersection's).
        lower_open = pair_lo_open & (pair_lo >= naive_lo)
        upper_open = pair_hi_open & (pair_hi <= naive_hi)
        if undefined is not None:
            lower = np.where(undefined, np.minimum(lower, 0.0), lower)
            upper = np.where(undefined, np.maximum(upper, 0.0), upper)
            lower_open &= ~undefined
            upper_open &= ~undefined
        # Both are sound; where rounding makes them cross, the difference is known.
        crossed = lower > upper
        mid = np.where(crossed, (lower + upper) / 2, 0.0)
        return (np.where(crossed, mid, lower), np.where(crossed, mid, upper), naive_lo, naive_hi,
                lower_open & ~crossed, upper_open & ~crossed)


def _run_interval(result: BatchResult, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A run's per-query (lower, upper): the value where available, NaN without bounds."""
    available = result.available(name)
    value = result.metrics[name].value
    lower, upper = result.bounds(name)
    return np.where(available, value, lower), np.where(available, value, upper)  # copies


def evaluate_pair(
    batch_a: ObservationBatch,
    batch_b: ObservationBatch,
    measures: Sequence[Measure],
    protocol: EvalProtocol | None = None,
) -> PairEvaluation:
    """Compute ``measures`` on both batches (same query ids, same reference) and align them."""
    protocol = protocol or batch_a.protocol
    named = {m.canonical: m for m in measures}
    result_a = compute(batch_a, protocol, list(named.values()))
    result_b = compute(batch_b, protocol, list(named.values()))
    units = align(batch_a, batch_b, result_a.ranking, result_b.ranking)
    return PairEvaluation(result_a, result_b, units, protocol, named)


def _undecidable_reasons(pair: PairEvaluation, name: str, blocked: np.ndarray
                         ) -> tuple[dict[str, int], dict[str, int]]:
    """Per reason: (count per run and query, count of queries in either run)."""
    counts: dict[str, int] = {}
    queries: dict[str, np.ndarray] = {}
    for result in (pair.result_a, pair.result_b):
        lower, _ = result.bounds(name)
        mine = blocked & ~result.available(name) & np.isnan(lower)
        masks = reason_masks(result.observation_bits, result.metrics[name].reason_bits)
        for reason, why in masks.items():
            mask = mine & why
            c = int(np.count_nonzero(mask))
            if c:
                counts[reason.value] = counts.get(reason.value, 0) + c
                seen = queries.get(reason.value)
                queries[reason.value] = mask if seen is None else seen | mask
    return counts, {r: int(np.count_nonzero(m)) for r, m in queries.items()}


def open_rows(pair: PairEvaluation, name: str, open_query: np.ndarray) -> np.ndarray:
    """bool[U]: unknown units in a run's cut of ``name`` on the queries ``open_query``."""
    u = pair.units
    measure = pair.measures[name]
    in_a, in_b, _, _ = cut_and_cutoffs(u, measure)
    unknown = u.unknown
    if measure.family not in ("nDCG", "Judged"):  # a relevance measure: straddling the threshold
        t = relevance_threshold(measure, pair.protocol)
        unknown = (u.high >= t) & (u.low < t)
    return unknown & (in_a | in_b) & open_query[u.query]


def verdict_of(lower: float, upper: float, lower_open: bool = False,
               upper_open: bool = False) -> Verdict:
    """The verdict of a mean-difference interval; an open end (never attained: every
    completion's difference lies strictly beyond it) at 0 decides too."""
    if lower > ZERO or (lower_open and lower >= -ZERO):
        return "a_better"
    if upper < -ZERO or (upper_open and upper <= ZERO):
        return "b_better"
    if abs(lower) <= ZERO and abs(upper) <= ZERO:
        return "tied"
    return "undecided"


def verdict_text(verdict: Verdict, run_a: str, run_b: str) -> str:
    return {
        "a_better": f"decided: {run_a} better",
        "b_better": f"decided: {run_b} better",
        "tied": "tied",
        "undecided": "undecided",
        "undecidable": "undecidable",
    }[verdict]


def decide_measure(pair: PairEvaluation, name: str, run_a: str = "A", run_b: str = "B") -> Decision:
    """The :class:`Decision` of one measure of an evaluated pair."""
    lower, upper, naive_lo, naive_hi = pair.intervals(name)
    n = lower.size
    blocked = np.isnan(lower) | np.isnan(upper)
    n_blocked = int(np.count_nonzero(blocked))
    width = upper - lower
    n_known = int(np.count_nonzero(~blocked & (width <= ZERO)))
    n_units = int(np.count_nonzero(open_rows(pair, name, ~blocked & (width > ZERO))))
    reasons: dict[str, int] = {}
    per_query: dict[str, int] = {}
    lo = hi = naive_mean_lo = naive_mean_hi = None
    lower_open = upper_open = False
    if n_blocked:
        verdict: Verdict = "undecidable"
        reasons, per_query = _undecidable_reasons(pair, name, blocked)
        text = ", ".join(f"{c} {r}" for r, c in sorted(reasons.items(), key=lambda i: -i[1]))
        summary = (f"{name}: undecidable — on {n_blocked} of {n} queries a run has the measure "
                   f"unavailable without bounds ({text}: counted per run and reason); those "
                   "reasons must be lifted before the evidence can decide")
    elif n == 0:
        verdict = "undecidable"
        summary = f"{name}: undecidable — no queries"
    else:
        lo, hi = float(lower.mean()), float(upper.mean())
        naive_mean_lo, naive_mean_hi = float(naive_lo.mean()), float(naive_hi.mean())
        lower_open, upper_open = (bool(x.any()) for x in pair.open_ends(name))
        verdict = verdict_of(lo, hi, lower_open, upper_open)
        interval = (f"mean {run_a} - {run_b} in {'(' if lower_open else '['}{lo:+.4f}, "
                    f"{hi:+.4f}{')' if upper_open else ']'}")
        if verdict == "undecided":
            summary = f"{name}: undecided — {interval}; {n_units} unknown units can still move it"
        elif verdict == "tied":
            summary = f"{name}: tied — every query's difference is known to be 0"
        else:
            summary = (f"{name}: {verdict_text(verdict, run_a, run_b)} — {interval}, whatever "
                       "the missing labels are")
    return Decision(
        measure=name, run_a=run_a, run_b=run_b, verdict=verdict,
        verdict_text=verdict_text(verdict, run_a, run_b), lower=lo, upper=hi,
        naive_lower=naive_mean_lo, naive_upper=naive_mean_hi, n_queries=n, n_known=n_known,
        n_unknown_units=n_units, n_undecidable=n_blocked, undecidable_reasons=reasons,
        undecidable_queries=per_query, method=METHODS[pair.measures[name].family],
        summary=summary, lower_open=lower_open, upper_open=upper_open,
    )


def decide_batches(
    batch_a: ObservationBatch,
    batch_b: ObservationBatch,
    measures: Sequence[Measure],
    protocol: EvalProtocol | None = None,
    *,
    run_a: str = "A",
    run_b: str = "B",
) -> list[Decision]:
    """One :class:`Decision` per measure for two packed batches over the same query ids
    (packed with ``min_depth=packing_depth(measures)``) and the same reference labels."""
    pair = evaluate_pair(batch_a, batch_b, measures, protocol)
    return [decide_measure(pair, name, run_a, run_b) for name in pair.measures]


@dataclass(frozen=True, eq=False)
class EvaluatedPair:
    """Two stored runs read as columns and evaluated as a pair. Never changed once made, so
    one read and one evaluation serve a large study's verdicts first and its queues and
    trec_eval-compatible numbers later (:func:`evalcore.analysis.pair_comparison.compare_evaluated_pair`)."""

    run_a: str
    run_b: str
    columns: list[RunColumns]
    pair: PairEvaluation

    def notes(self) -> list[str]:
        """What the pair's numbers assume besides the labels: the corpus size that bounds
        its open populations, when one is known (:mod:`evalcore.store.population`)."""
        population = self.columns[0].reference.population if self.columns else None
        return [] if population is None else population.size_notes()


def fits_depth(measure: Measure, depth: int) -> bool:
    """Whether a run stored to ``depth`` holds every rank ``measure`` reads: a measure
    without a cutoff reads the ranks the run has, one with a cutoff past ``depth`` would
    take the ranks never retrieved as empty."""
    return measure.k is None or measure.k <= depth


def capped(measure: Measure, depth: int) -> Measure:
    """``measure`` at a cutoff of at most ``depth`` (the same measure when it fits)."""
    if fits_depth(measure, depth):
        return measure
    return Measure(measure.family, k=depth, rel=measure.rel, p=measure.p)


def carried(names: Sequence[str], depth: int, offered: Sequence[str]) -> dict[str, str | None]:
    """Each of ``names`` past ``depth`` (runs switched to shallower ones) -> the same family
    at ``depth`` (:func:`capped`) when ``offered`` has it, else None; names that fit are
    left out, so an empty answer means nothing changes."""
    moved: dict[str, str | None] = {}
    for name in names:
        measure = parse_measure(name)
        if not fits_depth(measure, depth):
            canonical = capped(measure, depth).canonical
            moved[name] = canonical if canonical in offered else None
    return moved


def carried_note(moved: dict[str, str | None]) -> str:
    """What :func:`carried` changed, in words, to precede the depth note: ``P@10 changed to
    P@3``, ``RR@10 left out``."""
    return "; ".join(f"{old} changed to {new}" if new else f"{old} left out"
                     for old, new in moved.items())


def stored_depths(study: Study, runs: Sequence[str]) -> dict[str, int]:
    """Each of ``runs``' stored depth (``runs.k``), in the order given."""
    return {name: get_run(study, name).k for name in dict.fromkeys(runs)}


def depth_problems(depths: dict[str, int], measures: Sequence[Measure]) -> list[str]:
    """One sentence per run of ``depths`` (name: stored depth) stored shallower than a
    measure's cutoff, naming the measures that would need ranks never retrieved."""
    problems = []
    for name, depth in depths.items():
        deeper = [m.canonical for m in measures if not fits_depth(m, depth)]
        if deeper:
            problems.append(f"run {name!r} was stored to depth {depth}; {', '.join(deeper)} "
                            "would need ranks that were never retrieved")
    return problems


def depth_note(depths: dict[str, int]) -> str:
    """Why no cutoff past the shallowest of ``depths`` (run name: stored depth) is offered,
    naming each run's depth: its ranks below were never retrieved."""
    depth = min(depths.values())
    names = list(depths)
    if len(set(depths.values())) == 1:
        runs = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        stored = f"{runs} {'is' if len(names) == 1 else 'are'} stored to depth {depth}"
    else:
        each = [f"{name} to depth {k}" for name, k in depths.items()]
        stored = f"{names[0]} is stored to depth {depths[names[0]]}, " + ", ".join(each[1:])
    return (f"Cutoffs up to @{depth} only: {stored}. Ranks past a run's depth were never "
            "retrieved, so a deeper cutoff would count them as empty.")


def require_stored_depth(study: Study, runs: Sequence[str], measures: Sequence[Measure]) -> None:
    """ValueError naming each of ``runs`` stored shallower than a measure's cutoff: its ranks
    below the stored depth were never retrieved, and a comparison would take them as empty
    (``evaluate --db`` refuses such a measure and a report leaves it out alike)."""
    problems = depth_problems(stored_depths(study, runs), measures)
    if problems:
        raise ValueError("; ".join(problems) + " (use cutoffs up to the runs' depth, or store "
                         "deeper runs)")


def stored_pair(
    study: Study,
    run_a: str,
    run_b: str,
    measures: Sequence[Measure | str],
    reference: str | None = None,
    *,
    query_ids: Sequence[str] | None = None,
) -> EvaluatedPair:
    """Both stored runs against the working reference (or frozen version ``reference``),
    over the study's queries or the resolved query set ``query_ids``, evaluated as a pair,
    with the columns they were packed from (the study's shared evidence,
    :func:`evalcore.analysis.shared_evidence.shared_evidence`). A measure whose cutoff is
    past either run's stored depth is refused (:func:`require_stored_depth`)."""
    parsed = [m if isinstance(m, Measure) else parse_measure(m) for m in measures]
    require_stored_depth(study, [run_a, run_b], parsed)
    # The observations of both runs over the union of their query sets, as columns (one
    # read of the reference; no per-query objects).
    columns = runs_as_columns(study, [run_a, run_b], shared_evidence(study, reference),
                              query_ids=query_ids)
    pair = evaluate_column_pair(columns, parsed, study.settings.protocol())
    return EvaluatedPair(run_a, run_b, columns, pair)


def evaluate_column_pair(
    columns: Sequence[RunColumns],
    measures: Sequence[Measure | str],
    protocol: EvalProtocol,
) -> PairEvaluation:
    """Pack two runs' columns (:func:`~evalcore.store.observations.runs_as_columns`) for
    ``measures``, with the study's corpus size they carry, and evaluate them."""
    parsed = [m if isinstance(m, Measure) else parse_measure(m) for m in measures]
    depth = packing_depth(parsed)
    batches = [c.packed(protocol, depth) for c in columns]
    return evaluate_pair(batches[0], batches[1], parsed, protocol)


def decide(
    study: Study,
    run_a: str,
    run_b: str,
    measures: Sequence[Measure | str],
    reference: str | None = None,
) -> list[Decision]:
    """Decisions of stored run ``run_a`` against ``run_b`` on each of ``measures``
    (names like ``"nDCG@10"`` or :class:`Measure` s), against the working reference or
    the frozen version ``reference``."""
    pair = stored_pair(study, run_a, run_b, measures, reference).pair
    return [decide_measure(pair, name, run_a, run_b) for name in pair.measures]
