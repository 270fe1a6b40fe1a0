"""Decided comparisons: the difference interval holds every completion, and the verdicts."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.analysis.decision import decide_batches, evaluate_pair
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import compute, packing_depth
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import parse_measure
from evalcore.contract.observation import Label, Observation
from evalcore.store.study_handle import open_study
from tests.observation_strategies import draw_labels, draw_rankings

UNITS = [f"u{i}" for i in range(9)]
MEASURES = [parse_measure(m) for m in (
    "P@3", "P@5", "P(rel=2)@4", "RBP(p=0.8)@5", "RR@5", "Success@3", "nDCG@5", "nDCG@3", "R@4",
    "AP@5", "Judged@5", "P", "nDCG",
)]


@st.composite
def pairs(draw):
    """Two runs over 1..3 queries sharing units; some labeled, some in conflict, the rest
    unlabeled (shared unknowns)."""
    n = draw(st.integers(1, 3))
    k = draw(st.sampled_from([3, 5, 6]))
    queries = []
    for q in range(n):
        ranking_a, ranking_b = draw_rankings(draw, UNITS, 7)
        labels = draw_labels(draw, UNITS)
        queries.append((f"q{q}", ranking_a, ranking_b, labels))
    protocol = EvalProtocol(relevance_threshold=draw(st.integers(1, 3)),
                            gain=draw(st.sampled_from(["linear", "exponential"])))
    return k, queries, protocol


def _label(unit, gain):
    if isinstance(gain, tuple):
        return Label(id=unit, conflict=gain)
    return Label(id=unit, gain=gain)


def _batches(k, queries, protocol, fill=None):
    """Both runs' batches; ``fill`` maps (query, unit) -> gain for unknown units."""
    out = []
    depth = packing_depth(MEASURES)
    for side in (1, 2):
        observations = []
        for qid, ra, rb, labels in queries:
            given_labels = dict(labels)
            if fill is not None:
                for (fq, unit), gain in fill.items():
                    if fq == qid:
                        given_labels[unit] = gain
            observations.append(Observation(
                query_id=qid, k=k, returned_ids=ra if side == 1 else rb,
                labels=[_label(u, g) for u, g in sorted(given_labels.items())],
                population_complete=True,
            ))
        out.append(ObservationBatch.from_observations(observations, protocol, min_depth=depth))
    return out


def _unknowns(k, queries, cut):
    """The (query, unit) a completion of a measure with cutoff ``cut`` ranges over, with
    their possible gains: unlabeled units a run returns in 1..cut (a completion labels
    them; the population is complete, so no other unit is relevant) and every conflict."""
    out = {}
    for qid, ra, rb, labels in queries:
        for unit in dict.fromkeys(ra[:cut] + rb[:cut]):
            if unit not in labels:
                out[(qid, unit)] = (0, 1, 2, 3, 4)
        for unit, gain in labels.items():
            if isinstance(gain, tuple):
                out[(qid, unit)] = gain
    return out


def _completions(unknowns, draw_random):
    keys = list(unknowns)
    extremes = [
        {key: min(unknowns[key]) for key in keys},
        {key: max(unknowns[key]) for key in keys},
    ]
    yield from extremes
    if len(keys) <= 5:  # every vertex (each unknown at its lowest or highest gain)
        for choice in itertools.product((0, 1), repeat=len(keys)):
            yield {key: (min(unknowns[key]), max(unknowns[key]))[c]
                   for key, c in zip(keys, choice, strict=True)}
    for _ in range(12):
        yield {key: draw_random(unknowns[key]) for key in keys}


@settings(deadline=None, max_examples=100)
@given(pairs(), st.randoms(use_true_random=False))
def test_every_completion_lies_inside_the_decided_interval(case, rnd) -> None:
    k, queries, protocol = case
    batch_a, batch_b = _batches(k, queries, protocol)
    pair = evaluate_pair(batch_a, batch_b, MEASURES, protocol)
    for cut in sorted({m.k or k for m in MEASURES}):
        names = [n for n, m in pair.measures.items() if (m.k or k) == cut and m.family != "Judged"]
        # Judged measures the labels, not the truth: labeling moves it by design.
        intervals = {name: pair.intervals(name) for name in names}
        for fill in _completions(_unknowns(k, queries, cut), rnd.choice):
            full_a, full_b = _batches(k, queries, protocol, fill)
            res_a = compute(full_a, protocol, MEASURES)
            res_b = compute(full_b, protocol, MEASURES)
            for name, (lower, upper, naive_lo, naive_hi) in intervals.items():
                ok = res_a.available(name) & res_b.available(name)
                diff = res_a.metrics[name].value - res_b.metrics[name].value
                bounded = ~np.isnan(lower)
                check = ok & bounded
                assert np.all(lower[check] <= diff[check] + 1e-9), (name, fill, lower, diff)
                assert np.all(diff[check] <= upper[check] + 1e-9), (name, fill, upper, diff)
                # and never wider than the naive interval
                assert np.all(lower[bounded] >= naive_lo[bounded] - 1e-12)
                assert np.all(upper[bounded] <= naive_hi[bounded] + 1e-12)


