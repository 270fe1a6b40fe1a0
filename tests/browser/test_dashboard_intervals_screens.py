"""The dashboard's cards with intervals and Judged@k, at desktop and phone width (screenshots).

Writes PNGs to ``RELEVANCE_LEDGER_SCREENSHOTS`` (when set; else the test's tmp dir)
so a person can look at them; asserts the texts a reader must see at both widths.
"""

import os
import re
from pathlib import Path

import pytest
from browser_helpers import chromium_page, wait_for_app

from evalcore.live.dashboard import LiveDashboard
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.study_handle import open_study

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def every_query_labeled(app_server, chromium_path, tmp_path_factory):
    """One label on each demo query that has none: every observation is valid, so P@10 and
    MRR@10 become unavailable but bounded (only unlabeled items left)."""
    with chromium_page(tmp_path_factory.mktemp("seed"), chromium_path) as page:
        page.goto(app_server.url + "/dashboard")  # the first visit creates the demo study
        wait_for_app(page, "What to label next")
    db = open_store(app_server.db_path)
    state = LiveDashboard.build(open_study(db, "demo", None))
    for run in state.run_names:
        for query_id in state.query_ids:
            result = state.query_result(run, query_id)
            if result is not None and "missing_reference" in result.reasons:
                top = state.runs[run].top_units[state.runs[run].index[query_id]]
                if top:
                    record_label(db, study_id="demo", query_id=query_id, unit_id=top[0],
                                 gain=1, annotator="screens")
                    state.refresh(open_study(db, state.study_id, None))
    db.conn.close()
    return app_server


@pytest.mark.parametrize(("name", "width", "height"), [("desktop", 1400, 1000),
                                                       ("phone", 390, 844)])
def test_dashboard_cards_show_intervals_and_judged(every_query_labeled, chromium_path,
                                                   tmp_path: Path,
                                                   name: str, width: int, height: int) -> None:
    out = Path(os.environ.get("RELEVANCE_LEDGER_SCREENSHOTS", tmp_path))
    out.mkdir(parents=True, exist_ok=True)
    with chromium_page(tmp_path / "profile", chromium_path,
                       viewport={"width": width, "height": height}) as page:
        page.goto(every_query_labeled.url + "/dashboard")
        wait_for_app(page, "What to label next")
        page.get_by_text("Judged@").first.wait_for()
        text = page.locator("body").inner_text()
        assert "Judged@" in text
        assert re.search(r"unavailable · \d\.\d\d to \d\.\d\d, \d+ unlabeled", text), text
        assert "Judged@10" in text
        page.screenshot(path=str(out / f"dashboard-{name}.png"), full_page=False)
        cards = page.get_by_text("unavailable · ").first
        cards.scroll_into_view_if_needed()
        page.screenshot(path=str(out / f"dashboard-{name}-cards.png"), full_page=False)
        chart = page.locator(".stPlotlyChart").first
        chart.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        page.screenshot(path=str(out / f"dashboard-{name}-chart.png"), full_page=False)
        # nothing is cut off sideways at phone width
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width + 1
