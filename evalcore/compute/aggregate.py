"""Aggregates over a query set (contract section 6).

For each metric: if every query has it available, the aggregate is the
arithmetic mean (MRR for ``reciprocal_rank``). Otherwise the aggregate is
unavailable: ``value`` is null and it reports ``n_queries``, ``n_available``,
``n_missing`` and how many missing queries carry each reason (a query with two
reasons counts once for each). There is deliberately no way to average the
available subset.

Bounds: when every missing query has per-query bounds, the aggregate bounds
are the mean over all queries of ``lower`` / ``upper``, an available query
contributing its value to both. An empty query set is unavailable with
reason ``no_queries`` (counted once).

:func:`aggregate_fields` is the one implementation of the rule, over per-query
arrays (:mod:`evalcore.compute.evaluate` calls it for every measure);
:func:`aggregate_arrays` makes its model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from evalcore.contract.reasons import Reason

if TYPE_CHECKING:
    from evalcore.contract.results import AggregateValue


#: The fields of the aggregate of an empty query set.
NO_QUERIES: dict[str, Any] = {
    "status": "unavailable",
    "value": None,
    "n_queries": 0,
    "n_available": 0,
    "n_missing": 0,
    "reasons": {Reason.NO_QUERIES.value: 1},
    "lower": None,
    "upper": None,
}


def no_queries() -> AggregateValue:
    """The aggregate of an empty query set."""
    from evalcore.contract.results import AggregateValue  # (see aggregate_arrays)

    return AggregateValue(**NO_QUERIES)


def aggregate_arrays(
    available: np.ndarray,
    value: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    reason_counts: Mapping[str, int],
) -> AggregateValue:
    """One metric's aggregate from per-query arrays (see :func:`aggregate_fields`)."""
    # The model is imported here, not at start-up: the command line's JSON from TREC files
    # is written from the fields (evalcore.api.report_text) without pydantic.
    from evalcore.contract.results import AggregateValue

    return AggregateValue.model_construct(
        **aggregate_fields(available, value, lower, upper, reason_counts))


def aggregate_fields(
    available: np.ndarray,
    value: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    reason_counts: Mapping[str, int],
) -> dict[str, Any]:
    """The fields of one metric's :class:`AggregateValue` from per-query arrays.

    ``lower`` / ``upper`` are NaN where a missing query has no bounds (their
    entries for available queries are ignored). ``reason_counts`` counts the
    reasons of the missing queries.
    """
    n = int(available.size)
    if n == 0:
        return dict(NO_QUERIES, reasons=dict(NO_QUERIES["reasons"]))
    n_available = int(np.count_nonzero(available))
    out: dict[str, Any] = {
        "status": "available",
        "value": None,
        "n_queries": n,
        "n_available": n_available,
        "n_missing": n - n_available,
        "reasons": {},
        "lower": None,
        "upper": None,
    }
    if n_available == n:
        out["value"] = float(np.mean(value))
        return out
    out["status"] = "unavailable"
    out["reasons"] = {r: c for r, c in reason_counts.items() if c}
    missing = ~available
    if not (np.isnan(lower[missing]).any() or np.isnan(upper[missing]).any()):
        out["lower"] = float(np.mean(np.where(available, value, lower)))
        out["upper"] = float(np.mean(np.where(available, value, upper)))
    return out
