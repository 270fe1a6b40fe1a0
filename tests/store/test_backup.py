"""``evalcore backup`` / ``verify``: consistent copies of a live store, and honest checks."""

import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from store_fixtures import new_store, table_snapshot
from store_workers import label_until, start_worker

from evalcore.cli import main
from evalcore.store import dialect
from evalcore.store.backup import backup_store, verify_store
from evalcore.store.connection import open_store
from evalcore.store.dialect import database_errors, set_schema_version
from evalcore.store.labels import record_label
from evalcore.store.location import open_read_only
from evalcore.store.references import freeze_reference
from evalcore.store.schema import SCHEMA_VERSION
from evalcore.store.studies import StudyIn
from evalcore.store.study_setup import create_study


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def store(tmp_path: Path, store_target) -> Path:
    db = new_store(store_target)
    record_label(db, study_id="s", query_id="q1", unit_id="A", gain=2, annotator="ann")
    freeze_reference(db, study_id="s", name="v1", actor="lead")
    db.conn.close()
    return store_target


@pytest.mark.slow
def test_backups_taken_while_annotators_label_are_consistent(store, tmp_path) -> None:
    stop, started = tmp_path / "stop", tmp_path / "started"
    writer = start_worker(label_until, str(store), "w1", str(stop), str(started))
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert writer.is_alive() and time.monotonic() < deadline
            time.sleep(0.01)
        counts = []
        for i in range(5):
            out = tmp_path / f"backup-{i}.db"
            result = cli("backup", "--db", store, "--out", out)
            assert result.exit_code == 0, result.output
            assert cli("verify", "--db", out).exit_code == 0
            copy = sqlite3.connect(out)
            ids = [r[0] for r in copy.execute(
                "SELECT event_id FROM label_events WHERE annotator = 'w1' ORDER BY event_id")]
            units = {r[0] for r in copy.execute(
                "SELECT unit_id FROM label_events WHERE annotator = 'w1'")}
            copy.close()
            # A snapshot of one instant: the writer's events 0..n-1, none missing in between.
            assert units == {f"w1-{j}" for j in range(len(ids))}
            counts.append(len(ids))
            time.sleep(0.05)
    finally:
        stop.write_text("stop")
        writer.join(60)
    assert writer.exitcode == 0
    assert counts == sorted(counts) and counts[-1] > counts[0] >= 20


@pytest.mark.sqlite_only
def test_a_backup_holds_what_is_still_in_the_write_ahead_log(tmp_path) -> None:
    db = open_store(tmp_path / "live.db")
    db.conn.execute("PRAGMA wal_autocheckpoint = 0")  # keep the new study in the WAL
    create_study(db, StudyIn(study_id="late", corpus_id="c"))
    assert (tmp_path / "live.db-wal").stat().st_size > 0
    summary = backup_store(tmp_path / "live.db", tmp_path / "copy.db")
    assert summary.check.ok and summary.check.tables["studies"] == 1
    assert not Path(str(tmp_path / "copy.db") + "-wal").exists()  # one self-contained file
    db.conn.close()


@pytest.mark.sqlite_only
def test_a_restored_backup_is_the_store(store, tmp_path) -> None:
    assert cli("backup", "--db", store, "--out", tmp_path / "b.db").exit_code == 0
    restored = tmp_path / "restored.db"
    shutil.copyfile(tmp_path / "b.db", restored)
    assert table_snapshot(open_store(restored)) == table_snapshot(open_store(store))


def test_a_backup_is_a_store_file_that_migrate_store_restores(store, tmp_path, new_store_target) -> None:
    out = tmp_path / "b.db"
    result = cli("backup", "--db", store, "--out", out)
    assert result.exit_code == 0, result.output
    assert out.stat().st_mode & 0o077 == 0  # never readable by more accounts than the store
    assert sqlite3.connect(out).execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert cli("verify", "--db", out).exit_code == 0
    restored = new_store_target("restored.db")
    result = cli("migrate-store", "--from", out, "--to", restored)
    assert result.exit_code == 0, result.output

    def rows(target):
        db = open_store(target)
        try:
            return {t: r for t, r in table_snapshot(db).items() if t != "store_identity"}
        finally:
            db.conn.close()

    assert rows(restored) == rows(store) and rows(store)["label_events"]


def test_a_database_at_another_schema_version_is_refused_not_migrated(store, tmp_path) -> None:
    if isinstance(store, Path):
        pytest.skip("a store file is copied page by page at its own schema version")
    db = open_store(store)
    set_schema_version(db, SCHEMA_VERSION - 1)
    db.conn.close()
    result = cli("backup", "--db", store, "--out", tmp_path / "b.db")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"is at schema version {SCHEMA_VERSION - 1}" in result.stderr
    assert "migrates nothing" in result.stderr and list(tmp_path.glob("*b.db*")) == []
    check = verify_store(store)  # still at the old version: nothing was migrated
    assert check.schema_version == SCHEMA_VERSION - 1


