"""The live dashboard in a real browser: a label lowers the unavailable count, no reload.

One ``streamlit run`` per module on a fresh store (the demo study is created on
first start). The label is recorded from the test process, through the store
API, while the dashboard page is open: the page must pick it up on its own
(its ``st.fragment`` re-runs every 2 s).
"""

import re
import time

import pytest
from browser_helpers import wait_for_app

from evalcore.live.dashboard import LiveDashboard
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.resolution import resolve_unit_in_store
from evalcore.store.study_handle import open_study

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MISSING = re.compile(r"(\d+) of (\d+) queries missing")


def _missing_total(page) -> int:
    text = page.locator("body").inner_text()
    return sum(int(m.group(1)) for m in MISSING.finditer(text))


def _missing_in_state(state: LiveDashboard) -> int:
    """Missing queries over every card the page shows (the study's measures and Judged@k)."""
    return sum(a.n_missing for r in state.run_names for m in state.measures
               if (a := state.measure_aggregate(r, m)) is not None)


def _blockers_of_one_value(db, state: LiveDashboard) -> list[tuple[str, str]]:
    """(query, unit) of the unlabeled items whose labels make one precision value available
    (items in conflict are avoided: they need an adjudication, not a label)."""
    for item in state.blocking_list(None):
        for run in state.run_names:
            result = state.query_result(run, item.query_id)
            value = result.metrics["precision"] if result is not None else None
            if value is None or value.reasons != ["unlabeled_returned"]:
                continue
            units = value.blocking_ids
            if all(
                resolve_unit_in_store(open_study(db, "demo", None), item.query_id, u) is None
                for u in units
            ):
                return [(item.query_id, u) for u in units]
    raise AssertionError("the demo study has no precision value blocked only by unlabeled items")


def test_label_on_a_blocking_item_lowers_unavailable_count_without_reload(
    app_server, browser_page
) -> None:
    page = browser_page
    page.goto(app_server.url + "/dashboard")
    wait_for_app(page, "What to label next")
    page.get_by_text(MISSING).first.wait_for()
    before = _missing_total(page)
    assert before > 0
    page.evaluate("() => { window.__noReload = 'still here'; }")

    db = open_store(app_server.db_path)
    state = LiveDashboard.build(open_study(db, "demo", None))
    missing_before = _missing_in_state(state)
    assert missing_before == before
    blockers = _blockers_of_one_value(db, state)
    for query_id, unit_id in blockers:
        record_label(db, study_id="demo", query_id=query_id, unit_id=unit_id, gain=2,
                     annotator="browser-tester")
    state.refresh(open_study(db, state.study_id, None))
    expected_drop = missing_before - _missing_in_state(state)
    assert expected_drop >= 1

    # Several labels were recorded one by one: the fragment may show an
    # intermediate count first, so wait for the final one (never below it).
    deadline = time.monotonic() + 30
    after = before
    while time.monotonic() < deadline:
        after = _missing_total(page)
        assert after >= before - expected_drop, (before, after, expected_drop)
        if after == before - expected_drop:
            break
        page.wait_for_timeout(250)
    assert after == before - expected_drop, (before, after, expected_drop)
    assert page.evaluate("() => window.__noReload") == "still here"
    assert page.url.split("?")[0].endswith("/dashboard")  # the address also names the study
