"""Evaluating a stored run: the store's observations through the metric computer.

The store builds the contract's observations of a run
(:func:`evalcore.store.observations.observations_for_run`) and never computes a
metric; this is where a stored run meets :func:`evalcore.compute.evaluate.evaluate`.
Reports (:mod:`evalcore.report.from_store`), the Compare page and the CLI's
store source use it; the live dashboard keeps the same numbers incrementally.
"""

from collections.abc import Sequence

from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import Measure
from evalcore.contract.results import Diagnostics, EvaluationReport
from evalcore.store.observations import observations_for_run, tied_score_pairs
from evalcore.store.population import study_population
from evalcore.store.studies import get_study
from evalcore.store.study_handle import Study


def population_notes(study: Study) -> list[str]:
    """The note that records the corpus size the study's evaluations are bounded by
    (:mod:`evalcore.store.population`; none when no size is known: outside units are then
    unbounded, as on observations without one)."""
    return study_population(study).size_notes()


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
    """:func:`evaluate_run_measures` for a caller that authorised the read already
    (``query_ids``: a resolved query set, else the run's queries)."""
    if protocol is None:
        protocol = get_study(study.db, study.study_id).protocol()
    observations = observations_for_run(study, run_name, reference, query_ids)
    diagnostics = Diagnostics(
        tied_score_pairs=tied_score_pairs(observations), notes=population_notes(study)
    )
    chosen = (evaluate(observations, protocol, measures=list(measures), diagnostics=diagnostics)
              if measures else None)
    return evaluate(observations, protocol, diagnostics=diagnostics), chosen
