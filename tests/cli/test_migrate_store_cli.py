"""``evalcore migrate-store``: a line per table and a summary on success; a clear message,
exit status and no traceback otherwise (the copy itself: tests/store/test_store_copy.py)."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from evalcore.cli import main
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.studies import StudyIn
from evalcore.store.study_setup import create_study


def cli(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "store.db"
    db = open_store(path)
    create_study(db, StudyIn(study_id="s", corpus_id="c"))
    for unit in ("d1", "d2", "d3"):
        record_label(db, study_id="s", query_id="q1", unit_id=unit, gain=1, annotator="ann")
    db.conn.close()
    return path


def test_each_table_is_reported_then_a_summary(store: Path, tmp_path: Path) -> None:
    result = cli("migrate-store", "--from", store, "--to", tmp_path / "copy.db")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"copying {store} to ")
    at = {line.split(":")[0].strip(): i for i, line in enumerate(lines) if line.startswith("  ")}
    assert lines[at["label_events"]].startswith("  label_events: 3 row(s) in ")
    assert at["studies"] < at["label_events"]  # referenced tables first
    assert lines[-1].startswith("copied ") and "rows in" in lines[-1]
    assert "every table verified (row count and checksum)" in lines[-1]


def test_a_missing_source_is_bad_input(tmp_path: Path) -> None:
    result = cli("migrate-store", "--from", tmp_path / "nope.db", "--to", tmp_path / "copy.db")
    assert result.exit_code == 2 and "does not exist" in result.stderr
    assert not (tmp_path / "copy.db").exists()


def test_a_non_empty_target_is_refused_with_what_is_there(store: Path, tmp_path: Path) -> None:
    result = cli("migrate-store", "--from", store, "--to", store.parent / "other.db")
    assert result.exit_code == 0, result.output
    again = cli("migrate-store", "--from", store, "--to", store.parent / "other.db")
    assert again.exit_code == 1
    assert "is not empty: " in again.stderr and "label_events (3 row(s))" in again.stderr
    assert "migrate into a new file or an empty database" in again.stderr
    assert "Traceback" not in again.output + again.stderr


def test_an_unreachable_server_is_named_without_a_traceback(store: Path) -> None:
    pytest.importorskip("psycopg")
    result = cli("migrate-store", "--from", store, "--to",
                 "postgresql://nobody@/nodb?host=/nonexistent-socket-dir")
    assert result.exit_code == 2, result.output
    assert "cannot connect to the PostgreSQL store" in result.stderr
    assert "Traceback" not in result.output + result.stderr
