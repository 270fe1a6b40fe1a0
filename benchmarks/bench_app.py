"""The app in a real browser (Playwright + Debian Chromium): every figure of issue 16's app targets.

Two studies are built in a temporary directory (never the user's data dir):
the embedded demo study, and a generated study of ``--queries`` queries x
``--results`` results x 3 runs with ~60% of the queries partly labeled
(``benchmarks/bench_dashboard.py``'s generator: the store's bulk run import and
one bulk insert of label events). For each, one ``streamlit run`` server is
started and timed:

* **cold start** (demo; target < 3 s): from ``streamlit run app/launcher.py`` (the
  README's command) started to the home page rendered in an already open Chromium
  tab (opened before the server starts; the tab navigates as soon as the server
  answers its health check, polled every 50 ms); ``--cold-runs N`` measures N cold
  starts (a fresh server each) and prints their median;
* **first request** (demo; target < 2.5 s): the same start, from the server's health
  check answered to the home page rendered;
* **first render after a sidebar click**, every page in navigation order
  (targets < 1 s demo, < 2 s 10k); the Compare page's figure is its own target
  (< 1 s demo, < 3 s 10k), and on the large study the dashboard's first visit
  is the **dashboard first build** (every run evaluated; target < 2 s); a second
  visit is given beside it;
* **a page opened in a new tab** (a new browser tab on the page's address, the
  server's shared state already built; target < 2 s);
* **mark complete** (demo; target < 300 ms): a fully labeled query, click ->
  "Marked complete" on screen (``bench_annotate_keys.mark_complete``).

"Rendered" means, in the page: the page's own heading is on screen (only the
run the action started can draw it: every page has its own heading, and the
sidebar order never repeats one), Streamlit's script run has ended (the app
root's ``data-test-script-state`` is ``notRunning``: the server has sent every
element of the run) and no status widget ("Running...") is shown. (Counting
the root's transitions to ``running`` instead missed runs now and then on a
loaded machine and left a step waiting forever.)
Times are wall clock in this process, from just before the click (or the
navigation) to the poll that saw all three (polled every 10 ms). Beside each
figure: the CPU seconds the server process spent on it (user + system, from
``/proc``; far less noisy than wall time on a shared machine) and the load
average, since wall times on a loaded machine say more about the load than
about the app. The CPU is the whole process's: work a page left to a background
thread (a large study's label counts, the import of the other pages' modules)
is charged to the steps during which it runs. Before each click the page is left quiet (no script run for
200 ms, not timed); a page that does not render within ``--step-timeout``
seconds is reported as such (with what was on screen) and the run goes on.

Repetitions (``--repeat N``, default 3): a sub-second click is one sample of a noisy
wall clock, so each study is measured N times, each time on a fresh server (a page's
first click is again the server's first render of it) and the page clicks and new tabs
are timed again; each such figure is the median of its N samples. The cold start, the
first request and mark complete are single samples (the first two are a fresh server's
first moments, taken on the first repetition; mark complete labels and marks a query,
so it is taken once, on the last repetition, after every page has been timed on the
unchanged study) and are said to be single in the output.

On both engines (``--engines sqlite,postgres``; both by default when a PostgreSQL
server is named by ``--postgres-url`` or ``RELEVANCE_LEDGER_BENCH_POSTGRES_URL`` and
answers) each study is built on each engine, a PostgreSQL store in a fresh database of
that server (dropped after; the app is given its URL as ``RELEVANCE_LEDGER_DB``), and
the engines' repetitions are interleaved (repetition 1 on SQLite then PostgreSQL,
repetition 2 on PostgreSQL then SQLite, and so on), so that a swing of the machine's
load falls on both engines alike. Every figure is printed side by side at the end: each
engine's median, with the minimum and maximum and every sample, the ratio of the
medians beside the target (PostgreSQL within 1.5x of SQLite) with the ratio of the
medians of the server's CPU seconds, and the load averages seen while that figure's
samples were taken.

Usage: python benchmarks/bench_app.py [--queries 10000] [--results 100] [--workdir DIR]
       [--skip-big] [--repeat 3] [--cold-runs 1] [--step-timeout 120]
       [--engines sqlite,postgres] [--postgres-url URL] [--postgres-prefix bench]
"""

