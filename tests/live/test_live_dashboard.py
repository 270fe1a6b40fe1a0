"""The live dashboard state: parity with evaluate_run, incremental refresh == full rebuild."""

import random
from pathlib import Path

import pytest

from evalcore.analysis.run_evaluation import evaluate_run
from evalcore.live.dashboard import LiveDashboard
from evalcore.store.completeness import mark_complete, reopen
from evalcore.store.connection import open_store
from evalcore.store.labels import adjudicate, record_label, undo_last_label
from evalcore.store.marks import store_marks
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries, create_study

STUDY = "s"


def _store(new_store_target: Path, n_queries: int = 12, seed: int = 3):
    rng = random.Random(seed)
    db = open_store(new_store_target("live.sqlite"))
    create_study(db, StudyIn(study_id=STUDY, name="live", corpus_id="c"))
    qids = [f"q{i:02d}" for i in range(n_queries)]
    add_queries(db, STUDY, [QueryIn(query_id=q, text=q) for q in qids])
    for r, k in (("r1", 5), ("r2", 5), ("r3", 4)):
        rows = []
        for q in qids[:-1]:  # the last query is answered by no run
            units = rng.sample([f"{q}-u{j}" for j in range(8)], 6)
            rows += [(q, rank, u, 1.0 / rank) for rank, u in enumerate(units, 1)]
        add_run(db, study_id=STUDY, name=r, source="imported", k=k, results=rows)
    for q in qids[: n_queries // 2]:
        for j in range(rng.randrange(0, 9)):
            record_label(db, study_id=STUDY, query_id=q, unit_id=f"{q}-u{j}",
                         gain=rng.randrange(5), annotator="alice")
    mark_complete(db, study_id=STUDY, query_id=qids[0], actor="lead")
    return db, qids


def _assert_parity(state: LiveDashboard, db) -> None:
    for run in state.run_names:
        report = evaluate_run(open_study(db, STUDY, None), run)
        assert state.aggregates(run) == report.aggregates
        evaluation = state.evaluation(run)
        assert (evaluation.queries, evaluation.aggregates, evaluation.protocol) == (
            report.queries, report.aggregates, report.protocol)
        assert [state.query_result(run, q.query_id) for q in report.queries] == report.queries


def _assert_same(a: LiveDashboard, b: LiveDashboard) -> None:
    assert a.query_ids == b.query_ids
    for run in a.run_names:
        assert a.aggregates(run) == b.aggregates(run)
        assert a.runs[run].results == b.runs[run].results
    assert a.coverage() == b.coverage()
    assert a.blocking_list(None) == b.blocking_list(None)


def test_build_equals_evaluate_run(tmp_path: Path, new_store_target) -> None:
    db, _ = _store(new_store_target)
    state = LiveDashboard.build(open_study(db, STUDY, None))
    assert state.run_names == ["r1", "r2", "r3"]
    _assert_parity(state, db)


def test_nothing_changed_reads_nothing_new(tmp_path: Path, new_store_target) -> None:
    db, _ = _store(new_store_target)
    state = LiveDashboard.build(open_study(db, STUDY, None))
    outcome = state.refresh(open_study(db, state.study_id, None))
    assert not outcome.changed and outcome.queries == []
    assert state.marks == store_marks(open_study(db, STUDY, None))


def test_incremental_refresh_equals_full_rebuild_after_every_kind_of_event(tmp_path: Path, new_store_target) -> None:
    db, qids = _store(new_store_target)
    state = LiveDashboard.build(open_study(db, STUDY, None))
    rng = random.Random(5)
    steps = [
        lambda: record_label(db, study_id=STUDY, query_id=qids[1], unit_id=f"{qids[1]}-u0",
                             gain=3, annotator="bob"),
        lambda: record_label(db, study_id=STUDY, query_id=qids[8], unit_id=f"{qids[8]}-u1",
                             gain=0, annotator="alice"),
        lambda: mark_complete(db, study_id=STUDY, query_id=qids[2], actor="lead"),
        lambda: undo_last_label(db, study_id=STUDY, query_id=qids[1], annotator="bob"),
        lambda: adjudicate(db, study_id=STUDY, query_id=qids[3], unit_id=f"{qids[3]}-u0",
                           gain=2, reviewer="rev"),
        lambda: reopen(db, study_id=STUDY, query_id=qids[0], actor="lead", reason="new doc"),
    ]
    for _ in range(25):
        q = qids[rng.randrange(len(qids) - 1)]
        unit, gain, who = f"{q}-u{rng.randrange(8)}", rng.randrange(5), rng.choice(["a", "b"])
        steps.append(
            lambda q=q, u=unit, g=gain, a=who:
            record_label(db, study_id=STUDY, query_id=q, unit_id=u, gain=g, annotator=a)
        )
    for step in steps:
        step()
        outcome = state.refresh(open_study(db, state.study_id, None))
        assert outcome.changed and not outcome.full and len(outcome.queries) == 1
        _assert_same(state, LiveDashboard.build(open_study(db, STUDY, None)))
    _assert_parity(state, db)


def test_evaluation_made_between_labels_equals_evaluate_run(tmp_path: Path, new_store_target) -> None:
    """The section-7 view made before the per-query results (a relabeled query in place),
    then kept current by each further label."""
    db, qids = _store(new_store_target)
    state = LiveDashboard.build(open_study(db, STUDY, None))
    for i, q in enumerate(qids[1:4]):
        record_label(db, study_id=STUDY, query_id=q, unit_id=f"{q}-u0", gain=i + 1,
                     annotator="bob")
        assert not state.refresh(open_study(db, state.study_id, None)).full
        _assert_parity(state, db)


def test_label_on_a_blocking_item_lowers_the_unavailable_count(tmp_path: Path, new_store_target) -> None:
    db, _ = _store(new_store_target)
    state = LiveDashboard.build(open_study(db, STUDY, None))

    def missing() -> int:
        return sum(a.n_missing for r in state.run_names for a in state.aggregates(r).values())

    before = missing()
    item = state.blocking_list(1)[0]
    assert item.unlocks > 0
    record_label(db, study_id=STUDY, query_id=item.query_id, unit_id=item.unit_id, gain=1,
                 annotator="carol")
    state.refresh(open_study(db, state.study_id, None))
    assert missing() <= before - item.unlocks
    assert item.unit_id not in {
        i.unit_id for i in state.blocking_list(None) if i.query_id == item.query_id
    }


def test_new_run_or_new_query_triggers_a_full_rebuild(tmp_path: Path, new_store_target) -> None:
    db, _ = _store(new_store_target)
    state = LiveDashboard.build(open_study(db, STUDY, None))
    record_label(db, study_id=STUDY, query_id="brand-new", unit_id="x", gain=1, annotator="a")
    outcome = state.refresh(open_study(db, state.study_id, None))
    assert outcome.full and "brand-new" in state.query_ids
    add_run(db, study_id=STUDY, name="r4", source="imported", k=3,
            results=[("q01", 1, "q01-u0", 1.0)])
    assert state.refresh(open_study(db, state.study_id, None)).full and "r4" in state.run_names
    _assert_parity(state, db)


def test_coverage_counts_pooled_and_labeled(tmp_path: Path, new_store_target) -> None:
    db, qids = _store(new_store_target)
    state = LiveDashboard.build(open_study(db, STUDY, None))
    q = qids[-2]
    cov = state.query_coverage(q)
    assert cov.labeled == 0 and cov.pooled >= 5
    r1 = state.runs["r1"]
    record_label(db, study_id=STUDY, query_id=q, unit_id=r1.top_units[r1.index[q]][0], gain=2,
                 annotator="a")
    state.refresh(open_study(db, state.study_id, None))
    assert state.query_coverage(q).labeled == 1
    total = state.coverage()
    assert total.queries == len(qids) and total.queries_complete == 1
    assert 0 < total.labeled <= total.pooled


@pytest.mark.parametrize("conflict_gain", [0, 3])
def test_conflict_counts_as_unlabeled_in_the_state(tmp_path: Path, conflict_gain: int, new_store_target) -> None:
    db, qids = _store(new_store_target)
    q = qids[-2]
    unit = f"{q}-u0"
    record_label(db, study_id=STUDY, query_id=q, unit_id=unit, gain=1, annotator="alice")
    state = LiveDashboard.build(open_study(db, STUDY, None))
    labeled = state.query_coverage(q).labeled
    record_label(db, study_id=STUDY, query_id=q, unit_id=unit, gain=conflict_gain,
                 annotator="bob")
    state.refresh(open_study(db, state.study_id, None))
    in_pool = any(unit in rs.top_units[rs.index[q]] for rs in state.runs.values())
    assert state.query_coverage(q).labeled == labeled - (1 if in_pool else 0)
    assert in_pool  # the seeded store pools this unit: the counts below are not vacuous
    # counted apart from the unlabeled items, in the query and in the study's coverage
    assert state.query_coverage(q).in_conflict == (1 if in_pool else 0)
    assert state.coverage().in_conflict == (1 if in_pool else 0)
    _assert_parity(state, db)


def test_dashboard_numbers_equal_the_evaluate_cli(tmp_path: Path, new_store_target) -> None:
    """Parity with ``evalcore evaluate --db``: after incremental refreshes, every aggregate and
    every per-query metric of the dashboard equals the command's JSON output."""
    import json

    from click.testing import CliRunner

    from evalcore.cli import main

    db, qids = _store(new_store_target)
    state = LiveDashboard.build(open_study(db, STUDY, None))
    for j, q in enumerate(qids[:6]):
        record_label(db, study_id=STUDY, query_id=q, unit_id=f"{q}-u{j}", gain=j % 5,
                     annotator="carol")
        state.refresh(open_study(db, state.study_id, None))
    for run in state.run_names:
        result = CliRunner().invoke(main, ["evaluate", "--db", str(new_store_target("live.sqlite")),
                                           "--study", STUDY, "--run", run])
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        assert out["aggregates"] == {
            m: a.model_dump(mode="json") for m, a in state.aggregates(run).items()
        }
        assert [q["query_id"] for q in out["queries"]] == state.query_ids
        for q in out["queries"]:
            mine = state.query_result(run, q["query_id"])
            assert q["metrics"] == {m: v.model_dump(mode="json") for m, v in mine.metrics.items()}


def test_runs_with_different_query_sets(tmp_path: Path, new_store_target) -> None:
    """An unregistered query answered by one run only is in that run's set alone, as in
    evaluate_run; labels on it keep every run equal to evaluate_run."""
    db, qids = _store(new_store_target)
    add_run(db, study_id=STUDY, name="extra", source="imported", k=2,
            results=[("zz-unregistered", 1, "z1", 2.0), ("zz-unregistered", 2, "z2", 1.0),
                     (qids[0], 1, f"{qids[0]}-u0", 1.0)])
    state = LiveDashboard.build(open_study(db, STUDY, None))
    assert state.query_result("extra", "zz-unregistered") is not None
    assert state.query_result("r1", "zz-unregistered") is None
    _assert_parity(state, db)
    record_label(db, study_id=STUDY, query_id="zz-unregistered", unit_id="z1", gain=3,
                 annotator="a")
    assert state.refresh(open_study(db, state.study_id, None)).full  # the label puts the query into every run's set
    assert state.query_result("r1", "zz-unregistered") is not None
    _assert_parity(state, db)
    record_label(db, study_id=STUDY, query_id="zz-unregistered", unit_id="z2", gain=0,
                 annotator="a")
    state.refresh(open_study(db, state.study_id, None))
    _assert_parity(state, db)
    undo_last_label(db, study_id=STUDY, query_id="zz-unregistered", annotator="a")
    undo_last_label(db, study_id=STUDY, query_id="zz-unregistered", annotator="a")
    state.refresh(open_study(db, state.study_id, None))
    _assert_parity(state, db)
    _assert_same(state, LiveDashboard.build(open_study(db, STUDY, None)))


def test_lists_and_counts_first_asked_after_many_refreshes_equal_a_full_rebuild(
        tmp_path: Path, new_store_target) -> None:
    """The blocking list and the cards' unknown counts are made when first asked: a state
    refreshed label after label before anyone asked equals a fresh build, and so does one
    asked at every step."""
    db, qids = _store(new_store_target)
    late = LiveDashboard.build(open_study(db, STUDY, None))
    eager = LiveDashboard.build(open_study(db, STUDY, None))
    rng = random.Random(8)
    for step in range(30):
        q = qids[rng.randrange(len(qids) - 1)]
        if step % 7 == 3:
            adjudicate(db, study_id=STUDY, query_id=q, unit_id=f"{q}-u1", gain=2, reviewer="r")
        else:
            record_label(db, study_id=STUDY, query_id=q, unit_id=f"{q}-u{rng.randrange(8)}",
                         gain=rng.randrange(5), annotator=rng.choice(["a", "b"]))
        for state in (late, eager):
            assert not state.refresh(open_study(db, state.study_id, None)).full
        assert eager.blocking_list(None) == LiveDashboard.build(
            open_study(db, STUDY, None)
        ).blocking_list(None)
        assert [eager.measure_unknowns(r, m) for r in eager.run_names for m in eager.measures]
    fresh = LiveDashboard.build(open_study(db, STUDY, None))
    for state in (late, eager):
        assert state.blocking_list(None) == fresh.blocking_list(None)
        assert state.n_blocking_items() == fresh.n_blocking_items()
        for q in qids:
            assert state.query_blocking_list(q) == fresh.query_blocking_list(q)
        for run in state.run_names:
            for measure in state.measures:
                assert state.measure_unknowns(run, measure) == fresh.measure_unknowns(run, measure)
    assert any(fresh.measure_unknowns(r, m) != (0, 0) for r in fresh.run_names
               for m in fresh.measures)
