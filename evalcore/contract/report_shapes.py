"""The JSON shapes of a report's values (contract section 7), as plain functions.

The report models (:mod:`evalcore.contract.results`) serialise through these, and so does
the command line's JSON written without the models (:mod:`evalcore.api.report_text`):
one rule for both. An available value carries only ``status`` and ``value``; an
unavailable one ``value: null``, its reasons, the blocking unit IDs, ``conflict_ids``
when there are some and bounds when both are defined; RBP's ``residual`` is written
whenever there is one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def metric_shape(
    status: str,
    value: float | None,
    reasons: Sequence[str],
    blocking_ids: Sequence[str],
    conflict_ids: Sequence[str],
    lower: float | None,
    upper: float | None,
    residual: float | None,
) -> dict[str, Any]:
    """One metric of one query."""
    if status == "available":
        out: dict[str, Any] = {"status": "available", "value": value}
    else:
        out = {
            "status": "unavailable",
            "value": None,
            "reasons": list(reasons),
            "blocking_ids": list(blocking_ids),
        }
        if conflict_ids:
            out["conflict_ids"] = list(conflict_ids)
        if lower is not None and upper is not None:
            out["lower"] = lower
            out["upper"] = upper
    if residual is not None:
        out["residual"] = residual
    return out


def aggregate_shape(fields: Mapping[str, Any]) -> dict[str, Any]:
    """One metric over a query set, from the fields of an ``AggregateValue``."""
    out: dict[str, Any] = {
        "status": fields["status"],
        "value": fields["value"],
        "n_queries": fields["n_queries"],
        "n_available": fields["n_available"],
        "n_missing": fields["n_missing"],
        "reasons": dict(fields["reasons"]),
    }
    lower, upper = fields.get("lower"), fields.get("upper")
    if lower is not None and upper is not None:
        out["lower"] = lower
        out["upper"] = upper
    return out
