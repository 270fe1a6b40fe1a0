"""A corpus's generation (schema v13): every kind of document write moves it, and revalidating
a pin whose corpus is still at the pinned generation gives exactly the verdict of the full,
document-by-document recomputation, without scanning anything."""

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from lexical_builders import AFTER, BEFORE, docs, lexical_store, pinned
from store_fixtures import store_at_version
from test_document_imports import beir_folder

import evalcore.store.imports.beir as beir_import
from evalcore.retrieval import revalidation
from evalcore.retrieval.errors import RetrievalRefused
from evalcore.retrieval.pin import get_pinned_protocol
from evalcore.retrieval.revalidation import recompute_changes, revalidate
from evalcore.retrieval.workflow import execute_protocol
from evalcore.store import schema
from evalcore.store.audit import audit_entries
from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.corpus_generations import current_generation
from evalcore.store.imports import import_beir
from evalcore.store.pins import pin_generation
from evalcore.store.study_handle import open_study

REPO = Path(__file__).resolve().parents[2]
#: One pin of the two acme documents before the cutoff, one of everything ever owned.
WIDE = {"organisations": ["acme", "globex"], "cutoff": "2099-01-01T00:00:00Z"}


def pins(db):
    return [pinned(db, "narrow"), pinned(db, "wide", **WIDE)]


def assert_fast_verdict_is_the_full_one(db, names=("narrow", "wide")):
    for name in names:
        pin = get_pinned_protocol(open_study(db, "s", "tester"), name)
        assert revalidate(open_study(db, "s", "tester"), pin) == recompute_changes(open_study(db, "s", "tester"), pin)


def no_scan(monkeypatch):
    def scanned(*args, **kwargs):
        raise AssertionError("revalidation scanned the corpus")

    monkeypatch.setattr(revalidation, "recompute_changes", scanned)


def test_an_unchanged_corpus_is_revalidated_without_a_scan_and_runs(tmp_path, monkeypatch, store_target):
    db = lexical_store(store_target)
    narrow, wide = pins(db)
    assert pin_generation(open_study(db, "s", None), "narrow") == current_generation(db, "c") > 0
    full = [recompute_changes(open_study(db, "s", "tester"), p) for p in (narrow, wide)]
    assert all(c.unchanged for c in full)
    add_documents(db, "other-corpus", docs())  # another corpus's writes do not count
    no_scan(monkeypatch)
    assert [revalidate(open_study(db, "s", "tester"), p) for p in (narrow, wide)] == full
    run = execute_protocol(db, study_id="s", protocol_name="narrow", run_name="r",
                           actor="tester")
    assert run.corpus_fingerprint == narrow.corpus_fingerprint
    (entry,) = [e for e in audit_entries(open_study(db, "s", "tester")) if e.action == "lexical.run"]
    assert 0 <= entry.detail["ranking_s"] <= entry.detail["elapsed_s"]  # the query time apart
    assert entry.detail["ranking_cpu_s"] >= 0


@pytest.mark.sqlite_only
def test_every_kind_of_document_write_moves_the_generation_and_the_verdicts_agree(tmp_path):
    db = lexical_store(tmp_path)
    pins(db)
    writes = {
        "the same content again": lambda: add_documents(db, "c", docs()),
        "an edit": lambda: add_documents(db, "c", docs(a1=("Solar", "new text", "acme"))),
        "an owner change": lambda: add_documents(db, "c", docs(a2=(*docs_row("a2")[:2], "globex"))),
        "a new document": lambda: add_documents(db, "c", [DocumentIn(
            doc_id="a9", title="t", text="solar", owner_org="acme", created_at=BEFORE)]),
        "a creation time after the cutoff": lambda: add_documents(db, "c", [DocumentIn(
            doc_id="a3", title="Panel maintenance", text="cleaning solar panels keeps them "
            "efficient", owner_org="acme", created_at=AFTER)]),
        "a staged import, published": lambda: import_beir(
            db, beir_folder(tmp_path / "one", 30), study_id="s", owner_org="acme"),
        "a staged import replacing documents": lambda: import_beir(
            db, beir_folder(tmp_path / "two", 40, text="yak"), study_id="s", owner_org="acme"),
        "an unstaged import inside a transaction": lambda: _import_in_transaction(db, tmp_path),
    }
    for what, write in writes.items():
        before = current_generation(db, "c")
        write()
        assert current_generation(db, "c") > before, what
        assert_fast_verdict_is_the_full_one(db)
    # Whatever wrote the rows: another connection, plain SQL, no evalcore code.
    for sql in ("UPDATE documents SET text = 'x' WHERE doc_id = 'a4'",
                "UPDATE documents SET owner_org = 'globex' WHERE doc_id = 'a1'",
                "UPDATE documents SET corpus_id = 'elsewhere' WHERE doc_id = 'b1'",
                "DELETE FROM documents WHERE doc_id = 'b2'",
                "INSERT INTO pending_imports VALUES ('x', 'c', 'nowhere:1', '2026-01-01')",
                "UPDATE documents SET import_id = 'x' WHERE doc_id = 'a9'",
                "DELETE FROM pending_imports WHERE import_id = 'x'"):
        before = current_generation(db, "c")
        raw = sqlite3.connect(tmp_path / "store.db")
        raw.execute(sql)
        raw.commit()
        raw.close()
        assert current_generation(db, "c") > before, sql
        assert_fast_verdict_is_the_full_one(db)
    assert current_generation(db, "elsewhere") >= 1  # the corpus a row moved into moved too
    with pytest.raises(RetrievalRefused, match="moved to another organisation: 2"):
        execute_protocol(db, study_id="s", protocol_name="narrow", run_name="r", actor="tester")


