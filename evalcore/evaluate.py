"""The metric computer: observations in, an :class:`EvaluationReport` out.

:func:`evaluate` packs observations into an
:class:`~evalcore.columnar.ObservationBatch` and calls :func:`evaluate_batch`.
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

import numpy as np

from evalcore.aggregate import aggregate_arrays
from evalcore.columnar import ObservationBatch
from evalcore.metrics import METRIC_MODULES, MetricArrays, RankingArrays
from evalcore.metrics.base import METRIC_BITS, METRIC_REASONS, NO_LIMIT, UNLABELED_BIT
from evalcore.observation import Observation
from evalcore.protocol import EvalProtocol
from evalcore.reasons import OBSERVATION_REASONS
from evalcore.results import (
    AggregateValue,
    Diagnostics,
    EvaluationReport,
    MetricValue,
    QueryResult,
)
from evalcore.validity import (
    OBSERVATION_BITS,
    observation_bits,
    observation_reasons,
    returned_duplicates,
)


@dataclass(frozen=True, eq=False)
class BatchResult:
    """Every metric of a batch as arrays; no per-query objects until asked."""

    batch: ObservationBatch
    protocol: EvalProtocol
    observation_bits: np.ndarray  # uint8[n], see evalcore.validity.OBSERVATION_BITS
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
        avail = {m: self.available(m) for m in names}
        value = {m: self.metrics[m].value for m in names}
        bits = {m: self.metrics[m].reason_bits for m in names}
        bounds = {m: self.bounds(m) for m in names}
        limit = {m: self.metrics[m].blocking_limit for m in names}
        obits = self.observation_bits
        has_dup = np.bincount(self.ranking.query[batch.pos_dup], minlength=n) > 0
        ks = batch.k.tolist()
        cache: dict[float, MetricValue] = {}
        out: list[QueryResult] = []
        for q in range(n):
            metrics: dict[str, MetricValue] = {}
            ob = int(obits[q])
            if ob:
                obs_reasons = observation_reasons(ob)
                for m in names:
                    metrics[m] = _unavailable(obs_reasons, [], None, None)
            else:
                obs_reasons = []
                for m in names:
                    if avail[m][q]:
                        v = float(value[m][q])
                        mv = cache.get(v)
                        if mv is None:
                            mv = cache[v] = MetricValue.model_construct(
                                status="available",
                                value=v,
                                reasons=[],
                                blocking_ids=[],
                                lower=None,
                                upper=None,
                            )
                        metrics[m] = mv
                    else:
                        b = int(bits[m][q])
                        blocking = (
                            self._blocking_ids(q, int(limit[m][q])) if b & UNLABELED_BIT else []
                        )
                        lo, hi = bounds[m][0][q], bounds[m][1][q]
                        metrics[m] = _unavailable(
                            [r.value for r in METRIC_REASONS if b & METRIC_BITS[r]],
                            blocking,
                            None if np.isnan(lo) else float(lo),
                            None if np.isnan(hi) else float(hi),
                        )
            out.append(
                QueryResult.model_construct(
                    query_id=batch.query_ids[q],
                    k=ks[q],
                    valid=not ob,
                    reasons=obs_reasons,
                    duplicates=returned_duplicates(batch, q) if has_dup[q] else [],
                    metrics=metrics,
                )
            )
        return out

    def _blocking_ids(self, q: int, limit: int) -> list[str]:
        """Distinct unlabeled units of query ``q`` at ranks below ``limit``, in rank order."""
        lo, hi = int(self.batch.pos_offsets[q]), int(self.batch.pos_offsets[q + 1])
        r = self.ranking
        mask = r.unlabeled[lo:hi] & r.counted[lo:hi]
        if limit != NO_LIMIT:
            mask &= r.rank[lo:hi] < limit
        units = self.batch.top_units[q]
        return [units[j] for j in np.flatnonzero(mask)]

    def to_report(self, diagnostics: Diagnostics | None = None) -> EvaluationReport:
        """The full report; ``diagnostics`` (e.g. tied pairs from a reader) is kept and
        ``returned_duplicates`` is set from the batch."""
        diag = (diagnostics or Diagnostics()).model_copy(
            update={"returned_duplicates": self.n_returned_duplicates}
        )
        return EvaluationReport.model_construct(
            protocol=self.protocol,
            queries=self.query_results(),
            aggregates=self.aggregates(),
            diagnostics=diag,
        )


def _unavailable(
    reasons: list[str], blocking: list[str], lower: float | None, upper: float | None
) -> MetricValue:
    return MetricValue.model_construct(
        status="unavailable",
        value=None,
        reasons=reasons,
        blocking_ids=blocking,
        lower=lower,
        upper=upper,
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
