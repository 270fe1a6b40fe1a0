"""The app in a real browser: first render, keyboard labeling, hostile text rendering.

One ``streamlit run`` per module on a fresh store file: the demo study is
created on first start.
"""

import re
import time
from pathlib import Path

import pytest
from browser_helpers import settle, wait_for_app

from evalcore.store.connection import open_store

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HOSTILE_TEXT = "<script>alert(1)</script> and a [markdown link](http://example.com) **bold**"


def _sign_in(page, name: str) -> None:
    box = page.get_by_role("textbox", name="Annotator")
    box.fill(name)
    box.press("Enter")
    settle(page)


def _progress_text(page) -> str:
    locator = page.get_by_text(re.compile(r"This query: you labeled \d+ of \d+"))
    locator.first.wait_for()
    return locator.first.inner_text()


def _labeled_count(page) -> int:
    return int(re.search(r"you labeled (\d+) of", _progress_text(page)).group(1))


def _wait_labeled(page, expected: int, timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if _labeled_count(page) == expected:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"expected {expected} labeled, page says: {_progress_text(page)}")


def _open_annotate(page, url: str, annotator: str) -> None:
    page.goto(url + "/annotate")
    wait_for_app(page, "Annotate")
    _sign_in(page, annotator)
    page.get_by_role("button", name=re.compile(r"^2 · relevant")).wait_for()
    settle(page)


def _press(page, key: str) -> None:
    # keep the focus off text inputs, where keys are typed instead of triggering shortcuts
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.press(key)
    settle(page)


def test_app_starts_and_renders_the_demo_home(app_server, browser_page) -> None:
    page = browser_page
    page.goto(app_server.url)
    wait_for_app(page, "Demo: Northwind Cloud knowledge base")
    for text in ("Label coverage", "pooled returned items labeled", "Queries marked complete"):
        page.locator(f"text={text} >> visible=true").first.wait_for()
    page.get_by_role("link", name="Annotate").first.wait_for()


def test_three_keyboard_labels_survive_a_reload(app_server, browser_page) -> None:
    page = browser_page
    _open_annotate(page, app_server.url, "keyboard-tester")
    assert _labeled_count(page) == 0
    for gain, expected in (("2", 1), ("0", 2), ("4", 3)):
        _press(page, gain)
        _wait_labeled(page, expected)

    db = open_store(app_server.db_path)
    rows = db.execute(
        "SELECT unit_id, gain FROM label_events WHERE annotator = 'keyboard-tester' "
        "AND kind = 'label' ORDER BY event_id"
    ).fetchall()
    assert [g for _, g in rows] == [2, 0, 4]
    assert len({u for u, _ in rows}) == 3

    page.reload()
    wait_for_app(page, "Annotate")
    _sign_in(page, "keyboard-tester")
    _wait_labeled(page, 3)
    assert db.execute(
        "SELECT count(*) FROM label_events WHERE annotator = 'keyboard-tester'"
    ).fetchone()[0] == 3


def test_hostile_document_renders_as_inert_text(app_server, browser_page, tmp_path: Path) -> None:
    page = browser_page
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    _open_annotate(page, app_server.url, "render-tester")
    # the rendered text holds invisible word joiners inside "http://" (they stop autolinks)
    literal = page.get_by_text("<script>alert(1)</script> and a [markdown link](http", exact=False)
    for _ in range(20):  # walk the blind order of q01 until the hostile document is shown
        if literal.count():
            break
        _press(page, "n")
    assert literal.count() == 1, "the hostile document is in q01's pool and must be reachable"
    assert literal.first.is_visible()
    shown = literal.first.evaluate("e => e.textContent").replace("\u2060", "")
    assert shown == HOSTILE_TEXT
    title = page.get_by_text("Password reset email shows <b>raw markup</b>", exact=False)
    assert title.count() == 1

    assert dialogs == []
    assert not page.evaluate(
        "() => [...document.querySelectorAll('script')].some(s => s.textContent.includes('alert(1)'))"
    )
    anchors = page.locator('a[href*="example.com"]')
    assert anchors.count() == 0, [anchors.nth(i).evaluate("a => a.outerHTML") for i in range(anchors.count())]
    assert page.locator("b", has_text="raw markup").count() == 0
    strong_texts = page.locator("strong").all_inner_texts()
    assert "bold" not in strong_texts and "markdown link" not in " ".join(strong_texts)

    shot = tmp_path / "annotate.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000


def test_typing_a_note_never_triggers_a_grade_shortcut(app_server, browser_page) -> None:
    page = browser_page
    _open_annotate(page, app_server.url, "note-tester")
    note = page.get_by_role("textbox", name=re.compile(r"^Note \(saved with your label"))
    note.fill("")
    note.press_sequentially("old 2019 version, see 4 and 0 (n u s j)")
    page.wait_for_timeout(500)
    db = open_store(app_server.db_path)
    count = "SELECT count(*) FROM label_events WHERE annotator = 'note-tester'"
    assert db.execute(count).fetchone()[0] == 0
    note.press("Enter")
    settle(page)
    _press(page, "3")
    _wait_labeled(page, 1)
    row = db.execute(
        "SELECT gain, note FROM label_events WHERE annotator = 'note-tester'").fetchone()
    assert row == (3, "old 2019 version, see 4 and 0 (n u s j)")
