"""The store on PostgreSQL: opening by URL, the translated schema, writes serialised by the
advisory lock, append-only triggers, bytewise text order, and the dialect's translations.

The tests needing a server take a fresh database on the session's throwaway cluster
(``tests/postgres_cluster.py``; skipped without PostgreSQL unless CI requires it).
"""

import os
import threading
import time
from collections.abc import Iterator

import pytest

from evalcore.store import dialect, schema
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.location import is_postgres_url, store_exists, store_target
from evalcore.store.resolution import resolve_query
from evalcore.store.studies import StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import create_study
from evalcore.store.transaction import is_busy, read_snapshot, write_transaction


@pytest.fixture
def pg_url(postgres_cluster) -> Iterator[str]:
    """A fresh, empty database on the session's throwaway cluster (gone after the test)."""
    with postgres_cluster.fresh_database("engine") as url:
        yield url


def _study(url: str):
    db = open_store(url)
    create_study(db, StudyIn(study_id="s", corpus_id="c"))
    return db


# -- no server needed -------------------------------------------------------------------


def test_a_url_is_a_store_location_and_a_path_is_not():
    url = "postgresql://ledger@/db?host=/tmp/pgt"
    assert is_postgres_url(url) and is_postgres_url("postgres://h/db")
    assert not is_postgres_url("store.db") and not is_postgres_url("/tmp/postgresql.db")
    assert store_target(url) == url  # not collapsed into a path
    assert store_exists(url)
    assert str(store_target("~/x.db")).startswith(os.path.expanduser("~"))


def test_insert_or_ignore_becomes_on_conflict_do_nothing():
    sql = dialect.to_postgres("INSERT OR IGNORE INTO t (a) VALUES (?)")
    assert sql == "INSERT INTO t (a) VALUES (%s) ON CONFLICT DO NOTHING"


def test_conflict_targets_keep_no_null_order_and_set_is_qualified():
    sql = dialect.to_postgres(
        "INSERT INTO g (k, n) VALUES (:k, 1) ON CONFLICT (k) DO UPDATE SET n = n + 1")
    assert "ON CONFLICT(k) DO UPDATE SET n = g.n + 1" in sql


def test_bare_column_beside_max_takes_the_latest_rows_value():
    sql = dialect.to_postgres("SELECT q, gain, max(event_id) FROM e GROUP BY q")
    assert "(ARRAY_AGG(gain ORDER BY event_id DESC NULLS LAST))[1]" in sql


def test_an_aggregate_over_an_indexed_scan_concatenates_in_the_indexs_order():
    """SQLite's group_concat follows the INDEXED BY scan; on PostgreSQL the STRING_AGGs read
    the table sorted once by the index's columns (label_events_by_query: study, query,
    unit, event), not each sorted on its own, and a constant separator is a constant."""
    sql = dialect.to_postgres(
        "SELECT query_id, group_concat(unit_id, char(31)), group_concat(unit_code), count(*) "
        "FROM label_events le INDEXED BY label_events_by_query WHERE study_id = ? "
        "GROUP BY query_id")
    assert ("FROM (SELECT * FROM label_events ORDER BY study_id, query_id, unit_id, event_id)"
            " AS le WHERE study_id = %s GROUP BY query_id") in sql
    assert "STRING_AGG(CAST(unit_id AS TEXT), CHR(31))" in sql
    assert sql.count("ORDER BY") == 1 and "INDEXED" not in sql and "SQLITE_CHAR" not in sql
    assert "SQLITE_CHAR(x)" in dialect.to_postgres("SELECT char(x) FROM t")
    assert "ORDER BY" not in dialect.to_postgres(
        "SELECT group_concat(unit_id) FROM label_events WHERE study_id = ?")
    with pytest.raises(ValueError, match="no migration of the store creates"):
        dialect.to_postgres("SELECT group_concat(x) FROM t INDEXED BY no_such_index")


def test_json_each_numbered_placeholders_and_attached_tables_are_translated():
    assert "JSONB_ARRAY_ELEMENTS_TEXT(CAST(%s AS JSONB))" in dialect.to_postgres(
        "SELECT value FROM json_each(?)")
    sql, params = dialect.numbered_to_named("SELECT ?1 UNION SELECT ?1, ?2", ["a", "b"])
    assert sql == "SELECT :p1 UNION SELECT :p1, :p2" and params == {"p1": "a", "p2": "b"}
    assert dialect.to_postgres("SELECT x FROM staged_import.documents s JOIN main.documents d ON d.k = s.k") == (
        "SELECT x FROM pg_temp.staged_import__documents AS s JOIN documents AS d ON d.k = s.k")


