"""Input limits and the shape of every error (issue 28, item 7 and the minor points).

Ids, names and notes have maximum lengths (evalcore.contract.limits) with clear errors;
an error quotes at most ~200 characters of what a person gave; parser and validator
errors are ``file:line: field: message`` (lone surrogates, pydantic's own text, huge gain
maps), and a NUL in document text is refused with its line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_store import cli_store, run_cli
from store_fixtures import new_store, table_snapshot

from evalcore.contract.limits import (
    MAX_ID_CHARS,
    MAX_NAME_CHARS,
    MAX_NOTE_CHARS,
    MAX_QUOTED_CHARS,
    clipped,
    quoted,
)
from evalcore.io.errors import InputError, InputErrors
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.references import freeze_reference

LONG = 10 * 1024 * 1024  # the attack's 10 MB id


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return cli_store(tmp_path)


def _snapshot(db: Path) -> dict:
    conn = open_store(db)
    try:
        return table_snapshot(conn)
    finally:
        conn.conn.close()


def test_quoting_cuts_a_value_to_its_start_and_length() -> None:
    assert quoted("abc") == "'abc'"
    assert quoted("x" * 1000) == f"{'x' * MAX_QUOTED_CHARS!r}... (1,000 characters)"
    once = clipped(f"no run {'y' * 5000!r} in study 's'")
    assert once == f"no run '{'y' * (MAX_QUOTED_CHARS - 1)}... (5,002 characters) in study 's'"
    assert clipped(once) == once
    assert clipped(quoted("z" * 1000)) == quoted("z" * 1000)


def test_a_10_mb_unknown_document_id_is_not_echoed(store: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "x"}\n')
    assert run_cli("import", "documents", "--db", str(store), "--study", "s", str(docs))[0] == 0
    qrels = tmp_path / "qrels.txt"
    before = _snapshot(store)
    for size, expected in ((1_000_000, "an id of 1,000,000 characters, starting 'zzz"),
                           (LONG, "a line longer than 10 MiB")):
        qrels.write_text(f"q1 0 d1 1\nq1 0 {'z' * size} 1\n")
        code, out = run_cli("import", "qrels", "--db", str(store), "--study", "s", str(qrels))
        assert code == 2
        assert f"{qrels}:2: {expected}" in out
        assert len(out) < 2000
    assert _snapshot(store) == before


def test_an_unknown_run_name_is_quoted_short(store: Path) -> None:
    code, out = run_cli("export", "run", "--db", str(store), "--study", "s", "--run", "r" * 100_000)
    assert code == 2
    assert "(100,002 characters)" in out and len(out) < 1000


def test_run_names_are_bounded(store: Path, tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1.0 tag\n")
    before = _snapshot(store)
    code, out = run_cli("import", "run", "--db", str(store), "--study", "s", str(run), "--k", "1",
                     "--name", "n" * 50_000)
    assert code == 2
    assert "a run name of 50,000 characters, starting 'nnn" in out
    assert f"at most {MAX_NAME_CHARS}" in out and len(out) < 1000
    assert _snapshot(store) == before


def test_study_ids_and_names_are_bounded_with_field_messages(store: Path) -> None:
    code, out = run_cli("study", "create", "--db", str(store), "--study", "s" * 600, "--corpus", "c")
    assert code == 2
    assert out.splitlines()[0] == "error: study_id: at most 512 characters, got 600 characters"
    assert "pydantic" not in out and "[type=" not in out
    code, out = run_cli("study", "create", "--db", str(store), "--study", "t", "--corpus", "c",
                     "--name", "N" * 300)
    assert code == 2 and "name: at most 200 characters, got 300 characters" in out


def test_notes_and_reference_names_are_bounded(tmp_path: Path) -> None:
    db = new_store(tmp_path)
    with pytest.raises(ValueError, match=f"a note of 2,001 characters.*at most {MAX_NOTE_CHARS:,}"):
        record_label(db, study_id="s", query_id="q", unit_id="A", gain=1, annotator="ann",
                     note="n" * (MAX_NOTE_CHARS + 1))
    with pytest.raises(ValueError, match="a reference version name of 201 characters"):
        freeze_reference(db, study_id="s", name="v" * 201, actor="s")


def test_label_files_bound_ids_annotators_and_notes(store: Path, tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("query_id,unit_id,gain,note\n"
                    f"q1,{'u' * (MAX_ID_CHARS + 1)},1,\n"
                    f"q1,A,1,{'n' * (MAX_NOTE_CHARS + 1)}\n")
    code, out = run_cli("import", "labels-csv", "--db", str(store), "--study", "s", str(path))
    assert code == 2
    assert f"{path}:2: unit_id: an id of 1,025 characters" in out
    assert f"{path}:3: note: a note of 2,001 characters" in out


def test_lone_surrogates_are_file_line_field_errors(store: Path, tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"query_id": "q\\ud800", "unit_id": "A", "gain": 1}\n'
                    '{"query_id": "q\\ud83d\\ude00", "unit_id": "A", "gain": 1}\n')
    code, out = run_cli("import", "labels-jsonl", "--db", str(store), "--study", "s", str(path))
    assert code == 2
    assert out.splitlines()[0].startswith(
        f"{path}:1: query_id: holds a lone UTF-16 surrogate (\\ud800 at character 2)")
    assert "surrogates not allowed" not in out


def test_nul_in_document_text_is_refused(store: Path, tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"id": "d1", "text": "a\u0000b"}) + "\n")
    before = _snapshot(store)
    code, out = run_cli("import", "documents", "--db", str(store), "--study", "s", str(path))
    assert code == 2
    assert f"{path}:1: text: holds a NUL character (\\u0000)" in out
    assert _snapshot(store) == before


@pytest.mark.parametrize(("command", "name", "content", "said"), [
    ("labels-jsonl", "labels.jsonl", b'{"query_id": "q1", "unit_id": "d\\u00001", "gain": 1}\n',
     ":1: unit_id: holds a NUL character (\\u0000)"),
    ("labels-jsonl", "labels.jsonl",
     b'{"query_id": "q1", "unit_id": "d1", "gain": 1, "annotator": "a\\u0000"}\n',
     ":1: annotator: holds a NUL character (\\u0000)"),
    ("labels-csv", "labels.csv", b"query_id,unit_id,gain\nq1,d\x001,1\n", ":2: holds a NUL byte"),
    ("qrels", "q.txt", b"q1 0 d1 1\nq1 0 d\x002 1\n", ":2: doc_id: holds a NUL byte"),
    ("queries", "queries.jsonl", b'{"id": "q\\u00001", "text": "x"}\n',
     ":1: id: holds a NUL character (\\u0000)"),
])
def test_a_nul_in_an_id_is_refused_at_the_file_on_either_engine(
        store_target, tmp_path: Path, command: str, name: str, content: bytes, said: str) -> None:
    """No text holds a NUL (PostgreSQL cannot store one): every file refuses it with its
    line (and field), on either engine, and the store is unchanged."""
    store = cli_store(store_target)
    path = tmp_path / name
    path.write_bytes(content)
    before = _snapshot(store)
    code, out = run_cli("import", command, "--db", str(store), "--study", "s", str(path))
    assert code == 2, out
    assert f"{path}{said}" in out and "Traceback" not in out
    assert _snapshot(store) == before


def test_a_nul_byte_in_a_trec_file_names_the_field_holding_it(tmp_path: Path) -> None:
    from evalcore.io.trec import read_qrels, read_run

    run = tmp_path / "run.txt"
    run.write_bytes(b"q1 Q0 d1 1 1.0 t\n\x00q2 Q0 d1 1 1.0 t\nq3 Q0 d1 1 1.0 t\x00\n")
    with pytest.raises(InputErrors) as caught:
        read_run(run)
    assert [(e.line, e.field) for e in caught.value.errors] == [(2, "query_id"), (3, "tag")]
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(b"q1 0 d\x001 1\n")
    with pytest.raises(InputErrors, match=r"qrels.txt:1: doc_id: holds a NUL byte"):
        read_qrels(qrels)


@pytest.mark.parametrize("spec", ["1" * 40 + ":1", "1:" + "9" * 40, "0.5:" + "1" * 30])
def test_huge_gain_maps_get_a_message(store: Path, tmp_path: Path, spec: str) -> None:
    path = tmp_path / "q.txt"
    path.write_text("q1 0 d1 1\n")
    code, out = run_cli("import", "qrels", "--db", str(store), "--study", "s", str(path),
                     "--gain-map", spec)
    assert code == 2
    assert "Invalid value for --gain-map" in out and "C long" not in out
    assert "Traceback" not in out


def test_an_input_error_never_renders_a_huge_value() -> None:
    text = str(InputErrors([InputError(file="f", line=1, field="id", message="x" * LONG)]))
    assert text.startswith("f:1: id: xxx") and len(text) < 300
