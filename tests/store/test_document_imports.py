"""A BEIR corpus is written in short transactions and published at once (issue 12, item 4):
no reader ever sees a staged document, a failure or a killed import leaves nothing visible,
and the next open removes a dead import's rows."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from store_fixtures import new_store, store_at_version, table_snapshot

import evalcore.store.imports.beir as beir_import
from evalcore.retrieval.search import search_corpus_unscoped
from evalcore.store import schema, staged_documents
from evalcore.store.connection import open_store
from evalcore.store.corpus import count_documents, get_document, get_documents
from evalcore.store.imports import import_beir
from evalcore.store.staged_documents import StagedDocuments

REPO = Path(__file__).resolve().parents[2]


def beir_folder(tmp_path: Path, n: int, *, text: str = "zebra", extra: str = "") -> Path:
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps({"_id": f"d{i}", "title": f"T{i}", "text": text}) + "\n"
                    for i in range(n))
    (root / "corpus.jsonl").write_text(lines + extra)
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "what is one"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return root


def what_a_reader_sees(path: Path) -> dict:
    reader = open_store(path)
    try:
        return {
            "count": count_documents(reader, "c"),
            "d1": get_document(reader, "c", "d1"),
            "many": sorted(get_documents(reader, "c", ["d0", "d1", "d2"])),
            "search": [h.doc_id for h in search_corpus_unscoped(reader, "c", "zebra yak",
                                                                 limit=10)],
        }
    finally:
        reader.conn.close()


def small_chunks(monkeypatch) -> None:
    """Chunks of 10-20 rows and no pause: many short transactions from a small corpus."""
    monkeypatch.setattr("evalcore.store.staging.MIN_CHUNK_ROWS", 10)
    monkeypatch.setattr("evalcore.store.staging.MAX_CHUNK_ROWS", 20)
    monkeypatch.setattr("evalcore.store.staging.MAX_PAUSE_S", 0)


def test_a_reader_never_sees_a_staged_document_and_all_appear_at_publish(tmp_path, monkeypatch, store_target):
    db = new_store(store_target)
    monkeypatch.setattr(staged_documents, "BATCH", 50)
    small_chunks(monkeypatch)
    seen: list[dict] = []
    chunks: list[int] = []
    original = StagedDocuments.write_staged

    def watched(self, *args, **kwargs):
        def on_chunk(rows, held):
            chunks.append(rows)
            seen.append(what_a_reader_sees(store_target))
        return original(self, *args, on_chunk=on_chunk)

    monkeypatch.setattr(StagedDocuments, "write_staged", watched)
    summary = import_beir(db, beir_folder(tmp_path, 200), study_id="s")
    assert summary.documents == 200
    assert len(chunks) >= 10  # really written in many short transactions
    assert sum(chunks) == 200
    assert all(s == {"count": 0, "d1": None, "many": [], "search": []} for s in seen)
    after = what_a_reader_sees(store_target)
    assert after["count"] == 200 and after["d1"].text == "zebra"
    assert after["many"] == ["d0", "d1", "d2"] and len(after["search"]) == 10
    assert db.execute("SELECT count(*) FROM pending_imports").fetchone()[0] == 0


def test_a_replaced_document_keeps_its_old_text_until_publish(tmp_path, monkeypatch, store_target):
    db = new_store(store_target)
    import_beir(db, beir_folder(tmp_path, 3, text="zebra"), study_id="s")
    seen: list[dict] = []
    original = StagedDocuments.write_staged

    def watched(self, *args, **kwargs):
        written = original(self, *args, **kwargs)
        seen.append(what_a_reader_sees(store_target))
        return written

    monkeypatch.setattr(StagedDocuments, "write_staged", watched)
    summary = import_beir(db, beir_folder(tmp_path, 5, text="yak"), study_id="s")
    assert seen[0]["count"] == 3 and seen[0]["d1"].text == "zebra"
    after = what_a_reader_sees(store_target)
    assert after["count"] == 5 and after["d1"].text == "yak"
    assert summary.documents == 5
    assert any("3 document(s) already in corpus 'c' had other content" in w
               for w in summary.warnings)


def test_a_bad_line_late_in_the_corpus_writes_nothing(tmp_path, store_target):
    db = new_store(store_target)
    before = table_snapshot(db)
    with pytest.raises(Exception, match=r"corpus.jsonl:3001"):
        import_beir(db, beir_folder(tmp_path, 3000, extra='{"_id": "x", "text": 5}\n'),
                    study_id="s")
    assert table_snapshot(db) == before


def test_a_failure_after_the_chunks_discards_every_staged_document(tmp_path, monkeypatch, store_target):
    db = new_store(store_target)
    before = table_snapshot(db)

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(beir_import, "write_label_events", fail)
    with pytest.raises(OSError, match="disk full"):
        import_beir(db, beir_folder(tmp_path, 500), study_id="s")
    assert table_snapshot(db) == before


def test_a_killed_import_stays_invisible_and_the_next_open_removes_it(tmp_path, store_target):
    db = new_store(store_target)
    folder = beir_folder(tmp_path, 300)
    db.conn.close()
    script = textwrap.dedent(f"""
        import os
        from evalcore.store.connection import open_store
        from evalcore.store.imports import import_beir
        import evalcore.store.imports.beir as beir_import
        def die(*args, **kwargs):
            os._exit(9)  # the process dies after its chunks, before publishing
        beir_import.publish_import = die
        import_beir(open_store({str(store_target)!r}), {str(folder)!r}, study_id="s")
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", script], env=env, timeout=120)
    assert done.returncode == 9
    raw = open_store(store_target, migrate=False)
    assert raw.execute("SELECT count(*) FROM documents").fetchone()[0] == 300  # left behind
    assert raw.execute("SELECT count(*) FROM pending_imports").fetchone()[0] == 1
    assert count_documents(raw, "c") == 0 and get_document(raw, "c", "d1") is None
    raw.conn.close()
    reopened = open_store(store_target)
    assert reopened.execute("SELECT count(*) FROM documents").fetchone()[0] == 0
    assert reopened.execute("SELECT count(*) FROM pending_imports").fetchone()[0] == 0
    assert search_corpus_unscoped(reopened, "c", "zebra") == []


