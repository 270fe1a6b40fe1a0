"""The to-decide queue: units ordered by the width their label removes, and the estimate."""

import dataclasses
from collections.abc import Sequence
from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.analysis import decision_queue
from evalcore.analysis.decision import decide_measure, evaluate_pair
from evalcore.analysis.decision_queue import decide_queue
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import packing_depth
from evalcore.contract.measures import parse_measure
from evalcore.contract.observation import Label, Observation


def _obs(qid, returned, labels, k=4):
    return Observation(query_id=qid, k=k, returned_ids=returned,
                       labels=[Label(id=u, gain=g) if isinstance(g, int) else
                               Label(id=u, conflict=g) for u, g in labels.items()],
                       population_complete=True)


def _pair(a, b, names):
    measures = [parse_measure(m) for m in names]
    depth = packing_depth(measures)
    return evaluate_pair(ObservationBatch.from_observations(a, min_depth=depth),
                         ObservationBatch.from_observations(b, min_depth=depth), measures)


def test_precision_queue_scores_each_unit_by_its_net_weight_and_skips_shared_ones() -> None:
    labels = {"r": 1, "n": 0, "m": 0}
    a = [_obs("q1", ["x", "y", "r", "n"], labels), _obs("q2", ["w", "r"], {"r": 1})]
    b = [_obs("q1", ["y", "z", "n", "m"], labels), _obs("q2", ["r", "w"], {"r": 1})]
    pair = _pair(a, b, ["P@4"])
    queue = decide_queue(pair, "P@4")
    # x only in A, z only in B: each moves A - B by 1/4 on one of 2 queries; y (both runs,
    # both in the cut) moves nothing and comes last; q2 is known (w is at ranks 1 and 2,
    # both in the cut): none of its units is a candidate.
    assert [(i.query_id, i.unit_id) for i in queue.items] == [
        ("q1", "x"), ("q1", "z"), ("q1", "y")]
    assert [round(i.removes, 12) for i in queue.items] == [0.125, 0.125, 0.0]
    assert queue.items[0].rank_a == 1 and queue.items[0].rank_b == 0
    assert queue.n_candidates == 3
    d = decide_measure(pair, "P@4")
    # mean interval: q1 A - B = 1/4 + x/4 - z/4 in [0, 1/2], q2 = 0 -> [0, 0.25]
    assert d.verdict == "undecided" and (d.lower, d.upper) == (0.0, 0.25)
    # x relevant decides it in one label (lower end 1/4 + 1/4 - 1/4); x not needs z too (z
    # not relevant: A better; relevant: tied). The estimate is one of the two.
    assert queue.labels_to_decide in (1, 2)
    rows = np.array([r for r in range(pair.units.query.size)
                     if pair.units.unit_id(r) in ("x", "z", "y")
                     and pair.units.query[r] == 0])
    rows = rows[np.argsort([("x", "z", "y").index(pair.units.unit_id(r)) for r in rows])]
    lower, upper, _, _ = pair.intervals("P@4")
    now = (lower, upper, *pair.open_ends("P@4"))
    gains = np.array([[4, 0, 0], [0, 0, 0], [0, 4, 0]], dtype=np.int8)  # x | z | neither
    assert decision_queue._labels_until_settled(pair, "P@4", rows, gains, now) == [1, 2, 2]
    # Labeling z non-relevant decides it: A better.
    b2 = [_obs("q1", ["y", "z", "n", "m"], {**labels, "z": 0}), b[1]]
    a2 = [_obs("q1", ["x", "y", "r", "n"], {**labels, "z": 0}), a[1]]
    assert decide_measure(_pair(a2, b2, ["P@4"]), "P@4").verdict == "a_better"


def test_queue_prefers_the_unit_that_removes_more_and_names_conflicts() -> None:
    a = [_obs("q1", ["x", "c", "r"], {"r": 2, "c": (0, 3)})]
    b = [_obs("q1", ["r", "q", "x"], {"r": 2, "c": (0, 3)})]
    pair = _pair(a, b, ["RBP(p=0.5)@3", "RR@3"])
    queue = decide_queue(pair, "RBP(p=0.5)@3")
    removes = {i.unit_id: i.removes for i in queue.items}
    # RBP weights 0.5, 0.25, 0.125: x is at 1 in A and 3 in B (net 0.375), c at 2 in A
    # only (0.25), q at 2 in B only (0.25).
    assert list(removes) == ["x", "c", "q"]
    assert abs(removes["x"] - 0.375) < 1e-12 and abs(removes["c"] - 0.25) < 1e-12
    assert {i.unit_id: i.kind for i in queue.items}["c"] == "conflict"
    rr = decide_queue(pair, "RR@3")
    assert rr.items and rr.items[0].unit_id == "x"


