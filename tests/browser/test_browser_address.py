"""The page address in a real browser: a reload keeps the annotator; links open a query."""

import re

import pytest
from browser_helpers import settle, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GRADE_BUTTON = re.compile(r"^2 · relevant")


def _wait_url(page, pattern: str) -> None:
    page.wait_for_url(re.compile(pattern))


def _open_query(page) -> str:
    """The query id shown in the annotate page's query selector."""
    box = page.locator("[data-testid=stSelectbox]").filter(has_text="Query").first
    shown = box.inner_text() + " " + " ".join(
        box.locator("input").evaluate_all("els => els.map(e => e.value)"))
    found = re.search(r"\b(q\d+) · ", shown)
    return found.group(1) if found else shown


def test_a_reload_keeps_the_annotator_name(app_server, browser_page) -> None:
    page = browser_page
    page.goto(app_server.url + "/annotate")
    wait_for_app(page, "Enter your name")
    box = page.get_by_role("textbox", name="Annotator")
    box.fill("reload-tester")
    box.press("Enter")
    page.get_by_role("button", name=GRADE_BUTTON).wait_for()
    _wait_url(page, r"annotator=reload-tester")
    page.reload()
    page.get_by_role("button", name=GRADE_BUTTON).wait_for()
    settle(page)
    assert page.get_by_role("textbox", name="Annotator").input_value() == "reload-tester"
    # the name also survives moving to another page and back
    page.get_by_role("link", name="Home").click()
    wait_for_app(page, "Label coverage")
    _wait_url(page, r"annotator=reload-tester")


def test_an_address_naming_a_query_opens_it(app_server, browser_page) -> None:
    page = browser_page
    page.goto(app_server.url + "/annotate?query=q05&annotator=link-tester")
    page.get_by_role("button", name=GRADE_BUTTON).wait_for()
    settle(page)
    assert _open_query(page) == "q05"
    page.get_by_text("invoice wrong currency").first.wait_for()


def test_a_dashboard_label_link_opens_that_item_in_a_new_tab(app_server, browser_page) -> None:
    page = browser_page
    page.goto(app_server.url + "/dashboard?annotator=tab-tester")
    wait_for_app(page, "What to label next")
    link = page.get_by_role("link", name=re.compile(r"Label kb-\d+ for q\d+")).first
    link.wait_for()
    # text and address read in one step: the live list may re-render between two reads
    text, href = link.evaluate("e => [e.innerText, e.getAttribute('href')]")
    unit, query = re.search(r"Label (kb-\d+) for (q\d+)", text).groups()
    assert href and f"query={query}" in href and f"unit={unit}" in href
    tab = page.context.new_page()  # a new tab is a new session: the address is all it has
    tab.goto(app_server.url + "/" + href.lstrip("/"))
    tab.get_by_role("button", name=GRADE_BUTTON).wait_for()
    settle(tab)
    assert _open_query(tab) == query
    tab.get_by_text(re.compile(rf"item \d+ of \d+ · {unit}")).first.wait_for()
    assert tab.get_by_role("textbox", name="Annotator").input_value() == "tab-tester"


def test_an_unknown_study_in_the_address_is_named(app_server, browser_page, tmp_path) -> None:
    page = browser_page
    page.goto(app_server.url + "/dashboard?study=nosuch&annotator=study-tester")
    warning = page.locator("[data-testid=stAlertContentWarning]").filter(has_text="nosuch")
    warning.wait_for()
    settle(page)
    assert "not a study you can open" in warning.inner_text()
    page.get_by_text("What to label next").first.wait_for()  # the demo study is shown instead
    _wait_url(page, r"study=demo")
    page.screenshot(path=str(tmp_path / "unknown-study.png"))
