"""A signed-in non-member never sees another organisation's study data, even past the picker.

Issue 12, item 2 (every read is authorised), in the app: the study picker lists
only the studies the signed-in identity may see, but the pages do not rely on
it. Here the picker is made to offer every study of the store (a regression
simulated with monkeypatch) and otto of globex opens acme's study ``s`` on the
Compare, Inspector, Dashboard and Annotate pages: each page refuses, and no
query, run, document or number of ``s`` reaches the browser. The page's check is the
opening of its read handle (``study_page``): every read of the page, the caches shared
across sessions included, takes that handle, and only ``open_study`` makes one, so no
read of the page can skip the check.
"""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from access_fixtures import LEAD, OUTSIDER, team_store  # noqa: E402
from app_harness import ENTRY  # noqa: E402
from test_access_pages import AUTH, SECRET_A, rendered  # noqa: E402

PAGES = ["views/compare.py", "views/inspector.py", "views/dashboard.py", "views/annotate.py"]
#: What study s holds and a page of it would show: its query ids and text, its run,
#: its documents' words (acme's a1 and globex's b1 both sit in q1's pool).
SECRETS = ("q1", "r1", SECRET_A, "a roof", "subsidies", "households")


@pytest.fixture
def stranger_on_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_target):
    db, _ = team_store(store_target)
    # a second run of s, so the Compare page has a pair to compare
    from evalcore.store.runs import add_run

    add_run(db, study_id="s", name="r1b", source="imported", k=3, actor=LEAD,
            results=[("q1", 1, "a2", 3.0), ("q1", 2, "a1", 2.0)])
    monkeypatch.setenv("RELEVANCE_LEDGER_DB", str(store_target))
    import app.components.session as session
    from evalcore.store.studies import list_studies

    # the picker offers acme's study (the sidebar's one read of the studies it may list)
    monkeypatch.setattr(session, "_listed", lambda db: (
        [s for s in list_studies(db) if s.study_id == "s"], 0))

    def open_page(page: str):
        from streamlit.testing.v1 import AppTest

        at = AppTest.from_file(ENTRY, default_timeout=60)
        at.secrets["auth"] = AUTH
        at.user = {"is_logged_in": True, "email": OUTSIDER}
        at.run()
        at.switch_page(page).run()
        return at

    return open_page, monkeypatch


@pytest.mark.parametrize("page", PAGES)
def test_a_stranger_past_the_picker_is_refused_by_the_page(stranger_on_s, page: str) -> None:
    open_page, _ = stranger_on_s
    at = open_page(page)
    assert not at.exception, at.exception
    assert any("may not read this study" in e.value for e in at.error)
    text = rendered(at)
    for secret in SECRETS:
        assert secret not in text, (page, secret)
