"""No request leaves the machine when the app runs.

Every page of the navigation (:data:`app.components.navigation.SECTIONS`) is
opened in Chromium against a local server, and every request the browser makes
(documents, scripts, styles, fonts, images, websockets, service workers) is
recorded at the browser context. Any request to a host other than the app's
own loopback address fails the test: the page icon, the icons of the
navigation and every asset must be served by the app itself. (It failed on
the ``:material/fact_check:`` page icon, which Streamlit fetches from
fonts.gstatic.com.) The exported HTML report is checked the same way in
``test_browser_report_html.py``: it requests nothing but its own file.
"""

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from browser_helpers import settle

from app.components.navigation import HOME, SECTIONS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Schemes that never touch the network.
_LOCAL_SCHEMES = {"data", "blob", "about", "file", "chrome", "chrome-extension"}
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}


def _external(urls: list[str]) -> list[str]:
    out = []
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme in _LOCAL_SCHEMES:
            continue
        if parts.hostname not in _LOCAL_HOSTS:
            out.append(url)
    return out


def _address(path: str) -> str:
    return "/" if path == HOME.path else "/" + Path(path).stem


def test_no_page_requests_another_host(app_server, browser_page) -> None:
    page = browser_page
    requested: list[str] = []
    page.context.on("request", lambda request: requested.append(request.url))
    page.context.on("websocket", lambda ws: requested.append(ws.url))
    visited = []
    for views in SECTIONS.values():
        for view in views:
            page.goto(app_server.url + _address(view.path))
            page.locator("[data-testid=stSidebarNav]").wait_for()
            page.get_by_role("heading").first.wait_for()
            settle(page)
            page.wait_for_timeout(1_000)  # fonts and icons load after the first paint
            assert page.locator("[data-testid=stException]").count() == 0, view.title
            visited.append(view.title)
    assert len(visited) == sum(len(v) for v in SECTIONS.values())
    icon = page.locator("link[rel~=icon]").first.get_attribute("href") or ""
    assert icon.startswith("data:") or urlsplit(icon).hostname in _LOCAL_HOSTS | {None}, icon
    assert any(urlsplit(u).path.startswith("/static/") for u in requested)  # it did record
    assert _external(requested) == [], sorted(set(_external(requested)))