def docs_row(doc_id):
    (doc,) = [d for d in docs() if d.doc_id == doc_id]
    return doc.title, doc.text, doc.owner_org


def _import_in_transaction(db, tmp_path):
    from evalcore.store.transaction import write_transaction

    with write_transaction(db):
        import_beir(db, beir_folder(tmp_path / "three", 5, text="zebu"), study_id="s",
                    owner_org="acme")


def test_a_failed_staged_import_moves_the_generation_and_the_verdicts_agree(tmp_path,
                                                                            monkeypatch, store_target):
    db = lexical_store(store_target)
    pins(db)
    before = current_generation(db, "c")

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(beir_import, "write_label_events", fail)
    with pytest.raises(OSError, match="disk full"):
        import_beir(db, beir_folder(tmp_path, 50), study_id="s", owner_org="acme")
    assert current_generation(db, "c") > before
    assert_fast_verdict_is_the_full_one(db)
    assert revalidate(open_study(db, "s", "tester"), get_pinned_protocol(open_study(db, "s", "tester"), "wide")).unchanged


def test_a_killed_staged_import_and_its_cleanup_keep_the_verdicts_exact(tmp_path, store_target):
    db = lexical_store(store_target)
    pins(db)
    db.conn.close()
    folder = beir_folder(tmp_path, 120)
    script = textwrap.dedent(f"""
        import os
        from evalcore.store.connection import open_store
        from evalcore.store.imports import import_beir
        from evalcore.store.staged_documents import StagedDocuments
        written = StagedDocuments.write_staged
        def die(*args, **kwargs):
            written(*args, **kwargs)
            os._exit(9)  # the process dies after its chunks, before publishing
        StagedDocuments.write_staged = die
        import_beir(open_store({str(store_target)!r}), {str(folder)!r}, study_id="s",
                    owner_org="acme")
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    assert subprocess.run([sys.executable, "-c", script], env=env, timeout=120).returncode == 9
    left = open_store(store_target, migrate=False)  # the dead import's rows are there
    assert left.execute("SELECT count(*) FROM pending_imports").fetchone()[0] == 1
    moved = current_generation(left, "c")
    assert moved > pin_generation(open_study(left, "s", None), "wide")
    assert_fast_verdict_is_the_full_one(left)
    left.conn.close()
    reopened = open_store(store_target)  # discards them
    assert reopened.execute("SELECT count(*) FROM pending_imports").fetchone()[0] == 0
    assert current_generation(reopened, "c") > moved
    assert_fast_verdict_is_the_full_one(reopened)
    assert revalidate(open_study(reopened, "s", "tester"), get_pinned_protocol(open_study(reopened, "s", "tester"), "wide")).unchanged


@pytest.mark.sqlite_only
def test_a_generation_never_goes_back_and_is_never_deleted(tmp_path):
    db = lexical_store(tmp_path)
    generation = current_generation(db, "c")
    with pytest.raises(sqlite3.IntegrityError, match="only moves forward"):
        db.execute("UPDATE corpus_generations SET generation = 1 WHERE corpus_id = 'c'")
    with pytest.raises(sqlite3.IntegrityError, match="never deleted"):
        db.execute("DELETE FROM corpus_generations WHERE corpus_id = 'c'")
    assert current_generation(db, "c") == generation


@pytest.mark.sqlite_only
def test_a_v12_store_migrates_to_v13_and_its_pins_are_revalidated_in_full(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    store_at_version(
        path, 12,
        "INSERT INTO documents (corpus_id, doc_id, title, text, owner_org, created_at, "
        "content_hash) VALUES ('c', 'd1', 'T', 'zebra', 'acme', '2026-01-01T00:00:00Z', 'h')",
        "INSERT INTO protocols (study_id, name, protocol_json, corpus_fingerprint, pinned_at, "
        "pinned_by) VALUES ('s', 'old', '{\"method\": \"lexical\", \"top_k\": 5, \"cutoff\": "
        "\"2026-06-30T00:00:00Z\", \"organisations\": [\"acme\"], \"corpus_id\": \"c\"}', "
        "'sha256:not-this-corpus', '2026-01-02T00:00:00Z', 'someone')",
        "INSERT INTO protocol_documents (study_id, protocol, doc_id, content_hash, owner_org) "
        "VALUES ('s', 'old', 'd1', 'h', 'acme')",
    )
    db = open_store(path)
    assert schema.schema_version(db) == schema.SCHEMA_VERSION >= 13
    assert pin_generation(open_study(db, "s", None), "old") is None
    assert current_generation(db, "c") == 0  # nothing written since the migration
    old = get_pinned_protocol(open_study(db, "s", "tester"), "old")
    changes = revalidate(
        open_study(db, "s", "tester"), old
    )  # no generation: the full comparison, which sees the hash
    assert changes == recompute_changes(open_study(db, "s", "tester"), old) and not changes.unchanged
    fresh = pinned(db, "new", organisations=["acme"])
    assert pin_generation(open_study(db, "s", None), "new") == 0
    no_scan(monkeypatch)
    assert revalidate(open_study(db, "s", "tester"), fresh).unchanged
