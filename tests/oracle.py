"""A plain, per-query reading of the evidence contract, independent of the columnar code.

Written straight from ``evidence-contract.md`` sections 3-6 with loops and
sets, for the property tests to compare against. Slow on purpose: clarity
over speed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Observation


@dataclass
class OracleMetric:
    available: bool
    value: float | None = None
    reasons: list[str] = field(default_factory=list)
    blocking_ids: list[str] = field(default_factory=list)
    lower: float | None = None
    upper: float | None = None


@dataclass
class OracleQuery:
    query_id: str
    valid: bool
    reasons: list[str]
    duplicates: list[tuple[str, int, int]]
    metrics: dict[str, OracleMetric]


def _gain_value(label: int, mode: str) -> float:
    return float(label) if mode == "linear" else float(2**label - 1)


def oracle_query(o: Observation, p: EvalProtocol) -> OracleQuery:
    # Section 3: validity.
    reasons = []
    if not o.scan_complete:
        reasons.append("partial_scan")
    measured_raw = o.returned_ids[: o.k]
    unit_of = o.unit_of or {}
    measured = [unit_of.get(r, r) for r in measured_raw]
    if o.permitted_ids is not None:
        allowed = set(o.permitted_ids)
        for raw, unit in zip(measured_raw, measured, strict=True):
            if raw not in allowed and unit not in allowed:
                reasons.append("permission_violation")
                break
    seen_labels = set()
    for lab in o.labels:
        if lab.id in seen_labels:
            reasons.append("duplicate_reference")
            break
        seen_labels.add(lab.id)
    if not o.labels and not o.population_complete:
        reasons.append("missing_reference")

    # Section 4: duplicates.
    first_at: dict[str, int] = {}
    duplicates = []
    for pos, unit in enumerate(measured, start=1):
        if unit in first_at:
            duplicates.append((unit, pos, first_at[unit]))
        else:
            first_at[unit] = pos

    names = ["precision", "recall", "ndcg", "reciprocal_rank"]
    if reasons:
        return OracleQuery(
            o.query_id,
            False,
            reasons,
            duplicates,
            {n: OracleMetric(False, reasons=list(reasons)) for n in names},
        )

    label = {lab.id: lab.gain for lab in o.labels}
    # Positions: (rank, unit, gain or None, is_duplicate)
    positions = []
    for pos, unit in enumerate(measured, start=1):
        g = label.get(unit)
        if g is None and p.unjudged_as_nonrelevant:
            g = 0
        positions.append((pos, unit, g, first_at[unit] != pos))
    top = [(pos, unit, g) for pos, unit, g, dup in positions if not dup]
    unlabeled_units = [unit for _, unit, g in top if g is None]
    thr = p.relevance_threshold
    n_rel_top = sum(1 for _, _, g in top if g is not None and g >= thr)
    R = [u for u, g in label.items() if g >= thr]
    metrics: dict[str, OracleMetric] = {}

    # precision
    if unlabeled_units:
        metrics["precision"] = OracleMetric(
            False,
            reasons=["unlabeled_returned"],
            blocking_ids=list(unlabeled_units),
            lower=n_rel_top / o.k,
            upper=(n_rel_top + len(unlabeled_units)) / o.k,
        )
    else:
        metrics["precision"] = OracleMetric(True, n_rel_top / o.k)

    # recall
    why = []
    if unlabeled_units:
        why.append("unlabeled_returned")
    if not o.population_complete:
        why.append("population_incomplete")
    if not R:
        why.append("no_relevant_units")
    if why:
        blocking = list(unlabeled_units) if unlabeled_units else []
        metrics["recall"] = OracleMetric(False, reasons=why, blocking_ids=blocking)
    else:
        metrics["recall"] = OracleMetric(True, n_rel_top / len(R))

    # ndcg
    dcg = sum(_gain_value(g, p.gain) / math.log2(pos + 1) for pos, _, g in top if g is not None)
    ideal = sorted((_gain_value(g, p.gain) for g in label.values()), reverse=True)[: o.k]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, start=1))
    why = []
    if unlabeled_units:
        why.append("unlabeled_returned")
    if not o.population_complete:
        why.append("population_incomplete")
    if idcg == 0:
        why.append("no_relevant_units")
    if why:
        metrics["ndcg"] = OracleMetric(False, reasons=why, blocking_ids=list(unlabeled_units))
    else:
        metrics["ndcg"] = OracleMetric(True, dcg / idcg)

    # reciprocal rank
    first_rel = None
    blockers = []
    for pos, unit, g in top:
        if g is None:
            blockers.append((pos, unit))
        elif g >= thr:
            first_rel = pos
            break
    value = 1 / first_rel if first_rel else 0.0
    if blockers:
        metrics["reciprocal_rank"] = OracleMetric(
            False,
            reasons=["unlabeled_returned"],
            blocking_ids=[u for _, u in blockers],
            lower=value,
            upper=1 / blockers[0][0],
        )
    else:
        metrics["reciprocal_rank"] = OracleMetric(True, value)

    return OracleQuery(o.query_id, True, [], duplicates, metrics)


def oracle_aggregate(queries: list[OracleQuery], name: str) -> dict:
    """Section 6 for one metric, as a plain dict."""
    if not queries:
        return {"available": False, "n_queries": 0, "reasons": {"no_queries": 1}}
    ms = [q.metrics[name] for q in queries]
    n_avail = sum(1 for m in ms if m.available)
    if n_avail == len(ms):
        return {
            "available": True,
            "value": sum(m.value for m in ms) / len(ms),
            "n_queries": len(ms),
        }
    counts: dict[str, int] = {}
    for m in ms:
        if not m.available:
            for r in m.reasons:
                counts[r] = counts.get(r, 0) + 1
    out = {
        "available": False,
        "n_queries": len(ms),
        "n_available": n_avail,
        "n_missing": len(ms) - n_avail,
        "reasons": counts,
        "lower": None,
        "upper": None,
    }
    if all(m.available or m.lower is not None for m in ms):
        out["lower"] = sum(m.value if m.available else m.lower for m in ms) / len(ms)
        out["upper"] = sum(m.value if m.available else m.upper for m in ms) / len(ms)
    return out
