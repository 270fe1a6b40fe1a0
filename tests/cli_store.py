"""The command line run in process on a fresh store (not a test module)."""

from pathlib import Path

from click.testing import CliRunner

from evalcore.cli import main


def run_cli(*args: str) -> tuple[int, str]:
    """``evalcore ARGS``: its exit code and its output (stdout and stderr)."""
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def cli_store(tmp_path: Path) -> Path:
    """A store at ``tmp_path/s.db`` with study ``s`` on corpus ``c``, made by ``evalcore init``."""
    db = tmp_path / "s.db"
    code, out = run_cli("init", "--db", str(db), "--study", "s", "--corpus", "c")
    assert code == 0, out
    return db
