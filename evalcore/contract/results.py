"""Report models: what the metric computer returns and what every output shows.

Section 7 of the evidence contract fixes the JSON shape. An available value
carries only ``status`` and ``value``; an unavailable one carries
``value: null``, its reasons, the blocking unit IDs, and bounds where defined.
Section 9 adds ``conflict_ids`` (units in conflict that block; written only
when there are some) and section 10 RBP's ``residual`` (written on every
query that has one, available or not). The shapes are written in
:mod:`evalcore.contract.report_shapes`.
"""

from typing import Any, Literal

from pydantic import Field, model_serializer

from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.metric_names import (  # noqa: F401  (re-exported)
    AGGREGATE_LABELS,
    METRIC_LABELS,
    METRICS,
    MetricName,
)
from evalcore.contract.report_shapes import aggregate_shape, metric_shape

Status = Literal["available", "unavailable"]


class MetricValue(FrozenModel):
    """One metric of one query: a number, or unavailable with why."""

    status: Status
    value: float | None = None
    reasons: list[str] = Field(default_factory=list)
    blocking_ids: list[str] = Field(default_factory=list)
    lower: float | None = None
    upper: float | None = None
    conflict_ids: list[str] = Field(default_factory=list)
    residual: float | None = None

    @property
    def available(self) -> bool:
        return self.status == "available"

    @model_serializer(mode="plain")
    def _contract_shape(self) -> dict[str, Any]:
        return metric_shape(**self.__dict__)


class ReturnedDuplicate(FrozenModel):
    """A unit returned again at a later position: it keeps its rank, adds no gain."""

    id: str
    position: int
    first_position: int


class QueryResult(FrozenModel):
    """All metrics of one query, each independently available or not."""

    query_id: str
    k: int
    valid: bool
    reasons: list[str] = Field(default_factory=list)
    duplicates: list[ReturnedDuplicate] = Field(default_factory=list)
    metrics: dict[str, MetricValue]


class AggregateValue(FrozenModel):
    """A metric over a query set: the mean only when every query has it."""

    status: Status
    value: float | None = None
    n_queries: int
    n_available: int
    n_missing: int
    reasons: dict[str, int] = Field(default_factory=dict)
    lower: float | None = None
    upper: float | None = None

    @property
    def available(self) -> bool:
        return self.status == "available"

    @model_serializer(mode="plain")
    def _contract_shape(self) -> dict[str, Any]:
        return aggregate_shape(self.__dict__)


class Diagnostics(FrozenModel):
    """Facts about the input that change no number but a reader should see."""

    tied_score_pairs: int = 0
    returned_duplicates: int = 0
    notes: list[str] = Field(default_factory=list)


class EvaluationReport(FrozenModel):
    """The output of ``evalcore evaluate``: protocol, per-query results, aggregates."""

    protocol: EvalProtocol
    queries: list[QueryResult]
    aggregates: dict[str, AggregateValue]
    diagnostics: Diagnostics = Field(default_factory=Diagnostics)
