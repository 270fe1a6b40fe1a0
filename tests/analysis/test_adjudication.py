"""What a reviewer sees of a conflict: current labels with notes and times, the document, state."""

from pathlib import Path

from access_fixtures import ANNOTATOR, LEAD, OUTSIDER, team_store
from store_fixtures import new_store

from evalcore.analysis.adjudication import conflict_contexts
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.labels import adjudicate, current_judgements, record_label, undo_last_label
from evalcore.store.members import add_member
from evalcore.store.studies import QueryIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries


def _store(new_store_target: Path):
    db = new_store(new_store_target("store.db"))
    add_documents(db, "c", [DocumentIn(doc_id="d1", title="SSO loop", text="Clear the <b>cookie</b>.",
                                       created_at="2026-01-01T00:00:00Z")])
    add_queries(db, "s", [QueryIn(query_id="q1", text="sso login loop")])
    return db


def test_current_judgements_follow_undo_and_keep_notes(tmp_path: Path, new_store_target) -> None:
    db = _store(new_store_target)
    first = record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=0, annotator="kim",
                         note="off topic")
    record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=3, annotator="bob",
                 note="wrong")
    undo_last_label(db, study_id="s", query_id="q1", annotator="bob")
    later = record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=2, annotator="bob")
    record_label(db, study_id="s", query_id="q1", unit_id="d9", gain=1, annotator="kim")
    undo_last_label(db, study_id="s", query_id="q1", annotator="kim")  # d9: nothing current
    judged = current_judgements(open_study(db, "s", None), "q1")
    assert list(judged) == ["d1"]
    assert judged["d1"].labels == {"bob": later, "kim": first}
    assert judged["d1"].adjudication is None
    verdict = adjudicate(db, study_id="s", query_id="q1", unit_id="d1", gain=1, reviewer="rev",
                         note="half of it")
    assert current_judgements(open_study(db, "s", None), "q1", "d1")["d1"].adjudication == verdict


def test_a_conflict_in_context(tmp_path: Path, new_store_target) -> None:
    db = _store(new_store_target)
    record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=0, annotator="kim",
                 note="off topic")
    record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=3, annotator="bob")
    record_label(db, study_id="s", query_id="q1", unit_id="zz", gain=1, annotator="kim")
    record_label(db, study_id="s", query_id="q1", unit_id="zz", gain=2, annotator="bob")
    ctx, missing = conflict_contexts(open_study(db, "s", None), [("q1", "d1"), ("q1", "zz")])
    assert ctx.in_conflict and ctx.state == "conflict"
    assert (ctx.query_text, ctx.title, ctx.text) == ("sso login loop", "SSO loop",
                                                    "Clear the <b>cookie</b>.")
    assert [(j.annotator, j.gain, j.note) for j in ctx.judgements] == [
        ("bob", 3, ""), ("kim", 0, "off topic")]
    assert all(j.created_at.endswith("Z") for j in ctx.judgements)
    assert ctx.reviewer is None and ctx.document_note is None
    assert missing.text is None and "no document 'zz'" in missing.document_note
    adjudicate(db, study_id="s", query_id="q1", unit_id="d1", gain=1, reviewer="rev",
               note="half of it")
    (settled,) = conflict_contexts(open_study(db, "s", None), [("q1", "d1")])
    assert (settled.state, settled.reviewer, settled.adjudicated_gain, settled.reviewer_note) == (
        "adjudicated", "rev", 1, "half of it")
    (nothing,) = conflict_contexts(open_study(db, "s", None), [("q1", "d7")])
    assert nothing.state is None and nothing.judgements == []


def test_another_organisations_text_is_withheld(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    record_label(db, study_id="s", query_id="q1", unit_id="b1", gain=3, annotator=ANNOTATOR)
    (ctx,) = conflict_contexts(open_study(db, "s", ANNOTATOR), [("q1", "b1")])
    assert ctx.in_conflict  # "setup" said 1, the annotator 3
    assert ctx.title is None and ctx.text is None
    assert ctx.document_note.startswith("text withheld") and "globex" in ctx.document_note
    # globex's otto may read the study's data only as a member of it (issue 12, item 2)
    add_member(db, study_id="s", user=OUTSIDER, role="annotator", actor=LEAD)
    (theirs,) = conflict_contexts(open_study(db, "s", OUTSIDER), [("q1", "b1")])
    assert theirs.text is not None
