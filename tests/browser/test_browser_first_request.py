"""Every page address works as the very first request to a freshly started server.

The server is started as a user starts it (the ``streamlit`` command, no
``PYTHONPATH``: only the entry script puts the ``app`` package on the import
path), and the first thing it ever serves is a page address other than ``/``:
the page must come with the whole navigation (sections and page titles from
the entry script) and no exception box. Each address gets its own fresh server.
"""

import re
from pathlib import Path

import pytest
from browser_helpers import CHROMIUM_ARGS, settle, start_app, stop_app_process

from app.components.navigation import SECTIONS

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _first_request(tmp_path: Path, chromium_path: str, address: str, ready: str,
                   shot: str) -> None:
    from playwright.sync_api import sync_playwright

    server = start_app(tmp_path / "ledger.sqlite", tmp_path / "streamlit.log", as_user=True)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path, headless=True,
                                                 args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(60_000)
                page.goto(server.url + address)  # the server's very first request
                exception = page.locator("[data-testid=stException]")
                page.get_by_text(ready, exact=False).or_(exception).first.wait_for()
                settle(page)
                page.screenshot(path=str(tmp_path / shot))  # kept under pytest's basetemp
                assert exception.count() == 0, exception.first.inner_text()
                assert "ModuleNotFoundError" not in page.content()
                _assert_full_navigation(page)
            finally:
                browser.close()
    finally:
        stop_app_process(server.process)


def _assert_full_navigation(page) -> None:
    nav = page.locator("[data-testid=stSidebarNav]")
    nav.wait_for()
    text = nav.inner_text()
    for section, views in SECTIONS.items():
        assert section.lower() in text.lower(), f"section {section!r} missing from: {text!r}"
        for view in views:
            link = nav.get_by_role("link", name=re.compile(re.escape(view.title)))
            assert link.count() == 1, f"page {view.title!r} missing from: {text!r}"
    # the entry script ran: its sidebar study picker is there too
    assert page.get_by_text("Study", exact=True).count() >= 1


def test_dashboard_address_as_the_first_request(tmp_path, chromium_path) -> None:
    _first_request(tmp_path, chromium_path, "/dashboard?study=demo", "What to label next",
                   "first-request-dashboard.png")


def test_annotate_address_as_the_first_request(tmp_path, chromium_path) -> None:
    _first_request(tmp_path, chromium_path, "/annotate?query=q05", "Enter your name",
                   "first-request-annotate.png")
