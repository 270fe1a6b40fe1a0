"""Evaluating a stored run: the store's observations through the metric computer.

The store builds the contract's observations of a run
(:func:`evalcore.store.observations.observations_for_run`) and never computes a
metric; this is where a stored run meets :func:`evalcore.compute.evaluate.evaluate`.
Reports (:mod:`evalcore.report.from_store`), the Compare page and the CLI's
store source use it; the live dashboard keeps the same numbers incrementally.
"""

import sqlite_utils

from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.results import Diagnostics, EvaluationReport
from evalcore.store.observations import observations_for_run, tied_score_pairs
from evalcore.store.studies import get_study


def evaluate_run(
    db: sqlite_utils.Database,
    study_id: str,
    run_name: str,
    reference: str | None = None,
    protocol: EvalProtocol | None = None,
) -> EvaluationReport:
    """Evaluate a stored run against the working reference or a frozen version.

    ``protocol`` defaults to the study's threshold and gain mode.
    """
    if protocol is None:
        protocol = get_study(db, study_id).protocol()
    observations = observations_for_run(db, study_id, run_name, reference)
    diagnostics = Diagnostics(tied_score_pairs=tied_score_pairs(observations))
    return evaluate(observations, protocol, diagnostics=diagnostics)
