"""The embedded demo study: deterministic, idempotent, and showing every feature."""

import re
from pathlib import Path

from click.testing import CliRunner
from store_fixtures import table_snapshot

from evalcore.annotation.pool import query_pool
from evalcore.annotation.progress import study_progress
from evalcore.cli import main
from evalcore.demo.corpus import HOSTILE_DOC_ID, HOSTILE_TEXT, ORG_A, ORG_B, demo_documents
from evalcore.demo.study import (
    COMPLETE_QUERIES,
    DEMO_STUDY_ID,
    RUN_PROTOCOLS,
    build_demo,
    ensure_demo_if_empty,
)
from evalcore.store.connection import open_store
from evalcore.store.runs import list_runs
from evalcore.store.studies import StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import create_study


def test_documents_are_deterministic_readable_and_spread() -> None:
    first, second = demo_documents(), demo_documents()
    assert first == second
    assert len(first) >= 300
    owners = [d.owner_org for d in first]
    assert owners.count(ORG_A) > owners.count(ORG_B) > 0
    years = {d.created_at.year for d in first}
    assert years >= {2024, 2025, 2026}
    assert all(d.title and len(d.text.split()) >= 15 for d in first if d.doc_id != HOSTILE_DOC_ID)
    hostile = next(d for d in first if d.doc_id == HOSTILE_DOC_ID)
    assert hostile.text == HOSTILE_TEXT


def test_build_demo_writes_every_feature_and_is_idempotent(tmp_path: Path, new_store_target) -> None:
    db = open_store(new_store_target("demo.sqlite"))
    summary = build_demo(db)
    assert summary.created and summary.documents >= 300 and summary.queries == 25
    runs = list_runs(open_study(db, DEMO_STUDY_ID, None))
    assert [r.name for r in runs] == list(RUN_PROTOCOLS)
    assert all(r.source == "lexical" and r.corpus_fingerprint for r in runs)
    assert runs[0].protocol != runs[1].protocol  # different protocols
    assert len({r.k for r in runs}) == 1  # same depth: Compare pairs every query
    assert runs[0].corpus_fingerprint == runs[1].corpus_fingerprint  # comparable
    progress = study_progress(open_study(db, DEMO_STUDY_ID, None))
    assert progress.conflicts >= 1
    assert progress.complete == len(COMPLETE_QUERIES)
    assert 0 < progress.labeled < progress.pooled
    annotators = {r[0] for r in db.execute("SELECT DISTINCT annotator FROM label_events")}
    assert annotators == {"alice", "bob"}
    assert HOSTILE_DOC_ID in {i.unit_id for i in query_pool(open_study(db, DEMO_STUDY_ID, None), "q01")}

    before = table_snapshot(db)
    again = build_demo(db)
    assert not again.created
    assert table_snapshot(db) == before


def test_same_demo_in_two_stores(tmp_path: Path, new_store_target) -> None:
    a = open_store(new_store_target("a.sqlite"))
    b = open_store(new_store_target("b.sqlite"))
    build_demo(a)
    build_demo(b)
    sql = "SELECT query_id, rank, unit_id, score FROM results ORDER BY run_id, query_id, rank"
    assert a.execute(sql).fetchall() == b.execute(sql).fetchall()
    sql = "SELECT query_id, unit_id, gain, annotator FROM label_events ORDER BY event_id"
    assert a.execute(sql).fetchall() == b.execute(sql).fetchall()


def test_ensure_demo_leaves_a_store_with_other_studies_alone(tmp_path: Path, new_store_target) -> None:
    db = open_store(new_store_target("mine.sqlite"))
    create_study(db, StudyIn(study_id="mine", corpus_id="c"))
    assert ensure_demo_if_empty(db) is None
    assert [r[0] for r in db.execute("SELECT study_id FROM studies")] == ["mine"]
    empty = open_store(new_store_target("empty.sqlite"))
    assert ensure_demo_if_empty(empty).created


def test_a_study_created_after_the_check_keeps_the_demo_out(new_store_target, monkeypatch) -> None:
    """The emptiness check is repeated holding the write lock: a study that another process
    created between the read-only check and the lock is never joined by a demo."""
    import evalcore.demo.study as demo_study

    db = open_store(new_store_target("late.sqlite"))
    create_study(db, StudyIn(study_id="mine", corpus_id="c"))
    monkeypatch.setattr(demo_study, "demo_needs_building", lambda _db: True)  # checked too early
    assert ensure_demo_if_empty(db) is None
    assert [r[0] for r in db.execute("SELECT study_id FROM studies")] == ["mine"]


