"""Issue 14's "Done when" in a real browser: a lead labels the to-decide queue and watches
the verdict change without reloading.

The lead opens the annotate page with the Compare page's address
(``?queue=decide&run_a=...&run_b=...&measure=RR%4010``), sees the verdict (undecided,
with its interval), labels the queue's items with key presses about 60 ms apart (the
grade the demo's own judge gives the item on screen at each press), and the verdict
panel follows on the same page until RR@10 is settled; the next undecided measure is
offered, and P@10 is labeled until decided (or its interval, checked against the
library, has narrowed). Every stored label is checked against the item on screen when
its key was pressed. Screenshots at desktop and phone width go to /tmp.
"""

import re
import sqlite3
import time
from pathlib import Path

import pytest
from annotate_watch import wait_quiet
from browser_helpers import chromium_page, settle, wait_for_app
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from evalcore.demo.corpus import demo_documents
from evalcore.demo.study import DEMO_STUDY_ID, RUN_PROTOCOLS, simulated_gain
from evalcore.live.decide_state import decide_state, decide_target
from evalcore.store.connection import open_store
from evalcore.store.study_handle import open_study

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RUN_A, RUN_B = RUN_PROTOCOLS
DOCS = {d.doc_id: d for d in demo_documents()}
SHOTS = Path("/tmp/relevance-ledger-decide-shots")
INTERVAL = re.compile(r"\[([+-]\d\.\d{4}), ([+-]\d\.\d{4})\]")

#: Records what the page showed and each key press with the item on screen at that
#: instant (a capturing listener runs before the page's own), and each verdict text
#: with when it appeared.
_RECORDER = r"""
() => {
  if (window.__rd) { return; }
  // an element of the previous render, kept (faded) until the rerun ends, is not on screen
  const live = (sel) => [...document.querySelectorAll(sel)].filter(
    (el) => !el.closest('[data-stale="true"]'));
  const onScreen = () => {
    let unit = null, query = null;
    for (const el of live('[data-rl-item-line]')) {
      const m = /^queue item \d+ of \d+ · (\S+)/.exec(el.innerText.trim());
      if (m) { unit = m[1]; }
    }
    for (const el of live('h4')) {
      const m = /^(q\d+): /.exec(el.innerText.trim());
      if (m) { query = m[1]; }
    }
    return unit && query ? query + " " + unit : null;
  };
  const verdict = () => {
    const found = live('.st-key-rl_verdict');
    return found.length ? found[found.length - 1].innerText.trim() : "";
  };
  window.__rd = {presses: [], verdicts: [], onScreen, verdict};
  const note = () => {
    const v = verdict();
    const seen = window.__rd.verdicts;
    if (v && (!seen.length || seen[seen.length - 1].text !== v)) {
      seen.push({text: v, t: performance.now()});
    }
  };
  note();
  new MutationObserver(note).observe(document.body,
    {subtree: true, childList: true, characterData: true});
  window.addEventListener('keydown', (e) => {
    window.__rd.presses.push({key: e.key, item: onScreen(), t: performance.now()});
  }, true);
}
"""


def _address(measure: str) -> str:
    encoded = measure.replace("@", "%40")
    return (f"/annotate?study=demo&annotator=lead&queue=decide&run_a={RUN_A}&run_b={RUN_B}"
            f"&measure={encoded}")


def _verdict(page) -> str:
    return page.evaluate("() => window.__rd.verdict()")


def _library(db_path: Path, measure: str):
    db = open_store(db_path)
    try:
        target = decide_target(open_study(db, DEMO_STUDY_ID, None), RUN_A, RUN_B, measure)
        return decide_state(open_study(db, DEMO_STUDY_ID, None), target)
    finally:
        db.conn.close()


def _interval_of(state) -> str:
    return f"[{state.decision.lower:+.4f}, {state.decision.upper:+.4f}]"


def _labels(db_path: Path, annotator: str) -> list[tuple[str, str, int]]:
    with sqlite3.connect(db_path) as db:
        return db.execute("SELECT query_id, unit_id, gain FROM label_events WHERE annotator = ? "
                          "ORDER BY event_id", [annotator]).fetchall()


def _item_on_screen(page) -> str:
    """"query unit" of the item on screen (waits for one: a rerun may be drawing it)."""
    return page.wait_for_function("() => window.__rd.onScreen()").json_value()


def _truth(item: str) -> int:
    query, unit = item.split(" ")
    return simulated_gain(query, DOCS[unit])