def _run_and_die(store_target: str | Path, folder: Path, patch: str) -> None:
    script = textwrap.dedent("""
        import os
        import evalcore.store.imports.beir as beir_import
        import evalcore.store.staging as staging
        from evalcore.store.connection import open_store
        from evalcore.store.imports import import_beir
        def die(*args, **kwargs):
            os._exit(9)
        staging.MIN_CHUNK_ROWS, staging.MAX_CHUNK_ROWS, staging.MAX_PAUSE_S = 10, 20, 0
    """) + textwrap.dedent(patch) + (
        f"import_beir(open_store({str(store_target)!r}), {str(folder)!r}, "
        "study_id='s')\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", script], env=env, timeout=120)
    assert done.returncode == 9


def test_every_replaced_text_switches_at_the_small_publish_and_the_old_ones_go_after(
        tmp_path, monkeypatch, store_target):
    """The publishing transaction writes no replaced document (its hold does not grow with
    them), yet every new text is visible from it on; the old texts, invisible, are then
    deleted in paced chunks."""
    import evalcore.store.document_replacements as replacements

    db = new_store(store_target)
    import_beir(db, beir_folder(tmp_path, 300, text="zebra"), study_id="s")
    small_chunks(monkeypatch)
    at_publish: list[dict] = []
    chunks: list[int] = []
    original = replacements.remove_superseded

    def watched(db, import_id, on_chunk=None):
        at_publish.append(what_a_reader_sees(store_target))
        return original(db, import_id, on_chunk=lambda rows, held: chunks.append(rows))

    monkeypatch.setattr(beir_import, "remove_superseded", watched)
    summary = import_beir(db, beir_folder(tmp_path, 310, text="yak"), study_id="s")
    # published: the 10 new documents and the 300 new texts are visible, none of the old
    assert at_publish[0]["count"] == 310 and at_publish[0]["d1"].text == "yak"
    assert db.execute("SELECT count(*) FROM documents").fetchone()[0] == 310  # none left over
    assert len(chunks) >= 15 and sum(chunks) == 300
    after = what_a_reader_sees(store_target)
    assert after["count"] == 310 and after["d1"].text == "yak"
    assert db.execute("SELECT count(*) FROM pending_imports").fetchone()[0] == 0
    assert summary.documents == 310
    assert any("300 document(s) already in corpus 'c' had other content" in w
               for w in summary.warnings)
    assert search_corpus_unscoped(db, "c", "zebra") == []


