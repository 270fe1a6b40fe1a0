"""Evaluating a stored run: the store's observations through the metric computer.

The store builds the contract's observations of a run
(:func:`evalcore.store.observations.observations_for_run`) and never computes a
metric; this is where a stored run meets :func:`evalcore.compute.evaluate.evaluate`.
Reports (:mod:`evalcore.report.from_store`), the Compare page and the CLI's
store source use it; the live dashboard keeps the same numbers incrementally.
"""

from collections.abc import Sequence

import sqlite_utils

from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import Measure
from evalcore.contract.results import Diagnostics, EvaluationReport
from evalcore.store.observations import observations_for_run_unchecked, tied_score_pairs
from evalcore.store.population import study_population_unchecked
from evalcore.store.read_access import Viewer, require_read
from evalcore.store.studies import get_study


def population_notes(db: sqlite_utils.Database, study_id: str, *, viewer: Viewer) -> list[str]:
    """:func:`population_notes_unchecked`, if ``viewer`` may read the study."""
    require_read(db, viewer, study_id)
    return population_notes_unchecked(db, study_id)


def population_notes_unchecked(db: sqlite_utils.Database, study_id: str) -> list[str]:
    """The note that records the corpus size the study's evaluations are bounded by
    (:mod:`evalcore.store.population`; none when no size is known: outside units are then
    unbounded, as on observations without one)."""
    return study_population_unchecked(db, study_id).size_notes()


def evaluate_run(
    db: sqlite_utils.Database,
    study_id: str,
    run_name: str,
    reference: str | None = None,
    protocol: EvalProtocol | None = None,
    *,
    viewer: Viewer,
) -> EvaluationReport:
    """Evaluate a stored run against the working reference or a frozen version, if
    ``viewer`` may read the study (:func:`evalcore.store.read_access.require_read`).

    ``protocol`` defaults to the study's threshold and gain mode.
    """
    return evaluate_run_measures(db, study_id, run_name, reference, protocol, viewer=viewer)[0]


def evaluate_run_measures(
    db: sqlite_utils.Database,
    study_id: str,
    run_name: str,
    reference: str | None = None,
    protocol: EvalProtocol | None = None,
    measures: Sequence[Measure] = (),
    *,
    viewer: Viewer,
) -> tuple[EvaluationReport, EvaluationReport | None]:
    """The run on the section-7 set (as :func:`evaluate_run`) and, from the same
    observations, on ``measures`` (None when none are given), if ``viewer`` may read the
    study."""
    require_read(db, viewer, study_id)
    return evaluate_run_measures_unchecked(db, study_id, run_name, reference, protocol, measures)


def evaluate_run_measures_unchecked(
    db: sqlite_utils.Database,
    study_id: str,
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
        protocol = get_study(db, study_id).protocol()
    observations = observations_for_run_unchecked(db, study_id, run_name, reference, query_ids)
    diagnostics = Diagnostics(tied_score_pairs=tied_score_pairs(observations),
                              notes=population_notes_unchecked(db, study_id))
    chosen = (evaluate(observations, protocol, measures=list(measures), diagnostics=diagnostics)
              if measures else None)
    return evaluate(observations, protocol, diagnostics=diagnostics), chosen
