"""The ranking inspector: rows, flags, hidden text for permission violations, rank changes."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from evalcore.analysis.inspector import inspect_query, rank_changes
from evalcore.store.completeness import mark_complete
from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.labels import adjudicate, record_label
from evalcore.store.references import freeze_reference
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries, create_study
from evalcore.store.transaction import write_transaction


@pytest.fixture
def db(tmp_path: Path, new_store_target):
    db = open_store(new_store_target("i.sqlite"))
    create_study(db, StudyIn(study_id="s", name="s", corpus_id="c"))
    add_documents(db, "c", [
        DocumentIn(doc_id=d, title=f"title of {d}", text="text", owner_org="acme",
                   created_at=datetime(2025, 1, 1, tzinfo=UTC))
        for d in ("A", "B", "C", "D", "SECRET")
    ])
    add_queries(db, "s", [QueryIn(query_id="q", text="the query")])
    with write_transaction(db):
        db.execute("INSERT INTO protocols (study_id, name, protocol_json, corpus_fingerprint, "
                   "pinned_at, pinned_by) VALUES ('s', 'p', '{}', 'sha256:x', '2025', 'lead')")
        for d in ("A", "B", "C", "D"):
            db.execute("INSERT INTO protocol_documents (study_id, protocol, doc_id, content_hash) "
                       "VALUES ('s', 'p', ?, 'h')", [d])
    # run "a": A B A(dup) C | D beyond k; run "b" (pinned): C SECRET A
    add_run(db, study_id="s", name="a", source="imported", k=4,
            results=[("q", 1, "A", 4.0), ("q", 2, "B", 3.0), ("q", 3, "A", 2.0),
                     ("q", 4, "C", 1.0), ("q", 5, "D", 0.5)])
    add_run(db, study_id="s", name="b", source="imported", k=3, protocol={"pinned_protocol": "p"},
            results=[("q", 1, "C", 3.0), ("q", 2, "SECRET", 2.0), ("q", 3, "A", 1.0)])
    record_label(db, study_id="s", query_id="q", unit_id="A", gain=2, annotator="alice")
    record_label(db, study_id="s", query_id="q", unit_id="A", gain=2, annotator="bob")
    record_label(db, study_id="s", query_id="q", unit_id="B", gain=0, annotator="alice")
    record_label(db, study_id="s", query_id="q", unit_id="B", gain=3, annotator="bob")
    return db


def test_rows_carry_labels_annotators_and_flags(db) -> None:
    ins = inspect_query(open_study(db, "s", None), "a", "q")
    assert [r.unit_id for r in ins.rows] == ["A", "B", "A", "C", "D"]
    a, b, dup, c, d = ins.rows
    assert (a.gain, a.state, a.annotators) == (2, "labeled", {"alice": 2, "bob": 2})
    assert b.conflict and b.unlabeled and b.gain is None and b.annotators == {"alice": 0, "bob": 3}
    assert dup.duplicate and dup.first_rank == 1 and not a.duplicate
    assert c.unlabeled and c.state == "unlabeled" and not c.conflict
    assert d.beyond_k and not c.beyond_k
    assert a.title == "title of A" and not any(r.permission_violation for r in ins.rows)
    assert ins.flag_counts() == {"unlabeled": 2, "duplicate": 1, "permission_violation": 0,
                                 "conflict": 1}
    precision = ins.result.metrics["precision"]
    # B (0 vs 3) is in conflict, not unlabeled (contract section 9): C blocks as unlabeled.
    assert not precision.available
    assert precision.reasons == ["unlabeled_returned", "label_conflict"]
    assert precision.blocking_ids == ["C"] and precision.conflict_ids == ["B"]
    assert ins.query_text == "the query" and ins.k == 4


def test_permission_violation_is_flagged_and_its_text_never_returned(db) -> None:
    ins = inspect_query(open_study(db, "s", None), "b", "q")
    secret = ins.rows[1]
    assert secret.unit_id == "SECRET" and secret.permission_violation and secret.title is None
    assert ins.rows[0].title == "title of C"
    assert not ins.result.valid and ins.result.reasons == ["permission_violation"]
    assert "title of SECRET" not in ins.model_dump_json()


def test_adjudication_settles_a_conflict(db) -> None:
    adjudicate(db, study_id="s", query_id="q", unit_id="B", gain=1, reviewer="rev")
    b = inspect_query(open_study(db, "s", None), "a", "q").rows[1]
    assert (b.state, b.gain, b.reviewer, b.conflict, b.unlabeled) == ("adjudicated", 1, "rev",
                                                                      False, False)



def test_rows_carry_each_annotators_current_note_and_the_reviewers(db) -> None:
    from evalcore.store.labels import undo_last_label

    record_label(db, study_id="s", query_id="q", unit_id="C", gain=1, annotator="alice",
                 note="first try")
    undo_last_label(db, study_id="s", query_id="q", annotator="alice")
    record_label(db, study_id="s", query_id="q", unit_id="C", gain=2, annotator="alice",
                 note="covers it")
    record_label(db, study_id="s", query_id="q", unit_id="C", gain=2, annotator="bob")
    adjudicate(db, study_id="s", query_id="q", unit_id="B", gain=1, reviewer="rev",
               note="half of it")
    a, b, _, c, d = inspect_query(open_study(db, "s", None), "a", "q").rows
    assert c.notes == {"alice": "covers it"}  # the undone label's note is gone; bob wrote none
    assert (b.reviewer, b.reviewer_note) == ("rev", "half of it")
    assert a.notes == {} and d.notes == {} and a.reviewer_note == ""


def test_frozen_reference_rows_have_gains_but_no_annotators(db) -> None:
    mark_complete(db, study_id="s", query_id="q", actor="lead")
    freeze_reference(db, study_id="s", name="v1", actor="lead")
    record_label(db, study_id="s", query_id="q", unit_id="C", gain=4, annotator="alice")
    ins = inspect_query(open_study(db, "s", None), "a", "q", reference="v1")
    a, b, _, c, _ = ins.rows
    assert (a.gain, a.annotators, b.gain, c.gain) == (2, {}, None, None)
    assert ins.population_complete and ins.result.metrics["precision"].reasons == [
        "unlabeled_returned"]
    assert inspect_query(open_study(db, "s", None), "a", "q").rows[3].gain == 4  # working labels moved on


def test_rank_changes_mark_moves_new_and_dropped(db) -> None:
    a = inspect_query(open_study(db, "s", None), "a", "q")
    b = inspect_query(open_study(db, "s", None), "b", "q")
    changes = {c.unit_id: (c.rank_a, c.rank_b, c.change) for c in rank_changes(a, b)}
    assert changes == {
        "C": (4, 1, "↑3"),
        "SECRET": (None, 2, "new"),
        "A": (1, 3, "↓2"),
        "B": (2, None, "dropped"),
    }
    assert [c.change for c in rank_changes(a, a)] == ["=", "=", "="]
    beyond = {c.unit_id: c.change for c in rank_changes(b, a, within_k=False)}
    assert beyond["D"] == "new"


def test_team_mode_withholds_titles_the_viewer_may_not_read(db) -> None:
    from evalcore.store.members import add_member

    add_member(db, study_id="s", user="lead@x.org", role="lead", actor="lead@x.org")
    outsider = inspect_query(open_study(db, "s", "lead@x.org"), "a", "q")
    # every document belongs to organisation "acme", which lead@x.org is not in
    assert all(r.title is None for r in outsider.rows)
    assert "acme" in outsider.rows[0].title_withheld
    assert "title of A" not in outsider.model_dump_json()
    pinned = inspect_query(open_study(db, "s", "lead@x.org"), "b", "q")
    assert "permission_violation" in pinned.rows[1].title_withheld
