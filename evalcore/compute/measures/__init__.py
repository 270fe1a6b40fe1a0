"""The measure catalogue over packed arrays: each family's
``compute(cut, measure) -> MeasureArrays`` over a
:class:`~evalcore.compute.measures.ranking.Cut` (positions 1..k under one threshold).
Adding a measure is adding its function and an entry here.

:data:`LEGACY_NAMES` maps the section-7 output keys to the default measures.
"""

from collections.abc import Callable

from evalcore.compute.measures import average_precision, ndcg, recall, top_k
from evalcore.compute.measures.base import MeasureArrays
from evalcore.compute.measures.ranking import Cut, RankingArrays
from evalcore.contract.measures import DEFAULT_MEASURES, Measure
from evalcore.contract.metric_names import METRICS

MEASURE_MODULES: dict[str, Callable[[Cut, Measure], MeasureArrays]] = {
    "P": top_k.precision,
    "R": recall.compute,
    "nDCG": ndcg.compute,
    "RR": top_k.reciprocal_rank,
    "AP": average_precision.compute,
    "Success": top_k.success,
    "Judged": top_k.judged,
    "RBP": top_k.rbp,
}

#: Section-7 output key -> the default measure it reports (each observation's own k).
LEGACY_NAMES: dict[str, Measure] = dict(zip(METRICS, DEFAULT_MEASURES, strict=True))

__all__ = ["LEGACY_NAMES", "MEASURE_MODULES", "Cut", "MeasureArrays", "RankingArrays"]
