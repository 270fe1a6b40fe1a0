"""Properties of the metric computer, checked on random observations.

The central one: the columnar computer equals the plain per-query oracle
(``tests/oracle.py``) on every query, metric, reason, blocking ID, bound and
aggregate.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Label, Observation
from evalcore.contract.results import METRICS
from tests.observation_strategies import observations, protocols, query_sets
from tests.oracle import oracle_aggregate, oracle_query

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def approx_or_none(x):
    return None if x is None else pytest.approx(x, abs=1e-12)


@SETTINGS
@given(query_sets(), protocols)
def test_columnar_equals_oracle(obs_list, protocol):
    report = evaluate(obs_list, protocol)
    expected = [oracle_query(o, protocol) for o in obs_list]
    assert [q.query_id for q in report.queries] == [o.query_id for o in obs_list]
    for got, want in zip(report.queries, expected, strict=True):
        assert got.valid == want.valid
        assert got.reasons == want.reasons
        assert [(d.id, d.position, d.first_position) for d in got.duplicates] == want.duplicates
        for name in METRICS:
            g, w = got.metrics[name], want.metrics[name]
            assert g.available == w.available, name
            assert g.value == approx_or_none(w.value), name
            assert sorted(g.reasons) == sorted(w.reasons), name
            assert g.blocking_ids == w.blocking_ids, name
            if name == "ndcg":  # a relaxation: tests/compute/test_measure_bounds.py checks it is sound
                assert (g.lower is not None) == w.bounded, name
                continue
            assert g.lower == approx_or_none(w.lower), name
            assert g.upper == approx_or_none(w.upper), name
    for name in METRICS:
        agg, want = report.aggregates[name], oracle_aggregate(expected, name)
        assert agg.available == want["available"]
        assert agg.n_queries == want["n_queries"]
        if want["available"]:
            assert agg.value == pytest.approx(want["value"], abs=1e-12)
        else:
            assert agg.value is None
            assert agg.reasons == want["reasons"]
            if want["n_queries"]:
                assert agg.n_available == want["n_available"]
                assert agg.n_missing == want["n_missing"]
                if name == "ndcg":
                    assert (agg.lower is not None) == want["bounded"]
                    continue
                assert agg.lower == approx_or_none(want["lower"])
                assert agg.upper == approx_or_none(want["upper"])


@SETTINGS
@given(observations(), protocols, st.data())
def test_labeling_a_blocking_unit_lands_inside_the_bounds(o, protocol, data):
    q = evaluate([o], protocol).queries[0]
    for name in ("precision", "reciprocal_rank"):
        mv = q.metrics[name]
        if mv.lower is None:
            continue
        unit = data.draw(st.sampled_from(mv.blocking_ids))
        gain = data.draw(st.integers(0, 4))
        labeled = o.model_copy(update={"labels": [*o.labels, Label(id=unit, gain=gain)]})
        after = evaluate([labeled], protocol).queries[0].metrics[name]
        if after.available:
            assert mv.lower - 1e-12 <= after.value <= mv.upper + 1e-12
        else:  # still blocked by other units: the new bounds nest inside the old ones
            assert after.lower is not None
            assert mv.lower - 1e-12 <= after.lower <= after.upper <= mv.upper + 1e-12


@SETTINGS
@given(observations(), protocols)
def test_never_available_when_a_needed_unit_is_unlabeled(o, protocol):
    q = evaluate([o], protocol).queries[0]
    if protocol.unjudged_as_nonrelevant or not q.valid:
        return
    unit_of = o.unit_of or {}
    labeled = {lab.id: lab.gain for lab in o.labels}
    top = [unit_of.get(r, r) for r in o.returned_ids[: o.k]]
    if any(u not in labeled for u in top):
        for name in ("precision", "recall", "ndcg"):
            assert not q.metrics[name].available
    rr_needs = []
    for u in top:
        if u in labeled and labeled[u] >= protocol.relevance_threshold:
            break
        rr_needs.append(u)
    if any(u not in labeled for u in rr_needs):
        assert not q.metrics["reciprocal_rank"].available


@SETTINGS
@given(query_sets(), protocols)
def test_aggregate_never_available_when_a_query_is_not(obs_list, protocol):
    report = evaluate(obs_list, protocol)
    for name in METRICS:
        all_available = bool(obs_list) and all(q.metrics[name].available for q in report.queries)
        assert report.aggregates[name].available == all_available


@SETTINGS
@given(query_sets(), protocols)
def test_values_and_bounds_lie_in_unit_interval(obs_list, protocol):
    report = evaluate(obs_list, protocol)
    for q in report.queries:
        for mv in q.metrics.values():
            if mv.available:
                assert 0.0 <= mv.value <= 1.0 + 1e-12
            if mv.lower is not None:
                assert 0.0 <= mv.lower <= mv.upper <= 1.0 + 1e-12
    for agg in report.aggregates.values():
        for x in (agg.value, agg.lower, agg.upper):
            assert x is None or 0.0 <= x <= 1.0 + 1e-12


def test_exponential_and_linear_agree_on_binary_labels():
    o = Observation(
        query_id="q",
        k=3,
        returned_ids=["A", "B", "C"],
        labels=[Label(id="A", gain=0), Label(id="B", gain=1), Label(id="C", gain=1)],
        population_complete=True,
    )
    lin = evaluate([o], EvalProtocol()).queries[0].metrics["ndcg"].value
    exp = evaluate([o], EvalProtocol(gain="exponential")).queries[0].metrics["ndcg"].value
    assert lin == pytest.approx(exp)
