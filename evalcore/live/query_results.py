"""Live per-query evaluation: one query's metrics under every run of a study.

What the annotate page shows after each label. The numbers come from the
metric computer (:func:`evalcore.compute.evaluate.evaluate`) on the store's
observations (:func:`evalcore.store.observations.observations_for_runs`) for
that single query, under the study's protocol.
"""


from evalcore.compute.evaluate import evaluate
from evalcore.contract.results import QueryResult
from evalcore.store.observations import observations_for_runs
from evalcore.store.runs import list_runs
from evalcore.store.study_handle import Study


def query_results_by_run(study: Study, query_id: str) -> dict[str, QueryResult]:
    """run name -> the query's result (every metric available or unavailable with why)."""
    protocol = study.settings.protocol()
    by_run = observations_for_runs(study, list_runs(study), None, [query_id])
    return {name: evaluate(observations, protocol).queries[0]
            for name, observations in by_run.items()}
