"""The section-7 metric names and their readable labels (no pydantic: the metric computer
reads them on the command line's fast start-up; :mod:`evalcore.contract.results` re-exports
them beside the report models)."""

from typing import Literal

from evalcore.contract.measures import DEFAULT_MEASURES

MetricName = Literal["precision", "recall", "ndcg", "reciprocal_rank"]
METRICS: tuple[MetricName, ...] = ("precision", "recall", "ndcg", "reciprocal_rank")

#: Readable names, ir_measures style, used in tables and reports (``{k}`` is the cutoff): the
#: default measures' canonical names (:data:`~evalcore.contract.measures.DEFAULT_MEASURES`).
METRIC_LABELS: dict[MetricName, str] = {
    name: f"{measure}@{{k}}" for name, measure in zip(METRICS, DEFAULT_MEASURES, strict=True)
}
#: The aggregate of reciprocal_rank is MRR; the others keep their name.
AGGREGATE_LABELS: dict[MetricName, str] = {
    name: f"{measure.aggregate_name}@{{k}}"
    for name, measure in zip(METRICS, DEFAULT_MEASURES, strict=True)
}
