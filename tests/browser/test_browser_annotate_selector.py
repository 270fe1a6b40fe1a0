"""The annotate page's query selector in a real browser: its counts follow each keyboard label.

AppTest reruns the whole script on every click, so only a browser shows what a
fragment-only rerun leaves on screen.
"""

import re

import pytest
from browser_helpers import settle, wait_for_app, wait_for_item_keys

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _selector_text(page) -> str:
    box = page.locator("[data-testid=stSelectbox]").filter(has_text="Query").first
    return box.inner_text() + " " + " ".join(
        box.locator("input").evaluate_all("els => els.map(e => e.value)"))


def test_a_keyboard_label_updates_the_query_selector_count(app_server, browser_page) -> None:
    page = browser_page
    page.goto(app_server.url + "/annotate?query=q06&annotator=selector-tester")
    wait_for_app(page, "Metrics for this query")
    page.get_by_role("button", name=re.compile(r"^2 · relevant")).wait_for()
    assert re.search(r"you 0/\d+", _selector_text(page)), _selector_text(page)
    wait_for_item_keys(page)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.press("2")
    page.get_by_text(re.compile(r"This query: you labeled 1 of \d+")).first.wait_for()
    settle(page)
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid=stSelectbox]')]
             .some(b => /you 1\\/\\d+/.test(b.innerText + ' '
                 + [...b.querySelectorAll('input')].map(e => e.value).join(' ')))""",
        timeout=15_000,
    )
