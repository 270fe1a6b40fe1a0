"""Which queries a large study's per-query chart shows: a readable subset, chosen by a rule.

Above :data:`evalcore.live.charts.SUMMARY_FROM` queries the dashboard draws each
run's distribution and offers the per-query chart for one of these subsets of at most
``n`` queries. Every subset is returned in the study's query order (the chart's axis).
Only available values are compared: an unavailable value is never ranked as if it were 0
(:func:`unavailable` lists those queries on their own).
"""

from collections.abc import Sequence

import numpy as np

from evalcore.contract.measures import Measure
from evalcore.live.dashboard import LiveDashboard

#: Queries in one subset: every query id is an axis label up to this many.
SUBSET_SIZE = 50


def _in_order(state: LiveDashboard, positions: Sequence[int]) -> list[str]:
    return [state.query_ids[i] for i in sorted(set(positions))]


def lowest(state: LiveDashboard, measure: Measure, run: str, n: int = SUBSET_SIZE) -> list[str]:
    """The ``n`` queries with the lowest available value in ``run`` (ties: query order)."""
    cols = state.measure_columns(run, measure)
    if cols is None:
        return []
    rows = np.flatnonzero(cols.available)
    order = rows[np.argsort(cols.value[rows], kind="stable")][:n]
    return _in_order(state, cols.positions[order].tolist())


def most_different(state: LiveDashboard, measure: Measure, n: int = SUBSET_SIZE) -> list[str]:
    """The ``n`` queries whose available values differ most between runs (highest minus
    lowest; only queries available in at least two runs; ties: query order)."""
    size = len(state.query_ids)
    high = np.full(size, -np.inf)
    low = np.full(size, np.inf)
    seen = np.zeros(size, dtype=np.int64)
    for run in state.run_names:
        cols = state.measure_columns(run, measure)
        if cols is None:
            continue
        at = cols.positions[cols.available]
        values = cols.value[cols.available]
        np.maximum.at(high, at, values)
        np.minimum.at(low, at, values)
        np.add.at(seen, at, 1)
    candidates = np.flatnonzero(seen >= 2)
    spread = high[candidates] - low[candidates]
    order = candidates[np.argsort(-spread, kind="stable")][:n]
    return _in_order(state, order.tolist())


def unavailable(state: LiveDashboard, measure: Measure, run: str,
                n: int = SUBSET_SIZE) -> list[str]:
    """The first ``n`` queries (query order) whose value in ``run`` is unavailable."""
    cols = state.measure_columns(run, measure)
    if cols is None:
        return []
    return _in_order(state, cols.positions[~cols.available][:n].tolist())


def page(state: LiveDashboard, number: int, n: int = SUBSET_SIZE) -> list[str]:
    """The ``number``-th page (from 1) of ``n`` queries in query order."""
    start = max(0, number - 1) * n
    return state.query_ids[start:start + n]


def n_pages(state: LiveDashboard, n: int = SUBSET_SIZE) -> int:
    return max(1, -(-len(state.query_ids) // n))
