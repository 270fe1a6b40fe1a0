"""The Compare page's query set in a real browser on the demo study: ``?queries=judged``
opens the judged set, survives a reload, and a choice made on the page goes to the
address; at desktop and phone width (390 px). Screenshots go to the test's tmp dir and,
for a person to look at, to ``$RELEVANCE_LEDGER_SHOTS`` when set."""

import os
import shutil
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from browser_helpers import chromium_page, settle, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _keep(shot: Path) -> None:
    target = os.environ.get("RELEVANCE_LEDGER_SHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(target) / shot.name)


def _queries(page) -> str | None:
    values = parse_qs(urlsplit(page.url).query).get("queries")
    return values[-1] if values else None


def _chooser(page):
    return page.locator("[data-testid=stSelectbox]").filter(has_text="Queries").first


def _chosen(page) -> str:
    """The chooser's text and its input's value (the value shows in one or the other)."""
    box = _chooser(page)
    return (
        box.inner_text()
        + " "
        + " ".join(box.locator("input").evaluate_all("els => els.map(e => e.value)"))
    )


def test_judged_in_the_address_survives_a_reload(app_server, browser_page, tmp_path: Path) -> None:
    page = browser_page
    page.goto(app_server.url + "/compare?study=demo&annotator=lead&queries=judged")
    wait_for_app(page, "Over judged (", timeout_ms=120_000)
    wait_for_app(page, "Paired significance tests", timeout_ms=120_000)
    assert "Judged: a relevant label" in _chosen(page)
    assert _queries(page) == "judged"
    shot = tmp_path / "compare-queries-judged.png"
    page.screenshot(path=str(shot), full_page=False)
    _keep(shot)
    page.reload()  # a new session: the address alone brings the set back
    wait_for_app(page, "Over judged (", timeout_ms=120_000)
    settle(page, 120_000)
    assert "Judged: a relevant label" in _chosen(page)
    assert _queries(page) == "judged"
    # choosing another set on the page writes it to the address
    _chooser(page).click()
    page.get_by_role("option", name="Answered by every run").click()
    wait_for_app(page, "Over answered (", timeout_ms=120_000)
    assert _queries(page) == "answered"
    _chooser(page).click()
    page.get_by_role("option", name="All queries").click()
    wait_for_app(page, "Over all (", timeout_ms=120_000)
    assert _queries(page) is None


def test_listed_ids_on_a_phone(app_server, chromium_path: str, tmp_path: Path) -> None:
    with chromium_page(
        tmp_path / "phone",
        chromium_path,
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
    ) as page:
        page.goto(app_server.url + "/compare?study=demo&annotator=lead&queries=q01,q02,zz")
        wait_for_app(page, "not in study 'demo'", timeout_ms=120_000)
        page.goto(app_server.url + "/compare?study=demo&annotator=lead&queries=q01,q02")
        wait_for_app(page, "Over q01,q02 (2 of", timeout_ms=120_000)
        settle(page, 120_000)
        shot = tmp_path / "compare-queries-phone.png"
        page.screenshot(path=str(shot), full_page=False)
        _keep(shot)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page scrolls sideways on a phone ({width} px)"
