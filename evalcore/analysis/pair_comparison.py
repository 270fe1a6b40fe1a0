"""Two runs compared per measure, in the order a lead reads it (contract section 11).

Each :class:`MeasureVerdict` holds the evidence's verdict (:mod:`evalcore.analysis.decision`)
with its interval or, when undecidable, each cause in plain words with what to do; the
head of the to-decide queue; the paired significance tests with the queries left out.
Apart, :attr:`PairComparison.compat` holds the trec_eval-compatible numbers
(:mod:`evalcore.analysis.trec_eval_numbers`), never evidence and never beside the
verdict's. The Compare page, the reports and ``evalcore compare`` all read this model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import Field

from evalcore.analysis.compare import (
    DIFFERENT_K,
    ExcludedQuery,
    MetricComparison,
    metric_comparison,
    metric_label,
)
from evalcore.analysis.decision import (
    Decision,
    EvaluatedPair,
    PairEvaluation,
    decide_measure,
    stored_pair,
)
from evalcore.analysis.decision_queue import DecideQueue, decide_queue
from evalcore.analysis.trec_eval_numbers import COMPAT_LABEL, TrecEvalCompat, trec_eval_compat
from evalcore.compute.measures.base import reason_codes
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.measures import Measure
from evalcore.contract.reasons import Reason
from evalcore.store.study_handle import Study

#: Why a measure lacks bounds on a query, and what lifts it: ``{n}`` queries, ``{s}``
#: "query has" / "queries have".
_CAUSES: dict[str, str] = {
    Reason.MISSING_REFERENCE: "{n} {s} no label at all: label any result of them",
    Reason.POPULATION_INCOMPLETE: (
        "{n} {s} a relevant set not declared complete, so the measure has no bounds there: "
        "label their results and mark each query complete on the Annotate page"
    ),
    Reason.UNLABELED_RETURNED: (
        "{n} {s} unlabeled results that cannot be bounded: label the returned results"
    ),
    Reason.LABEL_CONFLICT: (
        "{n} {s} a label in conflict that cannot be bounded: a reviewer decides it on the "
        "Annotator agreement page"
    ),
    Reason.NO_RELEVANT_UNITS: (
        "{n} {s} no relevant unit known, so the measure is undefined there: label more of "
        "their results"
    ),
    Reason.PARTIAL_SCAN: (
        "{n} {s} results from a retrieval that did not scan the whole corpus: rerun the "
        "retrieval over the whole corpus"
    ),
    Reason.PERMISSION_VIOLATION: (
        "{n} {s} a returned unit outside the permitted set: fix or re-import the run"
    ),
    Reason.DUPLICATE_REFERENCE: (
        "{n} {s} a unit labeled twice in the reference set: fix the reference"
    ),
}


class UndecidableCause(FrozenModel):
    """One reason a comparison is undecidable: on how many queries, and what to do."""

    reason: str
    n_queries: int
    text: str


class MeasureVerdict(FrozenModel):
    """One measure of the pair: the verdict, the queue, the paired tests, in that order."""

    decision: Decision
    causes: list[UndecidableCause]
    #: None when not computed (``compare_pair(..., verdicts_only=True)``)
    queue: DecideQueue | None
    paired: MetricComparison

    @property
    def measure(self) -> str:
        return self.decision.measure


class PairComparison(FrozenModel):
    """Run ``run_a`` against ``run_b`` (differences are ``A - B``) on each measure."""

    run_a: str
    run_b: str
    reference: str | None
    measures: list[MeasureVerdict]
    #: Apart from the evidence: :data:`COMPAT_LABEL`.
    compat_label: str = COMPAT_LABEL
    compat: list[TrecEvalCompat]
    #: What trec_eval's scope left out, or why no compatibility number could be computed.
    compat_notes: list[str]
    #: What the verdicts assume besides the labels: the corpus size that bounds open
    #: populations, when the store holds the study's corpus (empty: none known).
    notes: list[str] = Field(default_factory=list)


def undecidable_causes(decision: Decision) -> list[UndecidableCause]:
    """The decision's undecidable reasons, most queries first, in plain words."""
    out = []
    for reason, n in sorted(decision.undecidable_queries.items(), key=lambda i: (-i[1], i[0])):
        template = _CAUSES.get(reason, "{n} {s} the measure unavailable (" + reason + ")")
        text = template.format(n=n, s="query has" if n == 1 else "queries have")
        out.append(UndecidableCause(reason=reason, n_queries=n, text=text))
    return out