def test_two_processes_seeding_one_empty_store_at_once_seed_it_once(new_store_target) -> None:
    """Two app servers on one empty store both start the demo at once: one study, each
    query, run and label once."""
    import threading

    target = new_store_target("race.sqlite")
    open_store(target).close()
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def seed() -> None:
        db = open_store(target)
        try:
            start.wait()
            ensure_demo_if_empty(db)
        except BaseException as error:  # reported below
            errors.append(error)
        finally:
            db.close()

    threads = [threading.Thread(target=seed) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    db = open_store(target)
    reference = open_store(new_store_target("reference.sqlite"))
    build_demo(reference)
    for sql in ("SELECT count(*) FROM studies", "SELECT count(*) FROM queries",
                "SELECT count(*) FROM runs", "SELECT count(*) FROM label_events",
                "SELECT count(*) FROM documents"):
        assert db.execute(sql).fetchone() == reference.execute(sql).fetchone(), sql


def test_demo_cli(tmp_path: Path, new_store_target) -> None:
    path = new_store_target("cli.sqlite")
    runner = CliRunner()
    first = runner.invoke(main, ["demo", "--db", str(path)])
    assert first.exit_code == 0 and "demo study 'demo' written" in first.output
    second = runner.invoke(main, ["demo", "--db", str(path)])
    assert second.exit_code == 0 and "nothing changed" in second.output
    missing = runner.invoke(main, ["demo", "--db", str(tmp_path / "no" / "such" / "x.sqlite")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_demo_needs_building_is_a_read_only_check(tmp_path: Path, new_store_target) -> None:
    from evalcore.demo.study import demo_needs_building

    db = open_store(new_store_target("d.sqlite"))
    assert demo_needs_building(db)
    build_demo(db)
    assert not demo_needs_building(db)
    assert ensure_demo_if_empty(db) is None


def test_demo_runs_can_be_compared_on_paired_queries(tmp_path: Path, new_store_target) -> None:
    from evalcore.analysis.compare import compare_runs
    from evalcore.analysis.run_evaluation import evaluate_run

    db = open_store(new_store_target("demo.sqlite"))
    build_demo(db)
    names = list(RUN_PROTOCOLS)
    reports = {name: evaluate_run(open_study(db, DEMO_STUDY_ID, None), name) for name in names}
    comparison = compare_runs(reports).comparison("reciprocal_rank", names[1], names[0])
    paired = re.match(r"computed on (\d+) of 25 queries", comparison.summary)
    assert paired is not None, comparison.summary
    assert int(paired.group(1)) > 0


def test_demo_comparison_is_undecided_with_a_short_queue(tmp_path: Path, new_store_target) -> None:
    """Every query has labels (a first pass at least), so P@10 and RR@10 are undecided,
    not undecidable, and a few labels of the to-decide queue can settle them; nDCG and
    recall stay unavailable where the relevant set is not complete."""
    from evalcore.analysis.decision import decide_measure, stored_pair
    from evalcore.analysis.decision_queue import decide_queue
    from evalcore.demo.study import CANT_JUDGE
    from evalcore.store.cant_judge import cant_judge_units
    from evalcore.store.resolution import resolve_query

    db = open_store(new_store_target("demo.sqlite"))
    build_demo(db)
    progress = study_progress(open_study(db, DEMO_STUDY_ID, None))
    assert all(p.labeled > 0 for p in progress.queries.values()), progress.queries
    assert 0 < progress.labeled < progress.pooled - 50  # plenty left to label
    a, b = RUN_PROTOCOLS
    pair = stored_pair(open_study(db, DEMO_STUDY_ID, None), a, b, ["P@10", "RR@10", "nDCG@10", "R@10"]).pair
    for name in ("P@10", "RR@10"):
        decision = decide_measure(pair, name, a, b)
        assert decision.verdict == "undecided", decision.summary
        assert decision.lower is not None and decision.lower <= 0 <= decision.upper
        queue = decide_queue(pair, name)
        assert queue.items and queue.labels_to_decide is not None
        assert 1 <= queue.labels_to_decide <= 20, queue
    for name in ("nDCG@10", "R@10"):  # open populations (section 12): bounded, not undecidable
        decision = decide_measure(pair, name, a, b)
        assert decision.verdict == "undecided", decision.summary
        assert decision.lower is not None and decision.lower <= 0 <= decision.upper
        assert decide_queue(pair, name).items
    for query_id, unit_id, _ in CANT_JUDGE:  # left unlabeled, the mark kept
        assert unit_id not in resolve_query(open_study(db, DEMO_STUDY_ID, None), query_id)
        assert unit_id in cant_judge_units(open_study(db, DEMO_STUDY_ID, None), query_id, "alice")
