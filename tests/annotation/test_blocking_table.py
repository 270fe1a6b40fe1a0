"""The columnar blocking list and unknown counts equal the per-object path (issue 16).

Random studies of a few runs sharing one reference: units returned twice, units in
conflict (returned or only in the reference), queries with no label at all, complete
and incomplete populations, queries a run does not answer, unit ids repeated across
queries. The fast paths (:func:`evalcore.annotation.blocking_table.blocking_table`,
``RunState.unknown_counts``, ``RunState.results_at``) must give exactly what the
per-query :class:`QueryResult` objects give (``query_blocking_keys``,
``interval_text.unknown_counts``), with the unit codes made from the strings or
given (as the store hands them out: shared by queries and runs, sparse, negative).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.analysis.interval_text import unknown_counts
from evalcore.annotation.blocking import item_from_key
from evalcore.annotation.blocking_table import RunBlocking, blocking_table
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import compute, compute_more
from evalcore.compute.unit_pairs import (
    distinct_ints,
    group_heads,
    pair_codes,
    pair_groups,
    repeated_pairs,
)
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import parse_measure
from evalcore.live.dashboard import RunState
from evalcore.store.runs import RunInfo
from tests.blocking_oracle import merge_blocking, query_blocking_keys
from tests.blocking_studies import RUNS, UNITS, evaluate_study, gain, store_codes, studies


def _old_keys(queries, evaluated):
    """The per-object path: every run's QueryResults, query by query."""
    results = {name: (r.query_results(), list(pos)) for name, (r, pos) in evaluated.items()}
    per_query = []
    for i, q in enumerate(queries):
        per_run = {}
        for name, (result, _) in evaluated.items():
            made, positions = results[name]
            if i in positions:
                j = positions.index(i)
                per_run[name] = (made[j], result.batch.top_units[j])
        per_query.append(query_blocking_keys(q, per_run))
    return per_query


def _table(queries, evaluated, codes=None):
    return blocking_table(list(evaluated), {
        name: RunBlocking(result, positions, None if codes is None else codes[name])
        for name, (result, positions) in evaluated.items()
    }, queries)


@settings(max_examples=150, deadline=None)
@given(studies())
def test_table_equals_the_per_object_blocking_list(study) -> None:
    queries = study[0]
    evaluated = evaluate_study(study)
    old = _old_keys(queries, evaluated)
    table = _table(queries, evaluated)
    expected = merge_blocking(old)
    assert table.page() == expected
    assert len(table) == len(expected)
    assert table.page(0, 3) == expected[:3]
    assert table.page(2, 4) == expected[2:6]
    for i, keys in enumerate(old):
        assert table.of_query(i) == [item_from_key(key) for key in keys]


@settings(max_examples=150, deadline=None)
@given(studies(), st.integers(1, 4))
def test_pages_picked_by_a_partition_equal_the_whole_sorted_list(study, limit) -> None:
    """Every page of a table whose whole order is not made (a partition of the key picks
    its rows: ties at either edge of the page included) is that page of the full list."""
    from evalcore.annotation import blocking_table as module

    queries = study[0]
    evaluated = evaluate_study(study)
    expected = merge_blocking(_old_keys(queries, evaluated))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "_PARTIAL_FROM", 0)  # every page by a partition
        for offset in range(len(expected) + 1):
            table = _table(queries, evaluated)
            assert table.page(offset, limit) == expected[offset:offset + limit]
            assert table._order is None  # the whole list was not sorted
            for again in range(offset + 1):  # earlier pages, from the rows already picked
                assert table.page(again, limit) == expected[again:again + limit]
            later = offset + limit  # the next page: picked again
            assert table.page(later, limit) == expected[later:later + limit]


@settings(max_examples=100, deadline=None)
@given(studies(), st.permutations(UNITS), st.sampled_from([1, 3, 2**40 + 7]),
       st.integers(-(2**20), 2**20))
