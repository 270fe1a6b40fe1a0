"""The pages as people use them in Chromium, at 1400x900 and at phone width (390x844).

* Addresses: the Inspector's query (and runs) are in the address, restored from it and kept
  by a reload; the Agreement page's conflict filter and page, Home's query filter too; one
  history entry per page change (Back needs one press); an unknown page says so.
* Annotate: the name prompt is on the page at phone width; a note over the limit is refused
  with its label, visibly, and nothing is saved. Home leads with "Start labeling".
* Layout: long lists are paged or filtered (Agreement with many conflicts), charts keep their
  titles inside the figure at 390 px and the dashboard's "unavailable" title clear of the
  plot above it; every page is screenshot at both widths (and looked at).
"""

import re
from pathlib import Path

import pytest
from annotate_watch import events
from browser_helpers import chromium_page, settle, wait_for_app
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from evalcore.annotation.pool import query_pool
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.study_handle import open_study

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1400, "height": 900}
GRADE_BUTTON = re.compile(r"^2 · relevant")


@pytest.fixture
def phone_page(tmp_path: Path, chromium_path: str):
    with chromium_page(tmp_path / "phone", chromium_path, viewport=PHONE, is_mobile=True,
                       has_touch=True) as page:
        yield page


def _selected(page, label: str) -> str:
    """The text a selectbox labeled ``label`` shows."""
    box = page.locator("[data-testid=stSelectbox]").filter(has_text=label).first
    return box.inner_text() + " " + " ".join(
        box.locator("input").evaluate_all("els => els.map(e => e.value)"))


def _choose(page, label: str, option: re.Pattern) -> None:
    """Pick ``option`` in the selectbox ``label`` (again if a rerun closed the list)."""
    settle(page)
    for attempt in range(3):
        page.locator("[data-testid=stSelectbox]").filter(has_text=label).first.click()
        wanted = page.get_by_role("option", name=option).first
        try:
            wanted.wait_for(timeout=5_000)
        except PlaywrightTimeout:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
            settle(page)
            continue
        wanted.click()
        break
    settle(page)


def _in_view(page, locator) -> bool:
    box = locator.bounding_box()
    size = page.viewport_size
    return box is not None and 0 <= box["y"] and box["y"] + box["height"] <= size["height"] \
        and 0 <= box["x"] and box["x"] + box["width"] <= size["width"]


def test_the_inspector_address_names_the_query_and_a_reload_keeps_it(app_server,
                                                                    browser_page) -> None:
    page = browser_page
    page.goto(app_server.url + "/inspector?annotator=insp&query=q05")
    wait_for_app(page, "Ranking inspector")
    page.get_by_text("invoice wrong currency").first.wait_for()
    assert "q05 ·" in _selected(page, "Query")
    _choose(page, "Query", re.compile(r"^q07 · "))
    page.wait_for_url(re.compile(r"query=q07"))
    _choose(page, "Side by side with", re.compile(r"^bm25-title-boost$"))
    page.wait_for_url(re.compile(r"vs=bm25-title-boost"))
    page.reload()
    wait_for_app(page, "Ranking inspector")
    assert "q07 ·" in _selected(page, "Query")
    assert "bm25-title-boost" in _selected(page, "Side by side with")
    page.goto(app_server.url + "/inspector?annotator=insp&query=q99")
    warning = page.locator("[data-testid=stAlertContentWarning]").filter(has_text="q99")
    warning.wait_for()
    assert "does not have" in warning.inner_text()


def test_one_history_entry_per_page_change_and_back_needs_one_press(app_server,
                                                                   browser_page) -> None:
    page = browser_page
    page.goto(app_server.url + "/?annotator=history")
    wait_for_app(page, "Label coverage")
    page.wait_for_url(re.compile(r"study=demo"))
    # the first page's run installs the history policy (a script the browser runs once the
    # page is drawn); count from there
    page.wait_for_function("window.__rlHistoryPolicy === true", timeout=15_000)
    start = page.evaluate("history.length")
    visits = [("Inspector", "/inspector", "Ranking inspector"),
              ("Dashboard", "/dashboard", "Live dashboard"),
              ("Annotator agreement", "/agreement", "Annotator agreement"),
              ("Home", "/", "Label coverage")]
    for n, (link, path, text) in enumerate(visits, start=1):
        page.locator("[data-testid=stSidebarNav] a").filter(has_text=link).first.click()
        page.wait_for_url(re.compile(re.escape(app_server.url + path) + r"(\?|$)"))
        wait_for_app(page, text)
        # the page writes its parameters into the address (later on a loaded machine):
        # wait for the entry, then give any extra entry time to appear before counting
        page.wait_for_function(f"history.length >= {start + n}", timeout=15_000)
        page.wait_for_timeout(1_500)
        assert page.evaluate("history.length") == start + n, (link, page.url)
        # the annotator is written back with the page's own parameters (later under load)
        page.wait_for_url(re.compile(r"annotator=history"), timeout=15_000)
        assert page.evaluate("history.length") == start + n, (link, page.url)
    page.go_back()
    page.wait_for_url(re.compile(r"/agreement\?"))
    wait_for_app(page, "Annotator agreement")


