"""Aggregates over a query set (contract section 6)."""

import pytest
from hypothesis import given, settings

from evalcore.compute.aggregate import aggregate
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import compute, evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Label, Observation
from evalcore.contract.results import METRICS, MetricValue, QueryResult
from tests.observation_strategies import protocols, query_sets

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


def qr(qid: str, **metrics: MetricValue) -> QueryResult:
    return QueryResult(query_id=qid, k=3, valid=True, metrics=metrics)


def avail(v: float) -> MetricValue:
    return MetricValue(status="available", value=v)


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
    for agg in (aggregate([]), evaluate([]).aggregates):
        assert set(agg) == set(METRICS)
        for a in agg.values():
            assert a.status == "unavailable" and a.reasons == {"no_queries": 1}
            assert (a.n_queries, a.n_available, a.n_missing) == (0, 0, 0)


def test_aggregate_of_report_objects_by_hand():
    results = [
        qr("a", precision=avail(0.5)),
        qr(
            "b",
            precision=MetricValue(
                status="unavailable",
                reasons=["unlabeled_returned"],
                blocking_ids=["x"],
                lower=0.0,
                upper=1.0,
            ),
        ),
    ]
    agg = aggregate(results)["precision"]
    assert (
        agg.value is None and agg.lower == pytest.approx(0.25) and agg.upper == pytest.approx(0.75)
    )
    assert aggregate([qr("a", precision=avail(0.5)), qr("b", precision=avail(1.0))])[
        "precision"
    ].value == pytest.approx(0.75)


def test_aggregate_refuses_results_missing_a_metric():
    with pytest.raises(ValueError, match="has no 'recall' metric"):
        aggregate([qr("a", precision=avail(0.5), recall=avail(1.0)), qr("b", precision=avail(1.0))])


@settings(max_examples=150, deadline=None)
@given(query_sets(max_size=8), protocols)
def test_object_path_equals_array_path(obs_list, protocol):
    report = evaluate(obs_list, protocol)
    assert aggregate(report.queries) == report.aggregates


def test_batch_result_arrays_match_report():
    observations = [
        obs("q1", ["A", "X", "B"]),
        obs("q2", ["Y", "A", "Z"]),
        obs("q3", ["A"], scan_complete=False),
    ]
    result = compute(ObservationBatch.from_observations(observations), EvalProtocol())
    report = result.to_report()
    for name in METRICS:
        values = result.values(name)
        for i, q in enumerate(report.queries):
            mv = q.metrics[name]
            if mv.available:
                assert values[i] == mv.value
            else:
                assert values[i] != values[i]  # NaN
    assert result.valid.tolist() == [True, True, False]
    assert result.reason_counts("precision") == {"partial_scan": 1, "unlabeled_returned": 1}
