"""Real-browser harness: ``streamlit run`` on a loopback port + Debian's Chromium.

No browser is ever downloaded: Playwright drives ``/usr/bin/chromium``. When it
is missing the tests skip, unless ``RELEVANCE_LEDGER_REQUIRE_BROWSER=1`` (CI
sets it), which makes a missing browser a failure.
"""

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
STARTUP_TIMEOUT_S = 60


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    message = f"{CHROMIUM} is missing (apt-get install -y chromium)"
    if os.environ.get("RELEVANCE_LEDGER_REQUIRE_BROWSER") == "1":
        pytest.fail(message + "; RELEVANCE_LEDGER_REQUIRE_BROWSER=1 makes this a failure")
    pytest.skip(message)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class AppServer:
    url: str
    db_path: Path
    process: subprocess.Popen
    log_path: Path
    startup_seconds: float


def start_app(db_path: Path, log_path: Path) -> AppServer:
    """Start ``streamlit run app/streamlit_app.py`` on a free loopback port; wait for health."""
    port = free_port()
    env = {**os.environ, "RELEVANCE_LEDGER_DB": str(db_path), "PYTHONUNBUFFERED": "1"}
    log = log_path.open("wb")
    started = time.perf_counter()
    process = subprocess.Popen(
        [
            sys.executable, "-m", "streamlit", "run", "app/streamlit_app.py",
            "--server.headless", "true",
            "--server.port", str(port),
            "--server.address", "127.0.0.1",
            "--browser.gatherUsageStats", "false",
        ],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited early:\n{log_path.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return AppServer(url, db_path, process, log_path,
                                     time.perf_counter() - started)
        except OSError:
            time.sleep(0.2)
    stop_app_process(process)
    raise RuntimeError(f"streamlit did not become healthy in {STARTUP_TIMEOUT_S} s")


def stop_app_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    _require_chromium()
    return str(CHROMIUM)


@pytest.fixture(scope="module")
def app_server(tmp_path_factory: pytest.TempPathFactory, chromium_path: str) -> Iterator[AppServer]:
    """One app per test module, on its own store file (seeded with the demo on first start)."""
    root = tmp_path_factory.mktemp("app")
    server = start_app(root / "ledger.sqlite", root / "streamlit.log")
    try:
        yield server
    finally:
        stop_app_process(server.process)


@pytest.fixture
def browser_page(tmp_path: Path, chromium_path: str):
    """A fresh Chromium profile per test; yields a Playwright page."""
    from playwright.sync_api import sync_playwright

    profile = tmp_path / "profile"
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            user_data_dir=str(profile),
            executable_path=chromium_path,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000},
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(30_000)
            yield page
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)