def _obs(qid, returned, labels, k=4, complete=True):
    return Observation(query_id=qid, k=k, returned_ids=returned,
                       labels=[Label(id=u, gain=g) for u, g in labels.items()],
                       population_complete=complete)


def _decide(a, b, names):
    measures = [parse_measure(m) for m in names]
    depth = packing_depth(measures)
    ba = ObservationBatch.from_observations(a, min_depth=depth)
    bb = ObservationBatch.from_observations(b, min_depth=depth)
    return {d.measure: d for d in decide_batches(ba, bb, measures, run_a="A", run_b="B")}


def test_shared_unlabeled_units_decide_precision_the_naive_interval_cannot() -> None:
    # A and B return the same two unlabeled units; A has one more known relevant unit.
    a = [_obs("q1", ["x", "y", "r", "n"], {"r": 2, "n": 0, "m": 0})]
    b = [_obs("q1", ["y", "x", "n", "m"], {"r": 2, "n": 0, "m": 0})]
    d = _decide(a, b, ["P@4", "RR@4", "nDCG@4"])["P@4"]
    assert d.verdict == "a_better" and d.verdict_text == "decided: A better"
    assert d.lower == d.upper == 0.25
    assert d.naive_lower == -0.25 and d.naive_upper == 0.75
    assert d.n_unknown_units == 0 and d.n_known == 1


def test_rr_and_ndcg_stay_undecided_when_the_shared_unknowns_can_swing_them() -> None:
    a = [_obs("q1", ["x", "y", "r", "n"], {"r": 2, "n": 0, "m": 0})]
    b = [_obs("q1", ["y", "x", "n", "m"], {"r": 2, "n": 0, "m": 0})]
    decisions = _decide(a, b, ["RR@4", "nDCG@4"])
    rr = decisions["RR@4"]
    # x relevant, y not: A = 1, B = 1/2; y relevant, x not: A = 1/2, B = 1; neither: 1/3 - 0.
    assert rr.verdict == "undecided" and rr.lower == -0.5 and rr.upper == 0.5
    assert rr.n_unknown_units == 2
    assert decisions["nDCG@4"].verdict == "undecided"


def test_tied_when_both_runs_return_the_same_ranking() -> None:
    a = [_obs("q1", ["x", "y", "r"], {"r": 1}), _obs("q2", ["z"], {"z": 3})]
    d = _decide(a, a, ["P@4", "RR@4", "nDCG@4", "RBP(p=0.5)@4", "R@4", "Success@2", "AP@4"])
    for name in ("P@4", "RR@4", "RBP(p=0.5)@4", "Success@2"):
        assert d[name].verdict == "tied", name
        assert d[name].lower == d[name].upper == 0.0
    assert d["nDCG@4"].verdict == "tied" and d["R@4"].verdict == "tied"
    # AP's pair method: the runs rank the shared unknowns alike, so their shares cancel
    assert d["AP@4"].verdict == "tied" and d["AP@4"].lower == d["AP@4"].upper == 0.0
    assert "shared |R|" in d["AP@4"].method


