"""Issue 31's sample, end to end in a real browser on the demo study: a lead draws a sample
on the Compare page ("Estimate instead"), labels its first two units on the Annotate page's
sample queue by keyboard, and sees the estimate change on Compare, shown apart from the
decided verdict. The seed is chosen (with the library, before the draw) so that the first
sampled query holds exactly two units: two labels answer a whole draw, which the estimate
then uses. Screenshots at 1400 and 390 px width go to /tmp/relevance-ledger-sample-shots.
"""

import re
import sqlite3
from pathlib import Path

import pytest
from browser_helpers import chromium_page, settle, wait_for_app, wait_for_item_keys

from evalcore.analysis.decision import stored_pair
from evalcore.demo.corpus import demo_documents
from evalcore.demo.study import DEMO_STUDY_ID, simulated_gain
from evalcore.estimation.pair_estimate import draw_for_pair
from evalcore.store.connection import open_store
from evalcore.store.study_handle import open_study

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BASELINE, CANDIDATE = "bm25-plain", "bm25-title-boost"
MEASURES = ["P@10"]
SIZE = 20
SHOTS = Path("/tmp/relevance-ledger-sample-shots")
DOCS = {d.doc_id: d for d in demo_documents()}
COMPARE = "/compare?study=demo&annotator=lead&measures=" + ",".join(
    m.replace("@", "%40") for m in MEASURES
)
SAMPLED = re.compile(r"(\d+) of (\d+)")


def _seed_with_two_first(db_path: Path) -> int:
    """A seed whose first sampled query has exactly two units (the design's order is fixed
    by the seed and the evidence)."""
    db = open_store(db_path)
    try:
        pair = stored_pair(open_study(db, DEMO_STUDY_ID, None), CANDIDATE, BASELINE, MEASURES).pair
        for seed in range(500):
            design = draw_for_pair(
                pair,
                name="x",
                run_a=CANDIDATE,
                run_b=BASELINE,
                measures=MEASURES,
                size=SIZE,
                seed=seed,
            )
            if len(design.sampled_queries()[0].units) == 2:
                return seed
    finally:
        db.conn.close()
    raise AssertionError("no seed in 0..499 puts a two-unit query first")


def _estimate_rows(page) -> dict[str, str]:
    """The estimate table's rows: measure -> its row's text."""
    table = page.locator("[data-testid=stTable]").last
    rows = {}
    for row in table.locator("tbody tr").all():
        cells = [c.inner_text().strip() for c in row.locator("th, td").all()]
        rows[cells[0]] = " | ".join(cells[1:])
    return rows


def _open_estimate(page, url: str) -> dict[str, str]:
    page.goto(url)
    wait_for_app(page, "Paired significance tests", timeout_ms=120_000)
    page.get_by_text("Estimate instead").first.click()
    wait_for_app(page, "Estimated from a sample", timeout_ms=60_000)
    return _estimate_rows(page) if page.get_by_text("Sample s1").count() else {}


def test_draw_on_compare_label_by_keyboard_and_see_the_estimate_change(
    app_server, chromium_path: str, tmp_path: Path
) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    with chromium_page(
        tmp_path / "profile", chromium_path, viewport={"width": 1400, "height": 1000}
    ) as page:
        assert _open_estimate(page, app_server.url + COMPARE) == {}
        seed = _seed_with_two_first(app_server.db_path)
        page.get_by_text("Draw a sample (lead)").click()
        name_box = page.get_by_label("Name")
        name_box.fill("s1")
        name_box.press("Enter")
        settle(page)
        for label, value in (("Size (labels)", SIZE), ("Seed", seed)):
            box = page.get_by_label(label)
            box.fill(str(value))
            box.press("Enter")
            settle(page)
        page.get_by_role("button", name="Draw the sample").click()
        wait_for_app(page, "Sample s1 drawn")
        before = _estimate_rows(page)
        assert set(before) == set(MEASURES), before
        assert all(SAMPLED.search(text).group(1) == "0" for text in before.values()), before
        # the verdict table above holds no estimate
        verdicts = page.locator("[data-testid=stTable]").first.inner_text()
        assert "estimated" not in verdicts
        with sqlite3.connect(app_server.db_path) as db:
            units = db.execute(
                "SELECT query_id, unit_id FROM sample_units WHERE name = 's1' ORDER BY position"
            ).fetchall()
        assert len(units) >= 2

        # the Annotate page's sample queue, labeled by keyboard: the demo judge's grades
        page.goto(app_server.url + "/annotate?study=demo&annotator=lead&queue=sample&sample=s1")
        for query_id, unit_id in units[:2]:
            wait_for_item_keys(page)
            page.get_by_text(f"{unit_id}", exact=False).first.wait_for()
            page.keyboard.press(str(simulated_gain(query_id, DOCS[unit_id])))
            settle(page)
        wait_for_app(page, "Sample s1: 2 labeled, 0 non-response")
        page.screenshot(path=str(SHOTS / "sample-annotate-1400.png"), full_page=True)
        with sqlite3.connect(app_server.db_path) as db:
            stored = db.execute(
                "SELECT query_id, unit_id, gain FROM label_events "
                "WHERE annotator = 'lead' ORDER BY event_id"
            ).fetchall()
        assert [(q, u) for q, u, _ in stored] == units[:2]
        assert [g for _, _, g in stored] == [simulated_gain(q, DOCS[u]) for q, u in units[:2]]

        after = _open_estimate(page, app_server.url + COMPARE)
        assert set(after) == set(MEASURES), after
        assert all(SAMPLED.search(text).group(1) == "2" for text in after.values()), after
        assert after != before
        page.screenshot(path=str(SHOTS / "sample-compare-1400.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})
        settle(page)
        page.locator("[data-testid=stTable]").last.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "sample-compare-390.png"), full_page=True)
        page.goto(app_server.url + "/annotate?study=demo&annotator=lead&queue=sample&sample=s1")
        wait_for_item_keys(page)
        page.screenshot(path=str(SHOTS / "sample-annotate-390.png"), full_page=True)
