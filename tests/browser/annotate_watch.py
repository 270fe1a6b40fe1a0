"""In-page recorders for the annotate browser tests (not a test module).

``install`` adds, to the live page, a record of every item the page put on
screen (from the item's caption line "item i of n · <unit> · ...", drawn by
``app/components/keyboard.py`` with the screen id a key press sends) and of every key
press with the item on screen at that instant (a capturing keydown listener
on ``window`` runs before the page's own key handlers), so a test can check each stored
label against what the annotator actually saw.
"""

import re
import sqlite3
import time
from pathlib import Path

from browser_helpers import settle, wait_for_app, wait_for_item_keys

_INSTALL = r"""
() => {
  if (window.__rl) { return; }
  const unitOnScreen = () => {
    for (const el of document.querySelectorAll('[data-rl-item-line]')) {
      const m = /^item \d+ of \d+ · (\S+)/.exec(el.innerText.trim());
      if (m) { return m[1]; }
    }
    return null;
  };
  window.__rl = {shown: [], shownAt: [], presses: [], refusals: [], unitOnScreen};
  const note = () => {
    const unit = unitOnScreen();
    const shown = window.__rl.shown;
    if (unit && shown[shown.length - 1] !== unit) {
      shown.push(unit);
      window.__rl.shownAt.push(performance.now());
    }
    for (const el of document.querySelectorAll('[data-testid="stAlert"], #rl-key-refused')) {
      const text = el.innerText.trim();
      if (/not (saved|sent)/i.test(text) && !window.__rl.refusals.includes(text)) {
        window.__rl.refusals.push(text);
      }
    }
  };
  note();
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, characterData: true});
  window.addEventListener('keydown', (e) => {
    window.__rl.presses.push({key: e.key, unit: unitOnScreen(), t: performance.now()});
  }, true);
}
"""


def install(page) -> None:
    page.evaluate(_INSTALL)


def shown(page) -> list[str]:
    return page.evaluate("() => window.__rl.shown")


def shown_at(page) -> list[float]:
    """``performance.now()`` (ms) at which each entry of :func:`shown` appeared."""
    return page.evaluate("() => window.__rl.shownAt")


def presses(page) -> list[dict]:
    return page.evaluate("() => window.__rl.presses")


def refusals(page) -> list[str]:
    """Every distinct "not saved" / "not sent" message the page showed."""
    return page.evaluate("() => window.__rl.refusals")


def unit_on_screen(page) -> str | None:
    return page.evaluate("() => window.__rl.unitOnScreen()")


def open_annotate(page, url: str, *, annotator: str, query: str) -> None:
    page.goto(f"{url}/annotate?study=demo&annotator={annotator}&query={query}")
    wait_for_app(page, "Metrics for this query")
    page.get_by_role("button", name=re.compile(r"^2 · relevant")).first.wait_for()
    settle(page)
    wait_for_item_keys(page)
    install(page)
    blur(page)


def blur(page) -> None:
    """Keep the focus off text inputs, where keys are typed instead of triggering shortcuts."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")


def wait_quiet(page, timeout_s: float = 60) -> None:
    """Wait until the app ran every rerun the presses started (no status widget for 1 s)."""
    deadline = time.monotonic() + timeout_s
    quiet_since = None
    while time.monotonic() < deadline:
        running = page.evaluate(
            "() => !!document.querySelector('[data-testid=\"stStatusWidget\"]')")
        if running:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= 1.0:
            return
        page.wait_for_timeout(100)
    raise AssertionError("the app did not settle")


def events(db_path: Path, annotator: str) -> list[tuple[str, str, int | None, str]]:
    """(query, unit, gain, note) of the annotator's label events, in event order."""
    with sqlite3.connect(db_path) as db:
        return db.execute(
            "SELECT query_id, unit_id, gain, note FROM label_events WHERE annotator = ? "
            "ORDER BY event_id", [annotator]).fetchall()


def assert_labels_match_presses(stored: list[tuple], pressed: list[dict]) -> None:
    """Each stored label is one press, in press order, on the unit on screen at that press."""
    cursor = 0
    for _query, unit, gain, _note in stored:
        while cursor < len(pressed) and not (
                pressed[cursor]["unit"] == unit and pressed[cursor]["key"] == str(gain)):
            cursor += 1
        assert cursor < len(pressed), (
            f"label {unit}={gain} matches no press on that item, in order; presses: {pressed}; "
            f"stored: {stored}")
        cursor += 1
