"""Reliability: concurrent writers lose nothing; a killed import leaves no trace;
fuzzed import files only ever raise InputErrors and never leave partial rows."""

import contextlib
import json
import os
import signal
import string
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import new_store, table_snapshot
from store_workers import import_then_hang, start_worker, write_labels

from evalcore.io.errors import InputErrors
from evalcore.io.text_lines import decode_source
from evalcore.store.connection import open_store
from evalcore.store.imports import (
    import_beir,
    import_labels,
    import_observations,
    import_qrels,
    import_run,
)
from evalcore.store.labels import record_label
from evalcore.store.study_handle import open_study


@pytest.mark.slow
def test_concurrent_writers_lose_no_label(tmp_path, store_target):
    db = new_store(store_target)
    flag = tmp_path / "go"
    n, writers = 150, ["w1", "w2", "w3"]
    procs = [start_worker(write_labels, str(store_target), w, n, str(flag))
             for w in writers]
    time.sleep(0.5)
    flag.write_text("go")
    # The parent writes too, in the same seconds.
    for i in range(n):
        record_label(db, study_id="s", query_id="q0", unit_id=f"parent-{i}", gain=1,
                     annotator="parent")
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    rows = set(db.execute("SELECT annotator, unit_id, gain FROM label_events").fetchall())
    expected = {(w, f"{w}-{i}", i % 5) for w in writers for i in range(n)}
    expected |= {("parent", f"parent-{i}", 1) for i in range(n)}
    assert rows == expected
    assert db.execute("SELECT count(*) FROM label_events").fetchone()[0] == len(expected)


@pytest.mark.sqlite_only
@pytest.mark.slow
def test_sigkill_inside_a_large_import_leaves_the_store_as_before(tmp_path):
    db = new_store(tmp_path)
    record_label(db, study_id="s", query_id="q1", unit_id="A", gain=2, annotator="a")
    run_file = tmp_path / "big.run"
    with run_file.open("w") as out:
        for q in range(1000):
            for r in range(100):
                out.write(f"q{q} Q0 d{q}-{r} {r + 1} {100 - r} big\n")
    before = table_snapshot(db)
    db.conn.close()
    flag = tmp_path / "inside"
    child = start_worker(import_then_hang, str(tmp_path / "store.db"), str(run_file), str(flag))
    deadline = time.monotonic() + 120
    while not flag.exists():
        assert child.is_alive(), f"the import process ended early (exit code {child.exitcode})"
        assert time.monotonic() < deadline, "the import did not reach 50,000 rows in 120 s"
        time.sleep(0.01)
    # The child holds the write lock with 50,000 uncommitted rows: kill it there.
    os.kill(child.pid, signal.SIGKILL)
    child.join(30)
    assert child.exitcode == -signal.SIGKILL
    after = open_store(tmp_path / "store.db")
    assert after.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert table_snapshot(after) == before
    # The store is usable: the same import now succeeds in full.
    summary = import_run(after, run_file, study_id="s", k=10)
    assert summary.results == 100_000


# --- fuzzing ----------------------------------------------------------------------------------

VALID = {
    "qrels": "q1 0 A 2\nq1 0 B 0\n# c\nq2 0 C 1\n",
    "run": "q1 Q0 A 1 2.5 t\nq1 Q0 B 2 1.5 t\nq2 Q0 C 1 0.1 t\n",
    "csv": "query_id,unit_id,gain,annotator\nq1,A,2,x\nq1,B,0,y\n",
    "jsonl": '{"query_id": "q1", "unit_id": "A", "gain": 2}\n'
             '{"query_id": "q1", "unit_id": "B", "gain": 0, "annotator": "y"}\n',
    "observations": json.dumps({"query_id": "q1", "k": 2, "returned_ids": ["A", "B"],
                                "labels": [{"id": "A", "gain": 1}],
                                "population_complete": True}) + "\n",
}


def _import(db, fmt: str, data: bytes) -> None:
    source = decode_source(data, f"fuzz.{fmt}")
    if fmt == "qrels":
        import_qrels(db, source, study_id="s")
    elif fmt == "run":
        import_run(db, source, study_id="s", k=3, name="fuzz")
    elif fmt in ("csv", "jsonl"):
        import_labels(db, source, study_id="s", format=fmt)
    else:
        import_observations(db, source, study_id="s", run_name="fuzz")


