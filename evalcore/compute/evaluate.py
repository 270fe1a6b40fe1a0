"""The metric computer: observations in, an :class:`EvaluationReport` out.

:func:`evaluate` packs observations into an
:class:`~evalcore.compute.batch.ObservationBatch` and calls :func:`evaluate_batch`.
:func:`compute` stops before building report objects and returns a
:class:`BatchResult` of arrays (values, availability, reason bitmasks,
bounds), for benchmarks and dashboards; ``BatchResult.to_report()`` builds the
full report. Query order in every output is input order.

Without ``measures`` the output holds the section-7 keys (``precision``,
``recall``, ``ndcg``, ``reciprocal_rank``, each at the observation's k); with
``measures`` (:class:`~evalcore.contract.measures.Measure` s, many cutoffs at
once) per-query metrics and aggregates are keyed by canonical names. The batch
is packed once, deep enough for the deepest cutoff.

When an observation is invalid (contract section 3), every metric of that
query is unavailable with the observation's reasons only, no bounds and no
blocking IDs; the query's ``valid`` is false and its ``reasons`` list them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from evalcore.compute.aggregate import aggregate_fields
from evalcore.compute.batch import CODE_HIGH, CODE_LOW, ObservationBatch, default_protocol
from evalcore.compute.measures import LEGACY_NAMES, MEASURE_MODULES, MeasureArrays, RankingArrays
from evalcore.compute.measures.base import CONFLICT_BIT, METRIC_REASON_LISTS, reason_masks
from evalcore.compute.validity import observation_bits, observation_reasons, returned_duplicates
from evalcore.contract.measures import Measure

# The report models are imported where they are made: computing the arrays (and the command
# line's JSON from them, evalcore.api.report_text) needs no pydantic.
if TYPE_CHECKING:
    from evalcore.contract.evaluation_protocol import EvalProtocol
    from evalcore.contract.observation import Observation
    from evalcore.contract.results import (
        AggregateValue,
        Diagnostics,
        EvaluationReport,
        MetricValue,
        QueryResult,
    )


@dataclass(frozen=True, eq=False)
class BatchResult:
    """Every measure of a batch as arrays; no per-query objects until asked."""

    batch: ObservationBatch
    protocol: EvalProtocol
    observation_bits: np.ndarray  # uint8[n], see evalcore.compute.validity.OBSERVATION_BITS
    metrics: dict[str, MeasureArrays]
    ranking: RankingArrays
    #: per blocking limit (its bytes): the unlabeled units' mask, and their ids per query
    _unlabeled_masks: dict[bytes, np.ndarray] = field(default_factory=dict, init=False, repr=False)
    _blocking_cache: dict[bytes, dict[int, list[str]]] = field(
        default_factory=dict, init=False, repr=False
    )

    @property
    def valid(self) -> np.ndarray:
        return self.observation_bits == 0

    def available(self, metric: str) -> np.ndarray:
        """Per-query availability of ``metric``."""
        return (self.metrics[metric].reason_bits == 0) & self.valid

    def values(self, metric: str) -> np.ndarray:
        """Per-query values of ``metric``, NaN where unavailable."""
        return np.where(self.available(metric), self.metrics[metric].value, np.nan)

    def bounds(self, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """Per-query (lower, upper) of an unavailable measure, NaN where it has none.

        Defined when the observation is valid and the measure's reasons are its own
        (unknown gains, ``population_incomplete``, ``no_relevant_units``) and some
        completion of the unknowns defines it (contract sections 10 and 12; the
        measure module writes NaN where none does).
        """
        m = self.metrics[metric]
        ok = self.valid & (m.reason_bits != 0)
        return np.where(ok, m.lower, np.nan), np.where(ok, m.upper, np.nan)

    def reason_counts(self, metric: str) -> dict[str, int]:
        """How many queries carry each reason for ``metric`` (observation reasons first)."""
        masks = reason_masks(self.observation_bits, self.metrics[metric].reason_bits)
        counts = {r.value: int(np.count_nonzero(mask)) for r, mask in masks.items()}
        return {r: c for r, c in counts.items() if c}

    def aggregates(self) -> dict[str, AggregateValue]:
        """Section-6 aggregates of every measure."""
        from evalcore.contract.results import AggregateValue

        return {
            name: AggregateValue.model_construct(**fields)
            for name, fields in self.aggregate_fields().items()
        }

    def aggregate_fields(self) -> dict[str, dict[str, Any]]:
        """The fields of every measure's :class:`AggregateValue`, as plain values."""
        return {
            name: aggregate_fields(
                self.available(name), m.value, *self.bounds(name), self.reason_counts(name)
            )
            for name, m in self.metrics.items()
        }

    @property
    def n_returned_duplicates(self) -> int:
        return int(np.count_nonzero(self.batch.pos_dup))

    def query_results(self, rows: Sequence[int] | None = None) -> list[QueryResult]:
        """One :class:`QueryResult` per query, in input order (of the queries at ``rows``
        only, in that order, when given: a chart of a few queries of a large batch)."""
        from evalcore.contract.results import QueryResult

        batch = self.batch
        n = len(batch)
        picked = range(n) if rows is None else list(rows)
        names = list(self.metrics)
        # Frozen MetricValues with equal content are shared: across queries (equal
        # values) and across metrics of one query (e.g. recall and nDCG blocked alike).
        available: dict[tuple[float, float | None], MetricValue] = {}
        unbounded: dict[tuple[int, int, bytes], MetricValue] = {}
        columns = [self._metric_column(m, available, unbounded, rows) for m in names]
        obits = self.observation_bits.tolist()
        has_dup = (np.bincount(self.ranking.query[batch.pos_dup], minlength=n) > 0).tolist()
        ks = batch.k.tolist()
        qids = batch.query_ids
        out: list[QueryResult] = []
        append = out.append
        for j, q in enumerate(picked):
            ob = obits[q]
            if ob:
                obs_reasons = observation_reasons(ob)
                invalid = _unavailable(obs_reasons, [], None, None)
                metrics = dict.fromkeys(names, invalid)
            else:
                obs_reasons = []
                metrics = {name: column[j] for name, column in zip(names, columns, strict=True)}
            append(
                QueryResult.model_construct(
                    query_id=qids[q],
                    k=ks[q],
                    valid=not ob,
                    reasons=obs_reasons,
                    duplicates=returned_duplicates(batch, q) if has_dup[q] else [],
                    metrics=metrics,
                )
            )
        return out

    def _metric_column(
        self,
        name: str,
        shared: dict[tuple[float, float | None], MetricValue],
        unbounded: dict[tuple[int, int, bytes], MetricValue],
        rows: Sequence[int] | None = None,
    ) -> list[MetricValue | None]:
        """Per-query :class:`MetricValue` of one measure for valid queries (None for invalid),
        of the queries at ``rows`` only when given.

        ``shared`` holds available values by (value, residual); ``unbounded`` holds
        unavailable values without bounds or conflicts, by (query, reason bits, limit).
        """
        from evalcore.contract.results import MetricValue

        m = self.metrics[name]
        available = self.available(name).tolist()
        values = m.value.tolist()
        bits = m.reason_bits.tolist()
        lower, upper = (b.tolist() for b in self.bounds(name))
        residual = [None] * len(values) if m.residual is None else m.residual.tolist()
        limit_key = m.blocking_limit.tobytes()
        if rows is None:
            blocking = self._blocking_ids(m.blocking_limit)
        else:  # the rows' units only (not cached: the cache holds every query's)
            only = np.zeros(len(values), dtype=bool)
            only[list(rows)] = True
            blocking = self._units_at(
                self._unlabeled_mask(m.blocking_limit) & only[self.ranking.query]
            )
        conflicts = self.conflict_ids(name)
        valid = self.valid.tolist()
        column: list[MetricValue | None] = []
        for q in range(len(values)) if rows is None else rows:
            if not valid[q]:
                column.append(None)
            elif available[q]:
                v, res = values[q], residual[q]
                mv = shared.get((v, res))
                if mv is None:
                    mv = shared[v, res] = MetricValue.model_construct(
                        **{**_AVAILABLE, "value": v, "residual": res}
                    )
                column.append(mv)
            else:
                lo, hi = lower[q], upper[q]  # both NaN: no bounds
                key = None
                if lo != lo and residual[q] is None and q not in conflicts:
                    key = (q, bits[q], limit_key)
                mv = unbounded.get(key) if key else None
                if mv is None:
                    mv = _unavailable(
                        METRIC_REASON_LISTS[bits[q]],
                        list(blocking.get(q, ())),
                        None if lo != lo else lo,
                        None if hi != hi else hi,
                        list(conflicts.get(q, ())),
                        residual[q],
                    )
                    if key:
                        unbounded[key] = mv
                column.append(mv)
        return column

    def blocking_ids(self, metric: str) -> dict[int, list[str]]:
        """Per query, the ``blocking_ids`` of ``metric`` that :meth:`query_results` gives an
        unavailable value of a valid query: its distinct unlabeled units before the measure's
        blocking limit, in rank order (queries without any are left out)."""
        return self._blocking_ids(self.metrics[metric].blocking_limit)

    def conflict_ids(self, metric: str) -> dict[int, list[str]]:
        """Per query, the ``conflict_ids`` of ``metric`` that :meth:`query_results` gives an
        unavailable value of a valid query (queries without any are left out)."""
        m = self.metrics[metric]
        return self._conflict_ids(m) if (m.reason_bits & CONFLICT_BIT).any() else {}

    def blocking_units(self, metric: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The ``blocking_ids`` of ``metric`` without a list per query: (the distinct unlabeled
        units below the widest blocking limit of the measures, query by query in rank order,
        decoded once; int64[n + 1]: where each query's begin; int64[n]: how many of each
        query's first block ``metric``)."""
        return (*self._unlabeled_units, self._blocking_counts(self.metrics[metric].blocking_limit))

    @cached_property
    def _unlabeled_units(self) -> tuple[list[str], np.ndarray]:
        widest = np.maximum.reduce([m.blocking_limit for m in self.metrics.values()])
        at = np.flatnonzero(self._unlabeled_mask(widest))
        starts = np.zeros(len(self.batch) + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.ranking.query[at], minlength=len(self.batch)), out=starts[1:])
        return self._names_at(at), starts

    def _blocking_counts(self, limit: np.ndarray) -> np.ndarray:
        held = self.ranking.query[self._unlabeled_mask(limit)]
        return np.bincount(held, minlength=len(self.batch))

    def _blocking_ids(self, limit: np.ndarray) -> dict[int, list[str]]:
        """Per query, the distinct unlabeled units at ranks below ``limit`` (shared by limit)."""
        key = limit.tobytes()
        found = self._blocking_cache.get(key)
        if found is None:
            units, starts = self._unlabeled_units
            found = self._blocking_cache[key] = _by_query(
                units, self._blocking_counts(limit), starts[:-1]
            )
        return found

    def _unlabeled_mask(self, limit: np.ndarray) -> np.ndarray:
        """The positions of distinct unlabeled units at ranks below ``limit`` (per query);
        made once per distinct limit (measures mostly share one) and read-only."""
        key = limit.tobytes()
        found = self._unlabeled_masks.get(key)
        if found is None:
            r = self.ranking
            found = self._unlabeled_masks[key] = r.unlabeled & r.counted & (r.rank < limit[r.query])
            found.flags.writeable = False
        return found

    def blocker_masks(self, metric: str) -> tuple[np.ndarray, np.ndarray, dict[int, list[str]]]:
        """Where the ``blocking_ids`` and ``conflict_ids`` of ``metric`` that
        :meth:`query_results` gives each query (an available value or an invalid query has
        none) are, without making them: (bool[P]: the unlabeled units' positions, bool[P]:
        the positions of the units in conflict among the packed ones, {query: the
        reference's other units in conflict, listed after those}). The dashboard counts
        and ranks unknown units from these arrays."""
        m = self.metrics[metric]
        r = self.ranking
        open_values = self.valid & ~self.available(metric)
        at_open = open_values[r.query]
        unlabeled = self._unlabeled_mask(m.blocking_limit) & at_open
        if not (m.reason_bits & CONFLICT_BIT).any():
            return unlabeled, np.zeros_like(unlabeled), {}
        conflict = self._conflict_mask(m) & at_open
        if not m.reference_conflicts:
            return unlabeled, conflict, {}
        listed = self._units_at(conflict)
        extra = {
            q: units for q, units in self._reference_conflicts(m, listed).items() if open_values[q]
        }
        return unlabeled, conflict, extra

    def _units_at(self, mask: np.ndarray) -> dict[int, list[str]]:
        """Per query, the unit IDs of the flat positions where ``mask`` holds, in rank order."""
        at = np.flatnonzero(mask)
        counts = np.bincount(self.ranking.query[at], minlength=len(self.batch))
        return _by_query(self._names_at(at), counts, np.cumsum(counts) - counts)

    def _names_at(self, at: np.ndarray) -> list[str]:
        """The unit IDs at the flat positions ``at`` (ascending)."""
        units = self.batch.top_units
        if not at.size:
            return []
        if hasattr(units, "names_at"):  # units read by flat position, in bulk
            return units.names_at(at)
        r = self.ranking
        tops: dict[int, Sequence[str]] = {}  # (a query's units made once)
        return [
            (tops[q] if q in tops else tops.setdefault(q, units[q]))[j]
            for q, j in zip(r.query[at].tolist(), (r.rank[at] - 1).tolist(), strict=True)
        ]

    def _conflict_ids(self, m: MeasureArrays) -> dict[int, list[str]]:
        """Per query, the units in conflict that block ``m``: those in 1..k before its
        blocking limit (rank order), then, for a measure of the whole reference set, the
        other reference units in conflict (input order)."""
        out = self._units_at(self._conflict_mask(m))
        if m.reference_conflicts:
            for q, units in self._reference_conflicts(m, out).items():
                out.setdefault(q, []).extend(units)
        return out

    def _conflict_mask(self, m: MeasureArrays) -> np.ndarray:
        """The positions of distinct units in conflict that block ``m`` in 1..k."""
        r = self.ranking
        thr = m.threshold
        blocks = r.conflict & r.counted & (r.rank < m.blocking_limit[r.query])
        if m.conflict_rule == "relevance":
            blocks &= (r.low < thr) & (r.high >= thr)
        return blocks

    def _reference_conflicts(
        self, m: MeasureArrays, listed: dict[int, list[str]]
    ) -> dict[int, list[str]]:
        """Per query, the reference units in conflict blocking ``m`` that ``listed`` does not
        hold yet (input order, each once)."""
        thr = m.threshold
        out: dict[int, list[str]] = {}
        for q, unit, code in self.batch.conflict_labels:
            if m.conflict_rule == "relevance" and not (
                CODE_LOW[code + 1] < thr <= CODE_HIGH[code + 1]
            ):
                continue
            if unit not in listed.get(q, ()) and unit not in out.get(q, ()):
                out.setdefault(q, []).append(unit)
        return out

    def to_report(self, diagnostics: Diagnostics | None = None) -> EvaluationReport:
        """The full report; ``diagnostics`` (e.g. tied pairs from a reader) is kept and
        ``returned_duplicates`` is set from the batch."""
        from evalcore.contract.results import Diagnostics, EvaluationReport

        diag = (diagnostics or Diagnostics()).model_copy(
            update={"returned_duplicates": self.n_returned_duplicates}
        )
        queries = self.query_results()
        return EvaluationReport.model_construct(
            protocol=self.protocol,
            queries=queries,
            aggregates=self.aggregates(),
            diagnostics=diag,
        )


def _by_query(names: list[str], counts: np.ndarray, starts: np.ndarray) -> dict[int, list[str]]:
    """Per query with any, its ``counts[q]`` names from ``names[starts[q]]`` on."""
    listed = zip(starts.tolist(), counts.tolist(), strict=True)
    return {q: names[a : a + c] for q, (a, c) in enumerate(listed) if c}


_AVAILABLE = {
    "status": "available",
    "value": None,
    "reasons": [],
    "blocking_ids": [],
    "lower": None,
    "upper": None,
    "conflict_ids": [],
    "residual": None,
}


def _unavailable(
    reasons: list[str],
    blocking: list[str],
    lower: float | None,
    upper: float | None,
    conflict_ids: list[str] | None = None,
    residual: float | None = None,
) -> MetricValue:
    from evalcore.contract.results import MetricValue

    return MetricValue.model_construct(
        status="unavailable",
        value=None,
        reasons=list(reasons),
        blocking_ids=blocking,
        lower=lower,
        upper=upper,
        conflict_ids=conflict_ids or [],
        residual=residual,
    )


def _named(measures: Sequence[Measure] | None) -> dict[str, Measure]:
    """Output key -> measure: the section-7 keys by default, else canonical names."""
    if measures is None:
        return LEGACY_NAMES
    out: dict[str, Measure] = {}
    for m in measures:
        if not isinstance(m, Measure):
            raise TypeError(
                f"measures holds {m!r}; give evalcore.contract.measures.Measure objects "
                "(parse_measure('nDCG@10') makes one)"
            )
        out.setdefault(m.canonical, m)
    return out


def packing_depth(measures: Sequence[Measure] | None) -> int:
    """The deepest cutoff among ``measures`` (0: each observation's own k is enough)."""
    return max((m.k for m in measures or () if m.k is not None), default=0)


def compute(
    batch: ObservationBatch,
    protocol: EvalProtocol | None = None,
    measures: Sequence[Measure] | None = None,
) -> BatchResult:
    """Every measure of ``batch`` as arrays (``protocol`` defaults to the batch's).

    The batch must hold the positions each cutoff needs: pack it with
    ``min_depth=packing_depth(measures)`` (as :func:`evaluate` does).
    """
    protocol = protocol or batch.protocol
    _check_depth(batch, _named(measures))
    ranking = RankingArrays.build(batch, protocol)
    return compute_more(BatchResult(batch, protocol, observation_bits(batch), {}, ranking), measures)


def _check_depth(batch: ObservationBatch, named: dict[str, Measure]) -> None:
    deepest = packing_depth(list(named.values()))
    if deepest > batch.depth and bool((batch.k < deepest).any()):
        raise ValueError(
            f"the batch was packed to depth {batch.depth} (and each observation's k) but a "
            f"measure needs cutoff {deepest}; pack it with min_depth={deepest}"
        )


def compute_more(result: BatchResult, measures: Sequence[Measure] | None) -> BatchResult:
    """Other ``measures`` of the batch ``result`` was computed on (None: the section-7 set),
    reusing its packed batch and ranking arrays (nothing is packed or ranked again).

    Every cutoff must be at most each observation's k or the batch's depth.
    """
    named = _named(measures)
    _check_depth(result.batch, named)
    metrics = {}
    for name, m in named.items():
        threshold = result.protocol.relevance_threshold if m.rel is None else m.rel
        metrics[name] = MEASURE_MODULES[m.family](result.ranking.cut(m.k, threshold), m)
    return replace(result, metrics=metrics)


def evaluate_batch(
    batch: ObservationBatch,
    protocol: EvalProtocol | None = None,
    *,
    measures: Sequence[Measure] | None = None,
    diagnostics: Diagnostics | None = None,
) -> EvaluationReport:
    """Evaluate a packed batch (``protocol`` defaults to the one the batch carries)."""
    return compute(batch, protocol, measures).to_report(diagnostics)


def evaluate(
    observations: Sequence[Observation],
    protocol: EvalProtocol | None = None,
    *,
    measures: Sequence[Measure] | None = None,
    diagnostics: Diagnostics | None = None,
) -> EvaluationReport:
    """Evaluate validated observations under ``protocol`` (default: contract defaults).

    ``measures`` names the measures (default: the section-7 set at each
    observation's k); ``diagnostics`` carries reader facts such as tied score
    pairs into the report.
    """
    protocol = protocol or default_protocol()
    depth = packing_depth(list(_named(measures).values()))  # also checks the measures
    batch = ObservationBatch.from_observations(observations, protocol, min_depth=depth)
    return evaluate_batch(batch, protocol, measures=measures, diagnostics=diagnostics)
