"""The study-wide fast paths give exactly what the per-query paths give (issue 16).

A seeded random study with agreeing and disagreeing annotators (names typed in
different cases), undone labels, adjudications (some re-opened by a newer
label), unlabeled returned units, complete and incomplete queries, queries
only one run answered, and a unit id holding the whole-study read's separator:

* the whole-study ``resolved_gains`` equals the per-query resolution
  (``resolve_study``, rule by rule) with and without conflicts;
* the live dashboard's array-built state equals ``evaluate_run`` query by query,
  aggregate by aggregate, and its blocking list equals the one made from
  ``evaluate_run``'s results;
* ``compare_pair`` (packed from the store's columns, paired tests from arrays) equals
  the decisions, paired tests and trec_eval-compatible means of the observation path.
"""

import dataclasses
import random
from pathlib import Path

import numpy as np
import pytest
from store_fixtures import new_store

from evalcore.analysis.compare import compare_metric
from evalcore.analysis.decision import decide_measure, evaluate_column_pair, evaluate_pair
from evalcore.analysis.pair_comparison import compare_pair, measure_verdicts
from evalcore.analysis.run_evaluation import evaluate_run
from evalcore.analysis.trec_eval_numbers import (
    _compat_side_coded,
    _compat_side_from_dicts,
    trec_eval_compat,
)
from evalcore.api.evaluate import evaluate as evaluate_trec
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import packing_depth
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import parse_measure
from evalcore.contract.query_order import natural_key
from evalcore.live.dashboard import LiveDashboard
from evalcore.store.completeness import mark_complete
from evalcore.store.observations import observations_for_run, runs_as_columns
from evalcore.store.resolution import resolve_study, resolved_gains
from evalcore.store.runs import add_run
from evalcore.store.study_handle import open_study
from evalcore.store.transaction import write_transaction
from tests.blocking_oracle import merge_blocking, query_blocking_keys

MEASURES = ["P@5", "R@5", "nDCG@5", "RR@5", "AP@5", "Judged@5"]
ANNOTATORS = ["ann@acme.org", "Ann@Acme.org ", "bob", "cy"]


def random_study(new_store_target: Path, seed: int):
    rng = random.Random(seed)
    db = new_store(new_store_target("store.db"))
    queries = [f"q{i}" for i in range(40)]
    pools = {q: [f"{q}-d{j}" for j in range(12)] + ([f"{q}-x\x1fy"] if q == "q7" else [])
             for q in queries}
    for name, skip in (("A", "q39"), ("B", "q38")):
        rows = []
        for q in queries:
            if q == skip:
                continue
            for rank, unit in enumerate(rng.sample(pools[q], 6), 1):
                rows.append((q, rank, unit, float(10 - rank)))
        add_run(db, study_id="s", name=name, source="imported", k=6, results=rows)
    events = []
    for q in queries[:-4]:  # the last queries stay without any label
        for unit in rng.sample(pools[q], rng.randrange(3, len(pools[q]))):
            for _ in range(rng.choice((1, 1, 1, 2, 3))):
                events.append((q, unit, "label", rng.randrange(5), rng.choice(ANNOTATORS)))
                roll = rng.random()
                if roll < 0.1:
                    events.append((q, unit, "undo", None, events[-1][4]))
                elif roll < 0.2:
                    events.append((q, unit, "adjudicate", rng.randrange(5), "rev"))
    rng.shuffle(events)  # event order across units does not matter; within a unit it does
    with write_transaction(db):
        db.conn.executemany(
            "INSERT INTO label_events (study_id, query_id, unit_id, kind, gain, annotator, "
            "created_at, source) VALUES ('s', ?, ?, ?, ?, ?, '2026-01-01T00:00:00Z', 'test')",
            events,
        )
    for q in rng.sample(queries[:-4], 12):
        mark_complete(db, study_id="s", query_id=q, actor="lead")
    return db


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_whole_study_resolution_equals_the_per_query_rules(tmp_path: Path, seed: int, new_store_target) -> None:
    db = random_study(new_store_target, seed)
    resolved = resolve_study(open_study(db, "s", None))
    with_conflicts = {
        q: {u: (r.conflict_gains if r.gain is None else r.gain) for u, r in units.items()}
        for q, units in resolved.items()
    }
    assert any(isinstance(g, tuple) for units in with_conflicts.values() for g in units.values())
    assert any(r.state == "adjudicated" for units in resolved.values() for r in units.values())
    fast = resolved_gains(open_study(db, "s", None), conflicts=True)
    assert fast == with_conflicts
    assert [list(units) for units in fast.values()] == [sorted(u) for u in fast.values()]
    counting = {q: {u: g for u, g in units.items() if isinstance(g, int)}
                for q, units in with_conflicts.items()}
    assert resolved_gains(open_study(db, "s", None)) == {
        q: units for q, units in counting.items() if units
    }
    assert resolved_gains(open_study(db, "s", None), list(with_conflicts), conflicts=True) == fast