def test_b_better_and_undecidable_with_reasons() -> None:
    a = [_obs("q1", ["n", "x"], {"r": 1, "n": 0})]
    b = [_obs("q1", ["r", "x"], {"r": 1, "n": 0})]
    d = _decide(a, b, ["P@1"])["P@1"]
    assert d.verdict == "b_better" and d.upper == -1.0
    # Section 12: an open population bounds R. B holds r, A does not, x is shared; with any
    # number of relevant units outside both cuts the difference -1 / (1 + ...) tends to 0
    # but never reaches it: B is better whatever the missing labels are (an open end).
    a2 = [_obs("q1", ["n", "x"], {"r": 1, "n": 0}, complete=False)]
    b2 = [_obs("q1", ["r", "x"], {"r": 1, "n": 0}, complete=False)]
    r = _decide(a2, b2, ["R@2"])["R@2"]
    assert r.verdict == "b_better" and (r.lower, r.upper) == (-1.0, 0.0)
    assert r.upper_open and not r.lower_open and "[-1.0000, +0.0000)" in r.summary
    # with a corpus size the outside units are few: an ordinary closed interval
    sized = [ObservationBatch.from_observations(o, min_depth=2).with_corpus_size(7)
             for o in (a2, b2)]
    (r,) = decide_batches(*sized, [parse_measure("R@2")])
    # 7 units: r and n labeled, x unlabeled in both cuts, so U_out = 4: |R| <= 1 + 1 + 4
    assert r.verdict == "b_better" and r.upper == -1 / (1 + 1 + 4) and not r.upper_open
    # Undecidable: a run returned units nobody labeled (missing_reference) in both runs
    a3 = [_obs("q1", ["n", "x"], {"r": 1, "n": 0}), _obs("q2", ["y"], {}, complete=False)]
    b3 = [_obs("q1", ["r", "x"], {"r": 1, "n": 0}), _obs("q2", ["z"], {}, complete=False)]
    r = _decide(a3, b3, ["R@2"])["R@2"]
    assert r.verdict == "undecidable" and r.lower is None
    assert r.n_undecidable == 1 and r.undecidable_reasons == {"missing_reference": 2}
    assert "missing_reference" in r.summary


def test_different_query_sets_are_refused_with_a_clear_message() -> None:
    import pytest

    a = [_obs("q1", ["x"], {"x": 1})]
    b = [_obs("q2", ["x"], {"x": 1})]
    with pytest.raises(ValueError, match="same query set"):
        _decide(a, b, ["P@1"])


def test_decide_from_the_store_follows_the_labels_and_covers_both_runs_queries(tmp_path, store_target) -> None:
    from store_fixtures import new_store

    from evalcore.analysis.decision import decide
    from evalcore.store.labels import record_label
    from evalcore.store.runs import add_run

    db = new_store(store_target)
    add_run(db, study_id="s", name="A", source="imported", k=2,
            results=[("q1", 1, "r", 2.0), ("q1", 2, "x", 1.0), ("q2", 1, "y", 1.0)])
    add_run(db, study_id="s", name="B", source="imported", k=2,
            results=[("q1", 1, "x", 2.0), ("q1", 2, "n", 1.0)])
    for query, unit, gain in (("q1", "r", 1), ("q1", "n", 0), ("q2", "z", 1)):
        record_label(db, study_id="s", query_id=query, unit_id=unit, gain=gain, annotator="ann")
    # q1: A = r (rel) + x, B = x + n (non-rel): A - B = 1/2 whatever x is. q2: A returns y
    # (unlabeled), B nothing: A - B in [0, 1/2].
    (d,) = decide(open_study(db, "s", None), "A", "B", ["P@2"])
    assert d.n_queries == 2
    assert d.verdict == "a_better" and (d.lower, d.upper) == (0.25, 0.5)
    record_label(db, study_id="s", query_id="q2", unit_id="y", gain=0, annotator="ann")
    (d,) = decide(open_study(db, "s", None), "A", "B", ["P@2"])
    assert (d.lower, d.upper) == (0.25, 0.25) and d.n_unknown_units == 0
    # A query only one run answered, with no label anywhere: over the union, undecidable
    # (C's units need labels; B returned nothing there, so nothing of B's is missing).
    add_run(db, study_id="s", name="C", source="imported", k=2,
            results=[("q1", 1, "r", 2.0), ("q3", 1, "w", 1.0)])
    (d,) = decide(open_study(db, "s", None), "C", "B", ["P@2"])
    assert d.n_queries == 3 and d.verdict == "undecidable"
    assert d.undecidable_reasons == {"missing_reference": 1}


