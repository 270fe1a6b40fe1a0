"""Annotate page in Chromium on the demo study: key press -> next item on screen, and mark complete.

* **Key to next item** (target: median < 200 ms): 20 grade key presses, each made
  once the previous item was replaced; the time is taken in the page, from the
  keydown event to the DOM mutation that puts the next item's caption on screen
  (websocket, callback with the token-checked write, fragment rerun, render).
* **Mark complete** (target < 500 ms): a query whose pool is fully labeled, from
  the click on "Mark relevant set complete" to "Marked complete" on screen.

Usage: python benchmarks/bench_annotate_keys.py [--presses 20] [--workdir DIR]
"""

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "browser"))

from annotate_watch import open_annotate, presses, shown, shown_at, wait_quiet  # noqa: E402
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, start_app, stop_app_process  # noqa: E402

from evalcore.demo.corpus import demo_documents  # noqa: E402
from evalcore.demo.study import simulated_gain  # noqa: E402
from evalcore.store.connection import open_store  # noqa: E402


def key_to_next_item(page, url: str, count: int) -> list[float]:
    times: list[float] = []
    query_index = 0
    queries = [f"q{n:02d}" for n in range(1, 27)]
    open_annotate(page, url, annotator="bench-keys", query=queries[query_index])
    while len(times) < count:
        if page.get_by_text("You have labeled every pooled item").count():
            query_index += 1
            open_annotate(page, url, annotator="bench-keys", query=queries[query_index])
        before = len(shown(page))
        key_count = len(presses(page))
        page.keyboard.press(str(len(times) % 5))
        deadline = time.monotonic() + 30
        while len(shown(page)) == before:
            if page.get_by_text("You have labeled every pooled item").count():
                break
            if time.monotonic() > deadline:
                raise RuntimeError("the next item did not appear in 30 s")
            page.wait_for_timeout(5)
        if len(shown(page)) > before:
            pressed_at = presses(page)[key_count]["t"]
            times.append(shown_at(page)[before] - pressed_at)
        wait_quiet(page)
    return times


def mark_complete(page, url: str, db_path: Path) -> float:
    """Label every pooled item of q13 with the demo judge's grade (the demo's first pass
    labeled its top results with the same grades: no conflict; not timed), then time the
    completeness claim."""
    docs = {d.doc_id: d for d in demo_documents()}
    open_annotate(page, url, annotator="bench-complete", query="q13")
    while not page.get_by_text("You have labeled every pooled item").count():
        before = len(shown(page))
        page.keyboard.press(str(simulated_gain("q13", docs[shown(page)[-1]])))
        deadline = time.monotonic() + 30
        while len(shown(page)) == before and time.monotonic() < deadline:
            if page.get_by_text("You have labeled every pooled item").count():
                break
            page.wait_for_timeout(10)
        wait_quiet(page)
    button = page.get_by_role("button", name=re.compile(r"^Mark relevant set complete"))
    button.wait_for()
    page.evaluate("""() => { window.__rlDone = null; new MutationObserver(() => {
        if (!window.__rlDone && document.body.innerText.includes('Marked complete')) {
          window.__rlDone = performance.now(); } }).observe(document.body,
        {subtree: true, childList: true, characterData: true}); }""")
    started = page.evaluate("() => performance.now()")
    button.click()
    page.wait_for_function("() => window.__rlDone !== null", timeout=30_000)
    elapsed = page.evaluate("() => window.__rlDone") - started
    assert open_store(db_path).execute(
        "SELECT count(*) FROM completeness_events WHERE query_id = 'q13' AND state = 'complete'"
    ).fetchone()[0] == 1
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=20)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-annotate-"))
    workdir.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    server = start_app(workdir / "ledger.sqlite", workdir / "streamlit.log")
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                 args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(60_000)
            times = sorted(key_to_next_item(page, server.url, args.presses))
            print(f"key press -> next item on screen, {len(times)} presses: median "
                  f"{statistics.median(times):.0f} ms, max {times[-1]:.0f} ms "
                  f"(all: {', '.join(f'{t:.0f}' for t in times)})")
            print(f"mark complete -> 'Marked complete' on screen: "
                  f"{mark_complete(page, server.url, server.db_path):.0f} ms")
            browser.close()
    finally:
        stop_app_process(server.process)


if __name__ == "__main__":
    main()