@pytest.mark.parametrize("seed", [1, 2])
def test_dashboard_from_arrays_equals_evaluate_run(tmp_path: Path, seed: int, new_store_target) -> None:
    db = random_study(new_store_target, seed)
    state = LiveDashboard.build(open_study(db, "s", None))
    reports = {run: evaluate_run(open_study(db, "s", None), run) for run in ("A", "B")}
    for run, report in reports.items():
        assert state.aggregates(run) == report.aggregates
        rs = state.runs[run]
        for metric in rs.metrics:  # the arrays as a per-query fill makes them
            for i, result in enumerate(rs.results):
                mv = result.metrics[metric]
                assert bool(rs.available[metric][i]) == mv.available
        assert state.evaluation(run).queries == report.queries
    per_query = []
    for q in state.query_ids:
        per_run = {}
        for run, report in reports.items():
            rs = state.runs[run]
            if q in rs.index:
                per_run[run] = (report.queries[rs.index[q]], rs.top_units[rs.index[q]])
        per_query.append(query_blocking_keys(q, per_run))
    assert state.blocking_list(None) == merge_blocking(per_query)


@pytest.mark.parametrize("seed", [1, 2])
def test_compare_pair_from_columns_equals_the_observation_path(tmp_path: Path, seed: int, new_store_target) -> None:
    db = random_study(new_store_target, seed)
    observations = observation_path_pair(db)
    old = observation_path_evaluation(observations, db_protocol(db))
    new = compare_pair(open_study(db, "s", None), "A", "B", MEASURES)
    assert [m.decision for m in new.measures] == [
        decide_measure(old, name, "A", "B") for name in old.measures
    ]
    reports = old.result_a.to_report(), old.result_b.to_report()
    assert [m.paired for m in new.measures] == [
        compare_metric(name, "A", reports[0], "B", reports[1]) for name in old.measures
    ]
    assert any(m.paired.n_excluded for m in new.measures)
    for side, obs in zip((0, 1), observations, strict=True):
        qrels = {o.query_id: {lab.id: lab.gain for lab in o.labels if lab.gain is not None}
                 for o in obs}
        run = {o.query_id: {u: float(len(o.returned_ids) - i)
                            for i, u in enumerate(o.returned_ids)} for o in obs if o.returned_ids}
        report = evaluate_trec({q: u for q, u in qrels.items() if u}, run, measures=MEASURES,
                               trec_eval=True).report
        for row in new.compat:
            value = (row.value_a, row.value_b)[side]
            assert value == report.aggregates[row.measure].value


def observation_path_pair(db):
    """The old path's input: both runs' per-query observations over the union of their
    query ids (when a query was answered by one run only)."""
    observations = [observations_for_run(open_study(db, "s", None), run) for run in ("A", "B")]
    ids = [[o.query_id for o in obs] for obs in observations]
    if ids[0] != ids[1]:
        union = sorted(set(ids[0]) | set(ids[1]), key=natural_key)
        observations = [
            observations_for_run(open_study(db, "s", None), run, None, union) for run in ("A", "B")
        ]
    return observations


def observation_path_evaluation(observations, protocol):
    """The old path: pack both runs' observations and evaluate the pair."""
    parsed = [parse_measure(m) for m in MEASURES]
    depth = packing_depth(parsed)
    batches = [ObservationBatch.from_observations(o, protocol, min_depth=depth)
               for o in observations]
    return evaluate_pair(batches[0], batches[1], parsed, protocol)


def db_protocol(db):
    from evalcore.store.studies import get_study

    return get_study(db, "s").protocol()


@pytest.mark.parametrize(("seed", "threshold", "gain"), [(1, 1, "linear"), (2, 2, "exponential"),
                                                         (3, 3, "linear")])
