"""The suite is safe on a laptop: it never touches the user's home or data directory."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from app_harness import ENTRY
from store_workers import report_main_module, start_worker

REPO = Path(__file__).resolve().parents[2]


def test_tests_run_with_a_private_home(_private_home: Path) -> None:
    assert Path.home() == _private_home
    assert os.environ["XDG_DATA_HOME"].startswith(str(_private_home))
    assert os.environ["RELEVANCE_LEDGER_DB"].startswith(str(_private_home))


def test_a_worker_spawned_after_an_apptest_runs_no_app_script(small_store, new_app,
                                                              tmp_path: Path) -> None:
    new_app()
    # The hazard is real: AppTest leaves the app script installed as __main__ ...
    assert getattr(sys.modules["__main__"], "__file__", None) == ENTRY
    out = tmp_path / "main.txt"
    worker = start_worker(report_main_module, str(out))
    worker.join(120)
    assert worker.exitcode == 0
    # ... but the worker re-ran no script as its main module.
    assert out.read_text() == "None"


@pytest.mark.slow
def test_the_suite_leaves_an_empty_home_empty(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_DATA_HOME", "RELEVANCE_LEDGER_DB", "PYTEST_ADDOPTS")}
    env["HOME"] = str(home)
    tests = [
        "tests/app/test_suite_safety.py::test_a_worker_spawned_after_an_apptest_runs_no_app_script",
        "tests/app/test_page_home.py",
        "tests/store/test_store_reliability.py::test_concurrent_writers_lose_no_label",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert sorted(p.name for p in home.rglob("*")) == []
