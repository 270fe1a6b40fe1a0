"""Per-query metrics over columnar arrays, one module per metric.

Each module exposes ``NAME`` and ``compute(RankingArrays) -> MetricArrays``.
:data:`METRIC_MODULES` lists them in the contract's reporting order.
"""

from collections.abc import Callable

from evalcore.compute.metrics import ndcg, precision, recall, reciprocal_rank
from evalcore.compute.metrics.base import MetricArrays
from evalcore.compute.metrics.ranking import RankingArrays
from evalcore.contract.results import METRICS

_BY_NAME = {m.NAME: m.compute for m in (precision, recall, ndcg, reciprocal_rank)}
METRIC_MODULES: dict[str, Callable[[RankingArrays], MetricArrays]] = {
    name: _BY_NAME[name] for name in METRICS
}

__all__ = ["METRIC_MODULES", "MetricArrays", "RankingArrays"]
