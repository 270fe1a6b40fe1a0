"""Live per-query evaluation: one query's metrics under every run of a study.

What the annotate page shows after each label. The numbers come from the
metric computer (:func:`evalcore.compute.evaluate.evaluate`) on the store's
observations (:func:`evalcore.store.observations.observations_for_run`) for
that single query, under the study's protocol.
"""


from evalcore.compute.evaluate import evaluate
from evalcore.contract.results import QueryResult
from evalcore.store.observations import observations_for_run
from evalcore.store.runs import list_runs
from evalcore.store.study_handle import Study


def query_results_by_run(study: Study, query_id: str) -> dict[str, QueryResult]:
    """run name -> the query's result (every metric available or unavailable with why)."""
    protocol = study.settings.protocol()
    out: dict[str, QueryResult] = {}
    for run in list_runs(study):
        observations = observations_for_run(study, run.name, None, [query_id])
        report = evaluate(observations, protocol)
        out[run.name] = report.queries[0]
    return out