def test_backup_never_overwrites_a_file(store, tmp_path) -> None:
    out = tmp_path / "keep.txt"
    out.write_text("precious")
    result = cli("backup", "--db", store, "--out", out)
    assert result.exit_code == 2 and "already exists" in result.stderr
    assert out.read_text() == "precious"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".keep")] == []


def _state(store: Path | str) -> object:
    """What "changes nothing" compares: a store file's bytes, a database's rows."""
    if isinstance(store, Path):
        return store.read_bytes()
    db = open_store(store)
    try:
        return table_snapshot(db)
    finally:
        db.conn.close()


def test_verify_reports_counts_and_changes_nothing(store) -> None:
    before = _state(store)
    result = cli("verify", "--db", store)
    assert result.exit_code == 0, result.output
    assert "integrity ok; 1 frozen reference(s) checked" in result.stdout
    assert "label_events: 1 row(s)" in result.stdout and result.stdout.endswith(": ok\n")
    check = verify_store(store)
    assert check.ok and check.tables["reference_versions"] == 1 and check.references_checked == 1
    assert check.foreign_key_violations == 0 and "schema_version" not in check.tables
    assert _state(store) == before


def test_verify_reads_through_a_connection_that_cannot_write(store) -> None:
    db = open_read_only(store)
    try:
        with pytest.raises(database_errors(), match="(?i)read.?only"):
            db.execute("INSERT INTO corpora (corpus_id) VALUES ('x')")
    finally:
        db.conn.close()


@pytest.mark.sqlite_only
def test_verify_finds_a_damaged_file(store, tmp_path) -> None:
    damaged = tmp_path / "damaged.db"
    data = bytearray(store.read_bytes())
    page = 4096
    for at in range(2 * page, len(data) - page, page):  # scribble over every page from its header
        data[at:at + 200] = b"\xff" * 200
    damaged.write_bytes(bytes(data))
    result = cli("verify", "--db", damaged)
    assert result.exit_code in (1, 2) and "Traceback" not in result.output
    assert "problem" in result.stderr or "not a usable evidence store" in result.stderr


def test_verify_finds_a_tampered_reference_and_a_newer_schema(store) -> None:
    db = open_store(store)
    db.execute("DROP TRIGGER reference_labels_sealed")
    db.execute("INSERT INTO reference_labels VALUES ('s', 'v1', 'zz', 'X', 1)")
    result = cli("verify", "--db", store)
    assert result.exit_code == 1
    assert "reference 'v1' of study 's' no longer matches its content hash" in result.stderr
    assert "1 trigger(s) guarding the store's rules are missing or disabled " \
           "(reference_labels_sealed)" in result.stderr
    set_schema_version(db, 999)
    db.conn.close()
    result = cli("verify", "--db", store)
    assert result.exit_code == 1 and "schema version 999 is newer" in result.stderr


def test_verify_finds_a_row_referencing_nothing(store) -> None:
    db = open_store(store)
    orphan = "INSERT INTO study_units (study_id, unit_code, unit_id) VALUES ('ghost', 0, 'A')"
    if dialect.is_postgres(db):  # the key dropped, the orphan written, the key back unchecked
        db.conn.raw.execute("ALTER TABLE study_units DROP CONSTRAINT study_units_study_id_fkey")
        db.execute(orphan)
        db.conn.raw.execute("ALTER TABLE study_units ADD CONSTRAINT study_units_study_id_fkey "
                            "FOREIGN KEY (study_id) REFERENCES studies (study_id) NOT VALID")
    else:
        db.execute("PRAGMA foreign_keys = OFF")
        db.execute(orphan)
    db.conn.close()
    check = verify_store(store)
    assert check.foreign_key_violations == 1 and not check.ok
    assert "1 row(s) break a foreign key" in "; ".join(check.problems)


@pytest.mark.sqlite_only
def test_verify_of_a_file_that_is_not_a_store(tmp_path) -> None:
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    result = cli("verify", "--db", other)
    assert result.exit_code == 1 and "not an evidence store" in result.stderr
    text = tmp_path / "notes.txt"
    text.write_text("hello " * 1000)
    result = cli("verify", "--db", text)
    assert result.exit_code == 2 and "not a usable evidence store" in result.stderr


@pytest.mark.sqlite_only
def test_acknowledged_writes_are_synced_to_disk(tmp_path) -> None:
    db = open_store(tmp_path / "s.db")
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
