"""The server process's first script run pauses the cyclic collector, then freezes
(app/components/cold_start.py); every later run leaves the collector alone."""

import gc
import sys
import threading

import pytest

from app.components import cold_start


@pytest.fixture
def fresh_process(monkeypatch):
    """The module as a new server process has it; gc.freeze recorded, not done."""
    monkeypatch.setattr(cold_start, "_first", True)
    frozen: list[bool] = []
    monkeypatch.setattr(cold_start.gc, "freeze", lambda: frozen.append(gc.isenabled()))
    return frozen


def test_the_first_run_pauses_the_collector_and_freezes_before_resuming(fresh_process) -> None:
    assert gc.isenabled()
    with cold_start.first_run():
        assert not gc.isenabled()
    assert gc.isenabled()
    assert fresh_process == [False]  # frozen while still paused


def test_later_runs_leave_the_collector_alone(fresh_process) -> None:
    with cold_start.first_run():
        pass
    for _ in range(3):
        with cold_start.first_run():
            assert gc.isenabled()
    assert fresh_process == [False]


def test_a_first_run_that_stops_still_resumes_the_collector(fresh_process) -> None:
    class Stop(Exception):  # st.stop() and reruns end a run with an exception
        pass

    with pytest.raises(Stop), cold_start.first_run():
        raise Stop
    assert gc.isenabled() and fresh_process == [False]


@pytest.fixture
def fresh_preload(monkeypatch, fresh_process):
    """A new server process: no preload thread yet, imports recorded (not done)."""
    monkeypatch.setattr(cold_start, "_preload", None)
    imported: list[tuple[str, bool]] = []
    monkeypatch.setattr(cold_start, "import_all",
                        lambda names: imported.extend((n, gc.isenabled()) for n in names))
    return imported


def test_the_first_run_modules_are_read_from_the_entry_and_home_files() -> None:
    modules = cold_start.first_run_modules()
    # the entry script's imports, including those inside its `with` blocks
    assert {"app.components.auth", "app.components.session", "sqlite_utils"} <= set(modules)
    assert "pandas" in modules  # the home page's tables
    assert "evalcore.demo.study" in modules  # opening the store checks for the demo


def test_the_preload_imports_with_the_collector_paused_then_freezes(fresh_preload) -> None:
    cold_start.start_preload()
    cold_start._preload.join(timeout=60)
    assert [name for name, _ in fresh_preload] == cold_start.first_run_modules()
    assert not any(enabled for _, enabled in fresh_preload)
    assert fresh_preload and gc.isenabled()


def test_the_preload_shortens_the_switch_interval_only_while_it_imports(fresh_preload,
                                                                        monkeypatch) -> None:
    seen: list[float] = []
    monkeypatch.setattr(cold_start, "import_all", lambda names: seen.append(sys.getswitchinterval()))
    before = sys.getswitchinterval()
    cold_start.start_preload()
    cold_start._preload.join(timeout=60)
    assert seen == [cold_start.PRELOAD_SWITCH_INTERVAL] and sys.getswitchinterval() == before


def test_the_first_run_waits_for_the_preload(fresh_preload, monkeypatch) -> None:
    release = threading.Event()
    monkeypatch.setattr(cold_start, "import_all", lambda names: release.wait(60))
    cold_start.start_preload()
    waited = []
    runner = threading.Thread(target=lambda: waited.append(_enter_first_run()))
    runner.start()
    runner.join(timeout=0.3)
    assert runner.is_alive()  # still waiting for the preload's imports
    release.set()
    runner.join(timeout=60)
    assert waited == [True]


def _enter_first_run() -> bool:
    with cold_start.first_run():
        return not gc.isenabled()


def test_the_preload_starts_once_and_never_after_the_first_run(fresh_preload) -> None:
    cold_start.start_preload()
    thread = cold_start._preload
    cold_start.start_preload()
    assert cold_start._preload is thread
    thread.join(timeout=60)
    count = len(fresh_preload)
    with cold_start.first_run():
        pass
    cold_start.start_preload()
    assert cold_start._preload is thread and len(fresh_preload) == count


def test_without_the_launcher_the_first_run_preloads_nothing(fresh_preload) -> None:
    with cold_start.first_run():
        pass
    assert fresh_preload == [] and cold_start._preload is None


def test_the_preload_maps_the_modules_to_their_files_for_inspect(fresh_preload,
                                                                 monkeypatch) -> None:
    """Streamlit's first element calls inspect.stack(), which maps every module to its file
    once; the preload does that mapping instead of the first page."""
    import inspect

    monkeypatch.setattr(inspect, "modulesbyfile", {})
    monkeypatch.setattr(inspect, "_filesbymodname", {})
    cold_start.start_preload()
    cold_start._preload.join(timeout=60)
    assert inspect.modulesbyfile.get(cold_start.__file__) == cold_start.__name__
