"""The evidence contract's per-query rules, one test per reason code and edge case."""

import math

import pytest

from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Observation
from evalcore.contract.results import MetricValue, QueryResult


def obs(returned, labels, *, k=3, complete=True, **extra) -> Observation:
    return Observation(
        query_id=extra.pop("query_id", "q1"),
        k=k,
        returned_ids=list(returned),
        labels=[{"id": i, "gain": g} for i, g in labels],
        population_complete=complete,
        **extra,
    )


def run(o: Observation, protocol: EvalProtocol | None = None) -> QueryResult:
    report = evaluate([o], protocol)
    assert len(report.queries) == 1
    return report.queries[0]


def dcg(gains) -> float:
    return sum(g / math.log2(i + 1) for i, g in enumerate(gains, start=1))


def assert_unavailable(mv: MetricValue, reasons, blocking=(), bounds=None) -> None:
    assert mv.status == "unavailable"
    assert mv.value is None
    assert sorted(mv.reasons) == sorted(reasons)
    assert mv.blocking_ids == list(blocking)
    if bounds is None:
        assert mv.lower is None and mv.upper is None
    else:
        assert mv.lower == pytest.approx(bounds[0])
        assert mv.upper == pytest.approx(bounds[1])


WORKED = [("A", 2), ("X", 0), ("B", 1), ("C", 3)]


def test_worked_example():
    q = run(obs(["A", "X", "B"], WORKED))
    assert q.valid and q.reasons == [] and q.duplicates == []
    m = q.metrics
    assert m["precision"].value == pytest.approx(2 / 3)
    assert m["recall"].value == pytest.approx(2 / 3)
    assert m["reciprocal_rank"].value == 1.0
    # DCG = 2/log2(2) + 0/log2(3) + 1/log2(4) = 2.5
    # IDCG = gains of the whole reference set sorted desc, first 3: 3, 2, 1
    expected = 2.5 / (3 + 2 / math.log2(3) + 1 / 2)
    assert m["ndcg"].value == pytest.approx(expected)
    assert m["ndcg"].value == pytest.approx(dcg([2, 0, 1]) / dcg([3, 2, 1]))


def test_worked_example_serialises_to_contract_shape():
    q = run(obs(["A", "X", "B"], WORKED))
    dumped = q.model_dump(mode="json")
    assert dumped["metrics"]["precision"] == {"status": "available", "value": 2 / 3}


def test_unlabeled_returned_blocks_and_bounds_precision():
    q = run(obs(["A", "Y", "B"], WORKED))
    assert_unavailable(q.metrics["precision"], ["unlabeled_returned"], ["Y"], (2 / 3, 1.0))
    # Section 10: recall and nDCG on a complete population have bounds too; Y ranges
    # over 0..4 as if it were in the reference set: recall 2/3 (Y not relevant, |R| = 3)
    # .. 3/4 (Y relevant, |R| = 4). nDCG: the lowest value (Y = 0) exactly; the upper
    # bound places the known labels 3, 2 on ranks 1 and 3 around Y (docs/metric-computer.md).
    assert_unavailable(q.metrics["recall"], ["unlabeled_returned"], ["Y"], (2 / 3, 3 / 4))
    y = 4 / math.log2(3)
    assert_unavailable(
        q.metrics["ndcg"],
        ["unlabeled_returned"],
        ["Y"],
        (dcg([2, 0, 1]) / dcg([3, 2, 1]), (dcg([2, 0, 1]) + y) / (3 + 2 / 2 + y)),
    )
    # Y comes after the first relevant unit A: RR is known.
    assert q.metrics["reciprocal_rank"].value == 1.0


def test_unlabeled_before_first_relevant_blocks_rr_with_bounds():
    q = run(obs(["X", "Y", "Z", "B"], WORKED, k=4))
    # X labeled 0, Y and Z unlabeled, B relevant at 4: only Y and Z block.
    assert_unavailable(
        q.metrics["reciprocal_rank"], ["unlabeled_returned"], ["Y", "Z"], (0.25, 0.5)
    )


def test_unlabeled_after_first_relevant_rr_available_precision_not():
    q = run(obs(["A", "X", "Y"], WORKED))
    assert q.metrics["reciprocal_rank"].available and q.metrics["reciprocal_rank"].value == 1.0
    assert_unavailable(q.metrics["precision"], ["unlabeled_returned"], ["Y"], (1 / 3, 2 / 3))


