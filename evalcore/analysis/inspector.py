"""The ranking inspector: one run's ranked list for one query, row by row, with why.

:func:`inspect_query` gives every returned position (those beyond ``k`` flagged: no
metric reads them) with its resolved label and who gave it (working reference only: a
frozen version holds gains, not who gave them), the automatic sources' gains marked as
automatic (never evidence), its flags, and the document title, **except** for a unit
outside the run's permitted set (only its id is shown) or a document the reader may not
read (:mod:`evalcore.store.scoping`); plus the query's :class:`QueryResult`, so the page
shows the metrics with their reasons and bounds. :func:`rank_changes` lines two runs'
lists up unit by unit (``↑3``, ``↓1``, ``=``, ``new``, ``dropped``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evalcore.compute.evaluate import evaluate
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.results import MetricValue, QueryResult
from evalcore.store.automatic_labels import unit_automatic_labels
from evalcore.store.corpus import get_documents
from evalcore.store.labels import current_judgements
from evalcore.store.observations import observations_for_runs, reference_columns
from evalcore.store.query_reads import query_text as read_query_text
from evalcore.store.resolution import resolve_query
from evalcore.store.runs import get_run, permitted_ids_for_run, run_results
from evalcore.store.scoping import document_refusals
from evalcore.store.study_handle import Study
from evalcore.store.study_measures import measure_label, shown_measures, study_measures

LabelState = Literal["labeled", "conflict", "adjudicated", "unlabeled"]


class InspectedRow(FrozenModel):
    """One returned position of a run for a query."""

    rank: int
    unit_id: str
    score: float | None
    #: The gain that counts; None when unlabeled or in conflict.
    gain: int | None
    state: LabelState
    #: annotator -> their current gain (empty for a frozen reference).
    annotators: dict[str, int]
    reviewer: str | None = None
    #: annotator -> the note of their current label (only annotators who wrote one).
    notes: dict[str, str] = {}
    #: The note of the adjudication that counts ('' when none or no note).
    reviewer_note: str = ""
    #: source -> its automatic gain (shown marked as automatic; never counts).
    automatic: dict[str, int] = {}
    unlabeled: bool
    duplicate: bool
    #: 1-based position of the unit's first occurrence when ``duplicate``.
    first_rank: int | None = None
    permission_violation: bool
    conflict: bool
    beyond_k: bool
    #: The document's title; None when unknown or withheld.
    title: str | None = None
    #: Why the title is withheld (permitted set or organisation scoping), else None.
    title_withheld: str | None = None


class QueryInspection(FrozenModel):
    """A run's ranked list for one query, and the query's metrics."""

    study_id: str
    run: str
    query_id: str
    query_text: str
    k: int
    reference: str | None
    population_complete: bool
    rows: list[InspectedRow]
    result: QueryResult
    #: the study's chosen measures and Judged beside them, by their name at the run's k
    #: (``P@10``, ``Judged@10``); a measure deeper than the run was stored to is left out
    measure_values: dict[str, MetricValue] = Field(default_factory=dict)

    def flag_counts(self) -> dict[str, int]:
        """How many positions within k carry each flag."""
        top = [r for r in self.rows if not r.beyond_k]
        return {
            "unlabeled": sum(r.unlabeled for r in top),
            "duplicate": sum(r.duplicate for r in top),
            "permission_violation": sum(r.permission_violation for r in top),
            "conflict": sum(r.conflict for r in top),
        }


def inspect_query(
    handle: Study, run_name: str, query_id: str, reference: str | None = None,
    *, query_text: str | None = None,
) -> QueryInspection:
    """The run's ranked list for ``query_id`` against the working reference or a frozen one.

    Titles of documents the handle's actor may not read (another organisation's, in a
    team-mode corpus: :mod:`evalcore.store.scoping`) are left out like those
    outside the permitted set. The run, its pinned set and the reference are read once,
    for the list and its measures alike; ``query_text``: the query's text when the caller
    has read it (else it is read).
    """
    study = handle.settings
    run = get_run(handle, run_name)
    ranked = run_results(handle, run.run_id, [query_id]).get(query_id, [])
    permitted = permitted_ids_for_run(handle.db, run)
    allowed = None if permitted is None else set(permitted)
    if reference is None:
        resolved = resolve_query(handle, query_id)
        judged = current_judgements(handle, query_id)
        ref = reference_columns(handle, None, [query_id], resolved={query_id: resolved})
    else:
        ref = reference_columns(handle, reference, [query_id])
        gains = ref.gains.get(query_id, {})
        resolved = None
        judged = {}
    complete = ref.complete.get(query_id, False)
    shown_ids = [u for u, _ in ranked if allowed is None or u in allowed]
    titles: dict[str, str] = {}
    outside = "text withheld: outside the run's permitted set (a permission_violation)"
    withheld = {u: outside for u, _ in ranked if allowed is not None and u not in allowed}
    documents = get_documents(handle.db, study.corpus_id, shown_ids).values()
    refusals = document_refusals(handle.db, handle.actor, study.corpus_id,
                                 [doc.owner_org for doc in documents])
    for doc in documents:
        refusal = refusals[doc.owner_org]
        if refusal is None:
            titles[doc.doc_id] = doc.title
        else:
            withheld[doc.doc_id] = f"text withheld: {refusal}"
    machine = unit_automatic_labels(handle, query_id)
    first_rank: dict[str, int] = {}
    rows: list[InspectedRow] = []
    for rank, (unit_id, score) in enumerate(ranked, start=1):
        duplicate = unit_id in first_rank
        first_rank.setdefault(unit_id, rank)
        annotators: dict[str, int] = {}
        reviewer = None
        notes: dict[str, str] = {}
        reviewer_note = ""
        unit_judged = judged.get(unit_id)
        if unit_judged is not None:
            notes = {a: e.note for a, e in unit_judged.labels.items() if e.note}
            if unit_judged.adjudication is not None:
                reviewer_note = unit_judged.adjudication.note
        if resolved is not None:
            label = resolved.get(unit_id)
            gain = label.gain if label is not None else None
            state: LabelState = label.state if label is not None else "unlabeled"
            if label is not None:
                annotators = dict(label.annotators)
                reviewer = label.reviewer
        else:
            gain = gains.get(unit_id)
            state = "labeled" if gain is not None else "unlabeled"
        violation = allowed is not None and unit_id not in allowed
        rows.append(
            InspectedRow(
                rank=rank,
                unit_id=unit_id,
                score=score,
                gain=gain,
                state=state,
                annotators=annotators,
                reviewer=reviewer,
                notes=notes,
                reviewer_note=reviewer_note,
                automatic=machine.get(unit_id, {}),
                unlabeled=gain is None,
                duplicate=duplicate,
                first_rank=first_rank[unit_id] if duplicate else None,
                permission_violation=violation,
                conflict=state == "conflict",
                beyond_k=rank > run.k,
                title=titles.get(unit_id),
                title_withheld=withheld.get(unit_id),
            )
        )
    protocol = study.protocol()
    observations = observations_for_runs(handle, [run], reference, [query_id], ref=ref,
                                         permitted={run.name: permitted})[run.name]
    result = evaluate(observations, protocol).queries[0]
    measures = [m for m in shown_measures(study_measures(handle)) if m.k is None or m.k <= run.k]
    chosen = evaluate(observations, protocol, measures=measures).queries[0].metrics
    measure_values = {measure_label(m, run.k): chosen[m.canonical] for m in measures}
    return QueryInspection(
        study_id=handle.study_id,
        run=run_name,
        query_id=query_id,
        query_text=read_query_text(handle, query_id) if query_text is None else query_text,
        k=run.k,
        reference=reference,
        population_complete=complete,
        rows=rows,
        result=result,
        measure_values=measure_values,
    )


class RankChange(FrozenModel):
    """How one unit moved from run A's list to run B's."""

    unit_id: str
    rank_a: int | None
    rank_b: int | None
    #: ``↑3`` (B ranks it 3 places higher), ``↓1``, ``=``, ``new`` (not in A), ``dropped`` (not in B)
    change: str


def _first_ranks(inspection: QueryInspection, within_k: bool) -> dict[str, int]:
    out: dict[str, int] = {}
    for row in inspection.rows:
        if within_k and row.beyond_k:
            continue
        out.setdefault(row.unit_id, row.rank)
    return out


def rank_changes(
    a: QueryInspection, b: QueryInspection, *, within_k: bool = True
) -> list[RankChange]:
    """B's units in B's order with their move from A, then A's units that B dropped (A's order)."""
    ranks_a = _first_ranks(a, within_k)
    ranks_b = _first_ranks(b, within_k)
    out: list[RankChange] = []
    for unit_id, rank_b in ranks_b.items():
        rank_a = ranks_a.get(unit_id)
        if rank_a is None:
            change = "new"
        elif rank_a == rank_b:
            change = "="
        elif rank_b < rank_a:
            change = f"↑{rank_a - rank_b}"
        else:
            change = f"↓{rank_b - rank_a}"
        out.append(RankChange(unit_id=unit_id, rank_a=rank_a, rank_b=rank_b, change=change))
    for unit_id, rank_a in ranks_a.items():
        if unit_id not in ranks_b:
            out.append(RankChange(unit_id=unit_id, rank_a=rank_a, rank_b=None, change="dropped"))
    return out
