"""Annotate-page benchmark: label click -> persisted -> page ready, and cold start.

Times, with Streamlit's AppTest driving the real pages (server side only, no
browser):

* a grade click on the annotate page (the label event written, the next item,
  progress and the query's live metrics rendered; AppTest reruns the whole page,
  where a browser reruns only the work-area fragment), on the demo study and on a
  generated study of 10,000 queries x 100 results (2 runs, k = 100; target
  < 300 ms);
* cold start on the demo study: ``streamlit run`` in a new process until
  Chromium shows the home page's title (target < 5 s), for a fresh store (the
  demo is built on first start) and for an existing demo store;
* end to end in Chromium on the demo study: key press -> label stored and the
  progress line updated (websocket, fragment rerun, render).

Usage: python benchmarks/bench_app.py [--queries 10000] [--results 100] [--clicks 20]
       [--workdir DIR] [--no-browser]
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evalcore.demo.study import build_demo  # noqa: E402
from evalcore.store.connection import open_store  # noqa: E402
from evalcore.store.corpus import DocumentIn, add_documents  # noqa: E402
from evalcore.store.runs import add_run  # noqa: E402
from evalcore.store.studies import QueryIn, StudyIn  # noqa: E402
from evalcore.store.study_setup import add_queries, create_study  # noqa: E402

ENTRY = str(REPO / "app" / "streamlit_app.py")
WORDS = ("password reset invoice refund deploy cluster backup restore api key webhook mobile "
         "email spam export csv latency cache workspace role permission").split()


def build_big_store(path: Path, n_queries: int, n_results: int) -> None:
    """A study of ``n_queries`` queries, 2 runs of ``n_results`` each, short documents."""
    if path.exists():
        return
    rng = random.Random(11)
    db = open_store(path)
    create_study(db, StudyIn(study_id="big", name="Generated 10k study", corpus_id="big"))
    n_docs = max(2 * n_results, n_queries * 2)
    add_documents(db, "big", (
        DocumentIn(doc_id=f"d{i:06d}", title=" ".join(rng.sample(WORDS, 4)),
                   text=" ".join(rng.choices(WORDS, k=40)), owner_org="org",
                   created_at=datetime(2025, 1, 1, tzinfo=UTC))
        for i in range(n_docs)
    ))
    qids = [f"q{i:05d}" for i in range(n_queries)]
    add_queries(db, "big", [QueryIn(query_id=q, text=" ".join(rng.sample(WORDS, 3))) for q in qids])
    for run in ("run-a", "run-b"):
        rows = []
        for q in qids:
            units = rng.sample(range(n_docs), n_results)
            rows.extend((q, rank, f"d{u:06d}", float(n_results - rank))
                        for rank, u in enumerate(units, 1))
        add_run(db, study_id="big", name=run, source="imported", k=n_results, results=rows)


def _server_like() -> None:
    """Make AppTest run scripts as the server does after its first run.

    One script cache for all runs: AppTest makes a new one per run, so it would
    recompile every page on every click, which the server does once. (Benchmark
    only: this reaches into Streamlit's runtime; the app and its tests do not.)
    """
    import streamlit.testing.v1.app_test as app_test
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    shared = ScriptCache()
    app_test.ScriptCache = lambda: shared


def _grade(at, gain: int):
    """The grade button of the item on screen (keyed ``grade_<gain>_<showing>``), or None."""
    return next((b for b in at.button if b.key and b.key.startswith(f"grade_{gain}_")), None)


def time_clicks(db_path: Path, clicks: int, label: str) -> None:
    from streamlit.testing.v1 import AppTest

    os.environ["RELEVANCE_LEDGER_DB"] = str(db_path)
    started = time.perf_counter()
    at = AppTest.from_file(ENTRY, default_timeout=300).run()
    at.text_input(key="rl_annotator_input").set_value("bench").run()
    at.switch_page("views/annotate.py").run()
    first = time.perf_counter() - started
    assert not at.exception, at.exception
    times: list[float] = []
    for i in range(clicks):
        if not _grade(at, 0):  # query done: move on (not timed)
            at.button(key="next_query").click().run()
        t0 = time.perf_counter()
        _grade(at, i % 5).click().run()
        times.append((time.perf_counter() - t0) * 1000)
        assert not at.exception, at.exception
    db = open_store(db_path)
    saved = db.execute("SELECT count(*) FROM label_events WHERE annotator = 'bench'").fetchone()[0]
    times.sort()
    print(f"{label}: first render of annotate {first:.2f} s; {clicks} grade clicks: "
          f"median {statistics.median(times):.0f} ms, p90 {times[int(0.9 * (len(times) - 1))]:.0f} ms, "
          f"max {times[-1]:.0f} ms; {saved} label events persisted")


def cold_start(db_path: Path, label: str, keyboard_clicks: int = 0) -> None:
    """``streamlit run`` started -> the home page's title visible in an already open Chromium."""
    from playwright.sync_api import sync_playwright

    port = _free_port()
    env = {**os.environ, "RELEVANCE_LEDGER_DB": str(db_path)}
    url = f"http://127.0.0.1:{port}"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app/streamlit_app.py",
             "--server.headless", "true", "--server.port", str(port),
             "--server.address", "127.0.0.1"],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            while True:
                try:
                    with urllib.request.urlopen(url + "/_stcore/health", timeout=1):
                        break
                except OSError:
                    if time.perf_counter() - started > 60:
                        raise RuntimeError("streamlit did not start in 60 s") from None
                    time.sleep(0.02)
            healthy = time.perf_counter() - started
            page.goto(url)
            page.get_by_text("Label coverage").first.wait_for(timeout=60_000)
            rendered = time.perf_counter() - started
            if keyboard_clicks:
                _keyboard_latency(page, url, keyboard_clicks)
        finally:
            process.terminate()
            process.wait(timeout=10)
            browser.close()
    print(f"cold start ({label}): server healthy {healthy:.2f} s, home page rendered "
          f"{rendered:.2f} s after `streamlit run`")


