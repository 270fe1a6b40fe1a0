"""evalcore never changes process-wide state on a path a library user calls.

The garbage collector, signal handlers, logging configuration and warning
filters belong to whoever owns the process: the command line (evalcore/cli),
the app, a benchmark, a notebook user. So do environment variables (the command line
sets one: ``evalcore.cli.process_setup``) and the allocator's settings. No module of
evalcore, the command line's included, edits the import table (``sys.modules``) or builds
a pydantic model by writing its internals (``model_construct`` is the public way to skip a
validation already done). Checked on the source (AST), and the main library paths run with
the process-wide setters made to fail.
"""

import ast
import gc
import logging
import signal
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from store_fixtures import new_store

from evalcore.store.study_handle import open_study

PACKAGE = Path(__file__).resolve().parents[2] / "evalcore"

#: module -> attributes whose call changes process-wide state.
PROCESS_STATE = {
    "gc": {"collect", "freeze", "unfreeze", "disable", "enable", "set_threshold", "set_debug"},
    "signal": {"signal", "setitimer", "alarm", "set_wakeup_fd"},
    "logging": {"basicConfig", "disable", "captureWarnings", "setLoggerClass"},
    "warnings": {"filterwarnings", "simplefilter", "resetwarnings"},
    "sys": {"setrecursionlimit", "setswitchinterval", "settrace", "setprofile"},
    "faulthandler": {"enable", "register"},
}
#: Packages that own the process when they run (the command line).
PROCESS_OWNERS = ("evalcore/cli/",)


def _library_modules() -> list[Path]:
    return [
        p for p in sorted(PACKAGE.rglob("*.py"))
        if not str(p.relative_to(PACKAGE.parent)).startswith(PROCESS_OWNERS)
    ]


def test_no_library_module_calls_a_process_wide_setting() -> None:
    found = []
    for path in _library_modules():
        name = str(path.relative_to(PACKAGE.parent))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.attr in PROCESS_STATE.get(node.func.value.id, ())
            ):
                found.append(f"{name}:{node.lineno} {node.func.value.id}.{node.func.attr}()")
    assert not found, "library code changes process-wide state:\n" + "\n".join(found)


#: Calls that change the process's environment (read by native libraries and every child).
ENVIRONMENT_SETTERS = {"putenv", "unsetenv", "setdefault", "update", "pop", "popitem", "clear"}


def _environ(node: ast.AST) -> bool:
    """``os.environ`` (or a bare ``environ`` imported from os)."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ")


def _writes_item(node: ast.AST, of: Callable[[ast.AST], bool]) -> bool:
    """Whether ``node`` assigns or deletes ``X[...]`` for an ``X`` that ``of`` recognises."""
    targets = (node.targets if isinstance(node, ast.Assign | ast.Delete)
               else [node.target] if isinstance(node, ast.AugAssign) else [])
    return any(isinstance(t, ast.Subscript) and of(t.value) for t in targets)


def test_no_library_module_changes_the_environment() -> None:
    found = []
    for path in _library_modules():
        name = str(path.relative_to(PACKAGE.parent))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if _writes_item(node, _environ):
                found.append(f"{name}:{node.lineno} writes os.environ[...]")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ENVIRONMENT_SETTERS
                    and (_environ(node.func.value) or isinstance(node.func.value, ast.Name)
                         and node.func.value.id == "os")):
                found.append(f"{name}:{node.lineno} {ast.unparse(node.func)}()")
    assert not found, "library code changes the environment:\n" + "\n".join(found)


def test_no_library_module_tunes_the_allocator() -> None:
    """glibc's ``mallopt`` (through ctypes) is nobody's in evalcore."""
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr == "mallopt"
    ]
    assert not found, "evalcore tunes the allocator:\n" + "\n".join(found)


def _sys_modules(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "modules"
            and isinstance(node.value, ast.Name) and node.value.id == "sys")


def test_no_module_edits_the_import_table_or_pydantic_internals() -> None:
    """Nothing in evalcore writes ``sys.modules`` (an entry set, deleted or popped) or a
    pydantic model's ``__pydantic_*__`` state, the command line included."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(PACKAGE.parent))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if _writes_item(node, _sys_modules):
                found.append(f"{name}:{node.lineno} writes sys.modules[...]")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and _sys_modules(node.func.value) and node.func.attr != "get"):
                found.append(f"{name}:{node.lineno} sys.modules.{node.func.attr}()")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    node.value.startswith("__pydantic_"):
                found.append(f"{name}:{node.lineno} names {node.value}")
            if isinstance(node, ast.Attribute) and node.attr.startswith("__pydantic_"):
                found.append(f"{name}:{node.lineno} reads {node.attr}")
    assert not found, "evalcore edits the import table or pydantic's internals:\n" + \
        "\n".join(found)