def test_a_sqlite_trigger_becomes_a_plpgsql_function_raising_the_same_message():
    statements = dialect.schema_to_postgres(
        "CREATE TRIGGER t_u BEFORE UPDATE ON t WHEN old.a IS NOT new.a\n"
        "BEGIN SELECT RAISE(ABORT, 't is append-only'); END;")
    function, trigger = statements
    assert "RAISE EXCEPTION 't is append-only' USING ERRCODE = '23000'" in function
    assert "IF old.a IS DISTINCT FROM new.a THEN" in function
    assert trigger == "CREATE TRIGGER t_u BEFORE UPDATE ON t FOR EACH ROW EXECUTE FUNCTION t_u_fn()"


def test_tables_get_64_bit_integers_bytewise_text_and_a_rowid():
    (sql,) = dialect.schema_to_postgres(
        "CREATE TABLE d (k INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL)")
    assert "k BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" in sql
    assert 'name TEXT COLLATE "C" NOT NULL' in sql and "score DOUBLE PRECISION" in sql
    assert "rowid" not in sql  # the integer key is the rowid
    (sql,) = dialect.schema_to_postgres("CREATE TABLE d (name TEXT PRIMARY KEY, n INTEGER)")
    assert sql.endswith("rowid BIGINT GENERATED BY DEFAULT AS IDENTITY UNIQUE)")
    (sql,) = dialect.schema_to_postgres("CREATE TABLE d (name TEXT PRIMARY KEY) WITHOUT ROWID")
    assert "rowid" not in sql
    assert dialect.schema_to_postgres("CREATE VIRTUAL TABLE documents_fts USING fts5(x)") == []


def test_sqlite_busy_and_postgres_lock_timeout_are_both_busy():
    import sqlite3

    assert is_busy(sqlite3.OperationalError("database is locked"))
    assert not is_busy(sqlite3.OperationalError("no such table: x"))
    psycopg = pytest.importorskip("psycopg")
    assert is_busy(psycopg.errors.LockNotAvailable("canceling statement due to lock timeout"))
    assert not is_busy(psycopg.errors.UndefinedTable("x"))


# -- on a server --------------------------------------------------------------------------


def test_opening_a_url_creates_the_schema_and_reopening_migrates_nothing(pg_url):
    db = open_store(pg_url)
    assert schema.schema_version(db) == schema.SCHEMA_VERSION
    tables = set(dialect.store_tables(db, "study_id"))
    assert {"label_events", "queries", "runs"} <= tables
    db.conn.close()
    again = open_store(pg_url)
    assert schema.schema_version(again) == schema.SCHEMA_VERSION
    assert again.execute("SELECT count(*) FROM schema_version").fetchone()[0] == 1
    again.conn.close()


def test_init_command_creates_a_postgres_store(pg_url):
    from click.testing import CliRunner

    from evalcore.cli import main

    created = CliRunner().invoke(main, ["init", "--db", pg_url, "--study", "s", "--corpus", "c"])
    assert created.exit_code == 0, created.output
    assert f"created store {pg_url} (schema version {schema.SCHEMA_VERSION})" in created.output
    again = CliRunner().invoke(main, ["init", "--db", pg_url])
    assert again.exit_code == 0 and "migrated store" in again.output


def test_no_command_prints_the_password_of_a_store_url(pg_url, tmp_path):
    """The throwaway cluster trusts its socket, so any password is accepted: init, demo and
    migrate-store name the store without it."""
    from click.testing import CliRunner

    from evalcore.cli import main

    secret = "s3cret-pw"
    with_password = pg_url.replace("ledger@", f"ledger:{secret}@", 1)
    assert with_password != pg_url
    outputs = [CliRunner().invoke(main, args) for args in (
        ["init", "--db", with_password],
        ["demo", "--db", with_password],
        ["migrate-store", "--from", with_password, "--to", str(tmp_path / "copy.db")],
    )]
    for result in outputs:
        assert result.exit_code == 0, result.output
        assert secret not in result.output, result.output
    assert "ledger@" in outputs[0].output  # the store is named, its user and all


def test_labels_round_trip_and_the_latest_label_stands(pg_url):
    db = _study(pg_url)
    first = record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=1, annotator="ann")
    second = record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=3, annotator="ann")
    assert isinstance(first.event_id, int) and second.event_id == first.event_id + 1
    assert resolve_query(open_study(db, "s", None), "q1")["d1"].gain == 3
    db.conn.close()


