"""A real sign-in round trip: Streamlit's native OIDC against oidc-provider-mock.

The mock provider (a test dependency) runs on a free loopback port; the app
runs from a temporary directory whose ``.streamlit/secrets.toml`` has an
``[auth]`` section pointing at it (team mode). In Chromium: the app asks for
sign-in, the mock's form signs ann@acme.org in, the app shows her (not
editable), she labels an item, and the label event in the store carries her
identity. Nothing of the store is shown before sign-in.
"""

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from browser_helpers import REPO, free_port, settle, stop_app_process, wait_for_app

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from access_fixtures import ANNOTATOR, team_store  # noqa: E402

from evalcore.store.connection import open_store  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STARTUP_TIMEOUT_S = 60


def _wait_http(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: process exited early:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer in {STARTUP_TIMEOUT_S} s")


def _start(args: list[str], cwd: Path, env: dict, log: Path, health: str) -> subprocess.Popen:
    process = subprocess.Popen(args, cwd=cwd, env=env, stdout=log.open("wb"),
                               stderr=subprocess.STDOUT)
    try:
        _wait_http(health, process, log)
    except BaseException:
        stop_app_process(process)
        raise
    return process


@pytest.fixture
def signed_app(tmp_path: Path, chromium_path: str):
    """(app url, store path): the mock provider and a team-mode app wired to it."""
    db, _ = team_store(tmp_path)
    db.conn.close()
    store = tmp_path / "store.db"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "AUTHLIB_INSECURE_TRANSPORT": "1",
           "RELEVANCE_LEDGER_DB": str(store)}
    provider_port, app_port = free_port(), free_port()
    provider_url = f"http://127.0.0.1:{provider_port}"
    provider = _start(
        [sys.executable, "-m", "oidc_provider_mock", "--port", str(provider_port),
         "--host", "127.0.0.1"],
        tmp_path, env, tmp_path / "provider.log",
        provider_url + "/.well-known/openid-configuration",
    )
    app_dir = tmp_path / "app"
    (app_dir / ".streamlit").mkdir(parents=True)
    shutil.copy(REPO / ".streamlit" / "config.toml", app_dir / ".streamlit" / "config.toml")
    app_url = f"http://127.0.0.1:{app_port}"
    (app_dir / ".streamlit" / "secrets.toml").write_text(
        "[auth]\n"
        f'redirect_uri = "{app_url}/oauth2callback"\n'
        'cookie_secret = "browser-test-cookie-secret-0123456789"\n'
        'client_id = "relevance-ledger"\n'
        'client_secret = "relevance-ledger-secret"\n'
        f'server_metadata_url = "{provider_url}/.well-known/openid-configuration"\n'
    )
    try:
        app = _start(
            [sys.executable, "-m", "streamlit", "run", str(REPO / "app" / "launcher.py"),
             "--server.headless", "true", "--server.port", str(app_port),
             "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
            app_dir, env, tmp_path / "streamlit.log", app_url + "/_stcore/health",
        )
    except BaseException:
        stop_app_process(provider)
        raise
    try:
        yield app_url, store
    finally:
        stop_app_process(app)
        stop_app_process(provider)


def test_sign_in_label_and_the_event_carries_the_identity(signed_app, browser_page) -> None:
    app_url, store = signed_app
    page = browser_page
    page.goto(app_url)
    wait_for_app(page, "sign in to see your studies")
    body = page.inner_text("body")
    assert "solar" not in body.lower() and "Study" not in body  # nothing before sign-in

    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/oauth2/authorize"), timeout=30_000)
    page.locator("input[name=sub]").fill(ANNOTATOR)
    page.get_by_role("button", name="Authorize").click()

    page.wait_for_url(re.compile(re.escape(app_url)), timeout=30_000)
    wait_for_app(page, "Signed in as")
    sidebar = page.get_by_test_id("stSidebar")
    assert ANNOTATOR in sidebar.inner_text().replace("\u2060", "")
    assert sidebar.get_by_role("textbox", name="Annotator").count() == 0
    sidebar.get_by_role("button", name="Sign out").wait_for()  # may render after the name
    assert sidebar.get_by_role("button", name="Sign out").count() == 1

    sidebar.get_by_role("link", name="Annotate").click()
    settle(page)
    grade = page.get_by_role("button", name=re.compile(r"^0 · "))
    grade.first.wait_for()
    grade.first.click()
    settle(page)

    deadline = time.monotonic() + 20
    events: list = []
    while time.monotonic() < deadline and not events:
        db = open_store(store)
        events = db.execute(
            "SELECT annotator, gain, kind FROM label_events WHERE annotator != 'setup'"
        ).fetchall()
        db.conn.close()
        time.sleep(0.3)
    assert events == [(ANNOTATOR, 0, "label")]
    # Another organisation's document never reaches the browser.
    assert "subsidies" not in page.content().lower()
