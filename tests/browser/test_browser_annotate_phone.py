"""The annotate page at phone width, 390x844 (issue 11, item 8).

The current item and its grade buttons are on screen without scrolling, the
grade buttons say what each grade means, metric chips wrap instead of being
cut, and the query selector's counts are not cut ("you 0/10", not "you 0/1").
"""

import re
from pathlib import Path

import pytest
from annotate_watch import wait_quiet
from browser_helpers import chromium_page, settle, wait_for_app, wait_for_item_keys

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDTH, HEIGHT = 390, 844
GRADES = ["0 · not relevant", "1 · marginal", "2 · relevant", "3 · highly relevant",
          "4 · perfect"]


@pytest.fixture
def phone_page(tmp_path: Path, chromium_path: str):
    with chromium_page(tmp_path / "profile", chromium_path, viewport={"width": WIDTH,
                       "height": HEIGHT}, is_mobile=True, has_touch=True) as page:
        yield page


def _on_screen(box: dict | None) -> bool:
    return box is not None and box["x"] >= 0 and box["y"] >= 0 and (
        box["x"] + box["width"] <= WIDTH and box["y"] + box["height"] <= HEIGHT)


def test_phone_shows_the_item_and_its_grade_buttons_without_scrolling(
        app_server, phone_page, tmp_path: Path) -> None:
    page = phone_page
    page.goto(app_server.url + "/annotate?study=demo&annotator=phone&query=q13")
    wait_for_app(page, "Metrics for this query")
    page.get_by_role("button", name=re.compile(r"^2 · relevant")).first.wait_for()
    settle(page)
    shot = tmp_path / "annotate-phone.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000

    caption = page.get_by_text(re.compile(r"^item 1 of \d+ · kb-\d+")).first
    assert _on_screen(caption.bounding_box()), caption.bounding_box()
    title = page.locator("h5").first
    assert title.inner_text().strip() and _on_screen(title.bounding_box())
    for name in GRADES:
        button = page.get_by_role("button", name=re.compile("^" + re.escape(name))).first
        assert _on_screen(button.bounding_box()), (name, button.bounding_box())

    pooled = int(re.search(r"you labeled 0 of (\d+)", page.get_by_text(
        re.compile(r"This query: you labeled")).first.inner_text()).group(1))
    selector = page.locator("[data-testid=stSelectbox]").filter(has_text="Query").first
    shown = selector.inner_text() + " " + " ".join(
        selector.locator("input").evaluate_all("els => els.map(e => e.value)"))
    assert f"q13 · you 0/{pooled} · " in shown, shown  # counts before the query text: never cut
    value = selector.locator("input").first
    assert _on_screen(value.bounding_box()), value.bounding_box()

    wait_for_item_keys(page)
    page.keyboard.press("2")  # one label makes the chips "unavailable ... · bounds a–b"
    page.get_by_text(re.compile(r"This query: you labeled 1 of")).first.wait_for()
    wait_quiet(page)
    chips = page.locator(".stMarkdownBadge")
    assert chips.count() >= 4
    cut = page.evaluate("""(width) => [...document.querySelectorAll('.stMarkdownBadge')]
        .filter(e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > width)
        .map(e => e.innerText)""", WIDTH)
    assert cut == [], cut
    bounds = [t for t in chips.all_inner_texts() if "bounds" in t]
    assert bounds and all(re.search(r"bounds \d\.\d{3}–\d\.\d{3}", t) for t in bounds), bounds