def test_given_unit_codes_give_the_same_list(study, units, scale, offset) -> None:
    """Codes from the store (shared by queries and runs, dense or sparse, negative) give
    what the interned strings and the per-object path give."""
    queries = study[0]
    evaluated = evaluate_study(study)
    old = _old_keys(queries, evaluated)
    codes = store_codes(evaluated, units, scale, offset)
    table = blocking_table(list(evaluated), {
        name: RunBlocking(result, positions, codes[name])
        for name, (result, positions) in evaluated.items()}, queries)
    expected = merge_blocking(old)
    assert table.page() == expected == _table(queries, evaluated).page()
    assert len(table) == len(expected)
    assert table.page(1, 2) == expected[1:3]
    for i, keys in enumerate(old):
        assert table.of_query(i) == [item_from_key(key) for key in keys]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from([0, 1, 2, 5, 2**50, -(2**50)])),
                max_size=40))
def test_pair_groups_number_the_distinct_pairs(pairs) -> None:
    query = np.asarray([q for q, _ in pairs], dtype=np.int64)
    code = np.asarray([c for _, c in pairs], dtype=np.int64)
    group = pair_groups(query, code)
    distinct = {pair for pair in pairs}
    assert group_heads(group).size == len(distinct)
    assert (group[group] == group).all()  # a group is named by one of its own entries
    same = {(a, b): group[a] == group[b] for a in range(len(pairs)) for b in range(len(pairs))}
    assert all(same[a, b] == (pairs[a] == pairs[b]) for a, b in same)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.one_of(
    st.integers(0, 30), st.sampled_from([-3, 2**50, -(2**50)]))), max_size=40))
def test_repeated_pairs_are_the_entries_after_the_first_of_their_pair(pairs) -> None:
    """Dense codes (a table of claims), sparse or negative ones (every entry sorted)."""
    query = np.asarray([q for q, _ in pairs], dtype=np.int64)
    code = np.asarray([c for _, c in pairs], dtype=np.int64)
    repeats, firsts = repeated_pairs(query, code)
    first: dict[tuple[int, int], int] = {}
    expected = {}
    for i, pair in enumerate(pairs):
        if first.setdefault(pair, i) != i:
            expected[i] = first[pair]
    assert dict(zip(repeats.tolist(), firsts.tolist(), strict=True)) == expected
    assert len(repeats) == len(expected)


def test_pair_codes_are_equal_exactly_for_the_same_query_and_unit() -> None:
    tops = [[["a", "b", "a"], ["a"]], [["b", "c"]]]
    positions = [np.asarray([0, 1]), np.asarray([0])]
    first, second = pair_codes(list(zip(positions, tops, strict=True)))
    assert first[0] == first[2] != first[1]
    assert first[3] != first[0]  # the same unit in another query
    assert second[0] == first[1] and second[1] not in set(first.tolist())


@settings(max_examples=60, deadline=None)
@given(studies(), st.data(), st.booleans())
def test_replacing_queries_equals_a_table_of_the_new_state(study, data, given) -> None:
    """Also with the store's codes given: the update's codes are read on their own."""
    queries, reference, complete, runs, protocol = study
    evaluated = evaluate_study(study)
    before = _table(queries, evaluated,
                    store_codes(evaluated, UNITS, 3, -5) if given else None)
    touched = sorted(data.draw(st.sets(st.integers(0, len(queries) - 1), min_size=1)))
    relabeled = [data.draw(st.dictionaries(st.sampled_from(UNITS), gain, max_size=6))
                 if i in touched else units for i, units in enumerate(reference)]
    after = evaluate_study((queries, relabeled, complete, runs, protocol))
    part = {}
    for name, (k, answered, rankings) in runs.items():
        rows = [j for j, i in enumerate(answered) if i in touched]
        if rows:
            batch = ObservationBatch.from_gain_maps(
                [queries[answered[j]] for j in rows], k, [rankings[j] for j in rows],
                [relabeled[answered[j]] for j in rows], [complete[answered[j]] for j in rows],
                protocol=protocol)
            result = compute(batch, protocol)
            codes = store_codes({name: (result, None)}, UNITS[::-1], 1, 0)[name] if given else None
            part[name] = RunBlocking(result, np.asarray([answered[j] for j in rows],
                                                        dtype=np.int64), codes)
    update = blocking_table(list(runs), part, queries)
    assert before.replace_queries(touched, update).page() == _table(queries, after).page()


MEASURES = [parse_measure(m) for m in ("P@2", "nDCG@3", "AP@3", "Judged@2", "RBP@3", "R@2")]