def _press_truth(page) -> str | None:
    """Press the demo judge's grade for the item on screen, read in the same instant as the
    key goes down (a read, then a key press from here, could straddle a new item: the grade
    of one item on the next); the item it was pressed on, or None between two renders."""
    if not page.evaluate("() => !!window.__truth"):
        page.evaluate("(truth) => { window.__truth = truth; }",
                      {f"q{n:02d} {doc}": simulated_gain(f"q{n:02d}", d)
                       for n in range(1, 26) for doc, d in DOCS.items()})
    return page.evaluate("""() => {
      const item = window.__rd.onScreen();
      if (!item) { return null; }
      const key = String(window.__truth[item]);
      document.dispatchEvent(new KeyboardEvent("keydown", {key, bubbles: true}));
      return item;
    }""")


def _timed_label(page, db_path: Path) -> float:
    """Seconds from the key press of one label to the verdict panel's new text.

    A press that arrives while a rerun is drawing is held back and refused by the page
    (nothing stored): a person presses again, and so does this, up to three times. A
    label that was stored without the panel changing fails the test."""
    old = _verdict(page)
    stored = len(_labels(db_path, "lead"))
    for _ in range(3):
        _item_on_screen(page)
        started = time.perf_counter()
        _press_truth(page)
        try:
            page.wait_for_function("(old) => window.__rd.verdict() !== old", arg=old,
                                   timeout=20_000)
            return time.perf_counter() - started
        except PlaywrightTimeoutError:
            assert len(_labels(db_path, "lead")) == stored, "a label landed, the panel kept still"
    raise AssertionError("three presses of the grade key, and no label was stored")


def _label_impatiently(page, until: re.Pattern, timeout_s: float) -> None:
    """Press the demo judge's grade for the item on screen every ~60 ms until the verdict
    panel matches ``until`` (the presses that come before the next item is on screen are
    held back or refused by the page: that is the point)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if until.search(_verdict(page)):
            return
        _press_truth(page)  # nothing between two renders
        page.wait_for_timeout(60)


def _check_labels_landed_on_shown_items(db_path: Path, page) -> list[tuple[str, str, int]]:
    stored = _labels(db_path, "lead")
    pressed = page.evaluate("() => window.__rd.presses")
    cursor = 0
    for query, unit, gain in stored:  # each label is one press, in order, on the item shown
        while cursor < len(pressed) and not (
                pressed[cursor]["item"] == f"{query} {unit}" and pressed[cursor]["key"] == str(gain)):
            cursor += 1
        assert cursor < len(pressed), (query, unit, gain, pressed)
        cursor += 1
        assert gain == simulated_gain(query, DOCS[unit])
    assert len({(q, u) for q, u, _ in stored}) == len(stored), "an item was labeled twice"
    return stored


def test_the_decide_queue_at_phone_width(app_server, tmp_path: Path, chromium_path: str) -> None:
    """At 390 px the item and its grade buttons come first, the verdict panel below them
    (it follows a label there too); nothing is wider than the screen."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    with chromium_page(tmp_path / "profile", chromium_path, viewport={"width": 390,
                       "height": 844}, is_mobile=True, has_touch=True) as page:
        page.goto(app_server.url + _address("P@10").replace("annotator=lead", "annotator=phone"))
        wait_for_app(page, "P@10: undecided")
        page.get_by_role("button", name=re.compile(r"^2 · relevant")).first.wait_for()
        settle(page)
        page.evaluate(_RECORDER)
        page.screenshot(path=str(SHOTS / "decide-phone.png"), full_page=True)
        state = _library(app_server.db_path, "P@10")
        assert _interval_of(state) in _verdict(page)
        for name in ("0 · not relevant", "4 · perfect"):
            box = page.get_by_role("button", name=re.compile("^" + name)).first.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
        panel = page.locator(".st-key-rl_verdict").last.bounding_box()
        assert panel is not None and panel["x"] >= 0 and panel["x"] + panel["width"] <= 390
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        old = _verdict(page)
        item = _item_on_screen(page)
        page.get_by_role("button", name=re.compile(f"^{_truth(item)} · ")).first.tap()
        page.wait_for_function("(old) => window.__rd.verdict() !== old", arg=old)
        settle(page)
        query, unit = item.split(" ")
        assert _labels(app_server.db_path, "phone") == [(query, unit, _truth(item))]
        assert _interval_of(_library(app_server.db_path, "P@10")) in _verdict(page)
        line = page.locator(".st-key-rl_verdict_line").last
        assert line.is_visible() and "P@10: undecided" in line.inner_text()
        wait_quiet(page)
        page.screenshot(path=str(SHOTS / "decide-phone-after.png"), full_page=True)