def test_all_unlabeled():
    q = run(obs(["P", "Q", "R"], WORKED))
    assert_unavailable(q.metrics["precision"], ["unlabeled_returned"], ["P", "Q", "R"], (0.0, 1.0))
    assert_unavailable(
        q.metrics["reciprocal_rank"], ["unlabeled_returned"], ["P", "Q", "R"], (0.0, 1.0)
    )
    # Section 10: none of P, Q, R relevant -> 0 of |R| = 3; all relevant -> 3 of 6.
    assert_unavailable(q.metrics["recall"], ["unlabeled_returned"], ["P", "Q", "R"], (0.0, 0.5))


def test_no_relevant_in_top_all_labeled_gives_zero_rr():
    q = run(obs(["X", "D"], [*WORKED, ("D", 0)]))
    assert q.metrics["reciprocal_rank"].value == 0.0
    assert q.metrics["precision"].value == 0.0
    assert q.metrics["recall"].value == 0.0
    assert q.metrics["ndcg"].value == 0.0


def test_population_incomplete_and_unlabeled_both_reported():
    q = run(obs(["A", "Y", "B"], WORKED, complete=False))
    # Section 12: an open population still has bounds. Recall: Y relevant and no other
    # unit is 3/4; Y not and unboundedly many relevant units outside tends to 0.
    assert_unavailable(q.metrics["recall"], ["population_incomplete", "unlabeled_returned"], ["Y"],
                       (0.0, 0.75))
    ndcg = q.metrics["ndcg"]
    assert sorted(ndcg.reasons) == ["population_incomplete", "unlabeled_returned"]
    complete_y0 = run(obs(["A", "Y", "B"], [*WORKED, ("Y", 0)])).metrics["ndcg"].value
    assert ndcg.lower <= complete_y0 <= ndcg.upper
    # precision still bounded: its only reason is unlabeled_returned
    assert q.metrics["precision"].lower == pytest.approx(2 / 3)


def test_population_incomplete_only_affects_recall_and_ndcg():
    q = run(obs(["A", "X", "B"], WORKED, complete=False))
    assert q.metrics["precision"].available
    assert q.metrics["reciprocal_rank"].available
    # Bounds on the open population: every outside unit non-relevant (the complete value),
    # or as many as can be relevant (recall towards 0; nDCG with k units of gain 4 ideal).
    assert_unavailable(q.metrics["recall"], ["population_incomplete"], (), (0.0, 2 / 3))
    dcg_known = dcg([2, 0, 1])
    assert_unavailable(q.metrics["ndcg"], ["population_incomplete"], (),
                       (dcg_known / dcg([4, 4, 4]), dcg_known / dcg([3, 2, 1])))


def test_no_relevant_units():
    q = run(obs(["A", "B"], [("A", 0), ("B", 0)]))
    assert_unavailable(q.metrics["recall"], ["no_relevant_units"])
    assert_unavailable(q.metrics["ndcg"], ["no_relevant_units"])
    assert q.metrics["precision"].value == 0.0
    assert q.metrics["reciprocal_rank"].value == 0.0


def test_empty_labels_complete_population_is_valid_with_no_relevant_units():
    q = run(obs(["A"], []))
    assert q.valid
    assert_unavailable(q.metrics["precision"], ["unlabeled_returned"], ["A"], (0.0, 1 / 3))
    # Where recall is defined (A relevant: the population is complete) it is 1.
    assert_unavailable(q.metrics["recall"], ["unlabeled_returned", "no_relevant_units"], ["A"],
                       (1.0, 1.0))


def test_empty_run_is_a_real_zero():
    q = run(obs([], WORKED))
    assert q.metrics["precision"].value == 0.0
    assert q.metrics["recall"].value == 0.0
    assert q.metrics["ndcg"].value == 0.0
    assert q.metrics["reciprocal_rank"].value == 0.0


def test_fewer_than_k_returned_keeps_k_as_denominator():
    q = run(obs(["A"], WORKED, k=5))
    assert q.metrics["precision"].value == pytest.approx(1 / 5)
    assert q.metrics["recall"].value == pytest.approx(1 / 3)
    assert q.metrics["ndcg"].value == pytest.approx(dcg([2]) / dcg([3, 2, 1, 0]))


