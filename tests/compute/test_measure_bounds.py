"""The measure catalogue against the plain oracle, and the soundness of every bound.

* Named measures (many cutoffs at once, ``rel=`` overrides, conflicts in the
  labels) equal the oracle on availability, value, reasons, blocking and
  conflict IDs, and, for P, R, RR, Success and RBP, on bounds that are the
  exact extremes over every completion (tight: both ends attained).
* For every measure: every completion of the unknown gains (unlabeled units in
  1..k over 0..MAX_GAIN, conflicts over their annotators' gains; the
  extremes all-lowest and all-highest included) has a value inside
  ``[lower, upper]``; an available measure equals every completion.
"""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.measures import FAMILIES, Measure, parse_measure
from evalcore.contract.observation import Observation
from tests.observation_strategies import observations, protocols_with_trec_eval, query_sets
from tests.oracle import (
    TIGHT,
    complete,
    completed_value,
    completions,
    oracle_aggregate,
    oracle_measures,
)

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EPS = 1e-9


@st.composite
def measure_lists(draw):
    out = []
    for _ in range(draw(st.integers(1, 5))):
        family = draw(st.sampled_from(sorted(FAMILIES)))
        k = draw(st.none() | st.integers(1, 9))
        rel = draw(st.none() | st.integers(1, MAX_GAIN)) if "rel" in FAMILIES[family] else None
        p = draw(st.sampled_from([0.5, 0.8, 0.95])) if family == "RBP" else None
        out.append(Measure(family, k, rel, p))
    return out


def approx_or_none(x):
    return None if x is None else pytest.approx(x, abs=1e-12)


def named(measures):
    return {str(m): m for m in measures}


@SETTINGS
@given(query_sets(conflicts=True), protocols_with_trec_eval, measure_lists())
def test_catalogue_equals_oracle(obs_list, protocol, measures):
    report = evaluate(obs_list, protocol, measures=measures)
    depth = max((m.k for m in measures if m.k), default=0)
    expected = [oracle_measures(o, protocol, named(measures), depth) for o in obs_list]
    for got, want in zip(report.queries, expected, strict=True):
        assert got.valid == want.valid
        assert got.reasons == want.reasons
        assert [(d.id, d.position, d.first_position) for d in got.duplicates] == want.duplicates
        assert list(got.metrics) == list(named(measures))
        for name, m in named(measures).items():
            g, w = got.metrics[name], want.metrics[name]
            assert g.available == w.available, name
            assert g.value == approx_or_none(w.value), name
            assert sorted(g.reasons) == sorted(w.reasons), name
            assert g.blocking_ids == w.blocking_ids, name
            assert g.conflict_ids == w.conflict_ids, name
            if m.family in TIGHT:
                assert g.lower == approx_or_none(w.lower), name
                assert g.upper == approx_or_none(w.upper), name
                assert g.residual == approx_or_none(w.residual), name
    for name, m in named(measures).items():
        agg, want = report.aggregates[name], oracle_aggregate(expected, name)
        assert agg.available == want["available"], name
        if want["available"]:
            assert agg.value == pytest.approx(want["value"], abs=1e-12)
        elif want["n_queries"]:
            assert agg.reasons == want["reasons"]
            assert (agg.lower is not None) == want["bounded"], name
            if m.family in TIGHT:
                assert agg.lower == approx_or_none(want["lower"])
                assert agg.upper == approx_or_none(want["upper"])


@SETTINGS
@given(observations(conflicts=True), protocols_with_trec_eval, measure_lists(), st.randoms())
def test_every_completion_lies_inside_the_bounds(o, protocol, measures, rnd):
    report = evaluate([o], protocol, measures=measures)
    q = report.queries[0]
    if not q.valid:
        return
    for name, m in named(measures).items():
        mv = q.metrics[name]
        if m.family == "Judged":
            assert mv.available
            continue
        k = m.k or o.k
        defined = 0
        for done in completions(o, protocol, k, rng=random.Random(rnd.random()), limit=300):
            value = completed_value(o, m, protocol, done)
            if value is None:  # no relevant unit in this completion: the measure is undefined
                continue
            defined += 1
            if mv.available:
                assert value == pytest.approx(mv.value, abs=1e-12), name
            else:
                assert mv.lower is not None, (name, done, mv)  # a completion defines it
                assert mv.lower - EPS <= value <= mv.upper + EPS, (name, value, done, mv)
        if not mv.available and mv.lower is not None:
            assert defined, (name, mv)  # bounds only where some completion defines it


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(observations(conflicts=True), protocols_with_trec_eval, measure_lists(), st.randoms())
def test_a_completed_observation_evaluates_as_the_oracle_completes_it(o, protocol, measures,
                                                                       rnd):
    """The completions the oracle enumerates, written out as observations (every unknown
    and outside unit labeled, the population complete), evaluate to the oracle's values."""
    if not evaluate([o], protocol, measures=measures).queries[0].valid:
        return
    for name, m in named(measures).items():
        if m.family == "Judged":
            continue
        done = rnd.choice(completions(o, protocol, m.k or o.k, limit=20))
        value = completed_value(o, m, protocol, done)
        got = evaluate([complete(o, done)], protocol, measures=[m]).queries[0].metrics[name]
        assert got.available == (value is not None), name
        if value is not None:
            assert got.value == pytest.approx(value, abs=1e-12), name