def test_a_re_import_killed_before_publishing_leaves_the_old_texts(tmp_path, store_target):
    db = new_store(store_target)
    import_beir(db, beir_folder(tmp_path, 100, text="zebra"), study_id="s")
    db.conn.close()
    _run_and_die(store_target, beir_folder(tmp_path, 100, text="yak"),
                 "beir_import.publish_import = die\n")
    reopened = open_store(store_target)
    assert get_document(reopened, "c", "d1").text == "zebra"
    assert reopened.execute("SELECT count(*) FROM documents").fetchone()[0] == 100
    assert reopened.execute("SELECT count(*) FROM pending_imports").fetchone()[0] == 0


def test_a_re_import_killed_while_removing_the_old_texts_is_finished_by_the_next_open(
        tmp_path, store_target):
    db = new_store(store_target)
    import_beir(db, beir_folder(tmp_path, 100, text="zebra"), study_id="s")
    db.conn.close()
    _run_and_die(store_target, beir_folder(tmp_path, 100, text="yak"), """
        import evalcore.store.document_replacements as replacements
        real = replacements.remove_superseded
        def remove_then_die(db, import_id):
            def on_chunk(rows, held):
                os._exit(9)  # dies after the first chunk of old texts removed
            real(db, import_id, on_chunk=on_chunk)
        beir_import.remove_superseded = remove_then_die
    """)
    raw = open_store(store_target, migrate=False)
    texts = [t for (t,) in raw.execute("SELECT text FROM documents WHERE corpus_id = 'c'")]
    assert texts.count("yak") == 100 and 0 < texts.count("zebra") < 100  # published, part gone
    assert {d.text for d in get_documents(raw, "c", [f"d{i}" for i in range(100)]).values()} \
        == {"yak"}  # what is left of the old texts is invisible
    raw.conn.close()
    reopened = open_store(store_target)
    assert {t for (t,) in reopened.execute("SELECT text FROM documents")} == {"yak"}
    assert reopened.execute("SELECT count(*) FROM documents").fetchone()[0] == 100
    assert reopened.execute("SELECT count(*) FROM pending_imports").fetchone()[0] == 0


@pytest.mark.sqlite_only
def test_a_v11_store_migrates_to_v12_and_its_documents_stay_visible(tmp_path):
    path = tmp_path / "old.db"
    store_at_version(path, 11, "INSERT INTO documents (corpus_id, doc_id, title, text, "
                     "created_at, content_hash) VALUES ('c', 'd1', 'T', 'zebra', "
                     "'2026-01-01T00:00:00Z', 'h')")
    db = open_store(path)
    assert schema.schema_version(db) == schema.SCHEMA_VERSION >= 12
    assert get_document(db, "c", "d1").text == "zebra"
    assert db.execute("SELECT import_id FROM documents").fetchall() == [(None,)]
    assert db.execute("SELECT count(*) FROM pending_imports").fetchone()[0] == 0