def test_an_unknown_page_says_so(app_server, browser_page) -> None:
    page = browser_page
    page.goto(app_server.url + "/nope?annotator=lost")
    error = page.locator("[data-testid=stAlertContentError]").filter(has_text="/nope")
    error.wait_for()
    assert "There is no page /nope" in error.inner_text()
    if page.get_by_role("dialog").count():  # Streamlit's own "Page not found" notice
        page.keyboard.press("Escape")
        page.get_by_role("dialog").wait_for(state="detached")
    page.get_by_role("link", name="Inspector").click()
    wait_for_app(page, "Ranking inspector")
    assert not page.get_by_text("There is no page").count()


def _make_conflicts(db_path: Path, per_query: int = 2) -> int:
    """Two annotators disagree on ``per_query`` pooled units of every demo query."""
    db = open_store(db_path)
    made = 0
    for n in range(1, 26):
        query_id = f"q{n:02d}"
        for item in query_pool(open_study(db, "demo", None), query_id)[-per_query:]:
            for annotator, gain in (("pager-a", 0), ("pager-b", 4)):
                record_label(db, study_id="demo", query_id=query_id, unit_id=item.unit_id,
                             gain=gain, annotator=annotator)
            made += 1
    return made


def test_many_conflicts_are_paged_and_filtered_in_the_address(app_server,
                                                              browser_page) -> None:
    page = browser_page
    page.goto(app_server.url + "/agreement?annotator=pager")  # the first visit seeds the demo
    wait_for_app(page, "Conflicts to adjudicate")
    assert _make_conflicts(app_server.db_path) >= 40
    page.reload()
    wait_for_app(page, "Conflicts to adjudicate")
    page.wait_for_function(  # the cards are drawn one after another
        "() => [...document.querySelectorAll('button')]"
        ".filter(b => b.innerText.trim() === 'Adjudicate').length >= 10", timeout=60_000)
    settle(page)
    assert page.get_by_role("button", name="Adjudicate").count() == 10
    pages = _selected(page, "Page")
    total = int(re.search(r"1 of (\d+)", pages).group(1))
    assert total >= 5, pages
    _choose(page, "Page", re.compile(r"^2 of "))
    page.wait_for_url(re.compile(r"page=2"))
    page.reload()
    wait_for_app(page, "Conflicts to adjudicate")
    assert "Page 2 of" in _selected(page, "Page"), _selected(page, "Page")
    _choose(page, "Conflicts of", re.compile(r"^query q05 "))
    page.wait_for_url(re.compile(r"conflicts_of=q05"))
    assert 1 <= page.get_by_role("button", name="Adjudicate").count() <= 3
    height = page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")
    assert height < 6000, height


def test_home_filters_its_queries_in_the_address(app_server, browser_page) -> None:
    page = browser_page
    page.goto(app_server.url + "/?annotator=filter")
    wait_for_app(page, "Label coverage")
    box = page.get_by_role("textbox", name="Filter queries")
    box.fill("invoice")
    box.press("Enter")
    page.wait_for_url(re.compile(r"filter=invoice"))
    caption = page.get_by_text(re.compile(r"^\d+ of 25 queries match the filter"))
    caption.wait_for()
    matched = int(caption.inner_text().split()[0])
    assert 1 <= matched < 25
    page.reload()
    wait_for_app(page, "Label coverage")
    page.wait_for_function(
        "() => [...document.querySelectorAll('input')].some(i => i.value === 'invoice')")
    page.get_by_text(f"{matched} of 25 queries match the filter").wait_for()


def test_at_phone_width_the_name_prompt_and_start_labeling_are_on_screen(
        app_server, phone_page) -> None:
    page = phone_page
    page.goto(app_server.url + "/")
    wait_for_app(page, "Label coverage")
    start = page.get_by_role("button", name="Start labeling")
    assert _in_view(page, start), start.bounding_box()
    start.click()
    wait_for_app(page, "Enter your name as annotator")
    prompt = page.get_by_role("textbox", name="Your name (every label")
    assert _in_view(page, prompt), prompt.bounding_box()
    prompt.fill("phone-name")
    prompt.press("Enter")
    page.get_by_role("button", name=GRADE_BUTTON).first.wait_for()
    page.wait_for_url(re.compile(r"annotator=phone-name"))


