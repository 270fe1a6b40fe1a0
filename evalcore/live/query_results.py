"""Live per-query evaluation: one query's metrics under every run of a study.

What the annotate page shows after each label. The numbers come from the
metric computer (:func:`evalcore.compute.evaluate.evaluate`) on the store's
observations (:func:`evalcore.store.observations.observations_for_run`) for
that single query, under the study's protocol.
"""

import sqlite_utils

from evalcore.compute.evaluate import evaluate
from evalcore.contract.results import QueryResult
from evalcore.store.observations import observations_for_run_unchecked
from evalcore.store.read_access import Viewer, require_read
from evalcore.store.runs import list_runs_unchecked
from evalcore.store.studies import get_study


def query_results_by_run(
    db: sqlite_utils.Database, study_id: str, query_id: str, *, viewer: Viewer
) -> dict[str, QueryResult]:
    """run name -> the query's result (every metric available or unavailable with why), if
    ``viewer`` may read the study (:func:`evalcore.store.read_access.require_read`)."""
    require_read(db, viewer, study_id)
    protocol = get_study(db, study_id).protocol()
    out: dict[str, QueryResult] = {}
    for run in list_runs_unchecked(db, study_id):
        observations = observations_for_run_unchecked(db, study_id, run.name, None, [query_id])
        report = evaluate(observations, protocol)
        out[run.name] = report.queries[0]
    return out