def test_stored_pair_reads_the_same_batches_as_the_observations(tmp_path, store_target) -> None:
    """``stored_pair`` packs columns read once for both runs; they must be the
    batches of ``observations_for_run`` over the union of the runs' queries: conflicts,
    undone labels, adjudications, mixed-case annotators, completeness, pinned ids."""
    from store_fixtures import new_store

    from evalcore.analysis.decision import stored_pair
    from evalcore.contract.query_order import natural_key
    from evalcore.store.completeness import mark_complete
    from evalcore.store.labels import adjudicate, record_label, undo_last_label
    from evalcore.store.observations import observations_for_run
    from evalcore.store.references import freeze_reference
    from evalcore.store.runs import add_run

    db = new_store(store_target)
    add_run(db, study_id="s", name="A", source="imported", k=3,
            results=[("q1", 1, "r", 3.0), ("q1", 2, "x", 2.0), ("q1", 3, "c", 1.0),
                     ("q2", 1, "y", 1.0), ("q10", 1, "z", 1.0)])
    add_run(db, study_id="s", name="B", source="imported", k=2,
            results=[("q1", 1, "x", 2.0), ("q1", 2, "n", 1.0), ("q3", 1, "w", 1.0)])
    for query, unit, gain, who in (("q1", "r", 1, "ann"), ("q1", "n", 0, "ann"),
                                   ("q1", "c", 2, "ann"), ("q1", "c", 0, "Bob@X.org"),
                                   ("q1", "x", 3, "bob@x.org"), ("q1", "x", 1, "Bob@X.org"),
                                   ("q2", "z", 1, "ann"), ("q2", "y", 4, "ann"),
                                   ("q10", "u", 2, "ann"), ("q10", "z", 0, "ann")):
        record_label(db, study_id="s", query_id=query, unit_id=unit, gain=gain, annotator=who)
    undo_last_label(db, study_id="s", query_id="q2", annotator="ann")  # y's 4
    adjudicate(db, study_id="s", query_id="q10", unit_id="z", gain=2, reviewer="rev")
    record_label(db, study_id="s", query_id="q10", unit_id="z", gain=1, annotator="cy")
    mark_complete(db, study_id="s", query_id="q1", actor="lead")
    # cutoffs within both runs' stored depths (B: 2); A, stored to 3, is packed to its depth
    measures = [parse_measure(m) for m in ("P@2", "nDCG@2", "R@2")]
    freeze_reference(db, study_id="s", name="v1", actor="lead")
    for reference in (None, "v1"):
        pair = stored_pair(open_study(db, "s", None), "A", "B", measures, reference).pair
        ids = [[o.query_id for o in observations_for_run(open_study(db, "s", None), r, reference)] for r in "AB"]
        union = sorted(set(ids[0]) | set(ids[1]), key=natural_key)
        protocol = pair.protocol
        for run, result in (("A", pair.result_a), ("B", pair.result_b)):
            expected = ObservationBatch.from_observations(
                observations_for_run(open_study(db, "s", None), run, reference, union),
                protocol,
                min_depth=2,
            )
            got = result.batch
            assert got.query_ids == expected.query_ids == union
            for name in ("k", "pos_offsets", "pos_gain", "pos_dup", "label_offsets",
                         "label_gain", "population_complete", "scan_complete",
                         "permission_violation", "duplicate_reference"):
                assert np.array_equal(getattr(got, name), getattr(expected, name)), name
            assert [list(t) for t in got.top_units] == [list(t) for t in expected.top_units]
            assert got.conflict_labels == expected.conflict_labels
            assert bool(got.conflict_labels) == (reference is None)  # c and x are in conflict


def test_the_ndcg_search_skipped_where_a_query_stays_undecidable_changes_no_bit(
        monkeypatch) -> None:
    """nDCG's joint search runs only on queries some naive end bounds (elsewhere NaN wins):
    every interval, naive or paired, is bit for bit the one of searching every query."""
    import random

    from evalcore.analysis import decision, pair_bounds

    rng = random.Random(4)
    qids = [f"q{i}" for i in range(60)]
    pool = [[f"{q}-d{j}" for j in range(12)] for q in qids]
    runs = [[rng.sample(p, 8) for p in pool] for _ in range(2)]
    labeled = [rng.sample(p, rng.randrange(0, 10)) for p in pool]
    gains = [[rng.randrange(5) for _ in ids] for ids in labeled]
    # an incomplete query without labels: missing_reference, no bounds
    complete = [rng.random() < 0.5 for _ in qids]
    protocol = EvalProtocol()
    measures = [parse_measure(m) for m in ("nDCG@5", "nDCG@8", "P@5", "R@8")]
    maps = [dict(zip(ids, g, strict=True)) for ids, g in zip(labeled, gains, strict=True)]
    batches = [ObservationBatch.from_gain_maps(qids, 8, run, maps, complete, protocol=protocol)
               for run in runs]
    fast = evaluate_pair(*batches, measures, protocol)
    asked = []
    every = pair_bounds.pair_interval_ends
    monkeypatch.setattr(decision, "pair_interval_ends", lambda units, measure, protocol,
                        needed=None: (asked.append(needed) or every(units, measure, protocol)))
    slow = evaluate_pair(*batches, measures, protocol)
    for name in fast.measures:
        for x, y in zip(fast.intervals(name), slow.intervals(name), strict=True):
            assert np.array_equal(x, y, equal_nan=True), name
    assert any(needed is not None and not needed.all() for needed in asked)  # some skipped
