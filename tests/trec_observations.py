"""The reference path from TREC files to the metric computer, for tests: the files read
whole (:func:`evalcore.io.trec.read_qrels`, :func:`~evalcore.io.trec.read_run`), joined
per query in Python and made :class:`~evalcore.contract.observation.Observation` models,
which :meth:`ObservationBatch.from_observations` packs. The library joins the same files
on their doc IDs' words (:func:`evalcore.io.trec.files_input`); tests hold the two equal.

Rules (contract section 8): every qrels query becomes an observation (absent from the
run: an empty ranking, a real zero); a run query with no qrels entry gets no labels and
``population_complete=False``, hence ``missing_reference``; ``complete=True`` declares
every qrels population complete. Queries are in natural query-ID order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from evalcore.contract.observation import Observation
from evalcore.contract.query_order import natural_key
from evalcore.contract.results import Diagnostics
from evalcore.io.trec import Qrels, TrecRun


@dataclass(frozen=True, eq=False)
class TrecColumns:
    """Per-query parallel lists, ordered by query ID: the input of an observation batch."""

    query_ids: list[str]
    returned_ids: list[list[str]]
    label_ids: list[list[str]]
    label_gains: list[list[int]]
    population_complete: list[bool]


_EMPTY_IDS: list[str] = []
_EMPTY_GAINS: list[int] = []


def trec_columns(
    qrels: Qrels, run: TrecRun, *, complete: bool, query_ids: Iterable[str] | None = None
) -> TrecColumns:
    """Join qrels and run per query (see module docstring for the rules).

    ``query_ids`` restricts the join to those queries (default: every query of
    qrels or run); see :mod:`evalcore.io.trec_eval_scope`.
    """
    query_ids = sorted(
        set(qrels.doc_ids).union(run.doc_ids) if query_ids is None else query_ids, key=natural_key
    )
    q_docs, q_gains = qrels.doc_ids, qrels.gains
    r_docs = run.doc_ids
    return TrecColumns(
        query_ids=query_ids,
        returned_ids=[r_docs.get(q, _EMPTY_IDS) for q in query_ids],
        label_ids=[q_docs.get(q, _EMPTY_IDS) for q in query_ids],
        label_gains=[q_gains.get(q, _EMPTY_GAINS) for q in query_ids],
        population_complete=[complete and q in q_docs for q in query_ids],
    )


def trec_observations(qrels: Qrels, run: TrecRun, k: int, *, complete: bool) -> list[Observation]:
    """One :class:`Observation` per query of qrels or run, in natural query-ID order.

    Observations are validated (the model has a validator); their labels, checked
    by the reader, are built without a second validation
    ``returned_ids`` holds the whole ranking with its
    scores; only positions 1..k are measured.
    """
    if not (isinstance(k, int) and not isinstance(k, bool) and k >= 1):
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    cols = trec_columns(qrels, run, complete=complete)
    return [
        Observation.model_validate(
            {
                "query_id": q,
                "corpus_id": None,
                "corpus_fingerprint": None,
                "cutoff": None,
                "retrieval_unit": "document",
                "k": k,
                "returned_ids": list(returned),
                "scores": run.scores_for(q),
                "labels": [{"id": d, "gain": g} for d, g in zip(ids, gains, strict=True)],
                "population_complete": pop,
                "scan_complete": True,
                "permitted_ids": None,
                "unit_of": None,
                "reference_version": None,
            },
        )
        for q, returned, ids, gains, pop in zip(
            cols.query_ids,
            cols.returned_ids,
            cols.label_ids,
            cols.label_gains,
            cols.population_complete,
            strict=True,
        )
    ]


def trec_diagnostics(qrels: Qrels, run: TrecRun) -> Diagnostics:
    """Reader facts for the report: tied score pairs and notes on repeated rows."""
    return Diagnostics(tied_score_pairs=run.tied_score_pairs, notes=[*qrels.notes, *run.notes])
