"""One atomic file writer: every file evalcore writes is all-or-nothing and gets the usual mode.

A new file is created ``0o666 & ~umask`` (0644 under umask 022, like any other
tool's output); a replaced file keeps its mode. Exports, reports and the CLI all
write through :func:`evalcore.io.atomic.atomic_writer`, its one home; a copy of a
store's data is no more readable than the store (tests/architecture/test_file_permissions.py).
"""

import ast
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalcore.io.atomic import atomic_writer

PACKAGE = Path(__file__).resolve().parents[2] / "evalcore"


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