import argparse
import contextlib
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tests" / "browser"))

import postgres_scratch  # noqa: E402
from bench_annotate_keys import mark_complete  # noqa: E402
from bench_dashboard import STUDY as BIG_STUDY  # noqa: E402
from bench_dashboard import build_store  # noqa: E402
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, start_app, stop_app_process  # noqa: E402

from evalcore.demo.study import build_demo  # noqa: E402
from evalcore.store.connection import open_store  # noqa: E402

#: Sidebar title -> address path and the heading that marks the page as drawn.
PAGES = [
    ("Home", "", "Label coverage"),
    ("Annotate", "annotate", "Annotate"),
    ("Data", "data", "Data"),
    ("Inspector", "inspector", "Ranking inspector"),
    ("Dashboard", "dashboard", "Live dashboard"),
    ("Compare runs", "compare", "Compare runs"),
    ("Annotator agreement", "agreement", "Annotator agreement"),
    ("Reports", "reports", "Reports"),
    ("Members", "members", "Members"),
]
TIMEOUT_MS = 600_000
#: A sidebar click or page address that has not rendered after this long is reported, not awaited.
STEP_TIMEOUT_S = 120

#: Counts the script runs the page has started (transitions of the app root's
#: data-test-script-state to "running"), whatever the observer batching.
_WATCH = r"""
() => {
  if (window.__rlRuns !== undefined) { return; }
  window.__rlRuns = 0;
  const attach = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) { setTimeout(attach, 5); return; }
    if (app.getAttribute('data-test-script-state') === 'running') { window.__rlRuns += 1; }
    new MutationObserver((records) => {
      const states = records.filter((r) => r.attributeName === 'data-test-script-state');
      states.forEach((r, i) => {
        const to = i + 1 < states.length ? states[i + 1].oldValue
          : r.target.getAttribute('data-test-script-state');
        if (to === 'running' && r.oldValue !== 'running') { window.__rlRuns += 1; }
      });
    }).observe(app, {attributes: true, attributeOldValue: true});
  };
  attach();
}
"""

_RENDERED = r"""
([runsBefore, heading]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) { return false; }
  if (app.getAttribute('data-test-script-state') !== 'notRunning') { return false; }
  if (document.querySelector('[data-testid="stStatusWidget"]')) { return false; }
  for (const h of document.querySelectorAll('h1, h2, h3')) {
    if (h.innerText.trim().startsWith(heading)) { return true; }
  }
  return false;
}
"""

_EXCEPTION = r"""
() => { const e = document.querySelector('[data-testid="stException"]');
        return e ? e.innerText.trim() : ''; }
"""

_STATE = r"""
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return {script: app && app.getAttribute('data-test-script-state'), runs: window.__rlRuns,
          status: !!document.querySelector('[data-testid="stStatusWidget"]'),
          headings: Array.from(document.querySelectorAll('h1, h2, h3')).map((h) => h.innerText.trim().slice(0, 40)),
          address: location.pathname + location.search};
}
"""


class NotRendered(RuntimeError):
    """The page did not render within the step timeout (or rendered an exception)."""


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system) the process ``pid`` has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load() -> str:
    """The 1-minute load average, for the line of a figure."""
    return f"load {os.getloadavg()[0]:.1f}"


#: One study's figures on one engine: figure name -> its samples (seconds, one per
#: repetition; NaN: not rendered), with ``<name> cpu`` (the server's CPU seconds) and
#: ``<name> load`` (the 1-minute load average after the sample) beside each.
Figures = dict[str, list[float]]


def _add(figures: Figures, name: str, seconds: float, cpu: float | None = None) -> None:
    figures.setdefault(name, []).append(seconds)
    if cpu is not None:
        figures.setdefault(f"{name} cpu", []).append(cpu)
    figures.setdefault(f"{name} load", []).append(os.getloadavg()[0])


def _runs(page) -> int:
    page.evaluate(_WATCH)
    return int(page.evaluate("() => window.__rlRuns"))


