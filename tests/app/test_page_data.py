"""The Data page: uploads (errors with line numbers, nothing written), lexical runs, exports."""

import io
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from store_fixtures import table_snapshot  # noqa: E402

from evalcore.store.study_handle import open_study

PAGE = "views/data.py"


def _upload(at, kind: str, name: str, content: bytes):
    at.selectbox(key="rl_import_kind").set_value(kind).run()
    at.get("file_uploader")[0].set_value((name, content, "text/plain"))
    return at


def _submit(at, label: str = "Import"):
    button = next(b for b in at.button if b.label == label)
    button.click().run()
    assert not at.exception, at.exception
    return at


def test_bad_qrels_upload_lists_line_numbered_errors_and_writes_nothing(
    small_store, new_app
) -> None:
    _, db = small_store
    before = table_snapshot(db)
    at = new_app("ann", PAGE)
    bad = b"q1 0 d1 2\nq1 0 d2 five\nq1 0 d3\nq2 0 d5 9\n"
    _upload(at, "qrels", "../../etc/passwd", bad)
    _submit(at)
    assert "refused" in at.error[0].value
    assert not at.get("progress")  # no full "done" bar above a refusal
    report = at.code[0].value
    assert "passwd:2:" in report and "passwd:3:" in report and "passwd:4:" in report
    assert "../" not in report
    assert table_snapshot(db) == before


def test_good_qrels_upload_writes_labels_and_completeness(small_store, new_app) -> None:
    _, db = small_store
    at = new_app("ann", PAGE)
    _upload(at, "qrels", "judged.qrels", b"q1 0 d1 2\nq1 0 d2 0\nq2 0 d5 1\n")
    at.checkbox[0].check()  # declare complete
    _submit(at)
    assert at.success, [e.value for e in at.error]
    gains = db.execute(
        "SELECT query_id, unit_id, gain FROM label_events ORDER BY event_id").fetchall()
    assert gains == [("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d5", 1)]
    assert db.execute("SELECT count(*) FROM completeness_events").fetchone()[0] == 2


def test_run_upload_creates_a_run(small_store, new_app) -> None:
    _, db = small_store
    at = new_app("ann", PAGE)
    _upload(at, "run", "bm25.run", b"q1 Q0 d3 1 9.5 mine\nq1 Q0 d7 2 8.0 mine\n")
    _submit(at)
    assert at.success, [e.value for e in at.error]
    assert [r[0] for r in db.execute("SELECT name FROM runs ORDER BY run_id")] == ["r1", "r2", "mine"]


def test_beir_zip_with_path_traversal_is_refused(small_store, new_app) -> None:
    _, db = small_store
    before = table_snapshot(db)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("../evil/corpus.jsonl", '{"_id": "x", "text": "t"}\n')
    at = new_app("ann", PAGE)
    _upload(at, "beir", "data.zip", buffer.getvalue())
    _submit(at)
    assert "unsafe path" in at.code[0].value
    assert table_snapshot(db) == before


def test_lexical_run_from_the_protocol_form(small_store, new_app) -> None:
    _, db = small_store
    db.execute("INSERT INTO organisations (org_id, name) VALUES ('acme', 'Acme')")
    at = new_app("ann", PAGE)
    name_box = next(t for t in at.text_input if t.label == "Protocol and run name")
    name_box.set_value("bm25-form")
    _submit(at, "Pin and run")
    assert at.success, [c.value for c in at.code]
    run = db.execute("SELECT source, k, corpus_fingerprint FROM runs WHERE name = 'bm25-form'"
                     ).fetchone()
    assert run[0] == "lexical" and run[1] == 10 and run[2].startswith("sha256:")
    # the same name again is refused with a clear message and nothing new is stored
    name_box = next(t for t in at.text_input if t.label == "Protocol and run name")
    name_box.set_value("bm25-form")
    _submit(at, "Pin and run")
    assert "already pinned" in at.code[0].value
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 3


def test_exports_are_offered(small_store, new_app) -> None:
    from evalcore.store.labels import record_label

    _, db = small_store
    record_label(db, study_id="s1", query_id="q1", unit_id="d1", gain=3, annotator="ann")
    at = new_app("ann", PAGE)
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Download qrels", "Download label events", "Download run (TREC)"]


def test_create_a_study_and_switch_to_it(small_store, new_app) -> None:
    _, db = small_store
    at = new_app("ann", PAGE)
    boxes = {t.label: t for t in at.text_input}
    boxes["Study id"].set_value("fresh")
    boxes["Corpus id"].set_value("c-fresh")
    _submit(at, "Create study")
    assert db.execute("SELECT corpus_id FROM studies WHERE study_id = 'fresh'").fetchone() == (
        "c-fresh",)
    assert at.session_state["rl_study_id"] == "fresh"


def test_each_download_is_built_on_click_and_holds_the_export(small_store, new_app,
                                                             monkeypatch) -> None:
    """The files are produced only when asked for (deferred), with the exports' content."""
    import io

    from streamlit.runtime.media_file_manager import MediaFileManager

    from evalcore.store.exports import export_labels, export_qrels, export_run
    from evalcore.store.labels import record_label

    deferred = {}
    add = MediaFileManager.add_deferred

    def spy(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        deferred[file_name] = data_callable
        return add(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", spy)
    _, db = small_store
    record_label(db, study_id="s1", query_id="q1", unit_id="d1", gain=3, annotator="ann")
    at = new_app("ann", PAGE)
    assert all(b.proto.HasField("deferred_file_id") for b in at.get("download_button"))
    run = next(s for s in at.selectbox if s.label == "Run").value
    expected = {}
    for name, export in [
        ("s1.qrels", lambda out: export_qrels(open_study(db, "s1", None), out)),
        ("s1-labels.csv", lambda out: export_labels(open_study(db, "s1", None), out)),
        (f"{run}.run", lambda out: export_run(open_study(db, "s1", None), run, out)),
    ]:
        out = io.StringIO()
        export(out)
        expected[name] = out.getvalue()
    assert {name: deferred[name]() for name in expected} == expected
    assert "q1 0 d1 3" in expected["s1.qrels"]
