"""The blocking list: counting, ordering, ties, and the no-label (missing_reference) case."""

from hypothesis import given
from hypothesis import strategies as st

from evalcore.compute.evaluate import evaluate
from evalcore.contract.observation import Label, Observation
from tests.blocking_oracle import merge_blocking, query_blocking, query_blocking_keys


def _result(query_id, returned, labels, complete=False, k=None):
    obs = Observation(
        query_id=query_id,
        k=k or len(returned),
        returned_ids=returned,
        labels=[Label(id=u, gain=g) for u, g in labels.items()],
        population_complete=complete,
    )
    return evaluate([obs]).queries[0]


def _ranked(query_id, returned, labels, complete=False):
    return (_result(query_id, returned, labels, complete), returned)


def test_sole_blocker_unlocks_precision_and_rr_in_each_run() -> None:
    # A and B labeled; X is the only unlabeled unit: precision and RR wait only for X.
    per_run = {"r1": _ranked("q", ["A", "X", "B"], {"A": 0, "B": 1})}
    items = query_blocking("q", per_run)
    assert [(i.unit_id, i.unlocks, i.blocks, i.best_rank) for i in items] == [("X", 2, 4, 2)]


def test_unlocks_before_blocks_then_rank_then_ids() -> None:
    per_run = {
        # r1: X alone blocks precision; RR blocked by X only (A is non-relevant, X before B)
        "r1": _ranked("q", ["A", "X", "B"], {"A": 0, "B": 1}),
        # r2: Y and Z block together: nobody unlocks anything
        "r2": _ranked("q", ["Y", "Z", "A"], {"A": 0, "B": 1}),
    }
    items = query_blocking("q", per_run)
    assert [i.unit_id for i in items] == ["X", "Y", "Z"]
    assert items[0].unlocks == 2 and items[0].runs == ["r1"]
    assert (items[1].unlocks, items[1].blocks, items[1].best_rank) == (0, 4, 1)
    assert (items[2].unlocks, items[2].blocks, items[2].best_rank) == (0, 4, 2)


def test_unit_returned_by_two_runs_counts_in_both() -> None:
    per_run = {
        "r1": _ranked("q", ["A", "X"], {"A": 0}),
        "r2": _ranked("q", ["X", "A"], {"A": 0}),
    }
    (item,) = query_blocking("q", per_run)
    assert item.unit_id == "X" and item.runs == ["r1", "r2"]
    assert item.blocks == 8 and item.unlocks == 4 and item.best_rank == 1


def test_query_without_labels_lists_every_top_k_unit() -> None:
    result = _result("q", ["A", "B"], {})
    assert result.reasons == ["missing_reference"]
    items = query_blocking("q", {"r": (result, ["A", "B"])})
    assert [(i.unit_id, i.unlocks, i.blocks) for i in items] == [("A", 0, 4), ("B", 0, 4)]
    single = _result("q", ["A"], {})
    (item,) = query_blocking("q", {"r": (single, ["A"])})
    assert item.unlocks == 2  # precision and RR need only A's label


def test_invalid_for_other_reasons_contributes_nothing() -> None:
    obs = Observation(query_id="q", k=2, returned_ids=["A", "B"], labels=[Label(id="A", gain=1)],
                      population_complete=False, scan_complete=False)
    result = evaluate([obs]).queries[0]
    assert query_blocking("q", {"r": (result, ["A", "B"])}) == []


def test_fully_labeled_query_has_no_blocking_items() -> None:
    assert query_blocking("q", {"r": _ranked("q", ["A", "B"], {"A": 1, "B": 0}, True)}) == []


def test_merge_orders_across_queries_and_limits() -> None:
    q1 = query_blocking_keys("q1", {"r": _ranked("q1", ["A", "X"], {"A": 0})})
    q2 = query_blocking_keys("q2", {"r": _ranked("q2", ["Y", "Z"], {"B": 1})})
    merged = merge_blocking([q2, q1])
    assert [(i.query_id, i.unit_id) for i in merged] == [("q1", "X"), ("q2", "Y"), ("q2", "Z")]
    assert [i.unit_id for i in merge_blocking([q2, q1], limit=2)] == ["X", "Y"]


@given(
    st.lists(st.sampled_from("ABCDEFG"), min_size=1, max_size=7),
    st.dictionaries(st.sampled_from("ABCDEFG"), st.integers(0, 4), max_size=7),
    st.booleans(),
)
def test_labeling_a_sole_blocker_makes_its_values_available(returned, labels, complete) -> None:
    """Property: labeling an item, whatever its gain, makes at least ``unlocks`` more
    metric values available."""
    result = _result("q", returned, labels, complete)
    items = query_blocking("q", {"r": (result, returned)})
    before = sum(v.available for v in result.metrics.values())
    for item in items:
        assert item.unit_id not in labels
        for gain in (0, 4):
            after_result = _result("q", returned, {**labels, item.unit_id: gain}, complete)
            after = sum(v.available for v in after_result.metrics.values())
            assert after - before >= item.unlocks
    keys = [i.unlocks for i in items]
    assert keys == sorted(keys, reverse=True)