def _refuse(*_args, **_kwargs):
    raise AssertionError("library code changed process-wide state")


def _untouchable(mp: pytest.MonkeyPatch) -> None:
    """Make every process-wide setter the library might call raise."""
    for module in (gc, signal, logging, warnings):
        for attr in PROCESS_STATE[module.__name__]:
            if hasattr(module, attr):
                mp.setattr(module, attr, _refuse)


def test_library_paths_leave_the_process_alone(tmp_path: Path) -> None:
    from evalcore import EvalProtocol, Observation, evaluate
    from evalcore.analysis.compare import compare_runs
    from evalcore.analysis.run_evaluation import evaluate_run
    from evalcore.compute.batch import ObservationBatch
    from evalcore.io.trec import read_qrels, read_run
    from evalcore.live.dashboard import LiveDashboard
    from evalcore.report.from_store import report_from_store
    from evalcore.report.model import render_json
    from evalcore.report.stored import save_report
    from evalcore.store.labels import record_label
    from evalcore.store.observations import observations_for_run
    from evalcore.store.resolution import resolve_study
    from evalcore.store.runs import add_run
    from tests.trec_observations import trec_observations

    enabled, frozen = gc.isenabled(), gc.get_freeze_count()
    db = new_store(tmp_path)
    for unit, gain in (("A", 2), ("B", 0)):
        record_label(db, study_id="s", query_id="q1", unit_id=unit, gain=gain, annotator="a")
    for name, order in (("r1", ["A", "B"]), ("r2", ["B", "A"])):
        add_run(db, study_id="s", name=name, source="imported", k=2,
                results=[("q1", i + 1, u, 2.0 - i) for i, u in enumerate(order)])
    (tmp_path / "q.txt").write_text("q1 0 A 2\n")
    (tmp_path / "r.txt").write_text("q1 Q0 A 1 2.0 t\n")
    with pytest.MonkeyPatch.context() as mp:
        _untouchable(mp)
        observations = observations_for_run(open_study(db, "s", None), "r1")
        assert isinstance(observations[0], Observation)
        evaluate(observations, EvalProtocol())
        ObservationBatch.from_observations(observations)
        resolve_study(open_study(db, "s", None))
        evaluations = {name: evaluate_run(open_study(db, "s", None), name) for name in ("r1", "r2")}
        compare_runs(evaluations, permutations=10)
        state = LiveDashboard.build(open_study(db, "s", None))
        record_label(db, study_id="s", query_id="q1", unit_id="C", gain=1, annotator="a")
        state.refresh(open_study(db, state.study_id, None))
        report = report_from_store(open_study(db, "s", "lead"), runs=["r1", "r2"], created_by="lead")
        render_json(report)
        save_report(db, report)
        trec_observations(read_qrels(tmp_path / "q.txt"), read_run(tmp_path / "r.txt"), 1,
                          complete=True)
    assert (gc.isenabled(), gc.get_freeze_count()) == (enabled, frozen)
