"""Imports: all-or-nothing, every error with file/line/field, duplicates, unknown ids."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from store_fixtures import new_store, table_snapshot

from evalcore.io.errors import InputErrors
from evalcore.io.text_lines import decode_source
from evalcore.store.audit import audit_entries
from evalcore.store.completeness import completeness_history, completeness_states, mark_complete
from evalcore.store.corpus import DocumentIn, add_documents, count_documents, get_document
from evalcore.store.imports import (
    import_beir,
    import_labels,
    import_observations,
    import_qrels,
    import_run,
)
from evalcore.store.labels import label_history, record_label
from evalcore.store.query_reads import query_texts
from evalcore.store.resolution import resolve_query, resolved_gains
from evalcore.store.runs import get_run, run_results
from evalcore.store.study_handle import open_study


@pytest.fixture
def db(tmp_path, store_target):
    return new_store(store_target)


def write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def add_docs(db, *ids):
    now = datetime(2026, 1, 1, tzinfo=UTC)
    add_documents(db, "c", [DocumentIn(doc_id=i, title=i, text="t", created_at=now) for i in ids])


def errors_of(excinfo) -> list[str]:
    return [str(e) for e in excinfo.value.errors]


# --- qrels ----------------------------------------------------------------------------------


def test_qrels_bom_crlf_comments_blank_lines(db, tmp_path):
    path = write(tmp_path, "q.txt", b"\xef\xbb\xbf# judged 2026\r\nq1 0 A 2\r\n\r\nq1 0 B 0\r\nq2 0 A 1\r\n")
    summary = import_qrels(db, path, study_id="s")
    assert (summary.label_events, summary.queries, summary.rows) == (3, 2, 3)
    assert resolved_gains(open_study(db, "s", None)) == {"q1": {"A": 2, "B": 0}, "q2": {"A": 1}}
    event = label_history(open_study(db, "s", None), "q1", "A")[0]
    assert (event.annotator, event.source) == ("qrels:q.txt", "import")
    assert audit_entries(open_study(db, "s", None))[0].action == "import.qrels"


def test_qrels_identical_duplicate_is_one_event_with_warning(db, tmp_path):
    path = write(tmp_path, "q.txt", "q1 0 A 2\nq1 0 A 2\n")
    summary = import_qrels(db, path, study_id="s")
    assert summary.label_events == 1
    assert any("repeats line 1" in w for w in summary.warnings)


def test_qrels_conflicting_duplicate_names_both_lines_and_writes_nothing(db, tmp_path):
    before = table_snapshot(db)
    path = write(tmp_path, "q.txt", "q1 0 A 2\nq1 0 B 1\nq1 0 A 0\n")
    with pytest.raises(InputErrors) as excinfo:
        import_qrels(db, path, study_id="s")
    assert errors_of(excinfo) == [
        f"{path}:3: gain: query q1 doc A: gain 0 contradicts line 1 (gain 2) "
        "(keep one of the two lines, or import them as different annotators)"
    ]
    assert table_snapshot(db) == before


def test_qrels_every_line_contradicting_the_first_is_named_decimal_gains_included(db, tmp_path):
    path = write(tmp_path, "q.txt", "q1 0 A 2.0\nq1 0 A 0\nq1 0 A 0\nq1 0 A 2\n")
    with pytest.raises(InputErrors) as excinfo:
        import_qrels(db, path, study_id="s")
    assert [(e.line, e.message) for e in excinfo.value.errors] == [
        (2, "query q1 doc A: gain 0 contradicts line 1 (gain 2)"),
        (3, "query q1 doc A: gain 0 contradicts line 1 (gain 2)"),
    ]


def test_qrels_every_error_reported(db, tmp_path):
    path = write(tmp_path, "q.txt", "q1 0 A 7\nq1 0 B\nq1 0 C x\nq1 0 D 1\n")
    with pytest.raises(InputErrors) as excinfo:
        import_qrels(db, path, study_id="s")
    text = errors_of(excinfo)
    assert len(text) == 3
    assert text[0].startswith(f"{path}:1: gain: gain 7 is outside 0..4")
    assert text[1].startswith(f"{path}:2: expected 4 fields")
    assert text[2].startswith(f"{path}:3: gain: must be an integer")
    assert label_history(open_study(db, "s", None), "q1") == []


def test_qrels_gain_map(db, tmp_path):
    path = write(tmp_path, "q.txt", "q1 0 A -1\nq1 0 B 5\n")
    import_qrels(db, path, study_id="s", gain_map={-1: 0, 5: 4})
    assert resolved_gains(open_study(db, "s", None)) == {"q1": {"A": 0, "B": 4}}


def test_qrels_empty_file(db, tmp_path):
    path = write(tmp_path, "q.txt", "# nothing\n\n")
    with pytest.raises(InputErrors, match="no judgments"):
        import_qrels(db, path, study_id="s")


def test_unknown_ids_refused_when_corpus_has_documents(db, tmp_path):
    add_docs(db, "A", "B")
    path = write(tmp_path, "q.txt", "".join(f"q1 0 Z{i} 1\n" for i in range(12)) + "q1 0 A 1\n")
    with pytest.raises(InputErrors) as excinfo:
        import_qrels(db, path, study_id="s")
    (message,) = errors_of(excinfo)
    assert "12 document id(s) not in corpus 'c': Z0, Z1" in message
    assert "and 2 more" in message and "--allow-unknown-ids" in message
    assert label_history(open_study(db, "s", None), "q1") == []
    assert import_qrels(db, path, study_id="s", allow_unknown_ids=True).label_events == 13


def test_qrels_complete_and_auto_reopen(db, tmp_path):
    import_qrels(db, write(tmp_path, "a.txt", "q1 0 A 1\nq2 0 B 0\n"), study_id="s", complete=True)
    assert completeness_states(open_study(db, "s", None)) == {"q1": True, "q2": True}
    summary = import_qrels(db, write(tmp_path, "b.txt", "q1 0 A 2\nq2 0 C 3\n"), study_id="s")
    assert summary.reopened == ["q2"]
    assert completeness_states(open_study(db, "s", None)) == {"q1": True, "q2": False}
    reason = completeness_history(open_study(db, "s", None), "q2")[-1].reason
    assert reason.startswith("new relevant label on C by qrels:b.txt")


# --- runs -----------------------------------------------------------------------------------


def test_run_import_orders_as_trec_eval(db, tmp_path):
    path = write(
        tmp_path, "r.run",
        "q1 Q0 A 1 1.5 bm25\nq1 Q0 C 2 2.0 bm25\nq1 Q0 B 3 1.5 bm25\n# c\nq2 Q0 X 1 0.1 bm25\n",
    )
    summary = import_run(db, path, study_id="s", k=10)
    assert summary.run == "bm25" and summary.results == 4
    assert any("tied" in w for w in summary.warnings)
    run = get_run(open_study(db, "s", None), "bm25")
    assert (run.k, run.source) == (10, "imported")
    assert run_results(open_study(db, "s", None), run.run_id) == {
        "q1": [("C", 2.0), ("B", 1.5), ("A", 1.5)],
        "q2": [("X", 0.1)],
    }
    with pytest.raises(InputErrors, match="already exists"):
        import_run(db, path, study_id="s", k=10)
    assert import_run(db, path, study_id="s", k=5, name="other").run == "other"


def test_run_bad_lines_reported_and_nothing_written(db, tmp_path):
    before = table_snapshot(db)
    path = write(tmp_path, "r.run", "q1 Q0 A 1 nan t\nq1 Q0 B 2\nq1 Q0 C 3 1.0 t\n")
    with pytest.raises(InputErrors) as excinfo:
        import_run(db, path, study_id="s", k=10)
    assert [e.line for e in excinfo.value.errors] == [1, 2]
    assert table_snapshot(db) == before


def test_run_unknown_doc_ids(db, tmp_path):
    add_docs(db, "A")
    path = write(tmp_path, "r.run", "q1 Q0 A 1 2 t\nq1 Q0 B 2 1 t\n")
    with pytest.raises(InputErrors, match="1 document id"):
        import_run(db, path, study_id="s", k=10)


# --- labels CSV / JSONL -----------------------------------------------------------------------


def test_labels_csv_with_bom_crlf_and_annotators(db, tmp_path):
    data = "\ufeffquery_id,unit_id,gain,annotator\r\nq1,A,2,ann\r\nq1,A,0,bob\r\nq1,\"B,1\",1,\r\n"
    summary = import_labels(db, write(tmp_path, "l.csv", data), study_id="s",
                            keep_annotators=True)
    assert summary.label_events == 3
    units = resolve_query(open_study(db, "s", None), "q1")
    assert units["A"].state == "conflict" and units["A"].annotators == {"ann": 2, "bob": 0}
    assert units["B,1"].annotators == {"csv:l.csv": 1}


def test_labels_csv_header_required(db, tmp_path):
    with pytest.raises(InputErrors) as excinfo:
        import_labels(db, write(tmp_path, "l.csv", "q1,A,2\n"), study_id="s")
    assert "the first line looks like data" in str(excinfo.value)


@pytest.mark.parametrize("keep", [False, True])
def test_labels_csv_annotator_with_control_character_is_an_input_error(db, tmp_path, keep):
    """Found by the fuzzer: a control character in the annotator column is a file:line error,
    with or without --keep-annotators, never a raw ValueError."""
    data = "query_id,unit_id,gain,annotator\nq1,A,2,ann\nq1,B,1,x0\x01\n"
    with pytest.raises(InputErrors) as excinfo:
        import_labels(db, write(tmp_path, "l.csv", data), study_id="s", keep_annotators=keep)
    errors = [(e.line, e.field) for e in excinfo.value.errors]
    assert (3, "annotator") in errors
    assert "control characters" in str(excinfo.value)


def test_labels_csv_errors_and_duplicates(db, tmp_path):
    data = "query_id,unit_id,gain\nq1,A,2\nq1,A,2\nq1,B,9\nq1,C,1,extra\nq1,A,3\n,D,1\n"
    with pytest.raises(InputErrors) as excinfo:
        import_labels(db, write(tmp_path, "l.csv", data), study_id="s")
    lines = [(e.line, e.field) for e in excinfo.value.errors]
    assert lines == [(4, "gain"), (5, None), (7, "query_id")]
    data = "query_id,unit_id,gain\nq1,A,2\nq1,A,2\nq1,A,3\n"
    with pytest.raises(InputErrors, match="contradicts line 2"):
        import_labels(db, write(tmp_path, "l2.csv", data), study_id="s")
    summary = import_labels(db, write(tmp_path, "l3.csv", "query_id,unit_id,gain\nq1,A,2\nq1,A,2\n"),
                            study_id="s")
    assert summary.label_events == 1 and len(summary.warnings) == 1


def test_labels_csv_empty_and_header_only(db, tmp_path):
    with pytest.raises(InputErrors, match="empty file"):
        import_labels(db, write(tmp_path, "e.csv", ""), study_id="s")
    with pytest.raises(InputErrors, match="only its header"):
        import_labels(db, write(tmp_path, "h.csv", "query_id,unit_id,gain\n"), study_id="s")
    with pytest.raises(InputErrors, match="unknown column 'gian'; did you mean 'gain'"):
        import_labels(db, write(tmp_path, "x.csv", "query_id,unit_id,gian\nq,A,1\n"), study_id="s")


def test_labels_jsonl_strict_gains(db, tmp_path):
    data = '{"query_id": "q1", "unit_id": "A", "gain": "3"}\n{"query_id": "q1", "unit_id": "B", "gain": true}\n'
    with pytest.raises(InputErrors) as excinfo:
        import_labels(db, write(tmp_path, "l.jsonl", data), study_id="s", format="jsonl")
    assert [(e.line, e.field) for e in excinfo.value.errors] == [(1, "gain"), (2, "gain")]


def test_upload_source_text(db):
    source = decode_source(b"query_id,unit_id,gain\nq1,A,1\n", "upload.csv")
    assert import_labels(db, source, study_id="s").label_events == 1


# --- observations JSONL ---------------------------------------------------------------------


def obs_line(**fields):
    base = {"query_id": "q1", "k": 3, "returned_ids": ["A", "X", "B"], "scores": [3, 2, 1],
            "labels": [{"id": "A", "gain": 2}, {"id": "X", "gain": 0}], "population_complete": True}
    base.update(fields)
    return json.dumps(base)


def test_observations_import(db, tmp_path):
    data = obs_line() + "\n" + obs_line(query_id="q2", population_complete=False, scores=None) + "\n"
    summary = import_observations(db, write(tmp_path, "obs.jsonl", data), study_id="s")
    assert (summary.run, summary.results, summary.label_events) == ("obs", 6, 4)
    assert completeness_states(open_study(db, "s", None)) == {"q1": True, "q2": False}
    run = get_run(open_study(db, "s", None), "obs")
    assert run.k == 3
    assert run_results(open_study(db, "s", None), run.run_id)["q2"] == [("A", None), ("X", None), ("B", None)]


def test_observations_store_specific_errors(db, tmp_path):
    data = "\n".join([
        obs_line(),
        obs_line(query_id="q2", k=5, labels=[{"id": "A", "gain": 1}, {"id": "A", "gain": 2}]),
        obs_line(query_id="q3", unit_of={"A": "a"}, corpus_id="other"),
    ])
    with pytest.raises(InputErrors) as excinfo:
        import_observations(db, write(tmp_path, "obs.jsonl", data), study_id="s")
    assert [(e.line, e.field) for e in excinfo.value.errors] == [
        (2, "k"), (2, "labels[1].gain"), (3, "corpus_id"), (3, "unit_of")]
    assert label_history(open_study(db, "s", None), "q1") == []


# --- BEIR -----------------------------------------------------------------------------------


def beir_folder(tmp_path, qrels="query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n"):
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    write(root, "corpus.jsonl", '{"_id": "d1", "title": "T1", "text": "one"}\n'
          '{"_id": "d2", "text": "two", "metadata": {}}\n')
    write(root, "queries.jsonl", '{"_id": "q1", "text": "what is one"}\n')
    write(root / "qrels", "test.tsv", qrels)
    return root


def test_beir_import(db, tmp_path):
    summary = import_beir(db, beir_folder(tmp_path), study_id="s", complete=True)
    assert (summary.documents, summary.queries, summary.label_events) == (2, 1, 2)
    assert count_documents(db, "c") == 2
    assert get_document(db, "c", "d1").title == "T1"
    assert query_texts(open_study(db, "s", None)) == {"q1": "what is one"}
    assert resolve_query(open_study(db, "s", None), "q1")["d1"].annotators == {"beir:test": 1}
    assert completeness_states(open_study(db, "s", None)) == {"q1": True}
    # Re-import: nothing changes in the corpus, events are appended again.
    again = import_beir(db, beir_folder(tmp_path / "x"), study_id="s")
    assert again.documents == 0


def test_beir_errors_across_files(db, tmp_path):
    root = beir_folder(tmp_path, "query-id\tcorpus-id\tscore\nq1\td9\t1\nq7\td1\tx\n")
    write(root, "queries.jsonl", '{"_id": "q1"}\n')
    with pytest.raises(InputErrors) as excinfo:
        import_beir(db, root, study_id="s")
    text = str(excinfo.value)
    assert "queries.jsonl:1: text: missing required field 'text'" in text
    assert "test.tsv:3: score: must be an integer 0..4" in text
    root2 = beir_folder(tmp_path / "two", "query-id\tcorpus-id\tscore\nq1\td9\t1\nq7\td1\t1\n")
    with pytest.raises(InputErrors) as excinfo:
        import_beir(db, root2, study_id="s")
    text = str(excinfo.value)
    assert "1 query id(s) not in queries.jsonl: q7" in text
    assert count_documents(db, "c") == 0


def test_failed_import_after_labels_leaves_no_trace(db, tmp_path):
    record_label(db, study_id="s", query_id="q1", unit_id="A", gain=1, annotator="a")
    mark_complete(db, study_id="s", query_id="q1", actor="lead")
    before = table_snapshot(db)
    add_docs(db, "A")
    before = table_snapshot(db)
    path = write(tmp_path, "q.txt", "q1 0 A 2\nq1 0 NOPE 1\n")
    with pytest.raises(InputErrors):
        import_qrels(db, path, study_id="s")
    assert table_snapshot(db) == before


def test_observations_with_a_conflict_label_are_refused_with_the_field(db, tmp_path):
    data = obs_line(labels=[{"id": "A", "gain": 2}, {"id": "X", "conflict": [0, 2]}]) + "\n"
    with pytest.raises(InputErrors) as excinfo:
        import_observations(db, write(tmp_path, "obs.jsonl", data), study_id="s")
    (error,) = excinfo.value.errors
    assert (error.line, error.field) == (1, "labels[1].conflict")
    assert "conflict" in error.message and "labels file" in error.hint
    assert label_history(open_study(db, "s", None), "q1") == []