def test_a_note_over_the_limit_is_refused_with_its_label(app_server, browser_page) -> None:
    page = browser_page
    page.goto(app_server.url + "/annotate?annotator=long-note&query=q03")
    wait_for_app(page, "Metrics for this query")
    line = page.locator("[data-rl-item-line]")
    line.wait_for()
    unit = re.search(r"· (\S+)", line.inner_text()).group(1)
    note = page.get_by_role("textbox", name=re.compile(r"^Note"))
    note.fill("x" * 2_500)
    note.press("Escape")  # leaves the field (the value is committed), keys work again
    page.get_by_text("This note has 2,500 characters").wait_for()
    page.keyboard.press("2")
    said = page.locator("[data-testid=stAlertContentWarning]").filter(has_text="Key 2 not saved")
    said.wait_for()
    assert unit in said.inner_text() and "2,500" in said.inner_text()
    settle(page)
    assert events(app_server.db_path, "long-note") == []
    assert unit in line.inner_text()  # the item stays on screen
    assert note.input_value() == "x" * 2_500  # nothing the annotator typed is dropped


_CHART_GEOMETRY = """(chart) => {
  const svg = chart.querySelector('svg.main-svg');
  const box = svg.getBoundingClientRect();
  const texts = [...chart.querySelectorAll('.gtitle, .annotation-text, .g-xtitle, .g-ytitle')]
    .map(e => ({text: e.textContent, r: e.getBoundingClientRect()}))
    .filter(t => t.text);
  const plots = [...chart.querySelectorAll('.bglayer rect')].map(e => e.getBoundingClientRect());
  return {left: box.left, right: box.right,
          texts: texts.map(t => ({text: t.text, left: t.r.left, right: t.r.right,
                                  top: t.r.top, bottom: t.r.bottom})),
          plots: plots.map(r => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom}))};
}"""


def _overlaps(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] \
        and b["top"] < a["bottom"]


def test_dashboard_chart_titles_fit_at_phone_width(app_server, phone_page) -> None:
    page = phone_page
    page.goto(app_server.url + "/dashboard?annotator=charts")
    wait_for_app(page, "Live dashboard")
    chart = page.locator("[data-testid=stPlotlyChart]").first
    chart.wait_for()
    chart.scroll_into_view_if_needed()
    page.locator("[data-testid=stPlotlyChart] .annotation-text").first.wait_for()
    geometry = chart.evaluate(_CHART_GEOMETRY)
    assert geometry["texts"], geometry
    for text in geometry["texts"]:
        assert geometry["left"] - 1 <= text["left"] and text["right"] <= geometry["right"] + 1, (
            "clipped", text, geometry["left"], geometry["right"])
    unavailable = [t for t in geometry["texts"] if t["text"].startswith("unavailable")]
    assert unavailable, geometry["texts"]
    for plot in geometry["plots"]:
        if plot["bottom"] <= unavailable[0]["top"] + 1 or plot["top"] >= unavailable[0]["bottom"] - 1:
            continue
        assert not _overlaps(unavailable[0], plot), (unavailable[0], plot)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1400x900", "390x844"])
def test_screenshots_of_the_pages(app_server, tmp_path: Path, chromium_path: str,
                                  viewport: dict) -> None:
    pages = {
        "annotate": ("/annotate?annotator=shots&query=q05", "Metrics for this query"),
        "home": ("/?annotator=shots", "Label coverage"),
        "inspector": ("/inspector?annotator=shots&query=q05&vs=bm25-title-boost",
                      "Ranking inspector"),
        "agreement": ("/agreement?annotator=shots", "Annotator agreement"),
        "dashboard": ("/dashboard?annotator=shots", "Live dashboard"),
    }
    phone = viewport is PHONE
    with chromium_page(tmp_path / "profile", chromium_path, viewport=viewport,
                       is_mobile=phone, has_touch=phone) as page:
        for name, (path, text) in pages.items():
            page.goto(app_server.url + path)
            wait_for_app(page, text)
            shot = tmp_path / f"{name}-{viewport['width']}.png"
            page.screenshot(path=str(shot))
            assert shot.stat().st_size > 10_000, name
            overflow = page.evaluate(
                "() => document.querySelector('[data-testid=stMain]').scrollWidth"
                " - window.innerWidth")
            assert overflow <= 1, (name, overflow)  # nothing wider than the window

