"""The small study the app tests open (not a test module; the conftest uses it)."""

from datetime import UTC, datetime
from pathlib import Path

import sqlite_utils

from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn, StudyIn  # noqa: E402
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries, create_study

REPO = Path(__file__).resolve().parents[2]
ENTRY = str(REPO / "app" / "streamlit_app.py")
STUDY = "s1"
CORPUS = "c1"
#: q1's pool is d1..d4 (run r1: d1 d2 d3, run r2: d2 d4 d1); q2's pool is d5, d6.
RESULTS = {
    "r1": [("q1", 1, "d1"), ("q1", 2, "d2"), ("q1", 3, "d3"), ("q2", 1, "d5")],
    "r2": [("q1", 1, "d2"), ("q1", 2, "d4"), ("q1", 3, "d1"), ("q2", 1, "d6")],
}


def build_small_study(path: Path, depth: int = 3) -> sqlite_utils.Database:
    """The small study, its two runs stored to ``depth`` (they return at most 3 results a
    query: a deeper run returned fewer than it could)."""
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
        add_run(db, study_id=STUDY, name=name, source="imported", k=depth,
                results=[(q, r, u, 10.0 - r) for q, r, u in rows])
    return db


def keyed(widgets, prefix: str):
    """The one widget whose key starts with ``prefix`` (the annotate page keys its grade,
    skip and note widgets by the showing number of the item on screen: ``grade_2_<n>``)."""
    found = [w for w in widgets if w.key and w.key.startswith(prefix)]
    assert len(found) == 1, [w.key for w in widgets]
    return found[0]


def grade_button(at, gain: int):
    """The grade button ``gain`` of the item on screen."""
    return keyed(at.button, f"grade_{gain}_")


def wait_for_background_progress(db: sqlite_utils.Database, path: Path, study_id: str,
                                 annotator: str, timeout_s: float = 30) -> None:
    """Wait until the study's progress counted in the background (a large study's first
    visit), and ``annotator``'s share in it if named, are ready for the store's marks now;
    fails after ``timeout_s``."""
    import time

    from app.components.state import _counted
    from evalcore.store.marks import store_marks

    deadline = time.monotonic() + timeout_s
    while True:
        counted = _counted(str(path))
        marks = store_marks(open_study(db, study_id, None))
        kept = [counted.counts.get(study_id)]
        if annotator:
            kept.append(counted.shares.get((study_id, annotator)))
        if all(k is not None and k.marks == marks for k in kept):
            return
        assert time.monotonic() < deadline, "the background count never finished"
        time.sleep(0.05)


def _walk(node):
    children = getattr(node, "children", None)
    for child in (children.values() if isinstance(children, dict) else []):
        yield child
        yield from _walk(child)


def item_caption(at) -> str | None:
    """The item's caption line ("item i of n · <unit> · ...") the annotate page's keyboard
    component draws (``app/components/keyboard.py``), or None without an item on screen."""
    import json

    for element in _walk(at.main):
        proto = getattr(element, "proto", None)
        if getattr(proto, "component_name", None) == "rl_item_keys":
            caption = json.loads(proto.json or "{}").get("caption") or None
            if caption:
                return caption
    return None