def test_decided_comparison_has_an_empty_queue() -> None:
    a = [_obs("q1", ["r", "x"], {"r": 1, "n": 0})]
    b = [_obs("q1", ["n", "x"], {"r": 1, "n": 0})]
    pair = _pair(a, b, ["P@1"])
    assert decide_measure(pair, "P@1").verdict == "a_better"
    queue = decide_queue(pair, "P@1")
    assert queue.items == [] and queue.labels_to_decide == 0


def test_units_are_matched_exactly_even_when_their_hashes_collide(monkeypatch) -> None:
    from evalcore.analysis import pair_units

    labels = {"r": 1, "n": 0, "m": 0}
    a = [_obs("q1", ["x", "y", "r", "n"], labels)]
    b = [_obs("q1", ["y", "z", "n", "m"], labels)]
    honest = _pair(a, b, ["P@4"])
    monkeypatch.setattr(pair_units, "hash", lambda _: 7, raising=False)  # every id collides
    collided = _pair(a, b, ["P@4"])
    for pair in (honest, collided):
        u = pair.units
        assert sorted(u.unit_id(r) for r in range(u.query.size)) == ["m", "n", "r", "x", "y", "z"]
    assert decide_queue(collided, "P@4") == decide_queue(honest, "P@4")


def test_ndcg_queue_completes_the_query_expected_to_lift_the_lower_end_most_first() -> None:
    """nDCG's interval is a ratio over a shared IDCG: labeling a whole query collapses it,
    so the queue takes queries whole, the one expected to move the lower end most first.
    The labeled units say A's units are relevant (gain 3) and B's are not: q1's own
    lower end is already above 0, q2's is far below it with A's units likely relevant."""
    labels = {"a1": 3, "a2": 3, "b1": 0, "b2": 0, "n": 0}
    a = [_obs("q1", ["a1", "a2", "x1", "x2"], labels), _obs("q2", ["u1", "n", "u2", "a1"], labels)]
    b = [_obs("q1", ["b1", "b2", "y1", "y2"], labels), _obs("q2", ["n", "v1", "a1", "v2"], labels)]
    pair = _pair(a, b, ["nDCG@4"])
    lower, _, _, _ = pair.intervals("nDCG@4")
    assert lower[0] > 0 > lower[1]
    assert decide_measure(pair, "nDCG@4").verdict == "undecided"
    queue = decide_queue(pair, "nDCG@4", limit=None)
    queries = [i.query_id for i in queue.items]
    assert queries == ["q2"] * 4 + ["q1"] * 4
    assert queue.items[0].progress > queue.items[4].progress > 0


def _scenarios_by_whole_query_copies(pair, name, rows):
    """The scenarios the way they were first computed: every row's whole query copied with
    the unit's gain fixed, the pair interval recomputed on the copies."""
    import numpy as np

    from evalcore.analysis.pair_bounds import pair_interval

    u, measure = pair.units, pair.measures[name]
    lower, upper = pair_interval(u, measure, pair.protocol)
    out = [lower[u.query[rows]], upper[u.query[rows]]]
    for gains in (u.low[rows], u.high[rows]):
        out += list(pair_interval(u.what_if(rows, gains), measure, pair.protocol))
    return [np.nan_to_num(a, nan=0.0) for a in out]


def _random_pair(seed: int, names: list[str]):
    import random

    rng = random.Random(seed)
    pool = [f"d{i}" for i in range(12)]
    a, b = [], []
    for q in range(8):
        labels = {}
        for unit in rng.sample(pool, rng.randint(0, 8)):
            roll = rng.random()
            labels[unit] = (rng.randint(0, 1), rng.randint(2, 3)) if roll < 0.2 else rng.randint(0, 3)
        k = rng.choice([3, 5, 6])
        a.append(_obs(f"q{q}", rng.sample(pool, k), labels, k=k))
        b.append(_obs(f"q{q}", rng.sample(pool, rng.randint(1, k)), labels, k=k))
    return _pair(a, b, names)


def test_every_rows_scenarios_equal_those_of_whole_query_copies() -> None:
    """The fast scenarios (P and RBP in closed form, RR and Success on copies of only the
    rows they read) equal recomputing the pair interval on whole-query copies, row by row,
    on seeded studies with conflicts and unlabeled units at every threshold."""
    import numpy as np

    from evalcore.analysis.decision_queue import _scenarios

    names = ["P@3", "P(rel=2)@5", "RBP(p=0.5)@5", "RR@5", "RR(rel=3)@3", "Success@3",
             "nDCG@5", "R@5"]
    for seed in range(40):
        pair = _random_pair(seed, names)
        rows = np.arange(pair.units.query.size)
        for name in names:
            fast = _scenarios(pair, name, rows)
            slow = _scenarios_by_whole_query_copies(pair, name, rows)
            for got, want in zip(fast, slow, strict=True):
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-12,
                                           err_msg=f"seed {seed} {name}")
            queue = decide_queue(pair, name, limit=None)
            assert queue.n_candidates == len(queue.items)


