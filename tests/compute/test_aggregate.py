"""Aggregates over a query set (contract section 6)."""

import numpy as np
import pytest

from evalcore.compute.aggregate import aggregate_arrays, no_queries
from evalcore.compute.evaluate import evaluate
from evalcore.contract.observation import Label, Observation
from evalcore.contract.results import METRICS

LABELS = [
    Label(id="A", gain=2),
    Label(id="X", gain=0),
    Label(id="B", gain=1),
    Label(id="C", gain=3),
]


def obs(qid, returned, *, complete=True, labels=LABELS, **extra) -> Observation:
    return Observation(
        query_id=qid,
        k=3,
        returned_ids=returned,
        labels=labels,
        population_complete=complete,
        **extra,
    )



def test_mean_when_every_query_is_available():
    report = evaluate(
        [
            obs("q1", ["A", "X", "B"]),
            obs("q2", ["X", "C", "Q"], labels=[*LABELS, Label(id="Q", gain=0)]),
        ]
    )
    agg = report.aggregates["precision"]
    assert agg.available and agg.value == pytest.approx((2 / 3 + 1 / 3) / 2)
    assert (agg.n_queries, agg.n_available, agg.n_missing, agg.reasons) == (2, 2, 0, {})
    assert report.aggregates["reciprocal_rank"].value == pytest.approx((1 + 1 / 2) / 2)


def test_one_unavailable_query_makes_the_aggregate_unavailable_with_counts_and_bounds():
    report = evaluate([obs("q1", ["A", "X", "B"]), obs("q2", ["Y", "A", "Z"])])
    agg = report.aggregates["precision"]
    assert agg.status == "unavailable" and agg.value is None
    assert (agg.n_queries, agg.n_available, agg.n_missing) == (2, 1, 1)
    assert agg.reasons == {"unlabeled_returned": 1}
    # q1 contributes its value to both bounds; q2 has [1/3, 1]
    assert agg.lower == pytest.approx((2 / 3 + 1 / 3) / 2)
    assert agg.upper == pytest.approx((2 / 3 + 1) / 2)
    dumped = agg.model_dump(mode="json")
    assert dumped["value"] is None and "lower" in dumped


def test_no_bounds_when_a_missing_query_has_none():
    report = evaluate([obs("q1", ["Y", "A", "Z"]), obs("q2", ["A"], scan_complete=False)])
    agg = report.aggregates["precision"]
    assert agg.reasons == {"unlabeled_returned": 1, "partial_scan": 1}
    assert agg.lower is None and agg.upper is None
    assert "lower" not in agg.model_dump(mode="json")


def test_reason_counts_count_every_reason_of_every_missing_query():
    report = evaluate(
        [
            obs("q1", ["Y", "A"], complete=False),
            obs("q2", ["A", "X", "B"], complete=False),
            obs("q3", ["A", "X", "B"]),
        ]
    )
    agg = report.aggregates["recall"]
    assert agg.reasons == {"unlabeled_returned": 1, "population_incomplete": 2}
    assert (agg.n_available, agg.n_missing) == (1, 2)


def test_empty_query_set_is_unavailable_no_queries():
    empty = np.zeros(0)
    assert aggregate_arrays(empty.astype(bool), empty, empty, empty, {}) == no_queries()
    agg = evaluate([]).aggregates
    assert set(agg) == set(METRICS)
    for a in agg.values():
        assert a.status == "unavailable" and a.reasons == {"no_queries": 1}
        assert (a.n_queries, a.n_available, a.n_missing) == (0, 0, 0)


def test_aggregate_arrays_by_hand():
    nan = np.nan
    agg = aggregate_arrays(
        np.array([True, False]),
        np.array([0.5, nan]),
        np.array([nan, 0.0]),
        np.array([nan, 1.0]),
        {"unlabeled_returned": 1},
    )
    assert (
        agg.value is None and agg.lower == pytest.approx(0.25) and agg.upper == pytest.approx(0.75)
    )
    assert agg.reasons == {"unlabeled_returned": 1} and (agg.n_available, agg.n_missing) == (1, 1)
    both = aggregate_arrays(
        np.array([True, True]), np.array([0.5, 1.0]), np.full(2, nan), np.full(2, nan), {}
    )
    assert both.value == pytest.approx(0.75)
    # a missing query without bounds: no aggregate bounds
    unbounded = aggregate_arrays(
        np.array([True, False]),
        np.array([0.5, nan]),
        np.full(2, nan),
        np.full(2, nan),
        {"population_incomplete": 1},
    )
    assert unbounded.lower is None and unbounded.upper is None
