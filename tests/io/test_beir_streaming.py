"""A BEIR corpus is streamed: the same lines, errors and documents as reading it whole,
in bounded memory, through a scratch file that is always deleted (issue 12, item 5)."""

import json
import tempfile
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_fixtures import new_store, table_snapshot

import evalcore.io.beir as beir_io
from evalcore.io.beir import read_beir_folder
from evalcore.io.errors import ErrorLog, InputErrors
from evalcore.io.text_lines import numbered_lines, read_source, stream_lines
from evalcore.store.corpus import count_documents, get_document
from evalcore.store.imports import import_beir

QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\n"


def folder(tmp_path, corpus: str | bytes, qrels: str = QRELS):
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_bytes(corpus.encode() if isinstance(corpus, str) else corpus)
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "what is one"}\n')
    (root / "qrels" / "test.tsv").write_text(qrels)
    return root


def doc(i, text="t") -> str:
    return json.dumps({"_id": f"d{i}", "title": f"T{i}", "text": text}) + "\n"


def whole_and_streamed(path, max_line_bytes=1 << 20):
    source = read_source(path)
    whole = (list(numbered_lines(source.text, comments=False)), [str(e) for e in source.errors])
    log = ErrorLog(str(path))
    lines = list(stream_lines(path, log, max_line_bytes=max_line_bytes))
    return whole, (lines, [str(e) for e in log.errors])


PIECES = [b"a", b"{}", b" ", b"\n", b"\r", b"\r\n", b"\xff", b"\x00", "é".encode(), b"\xef\xbb\xbf"]


@settings(deadline=None, max_examples=200)
@given(st.lists(st.sampled_from(PIECES), max_size=30))
def test_streamed_lines_are_the_lines_read_whole(tmp_path_factory, pieces):
    """Line numbers, BOM, LF/CRLF/lone CR, blank lines, invalid UTF-8 and NUL: the same."""
    path = tmp_path_factory.mktemp("s") / "f.jsonl"
    path.write_bytes(b"".join(pieces))
    whole, streamed = whole_and_streamed(path)
    assert streamed == whole


def test_a_line_too_long_is_an_error_and_the_rest_is_still_read(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"short\r\n" + b"x" * 5000 + b"\nafter\n")
    log = ErrorLog(str(path))
    assert list(stream_lines(path, log, max_line_bytes=100)) == [(1, "short"), (3, "after")]
    assert [str(e) for e in log.errors] == [
        f"{path}:2: line longer than 100 bytes (one line holds one record; is this the right "
        "file? (--max-document-mib raises the bound))"]


def test_streamed_import_writes_what_the_whole_file_held(tmp_path):
    db = new_store(tmp_path)
    corpus = doc(1, "one") + "\n" + doc(2, "two ü") + doc(3)
    root = folder(tmp_path, "\ufeff" + corpus.replace("\n", "\r\n"))
    summary = import_beir(db, root, study_id="s")
    assert summary.documents == 3 and count_documents(db, "c") == 3
    assert read_beir_folder(root).documents == {
        d: (get_document(db, "c", d).title, get_document(db, "c", d).text) for d in
        ("d1", "d2", "d3")}
    # again with one document changed: only that one is written, and counted as changed
    (root / "corpus.jsonl").write_text(doc(1, "one") + doc(2, "changed") + doc(3))
    again = import_beir(db, root, study_id="s")
    assert again.documents == 1 and get_document(db, "c", "d2").text == "changed"
    assert any("1 document(s) already in corpus" in w for w in again.warnings)


def test_streamed_errors_are_the_same_errors_and_nothing_is_written(tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    db = new_store(tmp_path)
    before = table_snapshot(db)
    corpus = (doc(1) + doc(2) + doc(1) + '{"_id": 7}\n' + "not json\n" + b"\xff\n".decode("latin-1")
              + '{"_id": "d9", "text": ["x"]}\n')
    root = folder(tmp_path, corpus.encode("latin-1"))
    with pytest.raises(InputErrors) as streamed:
        import_beir(db, root, study_id="s")
    with pytest.raises(InputErrors) as whole:
        beir_io.parse_objects(read_source(root / "corpus.jsonl"), ("_id", "title", "text"),
                              ("_id",))
    assert [str(e) for e in streamed.value.errors] == [str(e) for e in whole.value.errors]
    assert any('duplicate _id "d1", first on line 1' in str(e) for e in streamed.value.errors)
    assert table_snapshot(db) == before
    assert list(scratch.iterdir()) == []  # the scratch file is deleted


def test_unknown_judged_documents_are_refused_when_the_folder_brings_documents(tmp_path):
    db = new_store(tmp_path)
    root = folder(tmp_path, doc(1), qrels=QRELS + "q1\tnope\t1\n")
    with pytest.raises(InputErrors, match="1 corpus-id id"):
        import_beir(db, root, study_id="s")
    assert count_documents(db, "c") == 0


def test_a_corpus_is_not_held_in_memory(tmp_path):
    """12 MiB of documents imported with ~6 MiB of Python memory at its peak, whatever the
    corpus size (reading the file whole held ~3.3x its size: bytes, text, a dict of
    every document)."""
    db = new_store(tmp_path)
    text = "word " * 200
    root = folder(tmp_path, "".join(doc(i, text) for i in range(12_500)))
    size = (root / "corpus.jsonl").stat().st_size
    assert size > 12 * 1024 * 1024
    tracemalloc.start()
    try:
        summary = import_beir(db, root, study_id="s")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert summary.documents == 12_500
    assert peak < 0.8 * size, f"peak {peak / 2**20:.1f} MiB for {size / 2**20:.1f} MiB"