def test_label_events_are_append_only_with_sqlites_message(pg_url):
    db = _study(pg_url)
    record_label(db, study_id="s", query_id="q", unit_id="d", gain=2, annotator="ann")
    with pytest.raises(dialect.integrity_errors(), match="label_events is append-only"):
        db.execute("UPDATE label_events SET gain = 0")
    with pytest.raises(dialect.integrity_errors(), match="label_events is append-only"):
        db.execute("DELETE FROM label_events")
    assert db.execute("SELECT gain FROM label_events").fetchall() == [(2,)]
    db.conn.close()


def test_text_sorts_bytewise_as_in_sqlite(pg_url):
    db = _study(pg_url)
    with write_transaction(db):
        for query_id in ("b", "B", "a", "Z", "é", "_"):
            db.execute("INSERT INTO queries (study_id, query_id) VALUES (?, ?)", ["s", query_id])
    rows = [r[0] for r in db.execute("SELECT query_id FROM queries ORDER BY query_id")]
    assert rows == sorted(["b", "B", "a", "Z", "é", "_"], key=lambda s: s.encode())
    db.conn.close()


def test_a_second_writer_waits_for_the_first_and_times_out_as_busy(pg_url):
    first, second = _study(pg_url), open_store(pg_url)
    second.conn.raw.execute("SET lock_timeout = 300")
    with write_transaction(first):
        started = time.monotonic()
        with pytest.raises(dialect.operational_errors()) as refused:
            with write_transaction(second):
                pass
        assert is_busy(refused.value) and time.monotonic() - started >= 0.25
        assert not second.conn.in_transaction
    with write_transaction(second):  # released with the first's commit
        pass
    first.conn.close(), second.conn.close()


def test_concurrent_writers_lose_and_double_no_label(pg_url):
    _study(pg_url).conn.close()
    per_writer, errors = 15, []

    def write(name: str) -> None:
        db = open_store(pg_url)
        try:
            for i in range(per_writer):
                # read-then-write inside one transaction: the lock makes the count exact
                with write_transaction(db):
                    n = db.execute("SELECT count(*) FROM label_events").fetchone()[0]
                    record_label(db, study_id="s", query_id="q", unit_id=f"d{n}",
                                 gain=i % 4, annotator=name)
        except Exception as error:  # reported below
            errors.append(error)
        finally:
            db.conn.close()

    threads = [threading.Thread(target=write, args=(f"w{k}",)) for k in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    db = open_store(pg_url)
    units = [r[0] for r in db.execute("SELECT unit_id FROM label_events ORDER BY event_id")]
    assert units == [f"d{n}" for n in range(3 * per_writer)]  # no unit twice, none missing
    db.conn.close()


def test_a_read_snapshot_does_not_see_a_later_commit(pg_url):
    reader, writer = _study(pg_url), open_store(pg_url)
    with read_snapshot(reader):
        before = reader.execute("SELECT count(*) FROM queries").fetchone()[0]
        with write_transaction(writer):
            writer.execute("INSERT INTO queries (study_id, query_id) VALUES ('s', 'new')")
        assert reader.execute("SELECT count(*) FROM queries").fetchone()[0] == before
    assert reader.execute("SELECT count(*) FROM queries").fetchone()[0] == before + 1
    reader.conn.close(), writer.conn.close()


def test_a_comparison_taken_as_a_value_is_the_integer_sqlite_gives():
    case = dialect.to_postgres("SELECT CASE WHEN d IS NULL THEN 0 ELSE (a = 1 AND b) END FROM t")
    assert "ELSE CAST(a = 1 AND b AS INT) END" in case
    assert "SELECT CAST(c > 1 AS INT) + 1 FROM t" == dialect.to_postgres("SELECT (c > 1) + 1 FROM t")
    # a condition stays a condition
    assert dialect.to_postgres("SELECT CASE WHEN a = 1 THEN 2 ELSE 3 END FROM t WHERE a = 1") == (
        "SELECT CASE WHEN a = 1 THEN 2 ELSE 3 END FROM t WHERE a = 1")


def test_json_extract_reads_a_text_column_on_both_engines(store_target):
    db = open_store(store_target)
    db.execute("CREATE TABLE j (detail_json TEXT)")
    db.execute("INSERT INTO j VALUES (?)", ['{"unit_id": "u1", "query_id": "q"}'])
    assert db.execute("SELECT json_extract(detail_json, '$.unit_id') FROM j "
                      "WHERE json_extract(detail_json, '$.query_id') = ?", ["q"]).fetchall() == [("u1",)]
    db.conn.close()