@SETTINGS
@given(observations(conflicts=True), protocols_with_trec_eval, measure_lists())
def test_bounds_exist_exactly_when_some_completion_defines_the_measure(o, protocol, measures):
    """Sections 10 and 12: an unavailable measure of a valid observation has bounds, whatever
    its own reasons (unknown gains, an open population, no relevant unit known), exactly
    when some completion of the unknowns defines it."""
    q = evaluate([o], protocol, measures=measures).queries[0]
    want = oracle_measures(o, protocol, named(measures), max((m.k or 0) for m in measures))
    for name, mv in q.metrics.items():
        assert (mv.lower is not None) == (q.valid and not mv.available
                                          and want.metrics[name].bounded), name
        assert (mv.lower is None) == (mv.upper is None)
        if mv.lower is not None:
            assert 0.0 <= mv.lower <= mv.upper <= 1.0 + 1e-12
        assert bool(mv.conflict_ids) == ("label_conflict" in mv.reasons)


def obs(returned, labels, *, k=3, complete=True) -> Observation:
    return Observation(
        query_id="q",
        k=k,
        returned_ids=list(returned),
        labels=[{"id": i, "gain": g} if isinstance(g, int) else {"id": i, "conflict": g}
                for i, g in labels],
        population_complete=complete,
    )


def one(o, measure, protocol=None):
    return evaluate([o], protocol, measures=[parse_measure(measure)]).queries[0].metrics[measure]


@pytest.mark.parametrize(
    ("measure", "low", "high"),
    [("P@3", 1 / 3, 1.0), ("RR@3", 0.0, 1.0), ("Success@3", 0.0, 1.0), ("R@3", 0.0, 1.0)],
)
def test_tight_bounds_are_attained_at_both_ends(measure, low, high):
    # X unlabeled at rank 1, Y unlabeled at rank 2, B relevant at rank 3 (R: |R| = 1).
    o = obs(["X", "Y", "B"], [("B", 1)])
    mv = one(o, measure)
    if measure == "R@3":  # B is the only known relevant unit and it is returned
        assert (mv.lower, mv.upper) == (1.0, 1.0)
        return
    if measure in ("RR@3",):
        low = 1 / 3
    if measure == "Success@3":
        assert mv.available and mv.value == 1.0
        return
    assert (mv.lower, mv.upper) == (pytest.approx(low), pytest.approx(high))
    for gains, want in (((0, 0), low), ((MAX_GAIN, MAX_GAIN), high)):
        done = obs(["X", "Y", "B"], [("B", 1), ("X", gains[0]), ("Y", gains[1])])
        assert one(done, measure).value == pytest.approx(want)


def test_success_unknown_without_a_relevant_unit_is_zero_to_one():
    mv = one(obs(["X", "Y", "Z"], [("Z", 0)]), "Success@3")
    assert mv.reasons == ["unlabeled_returned"] and (mv.lower, mv.upper) == (0.0, 1.0)


def test_recall_bounds_count_unknown_units_as_if_in_the_reference_set():
    # A relevant, Y unlabeled, C relevant but not returned; D in conflict (0 vs 2) outside.
    o = obs(["A", "Y"], [("A", 2), ("C", 1), ("D", (0, 2))], k=2)
    mv = one(o, "R@2")
    assert sorted(mv.reasons) == ["label_conflict", "unlabeled_returned"]
    assert mv.blocking_ids == ["Y"] and mv.conflict_ids == ["D"]
    # lowest: Y not relevant, D relevant -> 1/3; highest: Y relevant, D not -> 2/3
    assert (mv.lower, mv.upper) == (pytest.approx(1 / 3), pytest.approx(2 / 3))


def test_ap_bounds_contain_every_completion_of_a_small_example():
    o = obs(["A", "Y", "B", "Z"], [("A", 1), ("B", 0), ("C", 3)], k=4)
    mv = one(o, "AP@4")
    values = []
    for y in range(MAX_GAIN + 1):
        for z in range(MAX_GAIN + 1):
            done = obs(["A", "Y", "B", "Z"], [("A", 1), ("B", 0), ("C", 3), ("Y", y), ("Z", z)], k=4)
            values.append(one(done, "AP@4").value)
    assert mv.lower <= min(values) + EPS and max(values) <= mv.upper + EPS
    # the lowest completion (Y, Z not relevant: 1/2) is attained
    assert mv.lower == pytest.approx(min(values))


def test_rbp_residual_on_every_query():
    p = 0.8
    known = one(obs(["A", "B"], [("A", 1), ("B", 0)], k=2), "RBP(p=0.8)@2")
    assert known.available and known.value == pytest.approx(1 - p)
    assert known.residual == pytest.approx(p**2)
    assert known.model_dump()["residual"] == pytest.approx(p**2)
    unknown = one(obs(["A", "Y"], [("A", 1)], k=2), "RBP(p=0.8)@2")
    assert (unknown.lower, unknown.upper) == (pytest.approx(0.2), pytest.approx(0.2 + 0.2 * p))
    assert unknown.residual == pytest.approx(0.2 * p + p**2)


def test_judged_counts_conflicts_and_unlabeled_as_not_judged():
    o = obs(["A", "X", "C", "A"], [("A", 2), ("C", (1, 3))], k=4)
    mv = one(o, "Judged@4")
    assert mv.available and mv.value == pytest.approx(1 / 4)
    # the compatibility policy reads unjudged as 0 but Judged still counts labels
    compat = one(o, "Judged@4", EvalProtocol(unjudged_as_nonrelevant=True))
    assert compat.value == pytest.approx(1 / 4)


def test_judged_mean_is_available_whenever_every_observation_is_valid():
    o1 = obs(["X"], [("A", 1)], k=1)
    o2 = obs(["A"], [("A", 1)], k=1).model_copy(update={"query_id": "q2"})
    report = evaluate([o1, o2], measures=[parse_measure("Judged@1"), parse_measure("P@1")])
    assert report.aggregates["Judged@1"].available
    assert report.aggregates["Judged@1"].value == pytest.approx(0.5)
    assert not report.aggregates["P@1"].available