def test_positions_after_k_are_not_measured():
    q = run(obs(["X", "A", "Y", "B"], WORKED, k=2))
    assert q.metrics["precision"].value == pytest.approx(1 / 2)
    assert q.metrics["reciprocal_rank"].value == pytest.approx(1 / 2)
    assert q.metrics["recall"].value == pytest.approx(1 / 3)


def test_returned_duplicates_keep_position_and_add_no_gain():
    q = run(obs(["A", "A", "B"], WORKED))
    assert [(d.id, d.position, d.first_position) for d in q.duplicates] == [("A", 2, 1)]
    assert q.valid
    assert q.metrics["precision"].value == pytest.approx(2 / 3)
    assert q.metrics["recall"].value == pytest.approx(2 / 3)
    # B keeps rank 3; the duplicate at rank 2 adds nothing.
    assert q.metrics["ndcg"].value == pytest.approx(dcg([2, 0, 1]) / dcg([3, 2, 1]))


def test_duplicate_rank_is_not_shifted_for_rr():
    q = run(obs(["X", "X", "B"], WORKED))
    assert q.metrics["reciprocal_rank"].value == pytest.approx(1 / 3)
    assert len(q.duplicates) == 1


def test_unlabeled_duplicate_blocks_once_and_counts_once_in_upper_bound():
    q = run(obs(["Y", "Y", "A"], WORKED))
    assert_unavailable(q.metrics["precision"], ["unlabeled_returned"], ["Y"], (1 / 3, 2 / 3))
    assert_unavailable(q.metrics["reciprocal_rank"], ["unlabeled_returned"], ["Y"], (1 / 3, 1.0))


def test_unit_of_collapses_two_returned_ids_into_one_unit():
    o = obs(
        ["a#1", "a#2", "b#1"],
        WORKED,
        unit_of={"a#1": "A", "a#2": "A", "b#1": "B"},
        retrieval_unit="passage",
    )
    q = run(o)
    assert [(d.id, d.position, d.first_position) for d in q.duplicates] == [("A", 2, 1)]
    assert q.metrics["precision"].value == pytest.approx(2 / 3)
    assert q.metrics["ndcg"].value == pytest.approx(dcg([2, 0, 1]) / dcg([3, 2, 1]))


def test_unit_of_unmapped_id_stays_itself():
    q = run(obs(["a#1", "B"], WORKED, unit_of={"a#1": "A"}))
    assert q.metrics["precision"].value == pytest.approx(2 / 3)


def _all_unavailable_with(q: QueryResult, reasons: list[str]) -> None:
    assert not q.valid
    assert q.reasons == reasons
    for mv in q.metrics.values():
        assert_unavailable(mv, reasons)


def test_partial_scan_invalidates_every_metric():
    _all_unavailable_with(run(obs(["A", "X", "B"], WORKED, scan_complete=False)), ["partial_scan"])


def test_permission_violation_only_within_top_k():
    ok = run(obs(["A", "X", "B", "SECRET"], WORKED, permitted_ids=["A", "X", "B"]))
    assert ok.valid and ok.metrics["precision"].value == pytest.approx(2 / 3)
    bad = run(obs(["A", "SECRET", "B"], WORKED, permitted_ids=["A", "X", "B"]))
    _all_unavailable_with(bad, ["permission_violation"])


def test_permission_accepts_mapped_unit_ids():
    q = run(obs(["a#1", "B"], WORKED, unit_of={"a#1": "A"}, permitted_ids=["A", "B"]))
    assert q.valid


def test_duplicate_reference_even_with_equal_gains():
    _all_unavailable_with(run(obs(["A", "X", "B"], [*WORKED, ("A", 2)])), ["duplicate_reference"])


def test_missing_reference():
    _all_unavailable_with(run(obs(["A"], [], complete=False)), ["missing_reference"])


def test_several_observation_reasons_reported_together():
    q = run(obs(["A"], [], complete=False, scan_complete=False))
    _all_unavailable_with(q, ["partial_scan", "missing_reference"])


def test_exponential_gain():
    q = run(obs(["A", "X", "B"], WORKED), EvalProtocol(gain="exponential"))
    expected = dcg([3, 0, 1]) / dcg([7, 3, 1])
    assert q.metrics["ndcg"].value == pytest.approx(expected)


