"""Exports read back exactly by the matching import (examples and hypothesis properties)."""

import io
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import new_store

from evalcore.io.errors import InputErrors
from evalcore.io.text_lines import decode_source
from evalcore.store.completeness import mark_complete
from evalcore.store.connection import open_store
from evalcore.store.exports import ExportRefusedError, export_labels, export_qrels, export_run
from evalcore.store.imports import import_labels, import_qrels, import_run
from evalcore.store.labels import adjudicate, record_label, undo_last_label
from evalcore.store.references import freeze_reference
from evalcore.store.resolution import resolve_study
from evalcore.store.runs import add_run, get_run, run_results
from evalcore.store.studies import StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import create_study


def text_of(fn, db, study_id, *args, **kwargs) -> str:
    stream = io.StringIO()  # these studies are in local mode: open to anyone
    fn(open_study(db, study_id, None), *args, stream, **kwargs)
    return stream.getvalue()


def fresh(tmp_path, name):
    db = open_store(tmp_path / f"{name}.db")
    create_study(db, StudyIn(study_id="s", corpus_id="c"))
    return db


def event_rows(db):
    return db.execute(
        "SELECT query_id, unit_id, kind, gain, annotator, created_at, note, source "
        "FROM label_events ORDER BY event_id"
    ).fetchall()


@pytest.fixture
def db(tmp_path, store_target):
    return _events(new_store(store_target))


def _events(db, undo=True):
    record_label(db, study_id="s", query_id="q2", unit_id="B", gain=1, annotator="ann",
                 note='said "maybe", twice')
    record_label(db, study_id="s", query_id="q1", unit_id="A", gain=2, annotator="ann")
    record_label(db, study_id="s", query_id="q1", unit_id="A", gain=0, annotator="bob")
    adjudicate(db, study_id="s", query_id="q1", unit_id="A", gain=1, reviewer="rev")
    if undo:
        record_label(db, study_id="s", query_id="q1", unit_id="C", gain=3, annotator="bob")
        undo_last_label(db, study_id="s", query_id="q1", annotator="bob")
    record_label(db, study_id="s", query_id="q1", unit_id="D", gain=0, annotator="bob")
    return db


def test_qrels_export_sorted_and_round_trips_a_frozen_version(db, tmp_path):
    mark_complete(db, study_id="s", query_id="q1", actor="lead")
    mark_complete(db, study_id="s", query_id="q2", actor="lead")
    v1 = freeze_reference(db, study_id="s", name="v1", actor="lead")
    out = tmp_path / "v1.qrels"
    assert export_qrels(open_study(db, "s", None), out, reference="v1").rows == 3
    assert out.read_text() == "q1 0 A 1\nq1 0 D 0\nq2 0 B 1\n"
    other = fresh(tmp_path, "other")
    import_qrels(other, out, study_id="s", complete=True)
    again = freeze_reference(other, study_id="s", name="v1", actor="lead")
    assert again.content_hash == v1.content_hash


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_label_events_round_trip(db, tmp_path, fmt):
    out = tmp_path / f"labels.{fmt}"
    assert export_labels(open_study(db, "s", None), out, format=fmt).rows == 7
    other = fresh(tmp_path, "other")
    # an undo is its annotator's own act: an event log holding one is refused, naming the line
    with pytest.raises(InputErrors, match="undo events cannot be imported"):
        import_labels(other, out, study_id="s", format=fmt, keep_annotators=True)
    assert event_rows(other) == []
    # a log without undo events round-trips exactly
    plain = _events(fresh(tmp_path, "plain"), undo=False)
    log = tmp_path / f"plain.{fmt}"
    export_labels(open_study(plain, "s", None), log, format=fmt)
    import_labels(other, log, study_id="s", format=fmt, keep_annotators=True)
    assert event_rows(other) == event_rows(plain)
    assert resolve_study(open_study(other, "s", None)) == resolve_study(open_study(plain, "s", None))
    assert text_of(export_labels, other, "s", format=fmt) == log.read_text()


def test_run_export_keeps_scores_when_order_survives(tmp_path, store_target):
    db = new_store(store_target)
    add_run(db, study_id="s", name="bm25", source="imported", k=10,
            results=[("q1", 1, "B", 2.5), ("q1", 2, "C", 1.0), ("q1", 3, "A", 1.0),
                     ("q10", 1, "Z", 0.1 + 0.2)])
    text = text_of(export_run, db, "s", "bm25")
    assert text == ("q1 Q0 B 1 2.5 bm25\nq1 Q0 C 2 1.0 bm25\nq1 Q0 A 3 1.0 bm25\n"
                    "q10 Q0 Z 1 0.30000000000000004 bm25\n")


