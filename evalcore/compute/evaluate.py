"""The metric computer: observations in, an :class:`EvaluationReport` out.

:func:`evaluate` packs observations into an
:class:`~evalcore.compute.batch.ObservationBatch` and calls :func:`evaluate_batch`.
:func:`compute` stops before building report objects and returns a
:class:`BatchResult` of arrays (values, availability, reason bitmasks,
bounds), for benchmarks and dashboards; ``BatchResult.to_report()`` builds the
full report. Query order in every output is input order.

When an observation is invalid (contract section 3), every metric of that
query is unavailable with the observation's reasons only, no bounds and no
blocking IDs; the query's ``valid`` is false and its ``reasons`` list them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from evalcore.compute.aggregate import aggregate_arrays
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.metrics import METRIC_MODULES, MetricArrays, RankingArrays
from evalcore.compute.metrics.base import METRIC_BITS, METRIC_REASONS, NO_LIMIT, UNLABELED_BIT
from evalcore.compute.validity import (
    OBSERVATION_BITS,
    observation_bits,
    observation_reasons,
    returned_duplicates,
)
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Observation
from evalcore.contract.reasons import OBSERVATION_REASONS
from evalcore.contract.results import (
    AggregateValue,
    Diagnostics,
    EvaluationReport,
    MetricValue,
    QueryResult,
)
from evalcore.contract.trusted_models import construct


@dataclass(frozen=True, eq=False)
class BatchResult:
    """Every metric of a batch as arrays; no per-query objects until asked."""

    batch: ObservationBatch
    protocol: EvalProtocol
    observation_bits: np.ndarray  # uint8[n], see evalcore.compute.validity.OBSERVATION_BITS
    metrics: dict[str, MetricArrays]
    ranking: RankingArrays

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
        """Per-query (lower, upper), NaN where undefined.

        Defined only when the observation is valid and ``unlabeled_returned``
        is the metric's only reason.
        """
        m = self.metrics[metric]
        ok = self.valid & (m.reason_bits == UNLABELED_BIT)
        return np.where(ok, m.lower, np.nan), np.where(ok, m.upper, np.nan)

    def reason_counts(self, metric: str) -> dict[str, int]:
        """How many queries carry each reason for ``metric`` (observation reasons first)."""
        bits = self.observation_bits
        out = {
            r.value: int(np.count_nonzero(bits & OBSERVATION_BITS[r])) for r in OBSERVATION_REASONS
        }
        mbits = self.metrics[metric].reason_bits[self.valid]
        for r in METRIC_REASONS:
            out[r.value] = int(np.count_nonzero(mbits & METRIC_BITS[r]))
        return {r: c for r, c in out.items() if c}

    def aggregates(self) -> dict[str, AggregateValue]:
        """Section-6 aggregates of every metric."""
        out = {}
        for name in self.metrics:
            lower, upper = self.bounds(name)
            out[name] = aggregate_arrays(
                self.available(name),
                self.metrics[name].value,
                lower,
                upper,
                self.reason_counts(name),
            )
        return out

    @property
    def n_returned_duplicates(self) -> int:
        return int(np.count_nonzero(self.batch.pos_dup))

    def query_results(self) -> list[QueryResult]:
        """One :class:`QueryResult` per query, in input order."""
        batch = self.batch
        n = len(batch)
        names = list(self.metrics)
        # Frozen MetricValues with equal content are shared: across queries (equal
        # values) and across metrics of one query (e.g. recall and nDCG blocked alike).
        available: dict[float, MetricValue] = {}
        unbounded: dict[tuple[int, int], MetricValue] = {}
        columns = [self._metric_column(m, available, unbounded) for m in names]
        obits = self.observation_bits.tolist()
        has_dup = (np.bincount(self.ranking.query[batch.pos_dup], minlength=n) > 0).tolist()
        ks = batch.k.tolist()
        qids = batch.query_ids
        out: list[QueryResult] = []
        append = out.append
        for q in range(n):
            ob = obits[q]
            if ob:
                obs_reasons = observation_reasons(ob)
                invalid = _unavailable(obs_reasons, [], None, None)
                metrics = dict.fromkeys(names, invalid)
            else:
                obs_reasons = []
                metrics = {name: column[q] for name, column in zip(names, columns, strict=True)}
            append(
                construct(
                    QueryResult,
                    {
                        "query_id": qids[q],
                        "k": ks[q],
                        "valid": not ob,
                        "reasons": obs_reasons,
                        "duplicates": returned_duplicates(batch, q) if has_dup[q] else [],
                        "metrics": metrics,
                    },
                )
            )
        return out

    def _metric_column(
        self,
        name: str,
        shared: dict[float, MetricValue],
        unbounded: dict[tuple[int, int], MetricValue],
    ) -> list[MetricValue | None]:
        """Per-query :class:`MetricValue` of one metric for valid queries (None for invalid).

        ``shared`` holds available values by value; ``unbounded`` holds unavailable
        values without bounds that block on every unlabeled unit, by (query, reason bits).
        """
        m = self.metrics[name]
        available = self.available(name).tolist()
        values = m.value.tolist()
        bits = m.reason_bits.tolist()
        lower, upper = (b.tolist() for b in self.bounds(name))
        limit = m.blocking_limit
        every_unit = bool((limit == NO_LIMIT).all())
        blocking = self._all_blocking_ids if every_unit else self._blocking_ids(limit)
        valid = self.valid.tolist()
        column: list[MetricValue | None] = []
        for q in range(len(values)):
            if not valid[q]:
                column.append(None)
            elif available[q]:
                v = values[q]
                mv = shared.get(v)
                if mv is None:
                    mv = shared[v] = construct(MetricValue, {**_AVAILABLE, "value": v})
                column.append(mv)
            else:
                b = bits[q]
                lo, hi = lower[q], upper[q]
                if lo != lo and every_unit:  # NaN: no bounds
                    mv = unbounded.get((q, b))
                    if mv is None:
                        mv = unbounded[q, b] = _unavailable(
                            _METRIC_REASON_LISTS[b], list(blocking.get(q, ())), None, None
                        )
                    column.append(mv)
                    continue
                column.append(
                    _unavailable(
                        _METRIC_REASON_LISTS[b],
                        list(blocking.get(q, ())),
                        None if lo != lo else lo,  # NaN -> no bound
                        None if hi != hi else hi,
                    )
                )
        return column

    @cached_property
    def _all_blocking_ids(self) -> dict[int, list[str]]:
        """Per query, every distinct unlabeled unit in 1..k (shared by several metrics)."""
        return self._blocking_ids(None)

    def _blocking_ids(self, limit: np.ndarray | None) -> dict[int, list[str]]:
        """Per query, the distinct unlabeled units in 1..k (below ``limit`` when given)."""
        r = self.ranking
        mask = r.unlabeled & r.counted
        if limit is not None:
            mask &= r.rank < limit[r.query]
        at = np.flatnonzero(mask)
        if at.size == 0:
            return {}
        query = r.query[at]
        starts = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1])))
        edges = np.append(starts, at.size).tolist()
        local = (r.rank[at] - 1).tolist()
        units = self.batch.top_units
        out: dict[int, list[str]] = {}
        for q, lo, hi in zip(query[starts].tolist(), edges[:-1], edges[1:], strict=True):
            top = units[q]
            out[q] = [top[j] for j in local[lo:hi]]
        return out

    def to_report(self, diagnostics: Diagnostics | None = None) -> EvaluationReport:
        """The full report; ``diagnostics`` (e.g. tied pairs from a reader) is kept and
        ``returned_duplicates`` is set from the batch."""
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


_AVAILABLE = {
    "status": "available",
    "value": None,
    "reasons": [],
    "blocking_ids": [],
    "lower": None,
    "upper": None,
}
#: Reason-code list of every section-5 bitmask value.
_METRIC_REASON_LISTS = [
    [r.value for r in METRIC_REASONS if b & METRIC_BITS[r]] for b in range(1 << len(METRIC_REASONS))
]


def _unavailable(
    reasons: list[str], blocking: list[str], lower: float | None, upper: float | None
) -> MetricValue:
    return construct(
        MetricValue,
        {
            "status": "unavailable",
            "value": None,
            "reasons": list(reasons),
            "blocking_ids": blocking,
            "lower": lower,
            "upper": upper,
        },
    )


def compute(batch: ObservationBatch, protocol: EvalProtocol | None = None) -> BatchResult:
    """Every metric of ``batch`` as arrays (``protocol`` defaults to the batch's)."""
    protocol = protocol or batch.protocol
    ranking = RankingArrays.build(batch, protocol)
    return BatchResult(
        batch=batch,
        protocol=protocol,
        observation_bits=observation_bits(batch),
        metrics={name: fn(ranking) for name, fn in METRIC_MODULES.items()},
        ranking=ranking,
    )


def evaluate_batch(
    batch: ObservationBatch,
    protocol: EvalProtocol | None = None,
    *,
    diagnostics: Diagnostics | None = None,
) -> EvaluationReport:
    """Evaluate a packed batch (``protocol`` defaults to the one the batch carries)."""
    return compute(batch, protocol).to_report(diagnostics)


def evaluate(
    observations: Sequence[Observation],
    protocol: EvalProtocol | None = None,
    *,
    diagnostics: Diagnostics | None = None,
) -> EvaluationReport:
    """Evaluate validated observations under ``protocol`` (default: contract defaults).

    ``diagnostics`` carries reader facts such as tied score pairs into the report.
    """
    protocol = protocol or EvalProtocol()
    return evaluate_batch(
        ObservationBatch.from_observations(observations, protocol),
        protocol,
        diagnostics=diagnostics,
    )
