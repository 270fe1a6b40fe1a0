"""The launcher (``streamlit run app/launcher.py``, the README's command) imports the first
page's modules as soon as the server is up, before any browser asks for a page
(app/process_setup.py); the entry script started alone does not.

Another process's imports are seen in ``/proc/PID/maps``: pandas' compiled modules
are mapped once pandas is imported (the home page's tables need it; nothing in
Streamlit's own start-up imports it).
"""

import sys
import time
from pathlib import Path

import pytest
from browser_helpers import start_app, stop_app_process

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")]

PANDAS_LIBS = "/pandas/_libs/"


def _pandas_mapped(pid: int) -> bool:
    return PANDAS_LIBS in Path(f"/proc/{pid}/maps").read_text()


def _pandas_mapped_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _pandas_mapped(pid):
            return True
        time.sleep(0.1)
    return _pandas_mapped(pid)


def test_the_launcher_imports_the_first_page_before_any_request(tmp_path) -> None:
    server = start_app(tmp_path / "ledger.sqlite", tmp_path / "streamlit.log", as_user=True)
    try:  # the health check is the only request the server has seen
        assert _pandas_mapped_within(server.process.pid, 60), server.log_path.read_text()
    finally:
        stop_app_process(server.process)


def test_the_entry_script_alone_imports_nothing_before_a_request(tmp_path) -> None:
    server = start_app(tmp_path / "ledger.sqlite", tmp_path / "streamlit.log",
                       script="app/streamlit_app.py")
    try:
        assert not _pandas_mapped_within(server.process.pid, 3)
    finally:
        stop_app_process(server.process)