def test_run_export_with_order_trec_would_change(tmp_path, store_target):
    db = new_store(store_target)
    add_run(db, study_id="s", name="lex", source="lexical", k=10,
            results=[("q1", 1, "A", 1.0), ("q1", 2, "B", 1.0), ("q2", 1, "C", None)])
    with pytest.raises(ExportRefusedError, match="--scores rank"):
        text_of(export_run, db, "s", "lex", scores="original")
    out = tmp_path / "lex.run"
    summary = export_run(open_study(db, "s", None), "lex", out)
    assert summary.warnings and "rank-derived" in summary.warnings[0]
    assert out.read_text() == "q1 Q0 A 1 2.0 lex\nq1 Q0 B 2 1.0 lex\nq2 Q0 C 1 1.0 lex\n"
    other = fresh(tmp_path, "other")
    import_run(other, out, study_id="s", k=10)
    units = {q: [u for u, _ in r] for q, r in run_results(open_study(other, "s", None), get_run(open_study(other, "s", None), "lex").run_id).items()}
    assert units == {"q1": ["A", "B"], "q2": ["C"]}


def test_trec_exports_refuse_ids_that_would_not_read_back(tmp_path, store_target):
    db = new_store(store_target)
    add_run(db, study_id="s", name="r", source="imported", k=1, results=[("#q", 1, "A", 1.0)])
    with pytest.raises(ExportRefusedError, match="comment"):
        text_of(export_run, db, "s", "r")
    record_label(db, study_id="s", query_id="q 1", unit_id="A", gain=1, annotator="a")
    with pytest.raises(ExportRefusedError, match="whitespace"):
        text_of(export_qrels, db, "s")


# --- properties -----------------------------------------------------------------------------

ids = st.text(alphabet=string.ascii_letters + string.digits + "_-.#", min_size=1, max_size=6)
query_ids = ids.filter(lambda q: not q.startswith("#"))  # '#...' lines are TREC comments
label_events = st.lists(
    st.tuples(ids, ids, st.integers(0, 4), st.sampled_from(["a", "b", "c,d", 'e"f'])),
    min_size=1, max_size=30,
)
scores = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=label_events, fmt=st.sampled_from(["csv", "jsonl"]))
def test_property_label_export_import_export_is_identity(tmp_path_factory, events, fmt):
    tmp = tmp_path_factory.mktemp("p")
    db = fresh(tmp, "a")
    for q, u, g, who in events:
        record_label(db, study_id="s", query_id=q, unit_id=u, gain=g, annotator=who)
    first = text_of(export_labels, db, "s", format=fmt)
    other = fresh(tmp, "b")
    import_labels(other, decode_source(first.encode(), f"x.{fmt}"), study_id="s", format=fmt,
                  keep_annotators=True)
    assert event_rows(other) == event_rows(db)
    assert text_of(export_labels, other, "s", format=fmt) == first


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ranking=st.dictionaries(query_ids, st.lists(st.tuples(ids, scores), min_size=1, max_size=8),
                            min_size=1, max_size=5),
    mode=st.sampled_from(["auto", "rank"]),
)
def test_property_run_round_trip_keeps_order(tmp_path_factory, ranking, mode):
    tmp = tmp_path_factory.mktemp("r")
    db = fresh(tmp, "a")
    rows = [(q, r, u, s) for q, items in ranking.items() for r, (u, s) in enumerate(items, 1)]
    add_run(db, study_id="s", name="run", source="lexical", k=5, results=rows)
    first = text_of(export_run, db, "s", "run", scores=mode)
    other = fresh(tmp, "b")
    import_run(other, decode_source(first.encode(), "run.txt"), study_id="s", k=5)
    got = run_results(open_study(other, "s", None), get_run(open_study(other, "s", None), "run").run_id)
    assert {q: [u for u, _ in r] for q, r in got.items()} == {
        q: [u for u, _ in items] for q, items in ranking.items()
    }
    assert text_of(export_run, other, "s", "run", scores=mode) == first


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    labels=st.dictionaries(st.tuples(query_ids, ids), st.integers(0, 4), min_size=1, max_size=30),
    complete=st.booleans(),
)
def test_property_qrels_export_import_gives_the_same_frozen_reference(
    tmp_path_factory, labels, complete
):
    tmp = tmp_path_factory.mktemp("q")
    db = fresh(tmp, "a")
    for (q, u), g in labels.items():
        record_label(db, study_id="s", query_id=q, unit_id=u, gain=g, annotator="a")
        if complete:
            mark_complete(db, study_id="s", query_id=q, actor="lead")
    v1 = freeze_reference(db, study_id="s", name="v1", actor="lead")
    first = text_of(export_qrels, db, "s", reference="v1")
    other = fresh(tmp, "b")
    import_qrels(other, decode_source(first.encode(), "v1.qrels"), study_id="s", complete=complete)
    assert freeze_reference(other, study_id="s", name="v1", actor="x").content_hash == v1.content_hash
    assert text_of(export_qrels, other, "s", reference="v1") == first
