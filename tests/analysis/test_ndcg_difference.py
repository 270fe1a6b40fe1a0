"""The joint nDCG@k difference bound: every completion of the unknown labels is enumerated.

On small random queries, every completion (each unlabeled unit either run returns
in its cut at each gain 0..4, each conflict at each of its annotators' gains) is
evaluated with the metric computer; the pair interval must hold every completed
difference, never be wider than the bound it replaces, and, when every unknown
in the cuts is unlabeled, reach the least and the greatest difference exactly.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.analysis import ndcg_difference, pair_bounds
from evalcore.analysis.decision import evaluate_pair
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import compute
from evalcore.compute.measures.base import NO_RELEVANT_BIT
from evalcore.compute.measures.ndcg import gain_values
from evalcore.compute.measures.ranking import discounts
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import parse_measure
from evalcore.contract.observation import Label, Observation
from tests.observation_strategies import draw_labels, draw_rankings

UNITS = [f"u{i}" for i in range(7)]


@st.composite
def cases(draw):
    """One query: two rankings sharing units, labels (some in conflict), the rest unlabeled."""
    k = draw(st.integers(1, 5))
    ranking_a, ranking_b = draw_rankings(draw, UNITS, 6)
    labels = draw_labels(draw, UNITS, ("gain", "gain", "none", "none", "conflict"))
    gain = draw(st.sampled_from(["linear", "exponential"]))
    return k, ranking_a, ranking_b, labels, EvalProtocol(gain=gain)


def _unknowns(k, ranking_a, ranking_b, labels):
    out = {u: (0, 1, 2, 3, 4) for u in dict.fromkeys(ranking_a[:k] + ranking_b[:k])
           if u not in labels}
    out.update({u: g for u, g in labels.items() if isinstance(g, tuple)})
    return out


def _observation(qid, k, returned, labels):
    return Observation(
        query_id=qid, k=k, returned_ids=returned, population_complete=True,
        labels=[Label(id=u, conflict=g) if isinstance(g, tuple) else Label(id=u, gain=g)
                for u, g in sorted(labels.items())],
    )


def _batches(k, ranking_a, ranking_b, label_sets, protocol):
    return [
        ObservationBatch.from_observations(
            [_observation(f"q{i}", k, ranking, labels) for i, labels in enumerate(label_sets)],
            protocol)
        for ranking in (ranking_a, ranking_b)
    ]


def _completed_differences(k, ranking_a, ranking_b, labels, protocol, measure):
    """Every completion's nDCG_A - nDCG_B (0 where IDCG is 0), as one batch of queries."""
    unknowns = _unknowns(k, ranking_a, ranking_b, labels)
    keys = list(unknowns)
    fills = [dict(labels, **dict(zip(keys, gains, strict=True)))
             for gains in itertools.product(*(unknowns[u] for u in keys))]
    batch_a, batch_b = _batches(k, ranking_a, ranking_b, fills, protocol)
    values = []
    for batch in (batch_a, batch_b):
        arrays = compute(batch, protocol, [measure]).metrics[measure.canonical]
        assert np.all((arrays.reason_bits == 0) | (arrays.reason_bits == NO_RELEVANT_BIT))
        values.append(np.where(arrays.reason_bits == 0, arrays.value, 0.0))
    return values[0] - values[1], unknowns


def _intervals(k, ranking_a, ranking_b, labels, protocol, measure, monkeypatch):
    """(new pair interval, the bound before the joint search) of the one query."""
    pair = evaluate_pair(*_batches(k, ranking_a, ranking_b, [labels], protocol), [measure],
                         protocol)
    new = pair_bounds.pair_interval(pair.units, measure, protocol)
    with monkeypatch.context() as patch:
        patch.setattr(pair_bounds, "exact_difference",
                      lambda units, *a: (np.full(units.n, np.nan), np.full(units.n, np.nan)))
        old = pair_bounds.pair_interval(pair.units, measure, protocol)
    return (float(new[0][0]), float(new[1][0])), (float(old[0][0]), float(old[1][0]))


@settings(deadline=None, max_examples=150)
@given(cases())
def test_every_completion_lies_in_the_joint_interval_which_is_exact_without_conflicts(case) -> None:
    k, ranking_a, ranking_b, labels, protocol = case
    measure = parse_measure(f"nDCG@{k}")
    diffs, unknowns = _completed_differences(k, ranking_a, ranking_b, labels, protocol, measure)
    with pytest.MonkeyPatch.context() as monkeypatch:
        (lower, upper), (old_lower, old_upper) = _intervals(
            k, ranking_a, ranking_b, labels, protocol, measure, monkeypatch)
    if np.isnan(lower):  # not covered (IDCG 0 in every completion): the difference is 0
        assert np.allclose(diffs, 0.0)
        return
    assert lower <= diffs.min() + 1e-9 and diffs.max() <= upper + 1e-9
    assert old_lower - 1e-12 <= lower and upper <= old_upper + 1e-12
    in_cut = set(ranking_a[:k] + ranking_b[:k])
    if not any(isinstance(labels.get(u), tuple) for u in in_cut):
        # every unknown in the cuts is unlabeled: both ends are attained
        assert lower == pytest.approx(diffs.min(), abs=1e-9), (unknowns, diffs.min())
        assert upper == pytest.approx(diffs.max(), abs=1e-9), (unknowns, diffs.max())


