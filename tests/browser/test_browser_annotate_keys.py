"""No key press on the annotate page is lost without a word, however soon after the item
changed it comes.

200 grade presses, each 20-50 ms after a new item's caption appeared (a quarter of them
followed by a second press 20-50 ms later, before the next item can be on screen). Every
press must be accounted for: a label stored on the item whose caption was on screen at
that instant, with that key, or a message on the page naming the key and that item. No
label may land on an item that was not on screen when its key was pressed.
"""

import random
import re

import pytest
from annotate_watch import (
    assert_labels_match_presses,
    events,
    install,
    open_annotate,
    presses,
    shown,
    unit_on_screen,
    wait_quiet,
)
from browser_helpers import settle, wait_for_app
from playwright.sync_api import TimeoutError as PlaywrightTimeout

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PRESSES = 200
GRADES = "01234"

_RECORD_MESSAGES = r"""
() => {
  window.__rlMessages = [];
  const note = () => {
    for (const el of document.querySelectorAll(
        '[data-testid="stAlert"], [data-testid="stToast"], #rl-key-refused')) {
      if (el.offsetParent === null && el.id !== 'rl-key-refused') { continue; }
      const text = el.innerText.trim();
      if (text && !window.__rlMessages.includes(text)) { window.__rlMessages.push(text); }
    }
  };
  new MutationObserver(note).observe(document.body,
                                     {subtree: true, childList: true, characterData: true});
}
"""


def _wait_for_new_item(page, seen: int) -> bool:
    """Wait until an item after the ``seen`` first ones is on screen; False when the query
    has none left (its "Next query" button is there instead). A press that changed nothing
    leaves the item on screen: after 15 s the next press goes to it (and the press that
    changed nothing is counted below)."""
    try:
        page.wait_for_function(
            "(n) => window.__rl.shown.length > n || "
            "[...document.querySelectorAll('button')].some(b => /^Next query/.test(b.innerText))",
            arg=seen,
            timeout=15_000,
        )
    except PlaywrightTimeout:
        return True
    return page.evaluate("() => !!window.__rl.unitOnScreen()")


def test_every_fast_press_labels_the_item_on_screen_or_says_why_not(
    app_server, browser_page
) -> None:
    page = browser_page
    rng = random.Random(30)
    open_annotate(page, app_server.url, annotator="race", query="q01")
    page.evaluate(_RECORD_MESSAGES)
    sent, seen = 0, len(shown(page)) - 1
    while sent < PRESSES:
        if not _wait_for_new_item(page, seen):
            page.keyboard.press("Enter")  # the next query with items left
            page.wait_for_function("(n) => window.__rl.shown.length > n", arg=seen, timeout=60_000)
        seen = len(shown(page))
        page.wait_for_timeout(rng.randint(20, 50))
        page.keyboard.press(rng.choice(GRADES))
        sent += 1
        if sent < PRESSES and rng.random() < 0.25:  # before the next item can be on screen
            page.wait_for_timeout(rng.randint(20, 50))
            page.keyboard.press(rng.choice(GRADES))
            sent += 1
    wait_quiet(page)

    pressed = [p for p in presses(page) if p["key"] in GRADES]
    assert len(pressed) == PRESSES
    stored = events(app_server.db_path, "race")
    assert_labels_match_presses(stored, pressed)  # none misattributed
    messages = page.evaluate("() => window.__rlMessages")
    labels = [(unit, str(gain)) for _q, unit, gain, _note in stored]
    unaccounted = []
    for press in pressed:
        wanted = (press["unit"], press["key"])
        if press["unit"] is None:  # the query was done: nothing to label was on screen
            if not any(f"Key {press['key']} not sent: " in m for m in messages):
                unaccounted.append(press)
            continue
        if wanted in labels:
            labels.remove(wanted)
            continue
        said = [m for m in messages if f"Key {press['key']} " in m and press["unit"] in m]
        if not said:
            unaccounted.append(press)
    assert not unaccounted, (
        f"{len(unaccounted)} presses neither labeled their item nor "
        f"were answered: {unaccounted[:5]}; messages: {messages[:10]}"
    )
    assert len(stored) >= PRESSES // 2, f"only {len(stored)} of {PRESSES} presses labeled"
    assert not any(re.search(r"not sent: the next item", m) for m in messages), messages


def test_a_press_while_the_annotate_page_first_draws_is_answered(app_server, browser_page) -> None:
    """Click Annotate in the navigation and press a grade at once, again and again until the
    item is on screen: the first presses come before the item's key listener is mounted (a
    page switch takes a script run). Each press labels the item on screen or says it was not
    sent."""
    page = browser_page
    page.goto(f"{app_server.url}/dashboard?study=demo&annotator=early")
    wait_for_app(page, "What to label next")
    settle(page)
    install(page)
    page.evaluate(_RECORD_MESSAGES)
    page.get_by_role("link", name=re.compile("Annotate")).first.click()
    for _ in range(60):
        page.wait_for_timeout(25)
        page.keyboard.press("2")
        if unit_on_screen(page):
            break
    wait_quiet(page)
    pressed = [p for p in presses(page) if p["key"] == "2"]
    early = [p for p in pressed if p["unit"] is None]
    assert early, "every press came after the item was on screen: the test did not race"
    messages = page.evaluate("() => window.__rlMessages")
    assert any("Key 2 not sent: the page was still drawing the item" in m for m in messages), (
        f"{len(early)} presses before the item was on screen were lost without a word; "
        f"messages: {messages}")
    stored = events(app_server.db_path, "early")
    assert_labels_match_presses(stored, pressed)  # none landed on an item not on screen
