"""Files the command line writes from a store (issue 28, item 6, and its minor points).

* A backup, an export or a report is no more readable than the store it copies: the
  store file's permission bits or 0600, whichever is stricter, whatever the umask.
* A backup killed before its rename leaves a hidden temporary file; the next write into
  that folder removes it (a live writer's is left alone).
* ``--out`` into a folder that does not exist is an error naming it; no folder is made.
* A command whose reader leaves (``| head``) after it committed exits quietly (141, as
  a Unix tool ended by SIGPIPE), with no "error: Broken pipe".
"""

import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from store_fixtures import new_store

from evalcore.cli import main
from evalcore.io.atomic import atomic_path, atomic_writer, remove_stale_temporaries
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.labels import record_label
from evalcore.store.runs import add_run

ROOT = Path(__file__).resolve().parents[2]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _cli(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def loose_umask() -> Iterator[None]:
    previous = os.umask(0o002)  # the loosest common umask: 0664 for an ordinary new file
    try:
        yield
    finally:
        os.umask(previous)


def _store(tmp_path: Path, mode: int) -> Path:
    db = new_store(tmp_path)
    add_documents(db, "c", [DocumentIn(doc_id="A", title="t", text="secret text",
                                       created_at="2026-01-01T00:00:00Z")])
    record_label(db, study_id="s", query_id="q1", unit_id="A", gain=2, annotator="ann")
    add_run(db, study_id="s", name="r", source="imported", k=1, results=[("q1", 1, "A", 1.0)])
    db.conn.close()
    path = tmp_path / "store.db"
    path.chmod(mode)
    return path


def _write_everything(store: Path, out: Path) -> dict[str, Path]:
    """Every kind of file the command line writes from a store, into ``out``."""
    out.mkdir()
    commands = {
        "backup.db": ["backup", "--db", store, "--out", out / "backup.db"],
        "study.zip": ["export", "study", "--db", store, "--study", "s", "--out",
                      out / "study.zip", "--actor", "lena"],
        "labels.csv": ["export", "labels", "--db", store, "--study", "s", "-o",
                       out / "labels.csv", "--actor", "lena"],
        "labels.rre": ["export", "labels", "--db", store, "--study", "s", "--format", "rre",
                       "-o", out / "labels.rre", "--actor", "lena"],
        "qrels.txt": ["export", "qrels", "--db", store, "--study", "s", "-o",
                      out / "qrels.txt", "--actor", "lena"],
        "run.txt": ["export", "run", "--db", store, "--study", "s", "--run", "r", "-o",
                    out / "run.txt", "--actor", "lena"],
        "report.html": ["report", "--db", store, "--study", "s", "--runs", "r", "--out",
                        out / "report.html", "--by", "lena"],
    }
    for name, args in commands.items():
        result = _cli(*args)
        assert result.exit_code == 0, (name, result.output)
    return {name: out / name for name in commands}


@pytest.mark.parametrize(("store_mode", "expected"), [
    (0o600, 0o600), (0o640, 0o600), (0o644, 0o600), (0o666, 0o600), (0o400, 0o400),
])
def test_copies_of_a_store_are_no_more_readable_than_the_store(
        tmp_path: Path, loose_umask: None, store_mode: int, expected: int) -> None:
    store = _store(tmp_path, store_mode)
    written = _write_everything(store, tmp_path / "out")
    assert {name: oct(_mode(p)) for name, p in written.items()} == {
        name: oct(expected) for name in written}
    assert _mode(store) == store_mode  # the store itself is left as it was


def test_a_replaced_export_gets_the_private_mode_too(tmp_path: Path, loose_umask: None) -> None:
    store = _store(tmp_path, 0o600)
    target = tmp_path / "labels.csv"
    target.write_text("old\n")
    target.chmod(0o644)  # an older, world-readable export
    assert _cli("export", "labels", "--db", store, "--study", "s", "-o", target,
                "--actor", "lena").exit_code == 0
    assert _mode(target) == 0o600 and "secret" not in target.read_text()


def test_files_not_copied_from_a_store_keep_the_umask_mode(tmp_path: Path,
                                                          loose_umask: None) -> None:
    with atomic_writer(tmp_path / "plain.txt") as stream:
        stream.write("x\n")
    assert _mode(tmp_path / "plain.txt") == 0o664


# --- killed writers ---------------------------------------------------------------------------

_KILLED_BACKUP = """
import sys, time
from pathlib import Path
from evalcore.io.atomic import atomic_path
with atomic_path(Path(sys.argv[1]), mode=0o600) as tmp:
    tmp.write_bytes(b"half a backup")
    Path(str(tmp) + "-journal").write_bytes(b"journal")
    print(tmp, flush=True)
    time.sleep(600)
"""


def _writer_killed_mid_write(out: Path) -> Path:
    """Start a writer of ``out``, kill -9 it before its rename; the temporary it left."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_BACKUP, str(out)],
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        tmp = Path(proc.stdout.readline().strip())
        assert tmp.is_file() and tmp.parent == out.parent and tmp.name.startswith(".")
        remove_stale_temporaries(out.parent)  # while it runs: its temporary is left alone
        assert tmp.is_file()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert tmp.is_file() and not out.exists()  # what kill -9 leaves behind
    return tmp


def test_a_killed_backup_leaves_nothing_after_the_next_run(tmp_path: Path) -> None:
    store = _store(tmp_path, 0o600)
    backups = tmp_path / "backups"
    backups.mkdir()
    tmp = _writer_killed_mid_write(backups / "monday.db")
    other = backups / "notes.txt.tmp"  # not one of ours: never touched
    other.write_text("keep")
    result = _cli("backup", "--db", store, "--out", backups / "tuesday.db")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in backups.iterdir()) == ["notes.txt.tmp", "tuesday.db"]
    assert not tmp.exists() and not Path(f"{tmp}-journal").exists()


def test_a_failed_backup_removes_its_temporary_at_once(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "b.db") as tmp:
        tmp.write_bytes(b"x")
        Path(f"{tmp}-journal").write_bytes(b"j")
        raise RuntimeError("copy failed")
    assert list(tmp_path.iterdir()) == []


# --- --out into a missing folder --------------------------------------------------------------


def test_out_into_a_missing_folder_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path, 0o600)
    missing = tmp_path / "no" / "such"
    cases = {
        "backup": ["backup", "--db", store, "--out", missing / "b.db"],
        "export study": ["export", "study", "--db", store, "--study", "s", "--out",
                         missing / "s.zip", "--actor", "lena"],
        "export labels": ["export", "labels", "--db", store, "--study", "s", "-o",
                          missing / "l.csv", "--actor", "lena"],
        "report": ["report", "--db", store, "--study", "s", "--runs", "r", "--out",
                   missing / "r.html", "--by", "lena", "--name", "never-stored"],
    }
    for name, args in cases.items():
        result = _cli(*args)
        assert result.exit_code == 2, (name, result.output)
        assert "does not exist" in result.output or "no such folder" in result.output, (
            name, result.output)
        assert str(missing) in result.output, (name, result.output)
        assert "Traceback" not in result.output
    assert not (tmp_path / "no").exists()
    import sqlite3

    with sqlite3.connect(store) as conn:  # the report was not stored either
        assert conn.execute("SELECT count(*) FROM reports").fetchone() == (0,)


# --- a reader that leaves ---------------------------------------------------------------------


def test_a_closed_pipe_after_a_committed_import_exits_quietly(tmp_path: Path) -> None:
    store = _store(tmp_path, 0o600)
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 A 1 1.0 t\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    read, write = os.pipe()
    os.close(read)  # the reader (`| head -0`) has already gone
    try:
        done = subprocess.run(
            [sys.executable, "-m", "evalcore", "import", "run", "--db", str(store), "--study",
             "s", "--name", "piped", "--k", "1", str(run), "--actor", "lena"],
            stdout=write, stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 141 and done.stderr == ""
    import sqlite3

    with sqlite3.connect(store) as conn:  # the import had committed before it printed
        assert conn.execute("SELECT name FROM runs WHERE name = 'piped'").fetchone()
