"""Real-browser harness: ``streamlit run`` on a loopback port + Debian's Chromium.

No browser is ever downloaded: Playwright drives ``/usr/bin/chromium``. When it
is missing the tests skip, unless ``RELEVANCE_LEDGER_REQUIRE_BROWSER=1`` (CI
sets it), which makes a missing browser a failure.
"""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_helpers import (
    CHROMIUM,
    AppServer,
    chromium_page,
    start_app,
    stop_app_process,
)


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    message = f"{CHROMIUM} is missing (apt-get install -y chromium)"
    if os.environ.get("RELEVANCE_LEDGER_REQUIRE_BROWSER") == "1":
        pytest.fail(message + "; RELEVANCE_LEDGER_REQUIRE_BROWSER=1 makes this a failure")
    pytest.skip(message)


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
    with chromium_page(tmp_path / "profile", chromium_path,
                       viewport={"width": 1400, "height": 1000}) as page:
        yield page