@settings(max_examples=100, deadline=None)
@given(studies(), st.data())
def test_unknown_counts_and_rows_equal_the_result_objects(study, data) -> None:
    queries = study[0]
    for name, (result, positions) in evaluate_study(study).items():
        k = int(result.batch.k[0]) if len(result.batch) else 1
        more = compute_more(result, [m for m in MEASURES if m.k <= k])
        info = RunInfo.model_construct(name=name, k=k)
        ids = [queries[i] for i in positions]
        for source in (result, more):
            state = RunState.from_batch(info, ids, source, list(result.batch.top_units))
            made = source.query_results()
            for metric in source.metrics:
                assert state.unknown_counts(metric) == unknown_counts(
                    r.metrics[metric] for r in made)
            rows = data.draw(st.lists(st.integers(0, len(ids) - 1), max_size=4)) if ids else []
            assert state.results_at(rows) == [made[i] for i in rows]


def test_a_label_after_the_counts_updates_them(tmp_path) -> None:
    """A replaced query's counts follow its new result (the dashboard's refresh path)."""
    protocol = EvalProtocol()
    batch = ObservationBatch.from_gain_maps(["q1", "q2"], 3, [["a", "b", "c"], ["a", "d"]],
                                            [{"a": 1}, {"a": 0, "d": (1, 3)}], [False, True],
                                            protocol=protocol)
    result = compute(batch, protocol)
    info = RunInfo.model_construct(name="A", k=3)
    state = RunState.from_batch(info, ["q1", "q2"], result, list(batch.top_units))
    assert state.unknown_counts("precision") == (2, 0)
    assert state.unknown_counts("ndcg") == (2, 1)
    relabeled = ObservationBatch.from_gain_maps(["q1"], 3, [["a", "b", "c"]],
                                                [{"a": 1, "b": 0, "c": 2}], [False],
                                                protocol=protocol)
    state.replace(0, compute(relabeled, protocol).query_results()[0], ["a", "b", "c"])
    assert state.unknown_counts("precision") == (0, 0)
    assert state.unknown_counts("ndcg") == (0, 1)
    assert state.unknown_counts("recall") == unknown_counts(
        r.metrics["recall"] for r in state.results)


@pytest.mark.parametrize("n_runs", [1, 3])
def test_empty_runs_give_an_empty_table(n_runs) -> None:
    protocol = EvalProtocol()
    batch = ObservationBatch.from_gain_maps(["q"], 2, [[]], [{"a": 1}], [True], protocol=protocol)
    evaluated = {name: (compute(batch, protocol), np.asarray([0])) for name in RUNS[:n_runs]}
    table = _table(["q"], evaluated)
    assert len(table) == 0 and table.page() == [] and table.of_query(0) == []


def test_unit_codes_of_another_length_are_refused() -> None:
    protocol = EvalProtocol()
    batch = ObservationBatch.from_gain_maps(["q"], 2, [["a", "b"]], [{}], [False],
                                            protocol=protocol)
    with pytest.raises(ValueError, match="2 packed positions"):
        RunBlocking(compute(batch, protocol), np.asarray([0]), np.zeros(3, dtype=np.int64))


@settings(max_examples=150, deadline=None)
@given(studies(), st.permutations(["precision", "recall", "ndcg", "reciprocal_rank"]))
def test_blocker_masks_are_the_same_in_any_order_of_the_metrics(study, order) -> None:
    """The unlabeled mask is made once per distinct blocking limit and shared by the measures
    with that limit: each measure's masks, read after the others', are its own."""
    for name, (result, _) in evaluate_study(study).items():
        fresh = {metric: evaluate_study(study)[name][0].blocker_masks(metric) for metric in order}
        for metric in order:
            unlabeled, conflict, beyond = result.blocker_masks(metric)
            assert np.array_equal(unlabeled, fresh[metric][0]), metric
            assert np.array_equal(conflict, fresh[metric][1]) and beyond == fresh[metric][2]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-3, 5000), max_size=40), st.sampled_from(["int64", "int32", "uint32"]))
def test_distinct_ints_is_np_unique(values, dtype) -> None:
    """Counted (small non-negative values) or sorted: the values and dtype np.unique gives."""
    array = np.asarray([v for v in values if v >= 0 or dtype[0] == "i"], dtype=dtype)
    got, want = distinct_ints(array), np.unique(array)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