def test_compat_from_columns_equals_the_dict_path(tmp_path: Path, seed: int, threshold: int,
                                                  gain: str, new_store_target) -> None:
    """The trec_eval-compatible means packed from the store's columns are exactly those of
    ``evaluate(qrels_dict, run_dict, trec_eval=True)`` on the same runs and labels (units in
    conflict left out of the qrels), notes included."""
    db = random_study(new_store_target, seed)
    columns = runs_as_columns(open_study(db, "s", None), ["A", "B"])
    assert any(isinstance(g, tuple) for units in columns[0].gains for g in units.values())
    measures = [parse_measure(m) for m in MEASURES]
    fast = trec_eval_compat(columns, measures, threshold, gain)
    sides = [_compat_side_from_dicts(side, MEASURES, threshold, gain) for side in columns]
    assert [(row.value_a, row.n_queries_a) for row in fast[0]] == [
        sides[0][0][m] for m in MEASURES]
    assert [(row.value_b, row.n_queries_b) for row in fast[0]] == [
        sides[1][0][m] for m in MEASURES]
    assert fast[1] == list(dict.fromkeys(sides[0][1] + sides[1][1]))
    assert any("without qrels ignored" in note for note in fast[1])


def test_compat_declines_a_ranking_with_a_repeated_unit(tmp_path: Path, new_store_target) -> None:
    """A stored ranking holding a unit twice is left to the dict path, which ranks it as the
    exported run file would be ranked."""
    db = random_study(new_store_target, 1)
    rows = [(q, rank, unit, None) for q in ("q1", "q2")
            for rank, unit in enumerate([f"{q}-d0", f"{q}-d1", f"{q}-d0", f"{q}-d2"], 1)]
    add_run(db, study_id="s", name="R", source="imported", k=6, results=rows)
    side = runs_as_columns(open_study(db, "s", None), ["R", "A"])[0]
    measures = [parse_measure(m) for m in MEASURES]
    protocol = EvalProtocol(trec_eval=True)
    assert _compat_side_coded(side, measures, protocol) is None
    rows, _ = trec_eval_compat([side, side], measures, 1, "linear")
    assert [(r.value_a, r.n_queries_a) for r in rows] == [
        _compat_side_from_dicts(side, MEASURES, 1, "linear")[0][m] for m in MEASURES]
    assert any(r.n_queries_a for r in rows)


@pytest.mark.parametrize("k_b", [6, 5])
def test_paired_tests_from_the_pair_arrays_equal_compare_metric(tmp_path: Path, k_b: int, new_store_target) -> None:
    """The paired tests read from the evaluated pair's arrays equal ``compare_metric`` on
    both runs' reports, queries excluded for their reasons or a different ``k`` included."""
    db = random_study(new_store_target, 3)
    columns = runs_as_columns(open_study(db, "s", None), ["A", "B"])
    columns[1] = dataclasses.replace(columns[1], run=columns[1].run.model_copy(update={"k": k_b}))
    pair = evaluate_column_pair(columns, MEASURES, db_protocol(db))
    reports = pair.result_a.to_report(), pair.result_b.to_report()
    verdicts = measure_verdicts(pair, "A", "B", queue_limit=None, queues=False)
    for name, verdict in zip(pair.measures, verdicts, strict=True):
        expected = compare_metric(name, "A", reports[0], "B", reports[1])
        assert verdict.paired.model_dump() == expected.model_dump() | {
            "label": verdict.paired.label}
        assert verdict.paired.n_excluded
    if k_b != 6:
        assert all(m.paired.n_paired == 0 for m in verdicts)


