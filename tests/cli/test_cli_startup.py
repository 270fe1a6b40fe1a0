"""The command line imports only what a command needs.

``evalcore evaluate`` on TREC files: the statistics (scipy), the app's and the
store's dependencies (pandas, plotly, streamlit, sqlite_utils) cost most of a
second of start-up and tens of MB; evaluating files needs none of them, nor pydantic
when the output is JSON.
A store command (``evalcore retrieve`` re-executing a pinned protocol): none of the
app's dependencies, nor the metric computer.
Every command: numpy's BLAS starts no worker thread (``evalcore.cli.process_setup``),
unless the user asked for threads; the library leaves the environment alone.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lexical_builders import lexical_store, pinned

from evalcore.retrieval.workflow import execute_protocol

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("scipy", "pandas", "pyarrow", "plotly", "streamlit", "sqlite_utils",
         "evalcore.report.model",
         "evalcore.analysis", "evalcore.store",
         # lighter, but other branches' (--db, JSONL input, a failing command, mappings):
         "sqlite3", "evalcore.cli.store_source", "evalcore.cli.failures",
         "evalcore.io.observations_jsonl", "evalcore.io.trec_mappings",
         "evalcore.contract.observation")

#: What ``evaluate`` from clean TREC files to JSON leaves unimported (evalcore.api.report_text):
#: pydantic, the report and error models and the line decoder (~0.2 s CPU of start-up).
PYDANTIC = ("pydantic", "evalcore.contract.results", "evalcore.io.errors",
            "evalcore.io.text_lines")


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    return out


def test_evaluate_from_trec_files_imports_no_heavy_module(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d9 2\n")
    run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d3 2 1.0 t\nq2 Q0 d9 1 1.0 t\n")
    code = (
        "import sys\n"
        "from evalcore.cli import main\n"
        "for fmt in ('json', 'table'):\n"
        f"    main(['evaluate', '--qrels', {str(qrels)!r}, '--run', {str(run)!r}, '--k', '10',\n"
        "          '--complete', '--unjudged-as-nonrelevant', '--format', fmt],\n"
        "         standalone_mode=False)\n"
        "    if fmt == 'json':  # written from the arrays: no models, no pydantic\n"
        f"        print('PYDANTIC', [m for m in {PYDANTIC!r} if m in sys.modules],\n"
        "              file=sys.stderr)\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert '"q1"' in out.stdout  # it did evaluate
    assert "HEAVY []" in out.stderr
    assert "PYDANTIC []" in out.stderr


#: What a store command's start-up must not import: the app's dependencies.
NOT_FOR_THE_STORE = ("streamlit", "plotly", "scipy")
#: What the lexical re-execution does not need either: the metric computer and the report and
#: observation models (the store's access checks imported them: ~0.1 s CPU).
NOT_FOR_RETRIEVAL = ("evalcore.store.observations", "evalcore.compute.batch",
                     "evalcore.contract.results", "evalcore.contract.observation",
                     # the reference store: only a pin naming a reference version reads it
                     "evalcore.store.references", "evalcore.store.resolution")
#: What a SQLite store's command does not load: PostgreSQL's driver and the SQL translator.
NOT_FOR_A_SQLITE_STORE = ("psycopg", "sqlglot")


def test_reexecuting_a_pinned_protocol_imports_nothing_it_does_not_need(tmp_path, store_target,
                                                                        store_engine):
    """The lexical re-execution path (``evalcore retrieve`` on an unchanged corpus, the index
    file kept from the first execution) in a fresh process: it ranks and stores the run
    without the app's modules or the metric computer."""
    db = lexical_store(store_target)
    pinned(db)
    execute_protocol(db, study_id="s", protocol_name="p1", run_name="r1", actor="tester")
    db.conn.close()
    unneeded = NOT_FOR_THE_STORE + NOT_FOR_RETRIEVAL + (
        NOT_FOR_A_SQLITE_STORE if store_engine == "sqlite" else ())
    code = (
        "import sys\n"
        "from evalcore.cli import main\n"
        f"main(['retrieve', '--db', {str(store_target)!r}, '--study', 's',\n"
        "      '--protocol', 'p1', '--name', 'r2', '--actor', 'tester'], standalone_mode=False)\n"
        f"heavy = [m for m in {unneeded!r} if m in sys.modules]\n"
        "print('HEAVY', heavy, 'driver', 'sqlite_utils' in sys.modules, file=sys.stderr)\n"
    )
    out = _python(code, tmp_path)
    assert "run: r2" in out.stdout and "queries: 4 of 4" in out.stdout  # it did run and store
    assert "HEAVY [] driver True" in out.stderr