def _wait_rendered(page, runs_before: int, heading: str) -> None:
    try:
        page.wait_for_function(_RENDERED, arg=[runs_before, heading], polling=10,
                               timeout=STEP_TIMEOUT_S * 1000)
    except Exception as error:  # playwright's TimeoutError: say what the page showed instead
        if "Timeout" not in type(error).__name__:
            raise
        raise NotRendered(f"not rendered after {STEP_TIMEOUT_S} s; the page showed "
                          f"{page.evaluate(_STATE)}") from None
    failure = page.evaluate(_EXCEPTION)
    if failure:  # the heading is drawn before a page fails: a failed page is no figure
        raise NotRendered(f"the page failed: {failure[:200]!r}")


def _quiet(page, quiet_ms: int = 200) -> None:
    """Wait (untimed) until no script run has started or is running for ``quiet_ms``."""
    deadline = time.monotonic() + 30
    runs, since = _runs(page), time.monotonic()
    while time.monotonic() < deadline:
        state = page.evaluate(_STATE)
        if state["script"] == "running" or state["status"] or state["runs"] != runs:
            runs, since = state["runs"], time.monotonic()
        elif time.monotonic() - since >= quiet_ms / 1000:
            return
        page.wait_for_timeout(20)


def open_page(page, url: str, heading: str) -> float:
    """Seconds from navigating to ``url`` (a new document) to the page rendered."""
    started = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.evaluate(_WATCH)  # a new document: the counter starts at 0
    _wait_rendered(page, 0, heading)
    return time.perf_counter() - started


def click_page(page, title: str, heading: str) -> float:
    """Seconds from a click on the sidebar entry ``title`` to the page rendered."""
    link = page.locator("[data-testid=stSidebarNav] a", has_text=title).first
    link.wait_for()
    _quiet(page)
    before = _runs(page)
    started = time.perf_counter()
    link.click()
    _wait_rendered(page, before, heading)
    return time.perf_counter() - started


#: A new server's first request, from healthy to the home page drawn.
FIRST_REQUEST_TARGET_S = 2.5


def _verdict(seconds: float, target: float) -> str:
    return f"{seconds:7.2f} s  target < {target:g} s  {'met' if seconds < target else 'NOT MET'}"


class Timed:
    """One measured step: wall seconds (``step`` returns them), the server's CPU seconds
    during it and the load average after it, printed beside its target and added to the
    figure's samples."""

    def __init__(self, pid: int, figures: Figures) -> None:
        self.pid, self.figures = pid, figures

    def step(self, name: str, label: str, target: float, action) -> float | None:
        cpu = server_cpu(self.pid)
        try:
            seconds = action()
        except NotRendered as error:
            print(f"  {label:26s} NOT RENDERED  target < {target:g} s  NOT MET ({error}; {load()})")
            _add(self.figures, name, float("nan"))
            return None
        used = server_cpu(self.pid) - cpu
        _add(self.figures, name, seconds, used)
        print(f"  {label:26s} {_verdict(seconds, target)}  (server CPU {used:5.2f} s; {load()})")
        return seconds


