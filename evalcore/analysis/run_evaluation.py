"""Evaluating a stored run: its packed evidence (:func:`pack_stored_run`, from the study's
shared evidence) through the metric computer. The store never computes a metric; reports,
the Compare page and the CLI's store source evaluate here; the live dashboard keeps the
same numbers incrementally.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from evalcore.analysis.decision import depth_problems
from evalcore.analysis.shared_evidence import shared_evidence
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import evaluate_batch, packing_depth
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import Measure
from evalcore.contract.results import Diagnostics, EvaluationReport
from evalcore.store.observations import RunColumns, run_columns, run_tied_score_pairs
from evalcore.store.population import study_population
from evalcore.store.study_handle import Study


def evaluate_run(
    study: Study, run_name: str, reference: str | None = None, protocol: EvalProtocol | None = None
) -> EvaluationReport:
    """Evaluate a stored run against the working reference or a frozen version.

    ``protocol`` defaults to the study's threshold and gain mode.
    """
    return evaluate_run_measures(study, run_name, reference, protocol)[0]


def evaluate_run_measures(
    study: Study,
    run_name: str,
    reference: str | None = None,
    protocol: EvalProtocol | None = None,
    measures: Sequence[Measure] = (),
    *,
    query_ids: Sequence[str] | None = None,
) -> tuple[EvaluationReport, EvaluationReport | None]:
    """:func:`evaluate_run` and, with ``measures``, the report of those measures, for a caller
    that authorised the read already (``query_ids``: a resolved query set, else the run's
    queries); ValueError for a measure whose cutoff is past the run's stored depth."""
    if protocol is None:
        protocol = study.settings.protocol()
    run = pack_stored_run(study, run_name, reference, protocol, query_ids=query_ids)
    problems = depth_problems({run_name: run.columns.run.k}, measures)
    if problems:  # ranks past the stored depth were never retrieved: not empty ones
        raise ValueError("; ".join(problems))
    chosen = (evaluate_batch(run.packed(packing_depth(measures)), protocol,
                             measures=list(measures), diagnostics=run.diagnostics)
              if measures else None)
    return evaluate_batch(run.packed(), protocol, diagnostics=run.diagnostics), chosen


@dataclass(frozen=True)
class StoredRun:
    """A stored run's side of its evaluation, ready to pack: its columns, the protocol and
    the reader's diagnostics (tied score pairs, the corpus size note)."""

    columns: RunColumns
    protocol: EvalProtocol
    diagnostics: Diagnostics

    def packed(self, min_depth: int = 0) -> ObservationBatch:
        """The run's batch, positions 1..max(k, ``min_depth``) of every query."""
        return self.columns.packed(self.protocol, min_depth)


def pack_stored_run(
    study: Study,
    run_name: str,
    reference: str | None = None,
    protocol: EvalProtocol | None = None,
    *,
    query_ids: Sequence[str] | None = None,
) -> StoredRun:
    """The stored run against the working reference or the frozen version ``reference`` (the
    study's shared evidence, :func:`evalcore.analysis.shared_evidence.shared_evidence`),
    over its query set (``query_ids`` when given)."""
    evidence = shared_evidence(study, reference)
    columns = run_columns(
        study, evidence, run_name, None if query_ids is None else list(dict.fromkeys(query_ids)))
    diagnostics = Diagnostics(
        tied_score_pairs=run_tied_score_pairs(study, columns.run.run_id, columns.query_ids),
        notes=study_population(study).size_notes())
    return StoredRun(columns, protocol or study.settings.protocol(), diagnostics)
