"""Adjudication in a real browser: a conflict's own address, its context, no preselected gain;
and at phone width (390 px) the agreement page and the inspector cut no chip."""

import re
from pathlib import Path

import pytest
from browser_helpers import settle, wait_for_app

from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.resolution import resolve_unit_in_store
from evalcore.store.study_handle import open_study

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTE = "Talks about **SSO** setup, not the <b>login loop</b>"
PHONE = {"width": 390, "height": 844}


def _card(page):
    """The bordered block of the conflict the address names (the innermost block holding it)."""
    return page.locator("[data-testid=stVerticalBlock]").filter(
        has=page.get_by_role("heading", name="The conflict this address names")).last


def _conflict(app_server, page) -> None:
    """bob says 0 on q02's kb-0019, which alice labeled relevant: a conflict with a note."""
    page.goto(app_server.url + "/?study=demo")  # the first session seeds the demo study
    wait_for_app(page, "Label coverage")
    db = open_store(app_server.db_path)
    if resolve_unit_in_store(open_study(db, "demo", None), "q02", "kb-0019").state != "conflict":
        record_label(db, study_id="demo", query_id="q02", unit_id="kb-0019", gain=0,
                     annotator="bob", note=NOTE)


def test_a_conflicts_address_opens_it_with_its_context(app_server, browser_page,
                                                       tmp_path: Path) -> None:
    page = browser_page
    _conflict(app_server, page)
    page.goto(app_server.url + "/agreement?study=demo&annotator=rev")
    wait_for_app(page, "Conflicts to adjudicate")
    # the list links each conflict to its own address; following one opens it first
    # (the list draws link by link: wait for this conflict's own link, not the first one)
    ours = page.locator("[data-testid=stPageLink] a[href*='query=q02'][href*='unit=kb-0019']"
                        ).filter(has_text="Address of this conflict")
    ours.first.wait_for()
    settle(page)
    assert ours.count() == 1
    ours.click()
    wait_for_app(page, "The conflict this address names")
    page.wait_for_function("() => /query=q02.*unit=kb-0019/.test(location.search)")
    card = _card(page)
    text = card.inner_text()
    assert "account locked after failed logins" in text  # the query
    assert "Best practices for the session timeout" in text  # the document's title
    assert "alice said 2 (relevant)" in text and "bob said 0 (not relevant)" in text
    assert NOTE in text  # the note, as typed: no bold, no HTML
    assert card.locator("b").count() == 0 and card.locator("strong", has_text="SSO").count() == 0
    gain = card.get_by_role("combobox", name="Gain")
    assert gain.input_value() == ""  # nothing preselected: the reviewer chooses
    assert gain.get_attribute("placeholder") == "choose a gain"
    _screenshot(card, tmp_path / "adjudication.png")

    gain.click()
    page.get_by_role("option", name=re.compile(r"^1 · marginal")).click()
    settle(page)
    card.get_by_role("button", name="Adjudicate").click()
    page.get_by_text("is not in conflict: adjudicated by rev: gain 1").first.wait_for()
    settle(page)
    db = open_store(app_server.db_path)
    resolved = resolve_unit_in_store(open_study(db, "demo", None), "q02", "kb-0019")
    assert (resolved.state, resolved.gain, resolved.reviewer) == ("adjudicated", 1, "rev")


def _cut_chips(page) -> list[str]:
    """Badges whose text does not fit their box, or that reach past the viewport."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.stMarkdownBadge')]
             .filter(b => b.scrollWidth > b.clientWidth + 1
                          || b.getBoundingClientRect().right > window.innerWidth)
             .map(b => b.textContent)"""
    )


def _at_phone_width(app_server, page, address: str, ready: str) -> None:
    """Open ``address`` (with the conflict in place) at 390 px and wait for ``ready``."""
    _conflict(app_server, page)
    page.set_viewport_size(PHONE)
    page.goto(app_server.url + address)
    wait_for_app(page, ready)


def _screenshot(target, path: Path) -> None:
    """A screenshot of the page or one element of it (and that it shows something)."""
    target.screenshot(path=str(path))
    assert path.stat().st_size > 10_000


def test_phone_width_inspector_chips_wrap(app_server, browser_page, tmp_path: Path) -> None:
    page = browser_page
    _at_phone_width(app_server, page, "/inspector?study=demo", "in the top 10")
    badges = page.locator(".stMarkdownBadge")
    badges.first.wait_for()
    assert badges.count() >= 4
    # the longest chips: an interval beside the word unavailable
    assert any(" to " in t and "unlabeled" in t for t in badges.all_inner_texts())
    # the page's style sheet may land after the chips: wait for it rather than assume speed
    page.wait_for_function("() => [...document.querySelectorAll('.stMarkdownBadge')]"
                           ".every(b => getComputedStyle(b).whiteSpace === 'normal')")
    assert _cut_chips(page) == []
    _screenshot(page, tmp_path / "inspector-phone.png")


def test_phone_width_adjudication_fits(app_server, browser_page, tmp_path: Path) -> None:
    page = browser_page
    _at_phone_width(app_server, page, "/agreement?study=demo&annotator=rev&query=q02&unit=kb-0019",
                    "The conflict this address names")
    card = _card(page)
    button = card.get_by_role("button", name="Adjudicate")
    button.scroll_into_view_if_needed()
    for element in (card, button, card.locator("[data-testid=stSelectbox]").first):
        box = element.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    wide = page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollWidth")
    assert wide <= PHONE["width"]  # nothing scrolls sideways
    _screenshot(page, tmp_path / "adjudication-phone.png")