#: After ``import numpy``: the variable as the process sees it and the process's thread count
#: (OpenBLAS starts its workers when numpy loads it).
_BLAS = ("import os, sys\n"
         "{before}\n"
         "import numpy\n"
         "print('BLAS', os.environ.get('OPENBLAS_NUM_THREADS'), len(os.listdir('/proc/self/task')),"
         " file=sys.stderr)\n")


def _blas(before: str, tmp_path: Path, **env: str) -> str:
    out = subprocess.run([sys.executable, "-c", _BLAS.format(before=before)], capture_output=True,
                         text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", **env})
    assert out.returncode == 0, out.stderr
    return next(line for line in out.stderr.splitlines() if line.startswith("BLAS"))


@pytest.mark.skipif((os.cpu_count() or 1) < 2 or not Path("/proc/self/task").is_dir(),
                    reason="OpenBLAS starts no worker thread on one core; needs /proc")
def test_the_command_line_gives_blas_one_thread_before_numpy_loads(tmp_path):
    """``evalcore`` (the script imports evalcore.cli; ``python -m evalcore`` too, through
    evalcore.__main__): numpy's OpenBLAS starts no worker thread (the process has one)."""
    assert _blas("import evalcore.cli", tmp_path) == "BLAS 1 1"
    assert _blas("import evalcore.__main__", tmp_path) == "BLAS 1 1"
    # The check can fail: without the command line, OpenBLAS starts its workers.
    assert _blas("pass", tmp_path) != "BLAS None 1"


def test_the_users_own_blas_threads_are_kept(tmp_path):
    assert _blas("import evalcore.cli", tmp_path, OPENBLAS_NUM_THREADS="2").startswith("BLAS 2 ")


def test_the_library_leaves_the_environment_alone(tmp_path):
    """``import evalcore`` and an evaluation through the library set no variable; nor does
    the command line once numpy is loaded (too late to matter)."""
    library = ("import evalcore, evalcore.compute.batch, evalcore.api.inputs\n"
               "evalcore.evaluate\n")
    assert _blas(library, tmp_path).startswith("BLAS None ")
    assert _blas("import numpy\nimport evalcore.cli", tmp_path).startswith("BLAS None ")


def _tiny_evaluation(folder: Path) -> str:
    """Code that runs ``evalcore evaluate`` on a one-line qrels and run written in ``folder``."""
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    qrels.write_text("q1 0 d1 1\n")
    run.write_text("q1 Q0 d1 1 2.0 t\n")
    return ("from evalcore.cli import main\n"
            f"main(['evaluate', '--qrels', {str(qrels)!r}, '--run', {str(run)!r}, '--k', '1'],\n"
            "     standalone_mode=False)\n")


#: A reference cycle with a finaliser, left as garbage when the process exits.
_CYCLE = ("import gc, sys\n"
          "gc.disable()\n"
          "{setup}\n"
          "class Cycle:\n"
          "    def __del__(self):\n"
          "        sys.stderr.write('FINALISED\\n')\n"
          "a = Cycle(); a.me = a\n"
          "del a\n")


def test_evaluate_from_files_skips_the_exits_last_collection(tmp_path):
    """After ``evaluate`` from files the interpreter's last collection (a walk over every
    object) is skipped (evalcore.cli.process_setup): garbage in cycles is left to
    the operating system. Without a command it is finalised as usual."""
    command = _tiny_evaluation(tmp_path)
    assert "FINALISED" not in _python(_CYCLE.format(setup=command), tmp_path).stderr
    assert "FINALISED" in _python(_CYCLE.format(setup="import evalcore.cli.evaluate"),
                                  tmp_path).stderr


def test_the_collector_pause_restores_the_previous_state():
    import gc

    from evalcore.cli.process_setup import collector_paused as gc_paused

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
