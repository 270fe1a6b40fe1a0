"""The facts a query set is resolved from (:mod:`evalcore.analysis.query_set`): which
queries some runs are compared over, which have a relevant label in the working
reference, which each run answered, which are removed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evalcore.contract.query_order import natural_key
from evalcore.store.observations import ReferenceColumns, reference_columns
from evalcore.store.removed_queries import removed_query_ids, study_query_ids
from evalcore.store.runs import get_run
from evalcore.store.study_handle import Study


def _run_queries(study: Study, run_name: str) -> tuple[set[str], frozenset[str]]:
    """The queries the run holds a ranking for (answered or not), and those it returned at
    least one result for: one read of its packed rankings."""
    run = get_run(study, run_name)
    rows = study.db.execute(
        "SELECT query_id, unit_ids NOT IN ('', '[]') FROM run_rankings WHERE run_id = ?",
        [run.run_id],
    ).fetchall()
    return {q for q, _ in rows}, frozenset(q for q, returned in rows if returned)


@dataclass(frozen=True)
class QueryFacts:
    """What a query set of some runs is resolved from (read once, in the store)."""

    study_id: str
    #: the queries the runs are compared over (labeled or claimed in the reference, or
    #: ranked by a run), removed ones left out, in natural order
    query_ids: list[str]
    #: every query id of the study (:func:`study_query_ids`)
    study_query_ids: frozenset[str]
    #: queries with at least one relevant label in the working reference
    judged: frozenset[str]
    #: run name -> queries it returned at least one result for
    answered: dict[str, frozenset[str]]
    removed: frozenset[str]


def query_facts(
    study: Study, run_names: Sequence[str], reference: str | None = None,
    *, working: ReferenceColumns | None = None,
) -> QueryFacts:
    """:class:`QueryFacts` of ``run_names`` compared against ``reference`` (None: the
    working labels). ``working``: the study's whole working reference already read at the
    store's marks now, taken instead of a read."""
    threshold = study.settings.protocol().relevance_threshold
    if working is None:
        working = reference_columns(study, None)
    judged = frozenset(
        q
        for q, units in working.gains.items()
        if any((max(g) if isinstance(g, tuple) else g) >= threshold for g in units.values())
    )
    evaluated = working if reference is None else reference_columns(study, reference)
    per_run = {name: _run_queries(study, name) for name in run_names}
    answered = {name: queries[1] for name, queries in per_run.items()}
    removed = removed_query_ids(study)
    ranked = set().union(*(queries[0] for queries in per_run.values()))
    pool = (set(evaluated.gains) | set(evaluated.complete) | ranked) - removed
    return QueryFacts(
        study_id=study.study_id,
        query_ids=sorted(pool, key=natural_key),
        study_query_ids=frozenset(study_query_ids(study)),
        judged=judged,
        answered=answered,
        removed=removed,
    )