def test_threshold_two():
    p = EvalProtocol(relevance_threshold=2)
    q = run(obs(["B", "A", "X"], WORKED), p)  # B has gain 1: not relevant at threshold 2
    assert q.metrics["precision"].value == pytest.approx(1 / 3)
    assert q.metrics["recall"].value == pytest.approx(1 / 2)  # R = {A, C}
    assert q.metrics["reciprocal_rank"].value == pytest.approx(1 / 2)
    # nDCG gains are label values, independent of the threshold
    assert q.metrics["ndcg"].value == pytest.approx(dcg([1, 2, 0]) / dcg([3, 2, 1]))


def test_threshold_above_every_label_gives_no_relevant_units_for_recall_only():
    q = run(obs(["A", "B"], [("A", 1), ("B", 1)]), EvalProtocol(relevance_threshold=2))
    assert_unavailable(q.metrics["recall"], ["no_relevant_units"])
    assert q.metrics["ndcg"].value == pytest.approx(1.0)


def test_unjudged_as_nonrelevant_makes_metrics_available():
    p = EvalProtocol(unjudged_as_nonrelevant=True)
    q = run(obs(["Y", "A", "Z"], WORKED), p)
    assert q.metrics["precision"].value == pytest.approx(1 / 3)
    assert q.metrics["recall"].value == pytest.approx(1 / 3)
    assert q.metrics["reciprocal_rank"].value == pytest.approx(1 / 2)
    assert q.metrics["ndcg"].value == pytest.approx(dcg([0, 2, 0]) / dcg([3, 2, 1]))


def test_unjudged_policy_does_not_declare_population_complete():
    p = EvalProtocol(unjudged_as_nonrelevant=True)
    q = run(obs(["Y", "A"], WORKED, complete=False), p)
    # the policy reads Y as non-relevant, not the units nobody returned (section 12 bounds)
    assert_unavailable(q.metrics["recall"], ["population_incomplete"], (), (0.0, 1 / 3))


def test_query_order_is_input_order_and_protocol_recorded():
    observations = [obs(["A"], WORKED, query_id=f"q{i}") for i in (3, 1, 2)]
    p = EvalProtocol(gain="exponential", unjudged_as_nonrelevant=True)
    report = evaluate(observations, p)
    assert [q.query_id for q in report.queries] == ["q3", "q1", "q2"]
    assert report.protocol == p
    assert report.model_dump(mode="json")["protocol"]["unjudged_as_nonrelevant"] is True


def test_empty_query_set():
    report = evaluate([])
    assert report.queries == []
    for agg in report.aggregates.values():
        assert agg.status == "unavailable" and agg.value is None
        assert agg.reasons == {"no_queries": 1}
        assert agg.n_queries == 0


def test_report_counts_returned_duplicates_in_diagnostics():
    report = evaluate([obs(["A", "A", "A"], WORKED), obs(["B", "B"], WORKED, query_id="q2")])
    assert report.diagnostics.returned_duplicates == 3


def test_huge_k_costs_no_memory():
    q = run(obs(["A", "X"], WORKED, k=10**12))
    assert q.metrics["precision"].value == pytest.approx(1 / 10**12)
    assert q.metrics["ndcg"].value == pytest.approx(dcg([2, 0]) / dcg([3, 2, 1, 0]))


def test_reader_diagnostics_are_kept_and_duplicates_counted():
    from evalcore.contract.results import Diagnostics

    given = Diagnostics(tied_score_pairs=3, notes=["run.txt: 2 run tags"])
    report = evaluate([obs(["A", "A"], WORKED)], diagnostics=given)
    assert report.diagnostics.tied_score_pairs == 3
    assert report.diagnostics.notes == ["run.txt: 2 run tags"]
    assert report.diagnostics.returned_duplicates == 1


def test_unavailable_metric_serialises_to_contract_shape():
    q = run(obs(["A", "X", "Y"], WORKED))
    assert q.model_dump(mode="json")["metrics"]["precision"] == {
        "status": "unavailable",
        "value": None,
        "reasons": ["unlabeled_returned"],
        "blocking_ids": ["Y"],
        "lower": 1 / 3,
        "upper": 2 / 3,
    }
    assert q.model_dump(mode="json")["metrics"]["recall"] == {
        "status": "unavailable",
        "value": None,
        "reasons": ["unlabeled_returned"],
        "blocking_ids": ["Y"],
        "lower": 1 / 3,  # section 10: Y not relevant (1 of 3) .. relevant (2 of 4)
        "upper": 1 / 2,
    }