def _keyboard_latency(page, url: str, clicks: int) -> None:
    """In the browser: key press -> label stored and the progress line updated (end to end)."""
    import re

    page.goto(url + "/annotate")
    box = page.get_by_role("textbox", name="Annotator")
    box.wait_for(timeout=60_000)
    box.fill("keyboard-bench")
    box.press("Enter")
    progress = page.get_by_text(re.compile(r"This query: you labeled \d+ of \d+")).first
    progress.wait_for(timeout=60_000)
    times: list[float] = []
    for _ in range(clicks):
        before = progress.inner_text()
        if "Next query" in page.content():
            page.keyboard.press("Enter")
            page.wait_for_timeout(1000)
            before = progress.inner_text()
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        t0 = time.perf_counter()
        page.keyboard.press("2")
        while progress.inner_text() == before:
            if time.perf_counter() - t0 > 30:
                raise RuntimeError("the label did not show up in 30 s")
            page.wait_for_timeout(5)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    print(f"browser, demo study: key '2' -> progress updated: median "
          f"{statistics.median(times):.0f} ms, max {times[-1]:.0f} ms over {clicks} labels "
          "(end to end: websocket, fragment rerun, render)")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--results", type=int, default=100)
    parser.add_argument("--clicks", type=int, default=20)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-app-"))
    workdir.mkdir(parents=True, exist_ok=True)
    _server_like()

    demo = workdir / "demo.sqlite"
    for suffix in ("", "-wal", "-shm"):  # a fresh demo: earlier benchmark labels would pile up
        Path(str(demo) + suffix).unlink(missing_ok=True)
    build_demo(open_store(demo))
    time_clicks(demo, args.clicks, "demo study")

    big = workdir / f"big-{args.queries}x{args.results}.sqlite"
    t0 = time.perf_counter()
    build_big_store(big, args.queries, args.results)
    print(f"generated study {args.queries} queries x {args.results} results x 2 runs "
          f"ready in {time.perf_counter() - t0:.1f} s")
    time_clicks(big, args.clicks, f"{args.queries} x {args.results} study")

    if not args.no_browser and Path("/usr/bin/chromium").exists():
        fresh = workdir / "fresh.sqlite"
        for suffix in ("", "-wal", "-shm"):
            Path(str(fresh) + suffix).unlink(missing_ok=True)
        cold_start(fresh, "fresh store: demo built on first start")
        cold_start(demo, "existing demo store", keyboard_clicks=10)


if __name__ == "__main__":
    main()