def test_a_lead_labels_the_decide_queue_and_watches_the_verdict_change(
        app_server, browser_page) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser_page
    page.goto(app_server.url + _address("RR@10"))
    # the panel's verdict (the one-line copy above the item is hidden at this width)
    page.locator(".st-key-rl_verdict").filter(has_text="RR@10: undecided").first.wait_for()
    settle(page)
    page.get_by_role("button", name=re.compile(r"^2 · relevant")).first.wait_for()
    settle(page)
    page.evaluate(_RECORDER)
    page.evaluate("() => { window.__noReload = 'still here'; }")
    before = _library(app_server.db_path, "RR@10")
    assert before.decision.verdict == "undecided"
    assert _interval_of(before) in _verdict(page)
    assert re.search(r"about \d+ labels? still needed", _verdict(page))
    assert not page.locator(".st-key-rl_verdict_line").last.is_visible()  # the panel is beside
    page.screenshot(path=str(SHOTS / "decide-desktop-before.png"), full_page=True)

    # One label at a time first: how long the verdict takes to follow a label.
    timings = [_timed_label(page, app_server.db_path)]
    _label_impatiently(page, re.compile(r"RR@10: (tied|decided)"), 90)
    wait_quiet(page)
    panel = _verdict(page)
    assert "RR@10: tied" in panel and "RR@10 is decided: tied" in panel, panel
    assert _library(app_server.db_path, "RR@10").decision.verdict == "tied"
    stored = _check_labels_landed_on_shown_items(app_server.db_path, page)
    assert 1 <= len(stored) <= 4, stored
    page.screenshot(path=str(SHOTS / "decide-desktop-settled.png"), full_page=True)

    # The next undecided measure is offered; Enter takes it: P@5 (settled in a label or
    # two), then nDCG@10, which the demo's open populations bound (contract section 12:
    # it was undecidable while no query was declared complete).
    current = "RR@10"
    for expected in ("P@5", "nDCG@10"):
        offered = _library(app_server.db_path, current).next_undecided()
        assert offered == expected, offered
        page.get_by_role("button", name=f"Next undecided measure: {offered}").wait_for()
        page.keyboard.press("Enter")
        page.wait_for_function("(m) => window.__rd.verdict().startsWith(m + ': ')", arg=offered)
        settle(page)
        current = offered
        if current == "nDCG@10":
            break
        _label_impatiently(page, re.compile(re.escape(current) + r": (tied|decided)"), 90)
        wait_quiet(page)
    assert "queue=decide" in page.url and "measure=nDCG%4010" in page.url, page.url
    start = _library(app_server.db_path, current)
    assert _interval_of(start) in _verdict(page)
    timings += [_timed_label(page, app_server.db_path) for _ in range(3)]  # timed again
    _label_impatiently(page, re.compile(r"nDCG@10: decided"), 240)
    wait_quiet(page)
    assert page.evaluate("() => window.__noReload") == "still here", "the page was reloaded"
    now = _library(app_server.db_path, current)
    panel = _verdict(page)
    if now.decision.verdict in ("a_better", "b_better"):
        better = RUN_A if now.decision.verdict == "a_better" else RUN_B
        assert f"nDCG@10: decided: {better} better" in panel, panel
        assert f"nDCG@10 is decided: {better} is better" in panel
    else:  # not decided within the presses: the interval narrowed, exactly as the library says
        assert (now.decision.upper - now.decision.lower) < (start.decision.upper
                                                            - start.decision.lower)
    assert _interval_of(now) in panel, (panel, _interval_of(now))
    verdicts = page.evaluate("() => window.__rd.verdicts")
    assert len({INTERVAL.search(v["text"]).group(0) for v in verdicts
                if INTERVAL.search(v["text"])}) >= 3, verdicts  # it changed, step by step
    _check_labels_landed_on_shown_items(app_server.db_path, page)
    page.screenshot(path=str(SHOTS / "decide-desktop-after.png"), full_page=True)
    print(f"\nverdict update after a label (press -> new panel text): "
          f"{', '.join(f'{t * 1000:.0f} ms' for t in timings)}; "
          f"nDCG@10 {now.decision.verdict_text} {_interval_of(now)} after "
          f"{len(_labels(app_server.db_path, 'lead'))} labels by the lead")