def measure_study(browser, db_path: Path | str, study: str, label: str, figures: Figures, *,
                  page_target: float, compare_target: float, workdir: Path, cold_start: bool,
                  dashboard_build: bool, first: bool, last: bool) -> None:
    """Start a fresh server on ``db_path``, print every figure of ``study`` and add its
    samples to ``figures``: the first request (and the cold start) only when ``first``,
    mark complete (demo) only when ``last``."""
    print(f"\n== {label} ({load()}) ==")
    # The user's browser is open before the server starts (opening a tab is not the app's time).
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    started = time.perf_counter()
    server = start_app(db_path, workdir / f"streamlit-{study}.log")
    params = f"?study={study}&annotator=bench-app"
    timed = Timed(server.process.pid, figures)
    try:
        cpu = server_cpu(server.process.pid)
        home = open_page(page, server.url + "/" + params, "Label coverage")
        if not first:
            print(f"home, the server's first request: {home:.2f} s (not a figure: the first "
                  f"request is taken on the first repetition only; {load()})")
        elif cold_start:
            _add(figures, "cold", time.perf_counter() - started)
            _add(figures, "first request", home)
            print(f"cold start, `streamlit run app/launcher.py` -> home rendered: "
                  f"{_verdict(figures['cold'][0], 3)} "
                  f"(server healthy after {server.startup_seconds:.2f} s, home {home:.2f} s, "
                  f"server CPU {server_cpu(server.process.pid):.2f} s of which after healthy "
                  f"(the launcher's preload and the first render) "
                  f"{server_cpu(server.process.pid) - cpu:.2f} s; {load()})")
            print(f"the first request to the fresh server (healthy -> home rendered): "
                  f"{_verdict(home, FIRST_REQUEST_TARGET_S)} (both single samples)")
        else:
            _add(figures, "first request", home)
            print(f"home, the server's first request: {_verdict(home, page_target)} (server CPU "
                  f"{server_cpu(server.process.pid) - cpu:.2f} s; {load()})")
        print(f"first sidebar click on each page (the server's first render of it; target < "
              f"{page_target:g} s, Compare < {compare_target:g} s):")
        for title, _, heading in [*PAGES[1:], PAGES[0]]:
            def click(title=title, heading=heading) -> float:
                return click_page(page, title, heading)

            if title == "Dashboard" and dashboard_build:
                timed.step(f"click {title}", "Dashboard (first build)", 2, click)
                timed.step("click Home before Dashboard again", "Home", page_target,
                           lambda: click_page(page, "Home", "Label coverage"))
                timed.step("click Dashboard again", "Dashboard (state built)", page_target, click)
            else:
                timed.step(f"click {title}", title,
                           compare_target if title == "Compare runs" else page_target, click)
        print("a page opened in a new tab (shared state built; target < 2 s):")
        for title, path, heading in PAGES:
            tab = context.new_page()
            tab.set_default_timeout(TIMEOUT_MS)
            timed.step(f"tab {title}", title, 2,
                       lambda tab=tab, path=path, heading=heading: open_page(
                           tab, f"{server.url}/{path}{params}", heading))
            tab.close()
        if study == "demo" and last:
            cpu = server_cpu(server.process.pid)
            try:
                elapsed = mark_complete(page, server.url, db_path) / 1000
            except Exception as error:  # playwright's TimeoutError: the Annotate page failed
                print(f"mark complete: NOT MEASURED ({type(error).__name__}: "
                      f"{str(error).splitlines()[0]}; {load()})")
                return
            _add(figures, "mark complete", elapsed)
            print(f"mark complete (single sample), click -> 'Marked complete' on screen: "
                  f"{elapsed * 1000:7.0f} ms  target < 300 ms  "
                  f"{'met' if elapsed < 0.3 else 'NOT MET'} (server CPU while labeling the "
                  f"query and marking it {server_cpu(server.process.pid) - cpu:.2f} s; {load()})")
    finally:
        context.close()
        stop_app_process(server.process)


def cold_starts(browser, db_path: Path | str, workdir: Path, runs: int) -> list[float]:
    """``runs`` more cold starts on the demo study (a fresh server each): wall seconds, printed
    with the server's CPU seconds and its healthy time; the median of all is printed after."""
    walls = []
    for run in range(runs):
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        started = time.perf_counter()
        server = start_app(db_path, workdir / f"streamlit-cold-{run}.log")
        try:
            open_page(page, server.url + "/?study=demo&annotator=bench-app", "Label coverage")
            walls.append(time.perf_counter() - started)
            print(f"  cold start {run + 2}: {_verdict(walls[-1], 3)} (server healthy after "
                  f"{server.startup_seconds:.2f} s, server CPU "
                  f"{server_cpu(server.process.pid):.2f} s; {load()})")
        finally:
            context.close()
            stop_app_process(server.process)
    return walls


#: The engines' target: every page on PostgreSQL within this factor of its SQLite time.
ENGINE_RATIO_TARGET = 1.5


