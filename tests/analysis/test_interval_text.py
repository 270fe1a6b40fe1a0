"""The one interval text rule, and the report cards (HTML and text) that use it."""

from datetime import UTC, datetime

import pytest

from evalcore.analysis.interval_text import (
    aggregate_card,
    aggregate_value_text,
    interval_text,
    metric_value_text,
    unknown_counts,
    why_unbounded,
)
from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Label, Observation
from evalcore.contract.results import AggregateValue, MetricValue
from evalcore.report.build import RunInput, build_report
from evalcore.report.html import render_html


def test_interval_text_rounds_outwards_and_counts_unknowns_apart() -> None:
    assert interval_text(0.4149, 0.5751, 23) == "0.41 to 0.58, 23 unlabeled"
    assert interval_text(0.41, 0.58, 23, 2) == "0.41 to 0.58, 23 unlabeled, 2 in conflict"
    assert interval_text(0.41, 0.58, 0, 3) == "0.41 to 0.58, 3 in conflict"
    assert interval_text(1 / 3, 2 / 3, 1) == "0.33 to 0.67, 1 unlabeled"
    assert interval_text(0.5, 0.5000000001, None) == "0.50 to 0.50"  # no float-noise widening


@pytest.mark.parametrize(("reasons", "text"), [
    ({"population_incomplete": 9, "unlabeled_returned": 3}, "population incomplete on 9 queries"),
    ({"population_incomplete": 1, "no_relevant_units": 2},
     "no relevant units on 2 queries, population incomplete on 1 query"),
    (["unlabeled_returned", "population_incomplete"], "population incomplete"),
])
def test_why_unbounded_names_the_reasons_that_are_not_unknown_labels(reasons, text) -> None:
    assert why_unbounded(reasons) == text


def test_values_read_alike_for_a_query_and_an_aggregate() -> None:
    mv = MetricValue(status="unavailable", reasons=["unlabeled_returned", "label_conflict"],
                     blocking_ids=["a", "b"], conflict_ids=["c"], lower=0.2, upper=0.6)
    assert metric_value_text(mv) == "unavailable · 0.20 to 0.60, 2 unlabeled, 1 in conflict"
    assert metric_value_text(MetricValue(status="available", value=0.5)) == "0.5000"
    assert unknown_counts([mv, mv, MetricValue(status="available", value=1.0), None]) == (4, 2)
    agg = AggregateValue(status="unavailable", n_queries=4, n_available=2, n_missing=2,
                         reasons={"unlabeled_returned": 2}, lower=0.41, upper=0.58)
    assert aggregate_value_text(agg, 23, 0) == "unavailable · 0.41 to 0.58, 23 unlabeled"
    assert aggregate_card(agg, unknowns=(23, 0)).status_line == aggregate_value_text(agg, 23)


def _observations(k: int = 3) -> list[Observation]:
    return [
        Observation(query_id="q1", k=k, returned_ids=["a", "b", "c"],
                    labels=[Label(id="a", gain=1), Label(id="b", gain=0)],
                    population_complete=True),
        Observation(query_id="q2", k=k, returned_ids=["d", "e", "f"],
                    labels=[Label(id="d", gain=1), Label(id="e", gain=0), Label(id="f", gain=0)],
                    population_complete=False),
    ]


def test_report_cards_show_the_interval_beside_unavailable() -> None:
    evaluation = evaluate(_observations(), EvalProtocol())
    report = build_report({"A": RunInput(evaluation=evaluation, corpus_fingerprint=None)},
                          name="r", study_id="s", protocol=EvalProtocol(), created_by="lead",
                          reference_version=None, created_at=datetime(2026, 7, 1, tzinfo=UTC))
    html = render_html(report)
    # P@3: q1 in [1/3, 2/3] (c unlabeled), q2 = 1/3 -> the mean in [1/3, 1/2]
    assert "unavailable · 0.33 to 0.50, 1 unlabeled" in html
    # recall: q1 is 1 whatever c is; q2's population is open (section 12): 1 with no
    # other unit relevant, towards 0 with many -> the mean in [1/2, 1]
    assert "unavailable · 0.50 to 1.00, 1 unlabeled" in html
    assert "population incomplete on 1 query" not in html
    card = aggregate_card(evaluation.aggregates["precision"], unknowns=unknown_counts(
        q.metrics["precision"] for q in evaluation.queries))
    assert card.status_line == "unavailable · 0.33 to 0.50, 1 unlabeled"
    assert card.sentence.startswith("unavailable — 1 of 2 queries missing (1 unlabeled results in the top k)")
