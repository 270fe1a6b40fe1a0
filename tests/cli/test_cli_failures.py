"""The CLI's top-level handler: known failures become messages and exit 1/2, never a traceback."""

import errno
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from store_fixtures import new_store

import evalcore.cli.store_cmds as store_cmds
from evalcore.cli import main
from evalcore.store.labels import record_label


@pytest.fixture
def db(tmp_path: Path, store_target) -> Path:
    store = new_store(store_target)
    record_label(store, study_id="s", query_id="q1", unit_id="=HYPERLINK(\"x\")", gain=1,
                 annotator="ann")
    store.conn.close()
    return store_target


def _export(db: Path, out: str) -> list[str]:
    return ["export", "labels", "--db", str(db), "--study", "s", "-o", out]


def _full_disk(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device", "labels.csv")


def test_a_full_disk_exits_1_with_what_to_do(db, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(store_cmds, "export_labels", _full_disk)
    result = CliRunner().invoke(main, _export(db, str(tmp_path / "labels.csv")))
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)
    assert "cannot write labels.csv: No space left on device; free some disk space" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="no /dev/full here")
def test_dev_full_as_output_is_a_full_disk_in_a_real_process(db) -> None:
    done = subprocess.run([sys.executable, "-m", "evalcore", *_export(db, "/dev/full")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "No space left on device; free some disk space" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    # Written in place, never renamed over: /dev/full is still the device.
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_directory_as_output_is_bad_input(db, tmp_path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    result = CliRunner().invoke(main, ["report", "--db", str(db), "--study", "s", "--runs", "r",
                                       "--out", str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_a_locked_store_exits_1_and_says_try_again(db, tmp_path, monkeypatch) -> None:
    def locked(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(store_cmds, "export_labels", locked)
    result = CliRunner().invoke(main, _export(db, str(tmp_path / "x.csv")))
    assert result.exit_code == 1
    assert "the store is busy: database is locked" in result.stderr


@pytest.mark.sqlite_only
def test_not_a_store_is_bad_input(tmp_path) -> None:
    fake = tmp_path / "fake.db"
    fake.write_bytes(b"not sqlite at all" * 100)
    result = CliRunner().invoke(main, ["study", "list", "--db", str(fake)])
    assert result.exit_code == 2
    assert "is not a usable evidence store" in result.stderr


def _bug(*args, **kwargs):
    raise TypeError("'NoneType' object is not subscriptable")


def test_an_unexpected_error_is_a_short_message_with_a_hint(db, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(store_cmds, "export_labels", _bug)
    monkeypatch.delenv("EVALCORE_DEBUG", raising=False)
    result = CliRunner().invoke(main, _export(db, str(tmp_path / "x.csv")))
    assert result.exit_code == 1
    assert "evalcore export labels stopped on an unexpected TypeError" in result.stderr
    assert "rerun with EVALCORE_DEBUG=1" in result.stderr
    assert "Traceback" not in result.output


def test_evalcore_debug_shows_the_traceback(db, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(store_cmds, "export_labels", _bug)
    monkeypatch.setenv("EVALCORE_DEBUG", "1")
    result = CliRunner().invoke(main, _export(db, str(tmp_path / "x.csv")))
    assert isinstance(result.exception, TypeError)


def test_k_beyond_sqlite_integers_is_refused_by_name(db, tmp_path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 1.0 t\n")
    result = CliRunner().invoke(main, ["import", "run", "--db", str(db), "--study", "s",
                                       str(run), "--k", str(2**63)])
    assert result.exit_code == 2
    assert "'--k': 9223372036854775808 is not in the range 1<=x<=9223372036854775807" \
        in result.stderr


@pytest.mark.parametrize(("line", "message"), [
    ('{"query_id": "q", "k": ' + "9" * 5000 + "}",
     "huge.jsonl:1: number out of range: 99999999999999999999... is an integer of 5,000 digits"),
    ('{"query_id": "q", "k": 1, "returned_ids": ["a"], "scores": [1e999], "labels": [], '
     '"population_complete": true}',
     "huge.jsonl:1: number out of range: 1e999 is a number too large for a float"),
])
def test_json_numbers_out_of_range_are_line_numbered_errors(tmp_path, line, message) -> None:
    path = tmp_path / "huge.jsonl"
    path.write_text(line + "\n")
    result = CliRunner().invoke(main, ["evaluate", "--observations", str(path)])
    assert result.exit_code == 2
    assert message in result.stderr


def test_a_device_as_input_is_refused_not_read_forever(tmp_path) -> None:
    result = CliRunner().invoke(main, ["evaluate", "--observations", "/dev/zero"])
    assert result.exit_code == 2
    assert "/dev/zero: is a device, not a file" in result.stderr