def test_the_dashboard_and_a_stored_pair_share_one_evidence_read_per_store_state(
        tmp_path: Path, new_store_target) -> None:
    """The live dashboard's full build and a stored pair's read pack from one shared object
    (the study's evidence on the working reference, kept under the store's marks); a label
    moves the marks and the next reader reads the store again. Either way the pair equals
    one read afresh."""
    from evalcore.analysis import shared_evidence as shared
    from evalcore.analysis.decision import stored_pair
    from evalcore.analysis.pair_comparison import compare_evaluated_pair
    from evalcore.store import observations as observations_module
    from evalcore.store.labels import record_label

    db = random_study(new_store_target, 2)
    reads = []
    read = observations_module.study_evidence

    def counted(*args, **kwargs):
        reads.append(args[1:])
        return read(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shared, "study_evidence", counted)
        state = LiveDashboard.build(open_study(db, "s", None))
        kept = shared.shared_evidence(open_study(db, "s", None))
        taken = stored_pair(open_study(db, "s", None), "A", "B", MEASURES)
        assert len(reads) == 1 and kept.marks == state.marks
        assert all(c.coded_labels is kept.labels_over(open_study(db, "s", None), c.query_ids) for c in taken.columns)
        record_label(db, study_id="s", query_id="q1", unit_id="q1-d0", gain=3, annotator="zed")
        # an update of q1: the whole reference is not read
        state.refresh(open_study(db, state.study_id, None))
        assert len(reads) == 1 and not state.last_refresh.full
        moved = stored_pair(open_study(db, "s", None), "A", "B", MEASURES)
        assert len(reads) == 2
        assert shared.shared_evidence(open_study(db, "s", None)).marks == state.marks
    fresh = observations_module.study_evidence(open_study(db, "s", None))
    again = stored_pair(open_study(db, "s", None), "A", "B", MEASURES)
    assert compare_evaluated_pair(moved) == compare_evaluated_pair(again)
    q1 = moved.columns[0].query_ids.index("q1")
    assert moved.columns[0].gains[q1] == fresh.reference.gains["q1"] != kept.reference.gains["q1"]
    assert taken.columns[0].gains[q1] == kept.reference.gains["q1"]


def plain_study(new_store_target: Path, seed: int):
    """A study where most queries' units have one label each (read as columns), inserted in
    a shuffled order (SQLite's read order is not unit id order), beside queries that need
    the rules (a unit labeled twice, an undo) and a unit id holding the read's separator."""
    rng = random.Random(seed)
    db = new_store(new_store_target("store.db"))
    queries = [f"q{i}" for i in range(30)]
    pools = {q: [f"{q}-d{j}" for j in range(10)] + ([f"{q}-x\x1fy"] if q == "q3" else [])
             for q in queries}
    rows = [(q, rank, unit, float(10 - rank)) for q in queries
            for rank, unit in enumerate(rng.sample(pools[q], 6), 1)]
    add_run(db, study_id="s", name="A", source="imported", k=6, results=rows)
    events = []
    for q in queries[:-3]:
        annotator = rng.choice(ANNOTATORS)
        for unit in rng.sample(pools[q], rng.randrange(1, len(pools[q]))):
            events.append((q, unit, "label", rng.randrange(5), annotator))
    for q in ("q1", "q2"):  # a unit labeled twice (disagreeing), an undone label
        events.append((q, f"{q}-d0", "label", 4, "zed"))
        events.append((q, f"{q}-d1", "undo", None, "zed"))
    events.append(("q3", "q3-x\x1fy", "label", 2, "bob"))
    rng.shuffle(events)
    with write_transaction(db):
        db.conn.executemany(
            "INSERT INTO label_events (study_id, query_id, unit_id, kind, gain, annotator, "
            "created_at, source) VALUES ('s', ?, ?, ?, ?, ?, '2026-01-01T00:00:00Z', 'test')",
            events,
        )
    return db, queries


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_columnar_working_reference_equals_the_per_query_read(tmp_path: Path,
                                                                  seed: int, new_store_target) -> None:
    """The whole study's working reference read as columns names the same gain maps as the
    per-query rules, and gathers the same coded labels (codes, gains, ids, in the gain
    maps' order) as the codes looked up for a per-query read."""
    from evalcore.store.observations import coded_labels, reference_columns

    db, queries = plain_study(new_store_target, seed)
    whole = reference_columns(open_study(db, "s", None))
    assert whole.labels is not None and len(whole.labels.plain) > 20  # the columns are read
    assert {"q1", "q2", "q3"} <= set(whole.labels.others)
    scoped = reference_columns(open_study(db, "s", None), None, queries)
    assert dict(whole.gains) == {q: g for q, g in scoped.gains.items() if g}
    assert [list(g) for g in whole.gains.values()] == [sorted(g) for g in whole.gains.values()]
    wanted = [*reversed(queries), "q-none"]
    fast = coded_labels(open_study(db, "s", None), whole, wanted)
    slow = coded_labels(open_study(db, "s", None), scoped, wanted)
    for name in ("offsets", "units", "gain"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
        assert getattr(fast, name).dtype == getattr(slow, name).dtype, name
    assert list(fast.ids) == list(slow.ids)
    state = LiveDashboard.build(open_study(db, "s", None))
    report = evaluate_run(open_study(db, "s", None), "A")
    assert state.aggregates("A") == report.aggregates
    assert state.evaluation("A").queries == report.queries
