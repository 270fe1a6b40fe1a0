"""Uploaded zips: every broken or hostile kind is an InputError naming the upload and entry."""

import io
import zipfile
from pathlib import Path

import pytest
from broken_zips import BROKEN, beir_zip
from store_fixtures import new_store, table_snapshot

from evalcore.io.errors import InputErrors
from evalcore.io.zip_extract import extract_zip
from evalcore.store.imports.uploads import import_upload


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_broken_zip_kinds_are_input_errors(tmp_path: Path, kind: str) -> None:
    build, words = BROKEN[kind]
    with pytest.raises(InputErrors) as caught:
        extract_zip(build(), "upload.zip", tmp_path)
    assert str(caught.value).startswith("upload.zip: ")
    assert words in str(caught.value)


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_broken_zip_uploads_write_nothing(tmp_path: Path, kind: str) -> None:
    db = new_store(tmp_path)
    before = table_snapshot(db)
    with pytest.raises(InputErrors, match="upload.zip"):
        import_upload(db, "beir", BROKEN[kind][0](), "upload.zip", study_id="s", actor="ann")
    assert table_snapshot(db) == before


def test_the_total_is_bounded_while_streaming(tmp_path: Path) -> None:
    data = beir_zip({"ds/corpus.jsonl": "x" * 5000, "ds/more.txt": "y" * 5000})
    with pytest.raises(InputErrors, match="unpacks to 10,000 bytes; at most 6,000"):
        extract_zip(data, "u.zip", tmp_path, max_unzipped=6000)


def test_an_entry_lying_about_its_size_is_caught(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("ds/corpus.jsonl", "z" * 4000)
    data = bytearray(buffer.getvalue())
    central = data.find(b"PK\x01\x02")
    data[central + 24: central + 28] = (100).to_bytes(4, "little")  # declares 100 bytes
    with pytest.raises(InputErrors, match="ds/corpus.jsonl' is damaged"):
        extract_zip(bytes(data), "u.zip", tmp_path)


def test_a_bomb_that_understates_its_size_unpacks_no_more_than_it_declares(tmp_path: Path) -> None:
    """Declared 1 MiB (too small for the ratio rule); 8 MiB hidden behind it are never written."""
    from broken_zips import zip_bomb

    data = bytearray(zip_bomb(8 * 1024 * 1024))
    central = data.find(b"PK\x01\x02")
    data[central + 24: central + 28] = (1024 * 1024).to_bytes(4, "little")
    with pytest.raises(InputErrors, match="is damaged"):
        extract_zip(bytes(data), "u.zip", tmp_path)
    assert sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file()) <= 1024 * 1024


def test_beir_errors_name_the_upload_not_a_temporary_folder(tmp_path: Path) -> None:
    db = new_store(tmp_path)
    data = beir_zip({"ds/corpus.jsonl": '{"_id": "d1", "text": 5}\n',
                     "ds/queries.jsonl": '{"_id": "q1", "text": "x"}\n',
                     "ds/qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n"})
    with pytest.raises(InputErrors) as caught:
        import_upload(db, "beir", data, "mine.zip", study_id="s", actor="ann")
    text = str(caught.value)
    assert "mine.zip:corpus.jsonl:1" in text
    assert "relevance-ledger-beir-" not in text and "/tmp" not in text
