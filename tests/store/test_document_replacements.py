"""A BEIR re-import replacing many documents switches their texts all at once (issue 12, item 4):
a reader in another process, polling while the import stages, publishes and removes the old
texts, sees every old text or every new one, never a mix; the lexical workflow after publishing
ranks the new texts, never the old, and the corpus generation moves once, at publication."""

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from lexical_builders import lexical_store, pinned
from store_fixtures import new_store

import evalcore.store.document_replacements as replacements
import evalcore.store.imports.beir as beir_import
from evalcore.io.errors import InputErrors
from evalcore.retrieval import revalidation
from evalcore.retrieval.errors import RetrievalRefused
from evalcore.retrieval.pin import get_pinned_protocol
from evalcore.retrieval.revalidation import revalidate
from evalcore.retrieval.search import search_corpus_unscoped
from evalcore.retrieval.workflow import execute_protocol
from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents, get_document, get_documents
from evalcore.store.corpus_generations import current_generation
from evalcore.store.document_imports import begin_import, discard_import
from evalcore.store.hashing import content_hash
from evalcore.store.imports import import_beir
from evalcore.store.runs import run_results
from evalcore.store.staged_documents import StagedDocuments
from evalcore.store.study_handle import open_study

REPO = Path(__file__).resolve().parents[2]
N = 400