def engines(asked: str | None, url: str | None) -> list[str]:
    """The engines to measure (see the module docstring); exits naming what is wrong."""
    names = asked.split(",") if asked else None
    unknown = set(names or ()) - {"sqlite", "postgres"}
    if unknown:
        sys.exit(f"--engines: unknown {', '.join(sorted(unknown))} (sqlite, postgres)")
    why = (f"no server named (--postgres-url or {postgres_scratch.URL_ENV})" if not url
           else postgres_scratch.reachable(url))
    if names is None:
        if why:
            print(f"PostgreSQL not measured: {why}")
        return ["sqlite"] + ([] if why else ["postgres"])
    if "postgres" in names and why:
        sys.exit(f"--engines postgres: the server cannot be used: {why}")
    return names


#: Figures taken once per study and engine, whatever ``--repeat`` (see the module docstring).
SINGLE = ("cold", "cold (median)", "first request", "mark complete")


def _spread(samples: list[float]) -> str:
    """``median (min-max) n=N``, or what did not render."""
    seen = [x for x in samples if not math.isnan(x)]
    if not seen:
        return "not rendered"
    missed = len(samples) - len(seen)
    said = f"{statistics.median(seen):.2f}s ({min(seen):.2f}-{max(seen):.2f}) n={len(seen)}"
    return said + (f" +{missed} not rendered" if missed else "")


def side_by_side(label: str, figures: dict[str, Figures]) -> None:
    """Every figure of one study on each engine: its median with the minimum, maximum and
    samples, the ratio of the medians (PostgreSQL / SQLite) beside the 1.5x target, and
    the load averages seen while its samples were taken."""
    names = list(dict.fromkeys(name for engine in figures.values() for name in engine
                               if not name.endswith((" cpu", " load"))))
    sqlite, postgres = figures.get("sqlite", {}), figures.get("postgres", {})
    print(f"\n== {label}: medians of the repetitions (PostgreSQL vs SQLite, target: within "
          f"{ENGINE_RATIO_TARGET:g}x; ratio of the medians) ==")
    print(f"  {'figure':34s} {'SQLite median (min-max)':>30s} {'PostgreSQL median (min-max)':>30s}"
          f" {'ratio':>7s}")
    for name in names:
        single = "  (single sample)" if name in SINGLE else ""
        a, b = sqlite.get(name, []), postgres.get(name, [])
        line = f"  {name:34s} {_spread(a) if a else '-':>30s} {_spread(b) if b else '-':>30s}"
        seen_a = [x for x in a if not math.isnan(x)]
        seen_b = [x for x in b if not math.isnan(x)]
        if seen_a and seen_b and len(seen_a) == len(a) and len(seen_b) == len(b):
            ratio = statistics.median(seen_b) / statistics.median(seen_a)
            line += (f" {ratio:6.2f}x  "
                     f"{'met' if ratio <= ENGINE_RATIO_TARGET else 'NOT MET'}")
            cpu_a, cpu_b = sqlite.get(f"{name} cpu"), postgres.get(f"{name} cpu")
            if cpu_a and cpu_b and statistics.median(cpu_a) > 0:
                line += (f"  (server CPU, ratio of the medians: "
                         f"{statistics.median(cpu_b) / statistics.median(cpu_a):.2f}x)")
        elif a and b:
            line += "          (not rendered)"
        print(line + single)
        for engine, shown, samples in (("sqlite", "SQLite", a), ("postgres", "PostgreSQL", b)):
            if not samples:
                continue
            cpu = figures.get(engine, {}).get(f"{name} cpu", [])
            loads = figures.get(engine, {}).get(f"{name} load", [])
            print(f"      {shown:10s} samples {' '.join(f'{x:.2f}' for x in samples)}"
                  + (f"; server CPU {' '.join(f'{x:.2f}' for x in cpu)}" if cpu else "")
                  + (f"; load {' '.join(f'{x:.1f}' for x in loads)}" if loads else ""))