class _CountingNames(Sequence[str]):
    """Unit names that count how many were read."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names, self.reads = names, 0

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, i):  # type: ignore[override]
        self.reads += 1
        return self.names[i]


@st.composite
def tied_pairs(draw):
    """Two runs over a few queries, few labels: many units tie on every key but the id
    (same rank in one run only, same class, same score); unit ids in no sorted order."""
    units = ["u9", "u1", "b", "a", "z3", "z10", "m", "c"]
    queries_a, queries_b = [], []
    for q in range(draw(st.integers(1, 4))):
        a = draw(st.lists(st.sampled_from(units), unique=True, max_size=6))
        b = draw(st.lists(st.sampled_from(units), unique=True, max_size=6))
        labels = {u: draw(st.sampled_from([0, 1, 2, (0, 3)]))
                  for u in draw(st.lists(st.sampled_from(units), unique=True, max_size=2))}
        queries_a.append(_obs(f"q{q}", a, labels, k=5))
        queries_b.append(_obs(f"q{q}", b, labels, k=5))
    return queries_a, queries_b


def every_row_named_order(pair, name, rows, scores, progress, head=None, hint=None):
    """The queue order as it was made before heads were named alone: every row named."""
    names = np.array([pair.units.unit_id(r) for r in rows.tolist()], dtype=object)
    by_name = np.empty(rows.size, dtype=np.int64)
    by_name[np.argsort(names, kind="stable")] = np.arange(rows.size)
    return np.lexsort((by_name, *decision_queue.queue_keys(pair, name, rows, scores, progress,
                                                           hint)))


@settings(deadline=None, max_examples=150)
@given(tied_pairs(), st.integers(0, 12))
def test_a_queue_head_names_only_its_ties_and_equals_the_whole_queue(case, limit) -> None:
    """The first ``limit`` items (only the rows tied with them named), and the whole queue,
    are those of the queue ordered with every candidate named; the estimate is the same."""
    a, b = case
    measures = ["P@5", "RR@5", "RBP(p=0.8)@3", "nDCG@5", "R@5", "AP@5", "Success@2"]
    pair = _pair(a, b, measures)
    for name in measures:
        with patch.object(decision_queue, "order_rows", every_row_named_order):
            before = decide_queue(pair, name, limit=None)
        for head in (decide_queue(pair, name, limit=limit), decide_queue(pair, name, None)):
            assert head.items == before.items[: len(head.items)]
            assert (head.n_candidates, head.labels_to_decide) == (
                before.n_candidates, before.labels_to_decide)


def test_a_queue_head_names_few_units() -> None:
    """30 queries whose units all tie but for their ids: the head of 3 names its query's
    tied units and itself, not every candidate."""
    a = [_obs(f"q{q:02d}", [f"x{j}" for j in range(4)], {}, k=4) for q in range(30)]
    b = [_obs(f"q{q:02d}", [f"y{j}" for j in range(4)], {}, k=4) for q in range(30)]
    pair = _pair(a, b, ["P@4"])
    counting = _CountingNames(pair.units.unit_names)
    named = dataclasses.replace(pair, units=dataclasses.replace(pair.units,
                                                                unit_names=counting))
    queue = decide_queue(named, "P@4", limit=3)
    assert queue.n_candidates == 240 and len(queue.items) == 3
    assert counting.reads <= 2 * 4 + 3  # one query's tied x and y at rank 1 at most, then 3
    assert queue.items == decide_queue(pair, "P@4", limit=None).items[:3]


def test_automatic_judgments_only_break_ties_of_the_order() -> None:
    """A hint (automatic gains, never evidence) moves a tied unit it judges relevant ahead
    and one it judges not relevant back; the items, their scores and the estimate stay."""
    a = [_obs(f"q{q:02d}", [f"x{j}" for j in range(4)], {}, k=4) for q in range(6)]
    b = [_obs(f"q{q:02d}", [f"y{j}" for j in range(4)], {}, k=4) for q in range(6)]
    pair = _pair(a, b, ["P@4"])
    plain = decide_queue(pair, "P@4", limit=None)
    first = (plain.items[0].query_id, plain.items[0].unit_id)
    hint = {("q03", "y2"): 4.0, first: 0.0}
    hinted = decide_queue(pair, "P@4", limit=None, automatic=hint)
    assert (hinted.items[0].query_id, hinted.items[0].unit_id) == ("q03", "y2")
    assert (hinted.items[-1].query_id, hinted.items[-1].unit_id) == first
    assert sorted(hinted.items, key=repr) == sorted(plain.items, key=repr)
    assert (hinted.n_candidates, hinted.labels_to_decide) == (
        plain.n_candidates, plain.labels_to_decide)
    assert decide_queue(pair, "P@4", limit=3, automatic=hint).items == hinted.items[:3]
    assert decide_queue(pair, "P@4", limit=None, automatic={}).items == plain.items
