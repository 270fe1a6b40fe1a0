"""The server process's first script run pauses the cyclic collector, then freezes
(app/components/cold_start.py); every later run leaves the collector alone."""

import gc

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