def build_stores(engine: str, workdir: Path, args, url: str | None,
                 scratch: contextlib.ExitStack) -> tuple[Path | str, Path | str]:
    """The demo store and (unless ``--skip-big``) the generated study's store on ``engine``:
    SQLite files in ``workdir`` (the generated one kept between runs), PostgreSQL databases
    created on the server (dropped when ``scratch`` closes)."""
    if engine == "sqlite":
        demo: Path | str = workdir / "demo.sqlite"
        for suffix in ("", "-wal", "-shm"):  # a fresh demo: earlier benchmark labels pile up
            Path(str(demo) + suffix).unlink(missing_ok=True)
        big: Path | str = workdir / f"big-{args.queries}x{args.results}x3.sqlite"
        fresh_big = not Path(big).exists()
    else:
        demo = scratch.enter_context(postgres_scratch.scratch_database(
            url, args.postgres_prefix))
        big = "" if args.skip_big else scratch.enter_context(
            postgres_scratch.scratch_database(url, args.postgres_prefix))
        fresh_big = True
    started = time.perf_counter()
    build_demo(open_store(demo))
    print(f"{engine}: demo study built in {time.perf_counter() - started:.1f} s")
    if not args.skip_big and fresh_big:
        started = time.perf_counter()
        build_store(big, args.queries, args.results, 3)
        print(f"{engine}: generated study {args.queries:,} queries x {args.results} results "
              f"x 3 runs built in {time.perf_counter() - started:.1f} s")
    return demo, big


def _interleaved(measured: list[str], run: int) -> list[str]:
    """The engines in the order of repetition ``run``: as given, reversed on every other
    repetition, so neither engine always goes first."""
    return list(measured) if run % 2 == 0 else list(reversed(measured))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--results", type=int, default=100)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--skip-big", action="store_true", help="the demo study only")
    parser.add_argument("--repeat", type=int, default=3,
                        help="repetitions of each study's page clicks and new tabs (a fresh "
                             "server each; each figure is their median)")
    parser.add_argument("--cold-runs", type=int, default=1,
                        help="cold starts to measure on the demo study (the first with its pages)")
    parser.add_argument("--step-timeout", type=float, default=STEP_TIMEOUT_S,
                        help="seconds after which a page that has not rendered is reported")
    postgres_scratch.add_engine_options(parser)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat: at least 1")
    globals()["STEP_TIMEOUT_S"] = args.step_timeout
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-app-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"work dir {workdir}")

    url = postgres_scratch.server_url(args.postgres_url)
    measured = engines(args.engines, url)
    with contextlib.ExitStack() as scratch:
        stores: dict[str, tuple[Path | str, Path | str]] = {}  # engine: demo, big
        for engine in measured:
            stores[engine] = build_stores(engine, workdir, args, url, scratch)

        from playwright.sync_api import sync_playwright

        demo_figures: dict[str, Figures] = {engine: {} for engine in measured}
        big_figures: dict[str, Figures] = {engine: {} for engine in measured}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                 args=CHROMIUM_ARGS)
            try:
                for run in range(args.repeat):
                    for engine in _interleaved(measured, run):
                        demo, figures = stores[engine][0], demo_figures[engine]
                        measure_study(
                            browser, demo, "demo",
                            f"demo study on {engine}, repetition {run + 1} of {args.repeat}",
                            figures, page_target=1, compare_target=1, workdir=workdir,
                            cold_start=True, dashboard_build=False, first=run == 0,
                            last=run == args.repeat - 1)
                        if run == 0 and args.cold_runs > 1 and "cold" in figures:
                            print(f"more cold starts ({args.cold_runs - 1}):")
                            walls = [figures["cold"][0],
                                     *cold_starts(browser, demo, workdir, args.cold_runs - 1)]
                            _add(figures, "cold (median)", statistics.median(walls))
                            print(f"cold start, median of {len(walls)}: "
                                  f"{_verdict(statistics.median(walls), 3)}")
                if not args.skip_big:
                    for run in range(args.repeat):
                        for engine in _interleaved(measured, run):
                            measure_study(
                                browser, stores[engine][1], BIG_STUDY,
                                f"{args.queries:,} queries x {args.results} results x 3 runs on "
                                f"{engine}, repetition {run + 1} of {args.repeat}",
                                big_figures[engine], page_target=2, compare_target=3,
                                workdir=workdir, cold_start=False, dashboard_build=True,
                                first=run == 0, last=run == args.repeat - 1)
            finally:
                browser.close()
        side_by_side("demo study", demo_figures)
        if not args.skip_big:
            side_by_side(f"{args.queries:,}-query study", big_figures)
    print(f"\nload average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
