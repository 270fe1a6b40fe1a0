"""App tests: the ``app`` package from the repository root, and a small study on disk."""

import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlite_utils

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from evalcore.store.connection import open_store  # noqa: E402
from evalcore.store.corpus import DocumentIn, add_documents  # noqa: E402
from evalcore.store.runs import add_run  # noqa: E402
from evalcore.store.studies import QueryIn, StudyIn, add_queries, create_study  # noqa: E402

ENTRY = str(REPO / "app" / "streamlit_app.py")
STUDY = "s1"
CORPUS = "c1"
#: q1's pool is d1..d4 (run r1: d1 d2 d3, run r2: d2 d4 d1); q2's pool is d5, d6.
RESULTS = {
    "r1": [("q1", 1, "d1"), ("q1", 2, "d2"), ("q1", 3, "d3"), ("q2", 1, "d5")],
    "r2": [("q1", 1, "d2"), ("q1", 2, "d4"), ("q1", 3, "d1"), ("q2", 1, "d6")],
}


def build_small_study(path: Path) -> sqlite_utils.Database:
    db = open_store(path)
    create_study(db, StudyIn(study_id=STUDY, name="Small study", corpus_id=CORPUS))
    add_documents(
        db,
        CORPUS,
        [
            DocumentIn(doc_id=f"d{i}", title=f"Password guide {i}", text=f"How to reset a password, part {i}.",
                       owner_org="acme", created_at=datetime(2025, 1, i, tzinfo=UTC))
            for i in range(1, 8)
        ],
    )
    add_queries(db, STUDY, [QueryIn(query_id="q1", text="reset password"),
                            QueryIn(query_id="q2", text="password guide")])
    for name, rows in RESULTS.items():
        add_run(db, study_id=STUDY, name=name, source="imported", k=3,
                results=[(q, r, u, 10.0 - r) for q, r, u in rows])
    return db


@pytest.fixture(autouse=True)
def _navigation_v2_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make AppTest behave like the server once ``st.navigation`` has run.

    A ``pages/`` folder beside the entry script makes Streamlit assume the
    legacy folder-based multipage mode until ``st.navigation`` is first called;
    the server then keeps the flag off for the whole process, but AppTest resets
    it before every run and would run a page without the entry script.
    """
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


@pytest.fixture
def small_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, sqlite_utils.Database]:
    """A small study in a store file that the app under test opens (RELEVANCE_LEDGER_DB)."""
    path = tmp_path / "ledger.sqlite"
    db = build_small_study(path)
    monkeypatch.setenv("RELEVANCE_LEDGER_DB", str(path))
    return path, db


@pytest.fixture
def new_app() -> Callable:
    """``new_app(annotator)`` -> an AppTest of the entry script, run once."""
    from streamlit.testing.v1 import AppTest

    def make(annotator: str | None = None, page: str | None = None) -> AppTest:
        at = AppTest.from_file(ENTRY, default_timeout=60)
        at.run()
        if annotator is not None:
            at.text_input(key="rl_annotator_input").set_value(annotator).run()
        if page is not None:
            at.switch_page(page).run()
        assert not at.exception, at.exception
        return at

    return make
