"""Decompression bombs and oversized documents: refused with a clear message, nothing written,
memory bounded (issue 28, item 4).

The three bombs of the attack (a 1 MB gzip holding one 1 GiB document, a 100 KB
file holding a 100 MiB document, a 3 MB file without <DOC>) run through the real
command line in a fresh process, whose peak RSS is measured; the same bounds are
checked in process on smaller inputs, for every reader that decompresses.
"""

from __future__ import annotations

import base64
import bz2
import gzip
import json
import lzma
import os
from pathlib import Path

import pytest
from bombs import BOMB_NAMES, MiB, run_measured, trec_bomb
from store_fixtures import new_store, table_snapshot

from evalcore.contract.limits import ReadLimits
from evalcore.io.beir import read_beir_folder
from evalcore.io.decompress import open_input
from evalcore.io.documents import read_documents
from evalcore.io.errors import InputErrors
from evalcore.io.study_archive import max_row_bytes
from evalcore.io.text_lines import read_source
from evalcore.store.imports.uploads import import_upload

#: Peak RSS allowed for refusing a bomb (issue 28: under 300 MB).
RSS_BOUND_MIB = 300


def _errors(fn, *args, **kwargs) -> str:
    with pytest.raises(InputErrors) as caught:
        fn(*args, **kwargs)
    return str(caught.value)


@pytest.fixture(scope="module")
def cli_store(tmp_path_factory) -> Path:
    from click.testing import CliRunner

    from evalcore.cli import main

    folder = tmp_path_factory.mktemp("bombs")
    result = CliRunner().invoke(main, ["init", "--db", str(folder / "s.db"), "--study", "s",
                                       "--corpus", "c"])
    assert result.exit_code == 0, result.output
    return folder


@pytest.mark.parametrize("name", BOMB_NAMES)
def test_the_attack_bombs_are_refused_in_bounded_memory(cli_store: Path, name: str) -> None:
    path = cli_store / f"{name}.gz"
    path.write_bytes(trec_bomb(name))
    assert path.stat().st_size < 4 * MiB
    before = (cli_store / "s.db").read_bytes()
    result = run_measured(["import", "documents", "--db", "s.db", "--study", "s", path.name,
                           "--format", "trec"], cli_store)
    assert result["exit_code"] == 2, result
    assert f"{path.name}: " in result["output"]
    assert "refused as a decompression bomb" in result["output"]
    assert "nothing was written" in result["output"]
    assert result["peak_rss_mib"] < RSS_BOUND_MIB, result
    assert (cli_store / "s.db").read_bytes() == before


