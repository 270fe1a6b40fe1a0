"""The command line run in process on a fresh store (not a test module)."""

from pathlib import Path

from click.testing import CliRunner

from evalcore.cli import main


def run_cli(*args: str) -> tuple[int, str]:
    """``evalcore ARGS``: its exit code and its output (stdout and stderr)."""
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def cli_store(target: str | Path) -> str | Path:
    """A store at ``target`` (a store file or database URL; a directory means ``s.db`` in it)
    with study ``s`` on corpus ``c``, made by ``evalcore init``."""
    db = target / "s.db" if isinstance(target, Path) and target.is_dir() else target
    code, out = run_cli("init", "--db", str(db), "--study", "s", "--corpus", "c")
    assert code == 0, out
    return db
