"""One atomic file writer: every file evalcore writes is all-or-nothing and gets the usual mode.

A new file is created ``0o666 & ~umask`` (0644 under umask 022, like any other
tool's output); a replaced file keeps its mode. Exports, reports and the CLI all
write through :func:`evalcore.io.atomic.atomic_writer`, its one home.
"""

import ast
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from store_fixtures import new_store

from evalcore.cli import main
from evalcore.io.atomic import atomic_writer
from evalcore.store.exports import export_labels, export_qrels, export_run
from evalcore.store.labels import record_label
from evalcore.store.runs import add_run

PACKAGE = Path(__file__).resolve().parents[1] / "evalcore"


@pytest.fixture(params=[0o022, 0o077, 0o002])
def umask(request) -> Iterator[int]:
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_new_file_gets_the_umask_mode_and_a_replaced_one_keeps_its_mode(tmp_path, umask) -> None:
    target = tmp_path / "out.txt"
    with atomic_writer(target) as stream:
        stream.write("one\n")
    assert _mode(target) == 0o666 & ~umask
    target.chmod(0o640)
    with atomic_writer(target) as stream:
        stream.write("two\n")
    assert (_mode(target), target.read_text()) == (0o640, "two\n")


def test_a_failure_leaves_the_previous_file_and_no_temporary(tmp_path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("previous\n")
    with pytest.raises(RuntimeError), atomic_writer(target) as stream:
        stream.write("partial")
        raise RuntimeError("boom")
    assert target.read_text() == "previous\n"
    assert list(tmp_path.iterdir()) == [target]


def test_store_exports_are_created_with_the_usual_mode(tmp_path, umask) -> None:
    db = new_store(tmp_path)
    record_label(db, study_id="s", query_id="q1", unit_id="A", gain=2, annotator="ann")
    add_run(db, study_id="s", name="r", source="imported", k=1, results=[("q1", 1, "A", 1.0)])
    written = []
    for name, export in (("labels.csv", export_labels), ("qrels.txt", export_qrels)):
        export(db, "s", tmp_path / name, viewer=None)
        written.append(tmp_path / name)
    export_run(db, "s", "r", tmp_path / "run.txt", viewer=None)
    written.append(tmp_path / "run.txt")
    assert {p.name: _mode(p) for p in written} == {p.name: 0o666 & ~umask for p in written}


def test_cli_report_file_is_created_with_the_usual_mode(tmp_path) -> None:
    db = new_store(tmp_path)
    add_run(db, study_id="s", name="r", source="imported", k=1, results=[("q1", 1, "A", 1.0)])
    previous = os.umask(0o022)
    try:
        out = tmp_path / "report.json"
        result = CliRunner().invoke(main, [
            "report", "--db", str(tmp_path / "store.db"), "--study", "s", "--runs", "r",
            "--out", str(out), "--name", "n", "--by", "lead",
        ])
    finally:
        os.umask(previous)
    assert result.exit_code == 0, result.output
    assert _mode(out) == 0o644


def test_no_other_module_writes_through_its_own_temporary_file() -> None:
    writers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "io" / "atomic.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in {
                "mkstemp", "NamedTemporaryFile", "replace", "rename",
            } and isinstance(node.value, ast.Name) and node.value.id in {"os", "tempfile"}:
                writers.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.attr}")
    assert not writers, "write files through evalcore.io.atomic.atomic_writer:\n" + "\n".join(writers)