def corpus(tmp_path: Path, word: str, n: int = N) -> Path:
    """A BEIR folder: ``n`` documents whose text is ``word``, queries "zq" (zebra), "yq" (yak)."""
    root = tmp_path / word
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"d{i:04d}", "title": f"T{i}", "text": f"{word} {i}"}) + "\n"
        for i in range(n)))
    (root / "queries.jsonl").write_text('{"_id": "zq", "text": "zebra"}\n'
                                        '{"_id": "yq", "text": "yak"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nzq\td0001\t1\n")
    return root


def small_chunks(monkeypatch) -> None:
    monkeypatch.setattr("evalcore.store.staging.MIN_CHUNK_ROWS", 10)
    monkeypatch.setattr("evalcore.store.staging.MAX_CHUNK_ROWS", 20)
    monkeypatch.setattr("evalcore.store.staging.MAX_PAUSE_S", 0)


#: The reader polling in another process: one consistent snapshot per poll, a JSON line each.
POLLER = textwrap.dedent("""
    import hashlib, json, sys, time
    from pathlib import Path
    from evalcore.store.connection import open_store
    from evalcore.store.corpus import count_documents, get_documents
    from evalcore.retrieval.search import search_corpus_unscoped
    from evalcore.store.pins import visible_documents
    from evalcore.store.transaction import read_snapshot
    from evalcore.store.visibility import Visibility
    path, n, out, stop = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
    ids = [f"d{i:04d}" for i in range(n)]
    db = open_store(path)
    def digest(hashes):
        return hashlib.sha256("\\n".join(sorted(hashes)).encode()).hexdigest()
    def hits(word):
        return len(search_corpus_unscoped(db, "c", word, limit=5))
    with out.open("w") as log:
        while not stop.exists():
            with read_snapshot(db):
                texts = {d.text.split()[0] for d in get_documents(db, "c", ids).values()}
                poll = {"t": time.time(), "texts": sorted(texts),
                        "count": count_documents(db, "c"),
                        "hashes": digest(h for _, h, _ in visible_documents(
                            db, Visibility.of("c"))),
                        "zebra": hits("zebra"), "yak": hits("yak")}
            log.write(json.dumps(poll) + "\\n")
            log.flush()
""")


def state(poll: dict, old: str, new: str) -> str:
    """"old", "new", or what was mixed."""
    for name, words, hashes, hits in (("old", ["zebra"], old, (5, 0)),
                                      ("new", ["yak"], new, (0, 5))):
        if (poll["texts"] == words and poll["count"] == N and poll["hashes"] == hashes
                and (poll["zebra"], poll["yak"]) == hits):
            return name
    return f"mixed: {poll['texts']}, {poll['count']} documents, zebra/yak hits " \
           f"{poll['zebra']}/{poll['yak']}, content hashes of neither: {poll['hashes']}"


def hashes(word: str) -> str:
    """The digest the reader computes over the visible content hashes."""
    return hashlib.sha256("\n".join(sorted(
        content_hash(f"T{i}", f"{word} {i}") for i in range(N))).encode()).hexdigest()


def test_a_reader_polling_in_another_process_never_sees_old_and_new_texts_mixed(
        tmp_path, monkeypatch, store_target):
    db = new_store(store_target)
    import_beir(db, corpus(tmp_path, "zebra"), study_id="s")
    small_chunks(monkeypatch)
    log, stop = tmp_path / "polls.jsonl", tmp_path / "stop"
    poller = subprocess.Popen(
        [sys.executable, "-c", POLLER, str(store_target), str(N), str(log), str(stop)],
        env={**os.environ, "PYTHONPATH": str(REPO)})

    def polls() -> list[dict]:
        lines = log.read_text().split("\n") if log.exists() else []
        return [json.loads(line) for line in lines[:-1]]  # the last may be half written

    def wait_for_polls(extra: int = 2) -> None:
        """Pause the import (its lock released) until the reader polled ``extra`` more times."""
        since = time.time()
        deadline = since + 30
        while sum(p["t"] > since for p in polls()) < extra:
            assert time.time() < deadline and poller.poll() is None, "the reader stopped polling"
            time.sleep(0.01)

    phases: list[str] = []
    staged, removed = StagedDocuments.write_staged, replacements.remove_superseded

    def staging(self, *args, **kwargs):
        def on_chunk(rows, held):
            phases.append("staging")
            wait_for_polls()  # the reader polls between staging chunks
        return staged(self, *args, on_chunk=on_chunk)

    def removing(db, import_id, on_chunk=None):
        def each(rows, held):
            phases.append("removing")
            wait_for_polls()  # and between the chunks removing the old texts
        return removed(db, import_id, on_chunk=each)

    monkeypatch.setattr(StagedDocuments, "write_staged", staging)
    monkeypatch.setattr(beir_import, "remove_superseded", removing)
    wait_for_polls()
    try:
        import_beir(db, corpus(tmp_path, "yak"), study_id="s")
        wait_for_polls()
    finally:
        stop.touch()
        poller.wait(timeout=60)
    assert phases.count("staging") >= 20 and phases.count("removing") >= 20  # paced chunks
    seen = [state(p, hashes("zebra"), hashes("yak")) for p in polls()]
    assert [s for s in seen if s not in ("old", "new")] == []
    switch = seen.index("new")
    assert set(seen[:switch]) == {"old"} and set(seen[switch:]) == {"new"}  # once, for good
    assert seen.count("old") >= 40 and seen.count("new") >= 40  # polled in every phase
    assert db.execute("SELECT count(*) FROM documents").fetchone()[0] == N
    assert db.execute("SELECT count(*) FROM pending_imports").fetchone()[0] == 0


def test_after_publishing_the_lexical_workflow_ranks_the_new_texts_and_never_reuses_the_old_pin(
        tmp_path, monkeypatch, store_target):
    db = lexical_store(store_target)
    wide = {"organisations": ["acme", "globex"], "cutoff": "2099-01-01T00:00:00Z"}
    import_beir(db, corpus(tmp_path, "zebra"), study_id="s", owner_org="acme")
    pinned(db, "before", **wide)
    run = execute_protocol(db, study_id="s", protocol_name="before", run_name="r0", actor="t")
    ranked = run_results(open_study(db, "s", "t"), run.run_id, ["zq", "yq"])
    assert len(ranked["zq"]) == 10 and ranked.get("yq", []) == []
    small_chunks(monkeypatch)
    checked: list[int] = []
    at_last_staging: list[int] = []
    staged, removed = StagedDocuments.write_staged, replacements.remove_superseded

    def staging(self, *args, **kwargs):
        return staged(self, *args, on_chunk=lambda rows, held: at_last_staging.append(
            current_generation(db, "c")))

    def removing(db, import_id, on_chunk=None):
        def each(rows, held):
            if checked:
                return
            reader = open_store(store_target)  # mid-way through the removal
            checked.append(current_generation(reader, "c"))
            assert checked[0] > at_last_staging[-1]  # publication moved it
            with pytest.raises(RetrievalRefused, match="content changed"):
                execute_protocol(reader, study_id="s", protocol_name="before", run_name="r1",
                                 actor="t")
            pinned(reader, "after", **wide)
            mid = execute_protocol(reader, study_id="s", protocol_name="after",
                                   run_name="r2", actor="t")
            ranked = run_results(open_study(reader, "s", "t"), mid.run_id, ["zq", "yq"])
            assert len(ranked["yq"]) == 10 and ranked.get("zq", []) == []
            reader.conn.close()
        return removed(db, import_id, on_chunk=each)

    monkeypatch.setattr(StagedDocuments, "write_staged", staging)
    monkeypatch.setattr(beir_import, "remove_superseded", removing)
    import_beir(db, corpus(tmp_path, "yak"), study_id="s", owner_org="acme")
    assert checked, "the removal ran in chunks and was checked mid-way"
    assert current_generation(db, "c") == checked[0]  # the removal did not move it again

    def scanned(*args, **kwargs):
        raise AssertionError("revalidation scanned the corpus")

    monkeypatch.setattr(revalidation, "recompute_changes", scanned)
    assert revalidate(open_study(db, "s", "t"), get_pinned_protocol(open_study(db, "s", "t"), "after")).unchanged
    run = execute_protocol(db, study_id="s", protocol_name="after", run_name="r3", actor="t")
    ranked = run_results(open_study(db, "s", "t"), run.run_id, ["zq", "yq"])
    assert len(ranked["yq"]) == 10 and ranked.get("zq", []) == []


def test_a_plain_write_during_a_re_import_wins_and_leaves_one_row(tmp_path, monkeypatch, store_target):
    """An edit of a document the import is replacing, made before it publishes, is what stays:
    one row, the edit's text, before and after publishing."""
    db = new_store(store_target)
    import_beir(db, corpus(tmp_path, "zebra", 30), study_id="s")
    staged = StagedDocuments.write_staged

    def staging_then_edit(self, *args, **kwargs):
        written = staged(self, *args, **kwargs)
        add_documents(db, "c", [DocumentIn(doc_id="d0001", title="T1", text="edited",
                                           created_at="2026-01-01T00:00:00Z")])
        assert get_document(db, "c", "d0001").text == "edited"
        assert get_document(db, "c", "d0002").text == "zebra 2"
        return written

    monkeypatch.setattr(StagedDocuments, "write_staged", staging_then_edit)
    import_beir(db, corpus(tmp_path, "yak", 30), study_id="s")
    texts = {d: x.text for d, x in get_documents(db, "c", [f"d{i:04d}" for i in range(30)]).items()}
    assert texts["d0001"] == "edited" and texts["d0002"] == "yak 2" and len(texts) == 30
    assert db.execute("SELECT count(*) FROM documents").fetchone()[0] == 30


def test_two_imports_may_not_replace_the_same_document_at_once(tmp_path, store_target):
    db = new_store(store_target)
    import_beir(db, corpus(tmp_path, "zebra", 30), study_id="s")
    other = begin_import(db, "c")  # another import, still pending, replacing them
    with StagedDocuments(db) as staged:
        for i in range(30):
            staged.add(i + 1, f"d{i:04d}", f"T{i}", f"gnu {i}")
        staged.finish_reading()
        staged.write_staged(other, "c", None, "2026-01-01T00:00:00Z")
    with pytest.raises(InputErrors, match="being written by another import still in progress"):
        import_beir(db, corpus(tmp_path, "yak", 30), study_id="s")
    discard_import(db, other)
    assert {d.text.split()[0] for d in get_documents(
        db, "c", [f"d{i:04d}" for i in range(30)]).values()} == {"zebra"}
    assert db.execute("SELECT count(*) FROM documents").fetchone()[0] == 30
    assert db.execute("SELECT count(*) FROM pending_imports").fetchone()[0] == 0
    import_beir(db, corpus(tmp_path, "yak", 30), study_id="s")  # once it is gone: accepted
    assert get_document(db, "c", "d0003").text == "yak 3"


@pytest.mark.sqlite_only
def test_a_v13_store_with_staged_replacements_migrates_to_v14_and_settles(tmp_path):
    """v13 staged a replaced text in a hidden corpus and wrote it over the old one after
    publishing: a store left mid-way (published, not applied) is finished by the migration;
    an unpublished import's hidden texts are dropped and the import discarded."""
    import socket

    from store_fixtures import store_at_version

    from evalcore.store import schema

    dead = f"{socket.gethostname()}:999999999"

    def doc(corpus: str, doc_id: str, text: str, import_id: str | None) -> str:
        key = "NULL" if import_id is None else f"'{import_id}'"
        return ("INSERT INTO documents (corpus_id, doc_id, title, text, owner_org, created_at, "
                f"content_hash, import_id) VALUES ({corpus}, '{doc_id}', 'T', '{text}', 'acme', "
                f"'2026-01-01T00:00:00Z', 'h-{text}', {key})")

    def pending(import_id: str) -> str:
        return (f"INSERT INTO pending_imports VALUES ('{import_id}', 'c', '{dead}', "
                "'2026-01-01T00:00:00Z')")

    path = tmp_path / "old.db"
    store_at_version(
        path, 13,
        doc("'c'", "d1", "zebra", None), doc("'c'", "d2", "zebra", None),
        doc("'c' || char(0) || 'x'", "d1", "yak", "x:replacements"),  # x published
        pending("x:replacements"),
        doc("'c'", "d3", "gnu", "y"),  # y not published: a new document and a replacement
        doc("'c' || char(0) || 'y'", "d2", "gnu", "y:replacements"),
        pending("y"), pending("y:replacements"),
    )
    db = open_store(path)
    assert schema.schema_version(db) == schema.SCHEMA_VERSION >= 14
    assert get_document(db, "c", "d1").text == "yak"
    assert get_document(db, "c", "d2").text == "zebra" and get_document(db, "c", "d3") is None
    assert db.execute("SELECT corpus_id, doc_id, text, superseded_by FROM documents "
                      "ORDER BY doc_id").fetchall() == [("c", "d1", "yak", ""),
                                                        ("c", "d2", "zebra", "")]
    assert db.execute("SELECT count(*) FROM pending_imports").fetchone()[0] == 0
    found = {w: len(search_corpus_unscoped(db, "c", w)) for w in ("yak", "zebra", "gnu")}
    assert found == {"yak": 1, "zebra": 1, "gnu": 0}


@pytest.mark.sqlite_only
def test_removing_superseded_rows_spares_a_document_that_took_a_freed_rowid(
        tmp_path: Path, monkeypatch) -> None:
    """Between two chunks of the removal (another process may write then) a new document
    takes the rowid of a row already removed: the new document stays, the old rows go."""
    db = new_store(tmp_path / "s.db")
    db.execute("INSERT INTO documents (corpus_id, doc_id, title, text, owner_org, created_at, "
               "content_hash, superseded_by) SELECT 'c', 'old' || value, 'T', 'zebra', 'acme', "
               "'2026-01-01T00:00:00Z', 'h', 'x' FROM json_each('[1, 2, 3]')")
    old = {r for (r,) in db.execute("SELECT rowid FROM documents")}
    monkeypatch.setattr(replacements, "FIRST_CHUNK", 1)
    monkeypatch.setattr("evalcore.store.staging.MIN_CHUNK_ROWS", 1)
    monkeypatch.setattr("evalcore.store.staging.MAX_CHUNK_ROWS", 1)
    monkeypatch.setattr("evalcore.store.staging.MAX_PAUSE_S", 0)

    taken: list[int] = []

    def meanwhile(rows: int, held: float) -> None:
        freed = old - {r for (r,) in db.execute("SELECT rowid FROM documents")}
        if freed and not taken:  # once: a new document on a freed rowid
            taken.append(max(freed))
            db.execute("INSERT INTO documents (rowid, corpus_id, doc_id, title, text, "
                       "owner_org, created_at, content_hash) VALUES (?, 'c', 'new', 'T', "
                       "'yak', 'acme', '2026-01-01T00:00:00Z', 'h2')", taken)

    assert replacements.remove_superseded(db, "x", on_chunk=meanwhile) == 3
    assert db.execute("SELECT doc_id, text FROM documents").fetchall() == [("new", "yak")]