def _mutate(text: str, data: st.DataObject) -> bytes:
    lines = text.splitlines(keepends=True)
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["drop", "dup", "swap", "insert", "cut", "bytes"]))
        if op == "drop" and lines:
            del lines[data.draw(st.integers(0, len(lines) - 1))]
        elif op == "dup" and lines:
            i = data.draw(st.integers(0, len(lines) - 1))
            lines.insert(i, lines[i])
        elif op == "swap" and lines:
            i = data.draw(st.integers(0, len(lines) - 1))
            chars = list(lines[i])
            j = data.draw(st.integers(0, max(len(chars) - 1, 0)))
            if chars:
                chars[j] = data.draw(st.sampled_from(list(string.printable) + ["\u00e9", "\x00"]))
            lines[i] = "".join(chars)
        elif op == "insert":
            lines.insert(data.draw(st.integers(0, len(lines))), data.draw(st.text(max_size=40)) + "\n")
        elif op == "cut" and lines:
            i = data.draw(st.integers(0, len(lines) - 1))
            lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i])))]
    out = "".join(lines).encode("utf-8", "surrogatepass")
    if data.draw(st.booleans()):
        out = data.draw(st.sampled_from([b"\xef\xbb\xbf", b""])) + out.replace(b"\n", b"\r\n")
    if data.draw(st.integers(0, 5)) == 0:
        out += data.draw(st.binary(max_size=20))
    return out


FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def _check(db, fmt: str, payload: bytes) -> None:
    before = table_snapshot(db)
    try:
        _import(db, fmt, payload)
    except InputErrors as exc:
        assert exc.errors, "an InputErrors must carry at least one error"
        for error in exc.errors:
            assert error.file == f"fuzz.{fmt}" and error.message
        assert table_snapshot(db) == before
        return
    # A successful import wrote something and recorded it in the audit log.
    after = table_snapshot(db)
    assert len(after["audit_log"]) == len(before["audit_log"]) + 1


@pytest.mark.slow
@pytest.mark.parametrize("fmt", sorted(VALID))
@FUZZ
@given(data=st.data())
def test_fuzzed_mutations_of_valid_files(tmp_path_factory, fmt, data):
    db = new_store(tmp_path_factory.mktemp("f"))
    _check(db, fmt, _mutate(VALID[fmt], data))


@pytest.mark.slow
@pytest.mark.parametrize("fmt", sorted(VALID))
@FUZZ
@given(payload=st.one_of(
    st.binary(max_size=200),
    st.lists(st.text(max_size=30), max_size=8).map(lambda ls: "\n".join(ls).encode("utf-8", "surrogatepass")),
    st.lists(st.lists(st.sampled_from(["q1", "0", "Q0", "A", "1", "-1", "2.5", "x", "", "#",
                                       "query_id", "unit_id", "gain", ",", '"', "{", "}", "1e309"]),
                      max_size=7).map(" ".join), max_size=6).map(lambda ls: "\n".join(ls).encode()),
))
def test_fuzzed_random_inputs(tmp_path_factory, fmt, payload):
    db = new_store(tmp_path_factory.mktemp("f"))
    _check(db, fmt, payload)


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_fuzzed_beir_folders(tmp_path_factory, data):
    root = tmp_path_factory.mktemp("beir")
    (root / "qrels").mkdir()
    corpus = '{"_id": "d1", "title": "T", "text": "x"}\n{"_id": "d2", "text": "y"}\n'
    queries = '{"_id": "q1", "text": "one"}\n'
    qrels = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n"
    target = data.draw(st.sampled_from(["corpus", "queries", "qrels"]))
    files = {"corpus": corpus, "queries": queries, "qrels": qrels}
    mutated = _mutate(files[target], data)
    for name, text in files.items():
        path = root / ("qrels/test.tsv" if name == "qrels" else f"{name}.jsonl")
        path.write_bytes(mutated if name == target else text.encode())
    (root / "db").mkdir()
    db = new_store(root / "db")
    before = table_snapshot(db)
    try:
        import_beir(db, root, study_id="s")
    except InputErrors as exc:
        assert exc.errors
        assert table_snapshot(db) == before


@pytest.mark.sqlite_only
def test_store_file_is_not_touched_by_a_failed_import(tmp_path):
    db = new_store(tmp_path)
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = Path(tmp_path / "store.db").stat().st_size
    with pytest.raises(InputErrors):
        import_qrels(db, decode_source(b"q1 0 A 9\n", "x.qrels"), study_id="s")
    assert Path(tmp_path / "store.db").stat().st_size == size


