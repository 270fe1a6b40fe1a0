"""A plain, per-query reading of the evidence contract, independent of the columnar code.

Written straight from ``evidence-contract.md`` sections 3-6, 9, 10 and 12 with
loops and sets, for the property tests to compare against. Slow on purpose:
clarity over speed.

* :func:`completed_value` is the value of a measure on an observation whose
  every needed gain is known (the definitions of sections 5 and 10), or on one
  :class:`Completion` of its unknowns: a gain for each unlabeled unit in 1..k and
  each conflict, and the gains of the outside units (section 12: up to
  ``U_out``, :func:`u_out`, unlabeled units outside 1..k) taken relevant.
* :func:`completions` enumerates completions: all of them for small cases
  (every outside multiset when ``U_out`` is at most 3), else the extremes and
  random ones.
* :func:`oracle_measures` decides availability, reasons, blocking and conflict
  IDs by the rules, values an available measure through
  :func:`completed_value`, says whether an unavailable one has bounds (some
  completion defines it) and, for the measures whose bounds the docs call
  tight (P, R, RR, Success, RBP), computes them as the exact minimum and
  maximum over every completion of the unknown relevance (each unknown unit
  relevant or not, every count of relevant outside units). nDCG and AP bounds
  are relaxations: the tests check that they are sound (:func:`completions`),
  not equal to anything here.
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
    #: An unavailable measure has bounds (some completion defines it); the tight ones are
    #: ``lower`` / ``upper``.
    bounded: bool = False


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


#: Unit ids of the outside units a completion adds (never a real id: ids are non-empty text
#: that readers take from files, and no strategy draws these).
OUTSIDE = "\x00outside-{}"


@dataclass(frozen=True)
class Completion:
    """One completion of an observation's unknowns: a gain for every unknown unit (unlabeled
    in 1..k, in conflict) and the gains (1..MAX_GAIN) of the outside units (unlabeled, not
    in 1..k) taken relevant."""

    gains: dict[str, int]
    outside: tuple[int, ...] = ()

    def labels(self, o: Observation) -> dict[str, int]:
        """Every unit's gain in this completion: the labels (conflicts resolved), the
        unknown units' and the outside units'."""
        out = {lab.id: lab.gain for lab in o.labels if lab.conflict is None}
        out.update(self.gains)
        out.update({OUTSIDE.format(i): g for i, g in enumerate(self.outside)})
        return out


def completed_value(o: Observation, m: Measure, p: EvalProtocol,
                    completion: Completion | None = None) -> float | None:
    """The measure on ``o`` with every needed gain known: ``o``'s labels, or a
    ``completion`` of its unknowns (an unlabeled unit in the cut is 0 under a compatibility
    policy and must not occur otherwise); None when undefined (no relevant unit for R/AP,
    IDCG 0 for nDCG, outside trec_eval)."""
    if completion is None:
        label = {lab.id: lab.gain for lab in o.labels}
    else:
        label = completion.labels(o)
    k = m.k or o.k
    thr = m.rel or p.relevance_threshold
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


def u_out(o: Observation, p: EvalProtocol, k: int) -> int | None:
    """Section 12's U_out at cutoff k: the corpus units with no label and not in 1..k (at
    least 0), None when unbounded (no corpus size); 0 on a complete population."""
    if o.population_complete or p.trec_eval:
        return 0
    if o.corpus_size is None:
        return None
    labeled = {lab.id for lab in o.labels}
    inside = {u for _, u in _first_occurrences(_top(o, k)) if u not in labeled}
    return max(0, o.corpus_size - len(labeled) - len(inside))


#: Outside units standing for "unboundedly many" (R and AP fall towards 0 as they grow).
MANY = 1000


def outside_options(u: int | None, k: int, exhaustive: int = 3) -> list[tuple[int, ...]]:
    """Gain multisets of the outside units relevant in a completion: every multiset of at
    most ``exhaustive`` units over 1..MAX_GAIN (all of them when ``U_out`` is that small),
    and the extremes: min(k, U_out) units at the highest gain (the largest IDCG@k) and
    U_out of them (:data:`MANY` when unbounded: the largest \\|R\\|)."""
    most = MANY if u is None else u
    out = [ms for y in range(min(most, exhaustive) + 1)
           for ms in itertools.combinations_with_replacement(range(1, MAX_GAIN + 1), y)]
    out += [(MAX_GAIN,) * min(k, most), (MAX_GAIN,) * most, (1,) * most]
    return list(dict.fromkeys(out))


def completions(
    o: Observation, p: EvalProtocol, k: int, *, rng: random.Random | None = None, limit: int = 400
) -> list[Completion]:
    """Completions of the unknowns (unlabeled units in 1..k over 0..MAX_GAIN, conflicts over
    their gains, outside units by :func:`outside_options`): every one when there are at
    most ``limit``, else the extremes (all lowest with no outside unit, all highest with
    each outside option) and ``limit`` random ones."""
    unlabeled, conflicts = _unknowns(o, p, k)
    units = unlabeled + list(conflicts)
    options = [range(MAX_GAIN + 1)] * len(unlabeled) + [conflicts[u] for u in conflicts]
    outside = outside_options(u_out(o, p, k), k)
    total = math.prod(len(opt) for opt in options) * len(outside)
    if total <= limit:
        return [Completion(dict(zip(units, combo, strict=True)), out)
                for combo in itertools.product(*options) for out in outside]
    rng = rng or random.Random(0)
    lowest = dict(zip(units, (min(opt) for opt in options), strict=True))
    highest = dict(zip(units, (max(opt) for opt in options), strict=True))
    done = [Completion(lowest, ())] + [Completion(highest, out) for out in outside]
    done += [Completion(lowest, out) for out in outside]
    done += [Completion({u: rng.choice(list(opt)) for u, opt in zip(units, options, strict=True)},
                        rng.choice(outside)) for _ in range(limit)]
    return done


def complete(o: Observation, completion: Completion) -> Observation:
    """``o`` completed: every unknown and outside unit labeled, the population complete."""
    labels = [Label(id=u, gain=g) for u, g in completion.labels(o).items()]
    return o.model_copy(update={"labels": labels, "population_complete": True,
                                "corpus_size": None})


def _extremes(o: Observation, m: Measure, p: EvalProtocol, k: int
              ) -> tuple[float, float] | None:
    """The exact least and greatest value over every completion where the measure is
    defined (None when none defines it), for measures that read relevance only: each
    unknown unit at its lowest or highest gain, every count 0..U_out of outside units
    relevant (their gains do not matter; R falls as their count grows, so beyond 4 only
    U_out itself, or the limit 0 of R and AP when it is unbounded, can be an extreme)."""
    unlabeled, conflicts = _unknowns(o, p, k)
    units = unlabeled + list(conflicts)
    options = [(0, MAX_GAIN)] * len(unlabeled) + [(min(g), max(g)) for g in conflicts.values()]
    u = u_out(o, p, k)
    counts = sorted({y for y in range(5) if u is None or y <= u} | ({u} if u is not None else set()))
    values = [
        completed_value(o, m, p, Completion(dict(zip(units, c, strict=True)), (MAX_GAIN,) * y))
        for c in itertools.product(*options) for y in counts
    ]
    values = [v for v in values if v is not None]
    if not values:
        return None
    if u is None and m.family in ("R", "AP"):
        values.append(0.0)  # the limit as unboundedly many outside units are relevant
    return min(values), max(values)


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
    if not o.labels and not o.population_complete and o.returned_ids:
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
        out.value = completed_value(o, m, p, Completion(lows))
        out.blocking_ids = []
    else:
        extremes = _extremes(o, m, p, k)
        out.bounded = extremes is not None
        if extremes is not None and fam in TIGHT:
            out.lower, out.upper = extremes
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
    out["bounded"] = all(m.available or m.bounded for m in ms)
    if out["bounded"] and all(m.available or m.lower is not None for m in ms):
        out["lower"] = sum(m.value if m.available else m.lower for m in ms) / len(ms)
        out["upper"] = sum(m.value if m.available else m.upper for m in ms) / len(ms)
    return out


def pair_u_out(a: Observation, b: Observation, p: EvalProtocol, k: int) -> int | None:
    """U_out of two runs' observations of one query (one reference, population and corpus):
    the corpus units with no label in neither run's 1..k."""
    if a.population_complete or p.trec_eval:
        return 0
    if a.corpus_size is None:
        return None
    labeled = {lab.id for lab in a.labels}
    inside = {u for o in (a, b) for _, u in _first_occurrences(_top(o, k)) if u not in labeled}
    return max(0, a.corpus_size - len(labeled) - len(inside))


def pair_unknowns(a: Observation, b: Observation, p: EvalProtocol, k: int
                  ) -> dict[str, tuple[int, ...]]:
    """The unknown units two runs share a completion of, with their possible gains: every
    unlabeled unit either run has in 1..k (0..MAX_GAIN) and every conflict."""
    unl_a, conflicts = _unknowns(a, p, k)
    unl_b, _ = _unknowns(b, p, k)
    out = {u: tuple(range(MAX_GAIN + 1)) for u in dict.fromkeys(unl_a + unl_b)}
    out.update({u: tuple(g) for u, g in conflicts.items()})
    return out


def pair_difference(a: Observation, b: Observation, m: Measure, p: EvalProtocol,
                    completion: Completion) -> float:
    """``A - B`` in one completion both runs share; 0 where the measure is undefined (no
    relevant unit: undefined for both runs alike)."""
    va = completed_value(a, m, p, completion)
    vb = completed_value(b, m, p, completion)
    assert (va is None) == (vb is None), "one population, one definedness"
    return 0.0 if va is None else va - vb