def measure_verdicts(pair: PairEvaluation, run_a: str, run_b: str, *, queue_limit: int | None,
                     queues: bool = True) -> list[MeasureVerdict]:
    """The verdict, queue (None without ``queues``) and paired tests of every measure of an
    evaluated pair."""
    ks = set(pair.result_a.batch.k.tolist()) | set(pair.result_b.batch.k.tolist())
    out = []
    for name in pair.measures:
        decision = decide_measure(pair, name, run_a, run_b)
        out.append(MeasureVerdict(
            decision=decision,
            causes=undecidable_causes(decision),
            queue=decide_queue(pair, name, limit=queue_limit) if queues else None,
            paired=_paired(pair, name, metric_label(name, ks, aggregate=False), run_a, run_b),
        ))
    return out


def _paired(pair: PairEvaluation, name: str, label: str, run_a: str,
            run_b: str) -> MetricComparison:
    """:func:`~evalcore.analysis.compare.compare_metric` of ``name`` over the pair's
    queries, read from its arrays: a query is paired where both runs have the measure at
    the same ``k``; only the excluded ones are visited one by one, for their reasons (those
    the query's :class:`~evalcore.contract.results.QueryResult` would give)."""
    ra, rb = pair.result_a, pair.result_b
    k_a, k_b = ra.batch.k, rb.batch.k
    same_k = k_a == k_b
    ok = ra.available(name) & rb.available(name) & same_k
    query_ids = pair.query_ids
    out = np.flatnonzero(~ok)
    reasons = []
    for r in (ra, rb):  # each run's reasons on the excluded queries
        avail, bits, obits = (a[out].tolist() for a in (
            r.available(name), r.metrics[name].reason_bits, r.observation_bits))
        reasons.append([[] if av else reason_codes(ob, b)
                        for av, b, ob in zip(avail, bits, obits, strict=True)])
    excluded = []
    for i, why_a, why_b, same in zip(out.tolist(), reasons[0], reasons[1],
                                     same_k[out].tolist(), strict=True):
        if not same:
            why_a, why_b = why_a + [DIFFERENT_K], why_b + [DIFFERENT_K]
        excluded.append(ExcludedQuery.model_construct(
            query_id=query_ids[i], reasons_a=why_a, reasons_b=why_b))
    rows = np.flatnonzero(ok)
    return metric_comparison(
        name, label, run_a, run_b, len(query_ids), [query_ids[i] for i in rows.tolist()],
        ra.metrics[name].value[rows].astype(np.float64),
        rb.metrics[name].value[rows].astype(np.float64), excluded)


def compare_pair(
    study: Study,
    run_a: str,
    run_b: str,
    measures: Sequence[Measure | str],
    reference: str | None = None,
    *,
    queue_limit: int | None = 10,
    verdicts_only: bool = False,
    query_ids: Sequence[str] | None = None,
) -> PairComparison:
    """Stored run ``run_a`` against ``run_b`` on each of ``measures`` (``query_ids``: a
    resolved query set, else the study's queries); ``verdicts_only``: no queues, no
    compatibility numbers."""
    return compare_evaluated_pair(
        stored_pair(study, run_a, run_b, measures, reference, query_ids=query_ids),
        reference,
        queue_limit=queue_limit,
        verdicts_only=verdicts_only,
    )


def compare_evaluated_pair(
    evaluated: EvaluatedPair,
    reference: str | None = None,
    *,
    queue_limit: int | None = 10,
    verdicts_only: bool = False,
    verdicts: PairComparison | None = None,
) -> PairComparison:
    """:func:`compare_pair` of a pair already read and evaluated (``reference`` names the
    version it was evaluated on). ``verdicts``: the ``verdicts_only`` comparison of this
    same pair, computed already: its decisions and paired tests are kept as they are (the
    same pair gives the same ones), the queues and compatibility numbers added."""
    pair, run_a, run_b = evaluated.pair, evaluated.run_a, evaluated.run_b
    compat, notes = ([], []) if verdicts_only else trec_eval_compat(
        evaluated.columns, list(pair.measures.values()), pair.protocol.relevance_threshold,
        pair.protocol.gain)
    if verdicts is None or verdicts_only:
        measures = measure_verdicts(pair, run_a, run_b, queue_limit=queue_limit,
                                    queues=not verdicts_only)
    elif ((verdicts.run_a, verdicts.run_b, verdicts.reference) != (run_a, run_b, reference)
          or [m.measure for m in verdicts.measures] != list(pair.measures)):
        raise ValueError("internal: the verdicts given are not those of this pair")
    else:
        measures = [m.model_copy(update={"queue": decide_queue(pair, m.measure,
                                                               limit=queue_limit)})
                    for m in verdicts.measures]
    return PairComparison(
        run_a=run_a, run_b=run_b, reference=reference, measures=measures,
        compat=compat, compat_notes=notes, notes=evaluated.notes(),
    )
