"""A plain, per-query reading of the evidence contract, independent of the columnar code.

Written straight from ``evidence-contract.md`` sections 3-6, 9 and 10 with loops
and sets, for the property tests to compare against. Slow on purpose: clarity
over speed.

* :func:`completed_value` is the value of a measure on an observation whose
  every needed gain is known (the definitions of sections 5 and 10).
* :func:`oracle_measures` decides availability, reasons, blocking and conflict
  IDs by the rules, values an available measure through
  :func:`completed_value`, and, for the measures whose bounds the docs call
  tight (P, R, RR, Success, RBP), computes the bounds as the exact minimum and
  maximum over every completion of the unknown relevance (each unknown unit
  relevant or not). nDCG and AP bounds are relaxations: the tests check that
  they are sound (:func:`completions`), not equal to anything here.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field

from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.measures import DEFAULT_MEASURES, Measure
from evalcore.contract.observation import Label, Observation

LEGACY = dict(zip(["precision", "recall", "ndcg", "reciprocal_rank"], DEFAULT_MEASURES, strict=True))
TIGHT = {"P", "R", "RR", "Success", "RBP", "Judged"}


@dataclass
class OracleMetric:
    available: bool
    value: float | None = None
    reasons: list[str] = field(default_factory=list)
    blocking_ids: list[str] = field(default_factory=list)
    lower: float | None = None
    upper: float | None = None
    conflict_ids: list[str] = field(default_factory=list)
    residual: float | None = None


@dataclass
class OracleQuery:
    query_id: str
    valid: bool
    reasons: list[str]
    duplicates: list[tuple[str, int, int]]
    metrics: dict[str, OracleMetric]


def _gain_value(label: int, mode: str) -> float:
    return float(label) if mode == "linear" else float(2**label - 1)


def _top(o: Observation, depth: int) -> list[str]:
    unit_of = o.unit_of or {}
    return [unit_of.get(r, r) for r in o.returned_ids[:depth]]


def _first_occurrences(units: list[str]) -> list[tuple[int, str]]:
    seen: set[str] = set()
    out = []
    for pos, unit in enumerate(units, start=1):
        if unit not in seen:
            seen.add(unit)
            out.append((pos, unit))
    return out


def completed_value(o: Observation, m: Measure, p: EvalProtocol) -> float | None:
    """The measure on ``o`` reading every label's ``gain`` (an unlabeled unit in the cut is
    0 under a compatibility policy and must not occur otherwise); None when undefined
    (no relevant unit for R/AP, IDCG 0 for nDCG, outside trec_eval)."""
    k = m.k or o.k
    thr = m.rel or p.relevance_threshold
    label = {lab.id: lab.gain for lab in o.labels}
    top = _first_occurrences(_top(o, k))
    gains = {}
    for pos, unit in top:
        g = label.get(unit)
        if g is None:
            assert p.unjudged_as_nonrelevant or p.trec_eval or m.family == "Judged"
            g = 0
        gains[pos] = g
    rel_ranks = [pos for pos, _ in top if gains[pos] >= thr]
    n_rel = sum(1 for g in label.values() if g >= thr)
    fam = m.family
    if fam == "P":
        return len(rel_ranks) / k
    if fam == "R":
        if n_rel == 0:
            return 0.0 if p.trec_eval else None
        return len(rel_ranks) / n_rel
    if fam == "RR":
        return 1 / rel_ranks[0] if rel_ranks else 0.0
    if fam == "Success":
        return 1.0 if rel_ranks else 0.0
    if fam == "AP":
        if n_rel == 0:
            return 0.0 if p.trec_eval else None
        return sum((i + 1) / r for i, r in enumerate(rel_ranks)) / n_rel
    if fam == "RBP":
        return sum((1 - m.p) * m.p ** (r - 1) for r in rel_ranks)
    if fam == "Judged":
        raise AssertionError("Judged is decided by oracle_measures")
    if fam == "nDCG":
        dcg = sum(_gain_value(gains[pos], p.gain) / math.log2(pos + 1) for pos, _ in top)
        ideal = sorted((_gain_value(g, p.gain) for g in label.values()), reverse=True)[:k]
        idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, start=1))
        if idcg == 0:
            return 0.0 if p.trec_eval else None
        return dcg / idcg
    raise AssertionError(fam)


def _unknowns(o: Observation, p: EvalProtocol, k: int) -> tuple[list[str], dict[str, tuple]]:
    """(unlabeled units among the first k, in rank order; unit -> conflict gains)."""
    label_ids = {lab.id for lab in o.labels}
    unlabeled = []
    if not (p.unjudged_as_nonrelevant or p.trec_eval):
        for _, unit in _first_occurrences(_top(o, k)):
            if unit not in label_ids:
                unlabeled.append(unit)
    conflicts = {lab.id: lab.conflict for lab in o.labels if lab.conflict is not None}
    return unlabeled, conflicts


def complete(o: Observation, choice: dict[str, int]) -> Observation:
    """``o`` with each unit of ``choice`` given that gain (added or replacing a conflict)."""
    labels = [
        Label(id=lab.id, gain=choice[lab.id]) if lab.conflict is not None else lab
        for lab in o.labels
    ]
    have = {lab.id for lab in labels}
    labels += [Label(id=u, gain=g) for u, g in choice.items() if u not in have]
    return o.model_copy(update={"labels": labels})


def completions(
    o: Observation, p: EvalProtocol, k: int, *, rng: random.Random | None = None, limit: int = 400
) -> list[Observation]:
    """Completions of the unknown gains (unlabeled units in 1..k over 0..MAX_GAIN, conflicts
    over their gains): every one when there are at most ``limit``, else the extremes (all
    lowest, all highest) and ``limit`` random ones."""
    unlabeled, conflicts = _unknowns(o, p, k)
    units = unlabeled + list(conflicts)
    options = [range(MAX_GAIN + 1)] * len(unlabeled) + [conflicts[u] for u in conflicts]
    total = math.prod(len(opt) for opt in options)
    if total <= limit:
        combos = list(itertools.product(*options))
    else:
        rng = rng or random.Random(0)
        combos = [tuple(min(opt) for opt in options), tuple(max(opt) for opt in options)]
        combos += [tuple(rng.choice(list(opt)) for opt in options) for _ in range(limit)]
    return [complete(o, dict(zip(units, combo, strict=True))) for combo in combos]


def _validity(o: Observation, depth: int) -> list[str]:
    reasons = []
    if not o.scan_complete:
        reasons.append("partial_scan")
    measured_raw = o.returned_ids[:depth]
    measured = _top(o, depth)
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
    return reasons


def _measure(o: Observation, m: Measure, p: EvalProtocol) -> OracleMetric:
    k = m.k or o.k
    thr = m.rel or p.relevance_threshold
    complete_pop = o.population_complete or p.trec_eval
    unlabeled, conflicts = _unknowns(o, p, k)
    label = {lab.id: lab for lab in o.labels}
    top = _first_occurrences(_top(o, k))
    fam = m.family

    def straddles(unit: str) -> bool:
        gains = conflicts.get(unit)
        return gains is not None and min(gains) < thr <= max(gains)

    def uncertain(unit: str) -> bool:
        return unit in unlabeled or straddles(unit)

    def sure(unit: str) -> bool:
        lab = label.get(unit)
        if lab is None:
            return False
        return (lab.gain if lab.conflict is None else min(lab.conflict)) >= thr

    if fam == "Judged":
        judged = sum(1 for _, u in top if u in label and label[u].conflict is None)
        return OracleMetric(True, judged / k)

    # Which units block, by the rules of sections 5, 9 and 10.
    if fam == "RR" or fam == "Success":
        before = []
        for _, unit in top:
            if sure(unit):
                break
            before.append(unit)
        if fam == "Success" and len(before) < len(top):
            before = []  # a certainly relevant unit: Success is known
        blockers = [u for u in before if u in unlabeled]
        conflict_ids = [u for u in before if straddles(u)]
    elif fam == "nDCG":
        blockers = list(unlabeled)
        in_top = [u for _, u in top if u in conflicts]
        conflict_ids = in_top + [u for u in conflicts if u not in in_top]
    else:
        blockers = list(unlabeled)
        conflict_ids = [u for _, u in top if straddles(u)]
        if fam in ("R", "AP"):
            conflict_ids += [u for u in conflicts if straddles(u) and u not in conflict_ids]
    reasons = []
    if blockers:
        reasons.append("unlabeled_returned")
    if conflict_ids:
        reasons.append("label_conflict")
    if fam in ("R", "nDCG", "AP"):
        if not complete_pop:
            reasons.append("population_incomplete")
        if fam == "nDCG":
            none = all(
                (lab.gain if lab.conflict is None else max(lab.conflict)) == 0 for lab in o.labels
            )
        else:
            none = not any(sure(u) or straddles(u) for u in label)
        if none and not p.trec_eval:
            reasons.append("no_relevant_units")
    out = OracleMetric(not reasons, reasons=reasons, blocking_ids=blockers,
                       conflict_ids=conflict_ids if reasons else [])
    if not reasons:
        lows = {u: 0 for u in unlabeled} | {u: min(g) for u, g in conflicts.items()}
        out.value = completed_value(complete(o, lows), m, p)
        out.blocking_ids = []
    elif set(reasons) <= {"unlabeled_returned", "label_conflict"} and fam in TIGHT:
        # Exact extremes: every unknown unit relevant or not (its lowest / highest gain).
        units = unlabeled + list(conflicts)
        options = [(0, MAX_GAIN)] * len(unlabeled) + [(min(g), max(g)) for g in conflicts.values()]
        values = [
            completed_value(complete(o, dict(zip(units, c, strict=True))), m, p)
            for c in itertools.product(*options)
        ]
        values = [v for v in values if v is not None]
        out.lower, out.upper = min(values), max(values)
    if fam == "RBP":
        lo = out.value if out.available else out.lower
        hi = out.value if out.available else out.upper
        out.residual = hi - lo + m.p**k
    return out


def oracle_measures(
    o: Observation, p: EvalProtocol, measures: dict[str, Measure], depth: int = 0
) -> OracleQuery:
    """Every named measure of one observation, packed to ``max(k, depth)``."""
    packed = max(o.k, depth)
    reasons = _validity(o, packed)
    first_at: dict[str, int] = {}
    duplicates = []
    for pos, unit in enumerate(_top(o, packed), start=1):
        if unit in first_at:
            duplicates.append((unit, pos, first_at[unit]))
        else:
            first_at[unit] = pos
    if reasons:
        return OracleQuery(
            o.query_id, False, reasons, duplicates,
            {n: OracleMetric(False, reasons=list(reasons)) for n in measures},
        )
    return OracleQuery(
        o.query_id, True, [], duplicates, {n: _measure(o, m, p) for n, m in measures.items()}
    )


def oracle_query(o: Observation, p: EvalProtocol) -> OracleQuery:
    """The section-7 default set (legacy keys) of one observation."""
    return oracle_measures(o, p, LEGACY)


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
