"""Stale views and notes in a real browser (issue 11, items 4 and 5).

Two tabs of one annotator share a browser context; each tab is its own
Streamlit session, so tab B keeps showing the item tab A just labeled.
"""

import re
import sqlite3
import time

import pytest
from annotate_watch import blur, events, open_annotate, unit_on_screen, wait_quiet
from browser_helpers import settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _wait_unit_change(page, before: str | None, timeout_s: float = 30) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        now = unit_on_screen(page)
        if now and now != before:
            return now
        page.wait_for_timeout(50)
    raise AssertionError(f"the item on screen stayed {before}")


def test_a_stale_tab_shows_the_newer_label_and_asks_before_writing_over_it(
        app_server, browser_page) -> None:
    tab_a = browser_page
    tab_b = tab_a.context.new_page()
    for tab in (tab_a, tab_b):
        open_annotate(tab, app_server.url, annotator="two-tabs", query="q04")
    item = unit_on_screen(tab_a)
    assert unit_on_screen(tab_b) == item  # one annotator: one blind order

    tab_a.keyboard.press("2")
    _wait_unit_change(tab_a, item)
    assert events(app_server.db_path, "two-tabs") == [("q04", item, 2, "")]

    blur(tab_b)
    tab_b.keyboard.press("4")  # B still shows the item A just labeled
    warning = tab_b.get_by_text(re.compile(r"since .* was shown to you"))
    warning.first.wait_for()
    text = warning.first.inner_text()
    assert "labeled it 2 (relevant)" in text and "Your key: 4" in text, text
    assert events(app_server.db_path, "two-tabs") == [("q04", item, 2, "")]  # nothing written

    tab_b.get_by_role("button", name="Save 4 anyway").click()
    deadline = time.monotonic() + 30
    while len(events(app_server.db_path, "two-tabs")) < 2 and time.monotonic() < deadline:
        tab_b.wait_for_timeout(100)
    assert events(app_server.db_path, "two-tabs") == [("q04", item, 2, ""), ("q04", item, 4, "")]

    # tab A picks up B's label on its next refresh: its "previous" item shows "your label: 4"
    blur(tab_a)
    tab_a.keyboard.press("p")
    tab_a.get_by_text(re.compile(r"your label: 4 \(perfect\)")).first.wait_for()


def _note_box(page):
    return page.get_by_role("textbox", name=re.compile(r"^Note \(saved with your label"))


def _draft(db_path, annotator: str) -> tuple[str, str, int] | None:
    with sqlite3.connect(db_path) as db:
        return db.execute("SELECT unit_id, note, skipped FROM annotation_drafts "
                          "WHERE annotator = ? AND note != ''", [annotator]).fetchone()


def test_esc_leaves_the_note_and_tab_never_sends_grade_keys_into_it(app_server,
                                                                    browser_page) -> None:
    page = browser_page
    open_annotate(page, app_server.url, annotator="note-keys", query="q03")
    first = unit_on_screen(page)
    box = _note_box(page)
    box.click()
    box.press_sequentially("mentions invites only in passing")
    box.press("Escape")
    assert page.evaluate("() => document.activeElement.tagName") != "INPUT"
    settle(page)
    page.keyboard.press("3")
    second = _wait_unit_change(page, first)
    wait_quiet(page)
    assert events(app_server.db_path, "note-keys") == [
        ("q03", first, 3, "mentions invites only in passing")]

    box = _note_box(page)
    assert box.input_value() == ""  # the next item's note starts empty
    box.click()
    box.press_sequentially("old version")
    box.press("Tab")
    settle(page)
    page.keyboard.press("2")
    _wait_unit_change(page, second)
    wait_quiet(page)
    stored = events(app_server.db_path, "note-keys")
    assert stored[-1] == ("q03", second, 2, "old version"), stored


def test_a_reload_keeps_the_note_draft_and_the_skip(app_server, browser_page) -> None:
    page = browser_page
    open_annotate(page, app_server.url, annotator="reloader", query="q05")
    skipped = unit_on_screen(page)
    page.keyboard.press("s")
    drafted = _wait_unit_change(page, skipped)
    wait_quiet(page)
    box = _note_box(page)
    box.click()
    box.press_sequentially("half of it is outdated")
    deadline = time.monotonic() + 30  # the draft is kept while typing (no Enter, no blur)
    while _draft(app_server.db_path, "reloader") is None and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert _draft(app_server.db_path, "reloader") == (drafted, "half of it is outdated", 0)

    page.reload()
    page.get_by_text("Metrics for this query").first.wait_for()
    page.get_by_role("button", name=re.compile(r"^2 · relevant")).first.wait_for()
    settle(page)
    assert _note_box(page).input_value() == "half of it is outdated"
    page.get_by_text(re.compile(r"item \d+ of \d+ · " + re.escape(drafted))).first.wait_for()
    with sqlite3.connect(app_server.db_path) as db:
        assert db.execute("SELECT skipped FROM annotation_drafts WHERE annotator = 'reloader' "
                          "AND unit_id = ?", [skipped]).fetchone() == (1,)
