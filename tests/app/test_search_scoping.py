"""Annotate's search box ranks only the viewer's documents (scoped before the limit)."""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from access_fixtures import ANNOTATOR, OUTSIDER, team_store  # noqa: E402
from app_harness import ENTRY  # noqa: E402
from lexical_builders import BEFORE  # noqa: E402
from test_page_members import AUTH  # noqa: E402

from evalcore.store.corpus import DocumentIn, add_documents  # noqa: E402


def test_other_organisations_documents_never_crowd_out_the_viewers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_target
) -> None:
    db, _ = team_store(store_target)
    # 60 globex documents that outrank every acme document for "solar"
    add_documents(db, "c", [DocumentIn(doc_id=f"g{i:02d}", title="Solar solar solar",
                                       text="solar solar solar solar", owner_org="globex",
                                       created_at=BEFORE) for i in range(60)], actor=OUTSIDER)
    monkeypatch.setenv("RELEVANCE_LEDGER_DB", str(store_target))
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(ENTRY, default_timeout=60)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": True, "email": ANNOTATOR}
    at.run()
    at.switch_page("views/annotate.py").run()
    at.text_input(key="rl_search").set_value("solar").run()
    assert not at.exception, at.exception
    shown = {str(b.key).split("_")[1] for b in at.button if str(b.key or "").startswith("search_")}
    assert shown == {"a1", "a3"}  # filtering the best 50 afterwards would have left none