def _incompressible(n: int) -> bytes:
    """``n`` bytes of text that gzip cannot shrink past the bomb ratio (base64 of random)."""
    return base64.b64encode(os.urandom(n * 3 // 4 + 3))[:n]


def test_a_document_past_the_bound_stops_reading_in_bounded_memory(cli_store: Path) -> None:
    """Compressed at an ordinary ratio, a 40 MiB document is refused by the document bound."""
    path = cli_store / "big-doc.trec.gz"
    path.write_bytes(gzip.compress(b"<DOC><DOCNO>d</DOCNO>\n" + _incompressible(40 * MiB)
                                   + b"\n</DOC>\n", compresslevel=1))
    result = run_measured(["import", "documents", "--db", "s.db", "--study", "s", path.name],
                          cli_store)
    assert result["exit_code"] == 2, result
    assert (f"{path.name}:1: DOC: a <DOC> larger than 10 MiB (10,485,760 bytes) with no "
            "</DOC>") in result["output"]
    assert "--max-document-mib" in result["output"]
    assert result["peak_rss_mib"] < RSS_BOUND_MIB, result


def test_the_document_bound_is_settable(tmp_path: Path) -> None:
    path = tmp_path / "docs.trec"
    path.write_bytes(b"<DOC><DOCNO>a</DOCNO>" + b"x" * 3000 + b"</DOC>\n"
                     b"<DOC><DOCNO>b</DOCNO>short</DOC>\n")
    small = ReadLimits(max_document_bytes=1000)
    assert "docs.trec:1: DOC: a <DOC> larger than 1,000 bytes" in _errors(
        read_documents, path, limits=small)
    assert set(read_documents(path, limits=ReadLimits(max_document_bytes=4000)).documents) == {
        "a", "b"}


def test_a_jsonl_line_past_the_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl.gz"
    text = b'{"id": "a", "text": "' + _incompressible(3000) + b'"}\n'
    path.write_bytes(gzip.compress(b'{"id": "z", "text": "ok"}\n' + text))
    message = _errors(read_documents, path, limits=ReadLimits(max_document_bytes=1000))
    assert message.startswith(f"{path}:2: a line longer than 1,000 bytes")
    assert "--max-document-mib" in message


def test_the_total_unpacked_bound_names_the_file_and_the_option(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_bytes(gzip.compress(b"".join(b"q%d 0 d%d 1\n" % (i, i) for i in range(3000))))
    message = _errors(read_source, path, limits=ReadLimits(max_unpacked_bytes=10_000))
    assert message.startswith(f"{path}: the file unpacks to more than 10,000 bytes")
    assert "--max-unpacked-gib" in message


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress],
                         ids=["gzip", "bzip2", "xz"])
def test_every_compression_is_bounded_by_ratio(tmp_path: Path, compress) -> None:
    path = tmp_path / "bomb"
    path.write_bytes(compress(b" " * (64 * MiB)))
    assert "refused as a decompression bomb" in _errors(read_source, path)


@pytest.mark.parametrize(("data", "words"), [
    (gzip.compress(b"q1 0 d1 1\n" * 1000)[:-20], "ends early: the file is truncated"),
    (b"\x1f\x8b\x08\x00garbage that is not deflate", "not readable gzip data"),
    (b"BZh9 not bzip2", "not readable bzip2 data"),
])
def test_damaged_compressed_files_are_named(tmp_path: Path, data: bytes, words: str) -> None:
    path = tmp_path / "qrels.txt"
    path.write_bytes(data)
    message = _errors(read_source, path)
    assert message.startswith(f"{path}: ") and words in message


def test_reading_holds_one_block_not_the_whole_stream(tmp_path: Path) -> None:
    """The decompressed stream is read a block at a time: asking for 10 bytes of a 64 MiB
    stream unpacks about one block, not the file."""
    path = tmp_path / "big.gz"
    path.write_bytes(gzip.compress(_incompressible(8 * MiB)))
    with open_input(path) as opened:
        assert len(opened.stream.read(10)) == 10
        assert opened.compression == "gzip"
        assert opened.stream.raw._budget.produced <= 2 * MiB  # type: ignore[attr-defined]


def test_upload_bombs_are_refused_and_write_nothing(tmp_path: Path) -> None:
    db = new_store(tmp_path)
    before = table_snapshot(db)
    data = trec_bomb("hundred-mib-document")
    message = _errors(import_upload, db, "documents", data, "docs.gz", study_id="s", actor="ann")
    assert message.startswith("docs.gz: ") and "decompression bomb" in message
    jsonl = gzip.compress(b'{"id": "a", "text": "' + _incompressible(11 * MiB) + b'"}\n')
    message = _errors(import_upload, db, "documents", jsonl, "c.jsonl.gz", study_id="s",
                      actor="ann")
    assert message.startswith("c.jsonl.gz:1: a line longer than 10 MiB")
    qrels = gzip.compress(b"q1 0 d1 1\n" * 2_000_000)
    assert "decompression bomb" in _errors(import_upload, db, "qrels", qrels, "q.txt",
                                           study_id="s", actor="ann")
    assert table_snapshot(db) == before


def test_beir_corpus_lines_use_the_document_bound(tmp_path: Path) -> None:
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_bytes(
        gzip.compress(json.dumps({"_id": "d1", "text": "x" * 5000}).encode() + b"\n"))
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "t"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    message = _errors(read_beir_folder, root, limits=ReadLimits(max_document_bytes=1000))
    assert f"{root / 'corpus.jsonl'}:1: line longer than 1,000 bytes" in message
    assert read_beir_folder(root).documents["d1"][1] == "x" * 5000


def test_an_archive_row_is_bounded_by_one_escaped_document() -> None:
    limits = ReadLimits(max_document_bytes=MiB)
    assert 6 * MiB < max_row_bytes(limits) < 7 * MiB


def test_a_zip_archive_is_named_as_one_wherever_a_text_file_is_read(tmp_path: Path) -> None:
    # A zipped qrels, run or document file used to be read as text and refused for its
    # NUL bytes ("save the file as UTF-8 text"), with a field the archive does not have.
    import zipfile

    from evalcore.contract.evaluation_protocol import EvalProtocol
    from evalcore.io.trec import files_input

    archive = tmp_path / "qrels.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("qrels.txt", "q1 0 d1 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1.0 t\n")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.trec").write_text("<DOC><DOCNO>d1</DOCNO>text</DOC>\n")
    (folder / "b.zip").write_bytes(archive.read_bytes())
    empty = tmp_path / "empty.zip"
    zipfile.ZipFile(empty, "w").close()
    messages = [
        _errors(files_input, archive, run, 1, complete=True, protocol=EvalProtocol()),
        _errors(files_input, run, empty, 1, complete=True, protocol=EvalProtocol()),
        _errors(read_source, archive.read_bytes(), "upload.qrels"),
        _errors(read_documents, folder),
    ]
    for message, name in zip(messages, [archive, empty, "upload.qrels", folder / "b.zip"],
                             strict=True):
        assert f"{name}: is a zip archive" in message, message
        assert "unzip it and give the file inside" in message and "NUL" not in message
