"""App tests: the ``app`` package from the repository root, and a small study on disk."""

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlite_utils

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from app_harness import ENTRY, build_small_study  # noqa: E402


@pytest.fixture
def small_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_store_target) -> tuple[Path, sqlite_utils.Database]:
    """A small study in a store file that the app under test opens (RELEVANCE_LEDGER_DB)."""
    path = new_store_target("ledger.sqlite")
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