@pytest.mark.sqlite_only
@pytest.mark.slow
def test_sigkill_of_the_cli_while_it_writes_leaves_the_store_as_before(tmp_path):
    """A real `evalcore import qrels` process, killed once its uncommitted pages are
    spilling into the WAL (i.e. mid-transaction): none of the file's labels remain."""
    import subprocess

    db = new_store(tmp_path)
    record_label(db, study_id="s", query_id="q0", unit_id="A", gain=1, annotator="a")
    before = table_snapshot(db)
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    wal = tmp_path / "store.db-wal"
    qrels = tmp_path / "big.qrels"
    n = 400_000
    with qrels.open("w") as out:
        out.writelines(f"q{i // 100} 0 d{i} {i % 5}\n" for i in range(n))
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalcore", "import", "qrels", "--db", str(tmp_path / "store.db"), "--study", "s",
         str(qrels), "--complete"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while (not wal.exists() or wal.stat().st_size < 2_000_000) and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.002)
    finished_first = proc.poll() is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    after_db = open_store(tmp_path / "store.db")
    assert after_db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    after = table_snapshot(after_db)
    if finished_first:  # the whole import committed before the kill: all of it is there
        assert len(after["label_events"]) == len(before["label_events"]) + n
    else:
        assert after == before


def test_a_busy_write_is_retried_with_backoff_then_refused(tmp_path):
    import sqlite3

    from evalcore.store.transaction import retry_busy

    calls = []

    def busy_twice():
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "saved"

    assert retry_busy(busy_twice, backoff_s=0.001) == "saved" and len(calls) == 3
    calls.clear()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        retry_busy(busy_twice, attempts=2, backoff_s=0.001)  # busy both times: refused
    assert len(calls) == 2

    def other_error():
        raise sqlite3.OperationalError("no such table: x")

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        retry_busy(other_error)


def test_a_run_import_is_invisible_until_its_last_commit(tmp_path, monkeypatch, store_target):
    """Chunks commit separately, but no reader sees the run before the final commit."""
    import evalcore.store.imports.run as run_import
    import evalcore.store.staging as staging
    from evalcore.store.runs import list_runs, run_exists
    from evalcore.store.transaction import write_transaction as real_write_transaction

    db = new_store(store_target)
    run_file = tmp_path / "r.run"
    run_file.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {100 - r} t\n"
                                for q in range(50) for r in range(100)))
    monkeypatch.setattr(staging, "MAX_CHUNK_ROWS", 1000)
    seen = []
    reader = open_store(store_target)

    @contextlib.contextmanager
    def spying(database):
        with real_write_transaction(database) as inner:
            yield inner
        seen.append((run_exists(open_study(reader, "s", None), "t"), len(list_runs(open_study(reader, "s", None)))))

    monkeypatch.setattr(run_import, "write_transaction", spying)
    monkeypatch.setattr(staging, "write_transaction", spying)  # the chunks' transactions
    import_run(db, run_file, study_id="s", k=10)
    assert len(seen) >= 6  # stage + >= 5 chunks + publish
    assert all(s == (False, 0) for s in seen[:-1]) and seen[-1] == (True, 1)


def test_a_failed_chunked_import_leaves_nothing(tmp_path, monkeypatch, store_target):
    import evalcore.store.imports.run as run_import
    import evalcore.store.staging as staging

    db = new_store(store_target)
    run_file = tmp_path / "r.run"
    run_file.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {100 - r} t\n"
                                for q in range(50) for r in range(100)))
    before = table_snapshot(db)
    monkeypatch.setattr(staging, "MAX_CHUNK_ROWS", 1000)
    original = run_import.write_run_results
    calls = []

    def fail_on_third(database, run_id, rows):
        calls.append(1)
        if len(calls) == 3:
            raise OSError("disk full")
        original(database, run_id, rows)

    monkeypatch.setattr(run_import, "write_run_results", fail_on_third)
    with pytest.raises(OSError):
        import_run(db, run_file, study_id="s", k=10)
    assert table_snapshot(db) == before


@pytest.mark.sqlite_only
def test_a_label_is_saved_once_a_lock_held_past_the_busy_timeout_is_released(tmp_path):
    """The app's retry (``retry_busy``) against a real lock held by another connection: a
    single attempt fails after the busy timeout; retried, the label is saved, once."""
    import sqlite3
    import threading

    from evalcore.store.labels import label_history
    from evalcore.store.transaction import retry_busy

    db = new_store(tmp_path)
    holder = open_store(tmp_path / "store.db")
    db.conn.execute("PRAGMA busy_timeout = 100")  # the app's is 10 s: the same, shorter

    def label():
        return record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=2,
                            annotator="ann")

    holder.conn.execute("BEGIN IMMEDIATE")  # e.g. a long import's transaction
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        label()  # one attempt: refused once the busy timeout is over
    release = threading.Timer(0.3, lambda: holder.conn.execute("COMMIT"))
    release.start()
    started = time.perf_counter()
    try:
        retry_busy(label, attempts=3, backoff_s=0.2)
    finally:
        release.join()
    assert time.perf_counter() - started >= 0.3  # it waited the lock out
    assert [(e.unit_id, e.gain) for e in label_history(open_study(db, "s", None), "q1")] == [("d1", 2)]
