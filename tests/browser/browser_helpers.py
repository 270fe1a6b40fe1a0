"""Helpers for the browser tests (not a test module): start the app, wait for it."""

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

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


def start_app(db_path: Path, log_path: Path, *, as_user: bool = False,
              script: str = "app/launcher.py") -> AppServer:
    """Start ``streamlit run app/launcher.py`` (the README's command) on a free loopback port;
    wait for health.

    By default through ``python -m streamlit`` with this process's ``PYTHONPATH``
    (both put the repository on the import path). ``as_user=True`` starts it the
    way the README says, with the ``streamlit`` command and no ``PYTHONPATH``:
    then only the started script makes the ``app`` package importable. ``script``: the
    entry script itself (``app/streamlit_app.py``) runs the app without the launcher.
    """
    port = free_port()
    env = {**os.environ, "RELEVANCE_LEDGER_DB": str(db_path), "PYTHONUNBUFFERED": "1"}
    launcher = [sys.executable, "-m", "streamlit"]
    if as_user:
        env.pop("PYTHONPATH", None)
        launcher = [str(Path(sys.executable).parent / "streamlit")]
    log = log_path.open("wb")
    started = time.perf_counter()
    process = subprocess.Popen(
        [
            *launcher, "run", script,
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
            time.sleep(0.05)  # a browser opened by `streamlit run` loads the page at once
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


def settle(page, timeout_ms: int = 30_000) -> None:
    """Wait until Streamlit has finished the rerun the last action started."""
    page.wait_for_timeout(150)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
        timeout=timeout_ms,
    )


def wait_for_app(page, text: str, timeout_ms: int = 30_000) -> None:
    """Wait until the Streamlit app has rendered ``text`` and stopped running."""
    page.get_by_text(text, exact=False).first.wait_for(timeout=timeout_ms)
    settle(page, timeout_ms)


def wait_for_item_keys(page, timeout_ms: int = 30_000) -> None:
    """Wait until the annotate page's item line names an item: the component that draws it
    listens to the item keys from the same mount, so a key pressed before then reaches no
    listener (the buttons, drawn by Streamlit, may be on screen earlier)."""
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-rl-item-line]')]
             .some(line => line.dataset.screen && line.offsetParent !== null)""",
        timeout=timeout_ms,
    )


@contextmanager
def chromium_page(profile: Path, chromium_path: str, **context_options) -> Iterator:
    """A Playwright page in a fresh Chromium profile (``context_options``: viewport, is_mobile...)."""
    with chromium_pages([profile], chromium_path, **context_options) as (page,):
        yield page


@contextmanager
def chromium_pages(profiles: list[Path], chromium_path: str, **context_options) -> Iterator:
    """One page per profile, each in its own Chromium (separate people on separate machines)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright, ExitStack() as browsers:
        pages = []
        for profile in profiles:
            context = playwright.chromium.launch_persistent_context(
                user_data_dir=str(profile), executable_path=chromium_path, headless=True,
                args=CHROMIUM_ARGS, **context_options)
            browsers.callback(shutil.rmtree, profile, ignore_errors=True)
            browsers.callback(context.close)
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(30_000)
            pages.append(page)
        yield tuple(pages)
