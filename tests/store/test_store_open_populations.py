"""Open populations through the store's paths (contract section 12), end to end.

* A withdrawn completeness claim (a new relevant label on a query marked complete): the
  query keeps bounds on R, nDCG and AP in every store-backed evaluation (evaluate_run,
  the live dashboard, the decided comparison), so its comparison stays decidable, and the
  store says who or what label withdrew the claim, and when.
* Runs that return nothing for a query: the measures that cannot depend on labels are 0
  there, and no advice (undecidable causes, the to-decide queue, the dashboard's blocking
  list) asks to label anything on a query no run answered.
"""

from datetime import UTC, datetime
from pathlib import Path

from evalcore.analysis.pair_comparison import compare_pair
from evalcore.analysis.run_evaluation import evaluate_run
from evalcore.live.dashboard import LiveDashboard
from evalcore.store.completeness import claim_withdrawal, is_complete, mark_complete
from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.labels import record_label
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries, create_study

STUDY = "s"
OPEN_MEASURES = ("R@3", "nDCG@3", "AP@3")
WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def _store(new_store_target: Path):
    """q1: both runs answer, every returned unit labeled, marked complete. q2: run a
    answers, run b returns nothing; labeled. q3: registered, no run answers, no label."""
    db = open_store(new_store_target("open.sqlite"))
    add_documents(
        db,
        "c",
        [DocumentIn(doc_id=f"d{i}", text=f"doc {i}", created_at=WHEN) for i in range(1, 21)],
    )
    create_study(db, StudyIn(study_id=STUDY, name="open", corpus_id="c"))
    add_queries(db, STUDY, [QueryIn(query_id=q, text=q) for q in ("q1", "q2", "q3")])
    add_run(
        db,
        study_id=STUDY,
        name="a",
        source="imported",
        k=3,
        results=[
            ("q1", 1, "d1", 3.0),
            ("q1", 2, "d2", 2.0),
            ("q1", 3, "d3", 1.0),
            ("q2", 1, "d5", 3.0),
            ("q2", 2, "d6", 2.0),
            ("q2", 3, "d7", 1.0),
        ],
    )
    add_run(
        db,
        study_id=STUDY,
        name="b",
        source="imported",
        k=3,
        results=[("q1", 1, "d3", 3.0), ("q1", 2, "d4", 2.0), ("q1", 3, "d1", 1.0)],
    )
    for unit, gain in (("d1", 3), ("d2", 2), ("d3", 0), ("d4", 0)):
        record_label(db, study_id=STUDY, query_id="q1", unit_id=unit, gain=gain, annotator="alice")
    for unit, gain in (("d5", 2), ("d6", 0), ("d7", 1)):
        record_label(db, study_id=STUDY, query_id="q2", unit_id=unit, gain=gain, annotator="alice")
    mark_complete(db, study_id=STUDY, query_id="q1", actor="lead")
    return db


def _metric(report, query_id: str, name: str):
    return next(r for r in report.queries if r.query_id == query_id).metrics[name]


def test_a_withdrawn_claim_keeps_open_population_bounds_on_every_store_path(tmp_path: Path, new_store_target) -> None:
    db = _store(new_store_target)
    state = LiveDashboard.build(open_study(db, STUDY, None))
    assert _metric(evaluate_run(open_study(db, STUDY, None), "a"), "q1", "recall").available
    # bob finds a relevant document no run returned: the claim no longer holds
    record_label(db, study_id=STUDY, query_id="q1", unit_id="d9", gain=2, annotator="bob")
    assert not is_complete(open_study(db, STUDY, None), "q1")
    state.refresh(open_study(db, state.study_id, None))
    rebuilt = LiveDashboard.build(open_study(db, STUDY, None))
    for run in ("a", "b"):
        report = evaluate_run(open_study(db, STUDY, None), run)
        assert state.runs[run].results == rebuilt.runs[run].results
        assert state.evaluation(run).queries == report.queries
        for name in ("recall", "ndcg"):
            value = _metric(report, "q1", name)
            assert not value.available and "population_incomplete" in value.reasons
            # bounded, and bounded by the corpus: at worst every one of its 20 - 5 unlabeled
            # documents outside the top 3 is relevant
            assert value.lower is not None and value.upper is not None
            assert 0 < value.lower <= value.upper <= 1
    # run a has 2 of the 3 known relevant units: R@3 in [2 / (3 + 15), 2 / 3]
    recall_a = _metric(evaluate_run(open_study(db, STUDY, None), "a"), "q1", "recall")
    assert (recall_a.lower, recall_a.upper) == (2 / 18, 2 / 3)
    pc = compare_pair(open_study(db, STUDY, None), "a", "b", list(OPEN_MEASURES))
    for item in pc.measures:
        assert item.decision.verdict != "undecidable", item.decision.summary
        assert item.decision.lower is not None and item.decision.upper is not None
    assert pc.notes and "corpus size 20" in pc.notes[0]
    withdrawn = claim_withdrawal(open_study(db, STUDY, None), "q1")
    assert withdrawn is not None
    assert (withdrawn.claimed_by, withdrawn.withdrawn_by) == ("lead", "bob")
    assert withdrawn.reason == "new relevant label on d9 by bob"
    assert "withdrawn by bob" in withdrawn.text() and "d9" in withdrawn.text()
    # marked complete again: nothing withdrawn any more
    mark_complete(db, study_id=STUDY, query_id="q1", actor="lead")
    assert claim_withdrawal(open_study(db, STUDY, None), "q1") is None
    assert claim_withdrawal(open_study(db, STUDY, None), "q2") is None


def test_nothing_returned_is_zero_and_never_something_to_label(tmp_path: Path, new_store_target) -> None:
    db = _store(new_store_target)
    report_b = evaluate_run(open_study(db, STUDY, None), "b")
    for query_id in ("q2", "q3"):  # run b returned nothing there
        precision = _metric(report_b, query_id, "precision")
        assert precision.available and precision.value == 0.0, precision
        rr = _metric(report_b, query_id, "reciprocal_rank")
        assert rr.available and rr.value == 0.0, rr
    pc = compare_pair(open_study(db, STUDY, None), "a", "b", ["P@3", "RR@3", *OPEN_MEASURES])
    for item in pc.measures:
        assert item.decision.verdict != "undecidable", item.decision.summary
        assert all(cause.reason != "missing_reference" for cause in item.causes)
        assert item.queue is not None
        # the queue only names units a run returned, never one on q3 (no run answered it)
        assert all(it.query_id != "q3" for it in item.queue.items)
        assert all(it.rank_a or it.rank_b for it in item.queue.items)
    state = LiveDashboard.build(open_study(db, STUDY, None))
    assert all(item.query_id != "q3" for item in state.blocking_list(None))
