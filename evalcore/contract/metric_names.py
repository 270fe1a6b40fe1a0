"""The section-7 metric names and their readable labels (no pydantic: the metric computer
reads them on the command line's fast start-up; :mod:`evalcore.contract.results` re-exports
them beside the report models)."""

from typing import Literal

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
