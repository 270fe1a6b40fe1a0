"""Build small EvaluationReports by hand for comparison and report tests."""

from collections import Counter

import numpy as np

from evalcore.compute.aggregate import aggregate_arrays, no_queries
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.results import (
    METRICS,
    AggregateValue,
    EvaluationReport,
    MetricValue,
    QueryResult,
)

#: A per-query cell: a float (available) or a list of reason codes (unavailable).
Cell = float | list[str]


def metric_value(cell: Cell) -> MetricValue:
    if isinstance(cell, list):
        return MetricValue(status="unavailable", reasons=cell, blocking_ids=["X"] if
                           "unlabeled_returned" in cell else [])
    return MetricValue(status="available", value=float(cell))


def report_from(
    cells: dict[str, dict[str, Cell] | Cell], k: int = 10, protocol: EvalProtocol | None = None
) -> EvaluationReport:
    """``cells[query_id]`` is one cell for every metric, or a cell per metric name."""
    queries = []
    for query_id, spec in cells.items():
        per_metric = spec if isinstance(spec, dict) else {m: spec for m in METRICS}
        metrics = {m: metric_value(per_metric.get(m, 0.0)) for m in METRICS}
        queries.append(QueryResult(query_id=query_id, k=k, valid=True, metrics=metrics))
    return EvaluationReport(
        protocol=protocol or EvalProtocol(), queries=queries, aggregates=aggregates_of(queries)
    )


def aggregates_of(queries: list[QueryResult]) -> dict[str, AggregateValue]:
    """The section-6 aggregates of hand-built results, through the one array path."""
    if not queries:
        return {m: no_queries() for m in METRICS}
    out = {}
    for m in METRICS:
        cells = [q.metrics[m] for q in queries]
        nan = float("nan")
        out[m] = aggregate_arrays(
            np.array([c.available for c in cells]),
            np.array([c.value if c.available else nan for c in cells]),
            np.array([nan if c.lower is None else c.lower for c in cells]),
            np.array([nan if c.upper is None else c.upper for c in cells]),
            Counter(r for c in cells if not c.available for r in c.reasons),
        )
    return out


#: The demo study's two runs (``evalcore demo``).
DEMO_RUNS = ["bm25-plain", "bm25-title-boost"]


def demo_store(tmp_path_factory):
    """A fresh demo store (``evalcore demo``): its path and open database."""
    from click.testing import CliRunner

    from evalcore.cli import main
    from evalcore.store.connection import open_store

    path = tmp_path_factory.mktemp("demo") / "demo.db"
    result = CliRunner().invoke(main, ["demo", "--db", str(path)])
    assert result.exit_code == 0, result.output
    return path, open_store(path)