def test_both_ends_are_exact_where_the_box_bound_was_a_third_wider() -> None:
    """Four unlabeled units both runs return, pairwise swapped, and a relevant unit neither
    returns: DCG and the shared IDCG move together, which the box bound ignores."""
    k = 4
    ranking_a, ranking_b = ["x", "y", "z", "w"], ["y", "x", "w", "z"]
    labels = {"r": 3}
    measure = parse_measure("nDCG@4")
    protocol = EvalProtocol()
    diffs, _ = _completed_differences(k, ranking_a, ranking_b, labels, protocol, measure)
    with pytest.MonkeyPatch.context() as monkeypatch:
        (lower, upper), (old_lower, old_upper) = _intervals(
            k, ranking_a, ranking_b, labels, protocol, measure, monkeypatch)
    assert (lower, upper) == pytest.approx((diffs.min(), diffs.max()), abs=1e-12)
    assert (lower, upper) == pytest.approx((-0.2505, 0.2505), abs=1e-4)
    assert (old_lower, old_upper) == pytest.approx((-0.3691, 0.3691), abs=1e-4)


def test_a_query_with_too_many_unknowns_keeps_the_cheaper_bound(monkeypatch) -> None:
    monkeypatch.setattr(ndcg_difference, "MAX_STEPS", 0)
    k = 3
    case = (k, ["x", "y", "z"], ["z", "y", "x"], {"r": 1}, EvalProtocol(),
            parse_measure("nDCG@3"))
    pair = evaluate_pair(*_batches(*case[:3], [case[3]], case[4]), [case[5]], case[4])
    u = pair.units
    in_a = (u.rank_a > 0) & (u.rank_a <= k)
    in_b = (u.rank_b > 0) & (u.rank_b <= k)
    lo, hi = ndcg_difference.exact_difference(u, in_a, in_b, np.array([k]), gain_values("linear"),
                                              discounts(k))
    assert np.isnan(lo).all() and np.isnan(hi).all()
    diffs, _ = _completed_differences(*case[:4], case[4], case[5])
    lower, upper = pair_bounds.pair_interval(u, case[5], case[4])
    assert lower[0] <= diffs.min() + 1e-9 and diffs.max() <= upper[0] + 1e-9


def _random_search_inputs(seed: int, n: int):
    """Inputs of ``_search`` for ``n`` queries: active units with net discounts of both signs,
    the rest of each population as level counts, a cutoff per query."""
    rng = np.random.default_rng(seed)
    m = rng.integers(0, 9, n)
    active_q = np.repeat(np.arange(n), m)
    active_c = rng.normal(0, 0.3, active_q.size)
    k = rng.integers(1, 12, n)
    base = rng.integers(0, 3, (n, 5))
    n0 = rng.normal(0, 0.5, n)
    depth = int(k.max() + 12)
    return active_q, active_c, n0, base, k, gain_values("exponential"), np.cumsum(discounts(depth))


@pytest.mark.parametrize("seed", range(6))
def test_a_query_is_searched_alike_whatever_else_is_searched(seed, monkeypatch) -> None:
    """The search works on the queries asked only (the second phase asks a few), in blocks
    of similar widths: each query's least ratio is bit for bit the one it gets when every
    query is searched in one block."""
    n = 300
    inputs = _random_search_inputs(seed, n)
    every = ndcg_difference._search(*inputs, np.arange(n))
    monkeypatch.setattr(ndcg_difference, "SEARCH_BLOCK", 1 + seed * 7)
    assert np.array_equal(ndcg_difference._search(*inputs, np.arange(n)), every, equal_nan=True)
    assert np.isfinite(every).any()
    subset = np.flatnonzero(np.random.default_rng(seed + 100).random(n) < 0.2)
    some = ndcg_difference._search(*inputs, subset)
    assert np.array_equal(some[subset], every[subset], equal_nan=True)
    assert np.isinf(np.delete(some, subset)).all()
    assert np.isinf(ndcg_difference._search(*inputs, subset[:0])).all()


def test_many_queries_bound_each_as_alone() -> None:
    """A batch of queries gets, bit for bit, each query's bounds when computed alone (the
    arrays are per query; no query's width or work leaks into another's)."""
    rng = np.random.default_rng(5)
    units = [f"u{i}" for i in range(12)]
    cases = []
    for _ in range(40):
        ranking_a = list(rng.permutation(units)[:rng.integers(0, 9)])
        ranking_b = list(rng.permutation(units)[:rng.integers(0, 9)])
        labels = {u: int(rng.integers(0, 5)) for u in units if rng.random() < 0.3}
        cases.append((ranking_a, ranking_b, labels))
    k = 6
    protocol = EvalProtocol(gain="exponential")
    measure = parse_measure("nDCG@6")

    def bounds(chosen):
        obs = [[_observation(f"q{i}", k, ranking, labels) for i, (*rankings, labels)
                in enumerate(chosen) for ranking in [rankings[side]]] for side in (0, 1)]
        batches = [ObservationBatch.from_observations(o, protocol) for o in obs]
        pair = evaluate_pair(*batches, [measure], protocol)
        return pair_bounds.pair_interval(pair.units, measure, protocol)

    lower, upper = bounds(cases)
    for i, case in enumerate(cases):
        lo, hi = bounds([case])
        assert np.array_equal(lo, lower[i:i + 1], equal_nan=True), i
        assert np.array_equal(hi, upper[i:i + 1], equal_nan=True), i
