"""Report models: what the metric computer returns and what every output shows.

Section 7 of the evidence contract fixes the JSON shape. An available value
carries only ``status`` and ``value``; an unavailable one carries
``value: null``, its reasons, the blocking unit IDs, and bounds where defined.
Section 9 adds ``conflict_ids`` (units in conflict that block; written only
when there are some) and section 10 RBP's ``residual`` (written on every
query that has one, available or not).
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from evalcore.contract.evaluation_protocol import EvalProtocol

MetricName = Literal["precision", "recall", "ndcg", "reciprocal_rank"]
METRICS: tuple[MetricName, ...] = ("precision", "recall", "ndcg", "reciprocal_rank")

#: Readable names, ir_measures style, used in tables and reports (``{k}`` is the cutoff).
METRIC_LABELS: dict[MetricName, str] = {
    "precision": "P@{k}",
    "recall": "R@{k}",
    "ndcg": "nDCG@{k}",
    "reciprocal_rank": "RR@{k}",
}
#: The aggregate of reciprocal_rank is MRR; the others keep their name.
AGGREGATE_LABELS: dict[MetricName, str] = {
    "precision": "P@{k}",
    "recall": "R@{k}",
    "ndcg": "nDCG@{k}",
    "reciprocal_rank": "MRR@{k}",
}

Status = Literal["available", "unavailable"]


class MetricValue(BaseModel):
    """One metric of one query: a number, or unavailable with why."""

    model_config = ConfigDict(frozen=True)

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
        if self.status == "available":
            out: dict[str, Any] = {"status": "available", "value": self.value}
        else:
            out = {
                "status": "unavailable",
                "value": None,
                "reasons": list(self.reasons),
                "blocking_ids": list(self.blocking_ids),
            }
            if self.conflict_ids:
                out["conflict_ids"] = list(self.conflict_ids)
            if self.lower is not None and self.upper is not None:
                out["lower"] = self.lower
                out["upper"] = self.upper
        if self.residual is not None:
            out["residual"] = self.residual
        return out


class ReturnedDuplicate(BaseModel):
    """A unit returned again at a later position: it keeps its rank, adds no gain."""

    model_config = ConfigDict(frozen=True)

    id: str
    position: int
    first_position: int


class QueryResult(BaseModel):
    """All metrics of one query, each independently available or not."""

    model_config = ConfigDict(frozen=True)

    query_id: str
    k: int
    valid: bool
    reasons: list[str] = Field(default_factory=list)
    duplicates: list[ReturnedDuplicate] = Field(default_factory=list)
    metrics: dict[str, MetricValue]


class AggregateValue(BaseModel):
    """A metric over a query set: the mean only when every query has it."""

    model_config = ConfigDict(frozen=True)

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
        out: dict[str, Any] = {
            "status": self.status,
            "value": self.value,
            "n_queries": self.n_queries,
            "n_available": self.n_available,
            "n_missing": self.n_missing,
            "reasons": dict(self.reasons),
        }
        if self.lower is not None and self.upper is not None:
            out["lower"] = self.lower
            out["upper"] = self.upper
        return out


class Diagnostics(BaseModel):
    """Facts about the input that change no number but a reader should see."""

    model_config = ConfigDict(frozen=True)

    tied_score_pairs: int = 0
    returned_duplicates: int = 0
    notes: list[str] = Field(default_factory=list)


class EvaluationReport(BaseModel):
    """The output of ``evalcore evaluate``: protocol, per-query results, aggregates."""

    model_config = ConfigDict(frozen=True)

    protocol: EvalProtocol
    queries: list[QueryResult]
    aggregates: dict[str, AggregateValue]
    diagnostics: Diagnostics = Field(default_factory=Diagnostics)
