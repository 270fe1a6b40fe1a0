"""The live dashboard's pool coverage, counted from unit codes, equals the per-query sets.

The oracle is the computation the dashboard did before (issue 16): per query, the set of
every run's top-k unit ids, and the query's labels (a unit in conflict is labeled but has
no resolved gain). The state is filled from random studies (tests/blocking_studies.py),
with the codes made from the unit ids or given as a store hands them out, and again after
some queries were relabeled (a label re-counts only its query).
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.annotation.blocking_table import RunBlocking
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import compute
from evalcore.compute.unit_pairs import pair_codes
from evalcore.live.dashboard import Coverage, LiveDashboard, QueryCoverage, RunState
from evalcore.store.observations import ReferenceColumns
from evalcore.store.runs import RunInfo
from tests.blocking_studies import UNITS, evaluate_study, gain, store_codes, studies


def _oracle(query_id, runs, reference):
    """The per-query set computation (the dashboard's before issue 16)."""
    tops = [rs.top_units[rs.index[query_id]] for rs in runs.values() if query_id in rs.index]
    pooled = set()
    for top in tops:
        pooled.update(top)
    gains = reference.gains.get(query_id, {}) if tops else {}
    conflicting = {unit for unit, gain in gains.items() if type(gain) is not int}
    in_conflict = len(pooled & conflicting)
    return QueryCoverage(pooled=len(pooled), labeled=len(pooled & gains.keys()) - in_conflict,
                         in_conflict=in_conflict)


def _oracle_total(queries, runs, reference):
    per_query = [_oracle(q, runs, reference) for q in queries]
    return Coverage(
        queries=len(queries), pooled=sum(c.pooled for c in per_query),
        labeled=sum(c.labeled for c in per_query),
        in_conflict=sum(c.in_conflict for c in per_query),
        queries_fully_labeled=sum(1 for c in per_query if c.pooled and c.labeled == c.pooled),
        queries_complete=sum(1 for q in queries if reference.complete.get(q, False)))


def _state(study, codes=None):
    """A dashboard state of ``study`` as _full fills it (no store: the evaluation is given)."""
    queries, reference, complete, runs, protocol = study
    evaluated = evaluate_study(study)
    state = LiveDashboard("study", protocol)
    state.query_ids, state.index = queries, {q: i for i, q in enumerate(queries)}
    state.runs = {
        name: RunState.from_batch(RunInfo.model_construct(name=name, k=runs[name][0]),
                                  result.batch.query_ids, result, list(result.batch.top_units))
        for name, (result, _) in evaluated.items()}
    columns = ReferenceColumns(gains=dict(zip(queries, reference, strict=True)),
                               complete=dict(zip(queries, complete, strict=True)))
    blocking = _blocking(state, {name: r for name, (r, _) in evaluated.items()}, codes)
    state._pool = np.zeros((3, len(queries)), dtype=np.int64)
    state._complete = {}
    state._set_coverage(queries, blocking.values(), columns)
    return state, columns


def _blocking(state, evaluated, codes=None) -> dict[str, RunBlocking]:
    """Each evaluated run as the coverage reads it, with ``codes`` (as a store hands them
    out) or codes made from its unit ids (one code space for every run)."""
    positions = {name: state._positions(state.runs[name], r.batch.query_ids)
                 for name, r in evaluated.items()}
    if codes is None:
        codes = dict(zip(evaluated, pair_codes(
            [(positions[name], r.batch.top_units) for name, r in evaluated.items()]),
            strict=True))
    return {name: RunBlocking(r, positions[name], codes[name]) for name, r in evaluated.items()}


def _check(state, study, columns) -> None:
    queries = study[0]
    for q in queries:
        assert state.query_coverage(q) == _oracle(q, state.runs, columns)
    assert state.coverage() == _oracle_total(queries, state.runs, columns)


@settings(max_examples=150, deadline=None)
@given(studies(), st.permutations(UNITS), st.sampled_from([1, 2**40 + 7]),
       st.integers(-(2**20), 2**20), st.booleans())
def test_coverage_equals_the_per_query_sets(study, units, scale, offset, given) -> None:
    codes = store_codes(evaluate_study(study), units, scale, offset) if given else None
    state, columns = _state(study, codes)
    _check(state, study, columns)


@settings(max_examples=80, deadline=None)
@given(studies(), st.data())
def test_a_relabeled_query_recounts_only_itself(study, data) -> None:
    queries, reference, complete, runs, protocol = study
    state, _ = _state(study)
    touched = sorted(data.draw(st.sets(st.integers(0, len(queries) - 1), min_size=1)))
    relabeled = [data.draw(st.dictionaries(st.sampled_from(UNITS), gain, max_size=6))
                 if i in touched else units for i, units in enumerate(reference)]
    columns = ReferenceColumns(gains=dict(zip(queries, relabeled, strict=True)),
                               complete=dict(zip(queries, complete, strict=True)))
    part = {}
    for name, (k, answered, rankings) in runs.items():
        rows = [j for j, i in enumerate(answered) if i in touched]
        if rows:
            part[name] = compute(ObservationBatch.from_gain_maps(
                [queries[answered[j]] for j in rows], k, [rankings[j] for j in rows],
                [relabeled[answered[j]] for j in rows], [complete[answered[j]] for j in rows],
                protocol=protocol), protocol)
    wanted = [queries[i] for i in touched]
    state._set_coverage(wanted, _blocking(state, part).values(), columns)
    _check(state, study, columns)
