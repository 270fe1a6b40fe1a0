"""Uploaded bytes: names never become paths; BEIR zips are extracted safely."""

import io
import stat
import zipfile
from pathlib import Path

import pytest
from store_fixtures import new_store, table_snapshot

from evalcore.io.errors import InputErrors
from evalcore.store.imports.uploads import display_name, extract_beir_zip, import_upload


def _zip(entries: dict[str, str], links: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in entries.items():
            archive.writestr(name, text)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def test_display_name_is_a_bare_label() -> None:
    assert display_name("../../etc/passwd") == "passwd"
    assert display_name("C:\\Users\\x\\run.txt") == "run.txt"
    assert display_name("a\x00b\nc.qrels") == "a_b_c.qrels"
    assert display_name("") == "upload" and display_name("..") == "upload"


@pytest.mark.parametrize("entry", ["../evil/corpus.jsonl", "/abs/corpus.jsonl",
                                   "C:/x/corpus.jsonl", "a/../../corpus.jsonl"])
def test_unsafe_zip_paths_are_refused(tmp_path: Path, entry: str) -> None:
    with pytest.raises(InputErrors, match="unsafe path"):
        extract_beir_zip(_zip({entry: "{}"}), "data.zip", tmp_path / "work")
    assert not (tmp_path / "evil").exists()


def test_symlinks_and_non_zips_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputErrors, match="unsafe path"):
        extract_beir_zip(_zip({"corpus.jsonl": "{}"}, links=("qrels",)), "d.zip", tmp_path)
    with pytest.raises(InputErrors, match="not a zip file"):
        extract_beir_zip(b"PK nothing", "d.zip", tmp_path)
    with pytest.raises(InputErrors, match="no corpus.jsonl"):
        extract_beir_zip(_zip({"readme.txt": "hi"}), "d.zip", tmp_path / "w")


def test_nested_beir_folder_is_found(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    folder = extract_beir_zip(_zip({"scifact/corpus.jsonl": "{}", "scifact/qrels/test.tsv": ""}),
                              "d.zip", work)
    assert folder == work / "scifact" and (folder / "qrels" / "test.tsv").exists()


def test_beir_zip_import_round_trip(tmp_path: Path) -> None:
    db = new_store(tmp_path)
    data = _zip({
        "ds/corpus.jsonl": '{"_id": "d1", "title": "T", "text": "hello"}\n'
                           '{"_id": "d2", "title": "U", "text": "world"}\n',
        "ds/queries.jsonl": '{"_id": "q1", "text": "hello there"}\n',
        "ds/qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
    })
    summary = import_upload(db, "beir", data, "../../ds.zip", study_id="s", actor="ann")
    assert summary.source == "ds.zip" and summary.documents == 2
    assert db.execute("SELECT unit_id, gain FROM label_events").fetchall() == [("d1", 1)]


def test_failed_text_upload_writes_nothing(tmp_path: Path) -> None:
    db = new_store(tmp_path)
    before = table_snapshot(db)
    with pytest.raises(InputErrors) as caught:
        import_upload(db, "qrels", b"q1 0 d1 1\nq1 0 d2 x\n\xff\xfe 0 d3 1\n", "../q.txt",
                      study_id="s", actor="ann", allow_unknown_ids=True)
    text = str(caught.value)
    assert "q.txt:2" in text and "q.txt:3" in text and "../" not in text
    assert table_snapshot(db) == before
    with pytest.raises(ValueError, match="needs k"):
        import_upload(db, "run", b"q1 Q0 d1 1 1.0 t\n", "r.run", study_id="s", actor="ann")
