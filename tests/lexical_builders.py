"""Small stores for the lexical workflow tests (not a test module)."""

from datetime import UTC, datetime
from pathlib import Path

import sqlite_utils
from store_fixtures import new_store

from evalcore.retrieval.lexical_protocol import LexicalProtocol
from evalcore.retrieval.pin import PinnedProtocol, pin_protocol
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.studies import QueryIn
from evalcore.store.study_setup import add_queries

BEFORE = datetime(2026, 1, 1, tzinfo=UTC)
CUTOFF = datetime(2026, 6, 30, tzinfo=UTC)
AFTER = datetime(2026, 7, 1, tzinfo=UTC)

#: doc_id -> (title, text, owner)
DOCS: dict[str, tuple[str, str, str]] = {
    "a1": ("Solar panels", "installing solar panels on a roof", "acme"),
    "a2": ("Wind turbines", "offshore wind turbines produce power", "acme"),
    "a3": ("Panel maintenance", "cleaning solar panels keeps them efficient", "acme"),
    "a4": ("Heat pumps", "heat pumps move heat from the ground", "acme"),
    "b1": ("Solar subsidies", "solar panels subsidies for households", "globex"),
    "b2": ("Grid storage", "batteries store solar power for the night", "globex"),
}

QUERIES = {"q1": "solar panels", "q2": "wind power", "q3": "heat", "q4": "+++"}


def protocol(**overrides: object) -> LexicalProtocol:
    data: dict[str, object] = {
        "method": "lexical",
        "top_k": 10,
        "cutoff": "2026-06-30T00:00:00Z",
        "organisations": ["acme"],
    }
    data.update(overrides)
    return LexicalProtocol.model_validate(data)


def docs(**changes: tuple[str, str, str] | None) -> list[DocumentIn]:
    table = dict(DOCS)
    for doc_id, value in changes.items():
        if value is None:
            table.pop(doc_id, None)
        else:
            table[doc_id] = value
    return [
        DocumentIn(doc_id=d, title=t, text=x, owner_org=o, created_at=BEFORE)
        for d, (t, x, o) in table.items()
    ]


def lexical_store(target: str | Path) -> sqlite_utils.Database:
    """A study ``s`` over corpus ``c`` with DOCS, QUERIES and one late acme document, in the
    store at ``target`` (as for ``new_store``)."""
    db = new_store(target)
    add_documents(db, "c", docs())
    add_documents(
        db,
        "c",
        [DocumentIn(doc_id="late", title="Solar panels news", text="solar panels solar panels",
                    owner_org="acme", created_at=AFTER)],
    )
    add_queries(db, "s", [QueryIn(query_id=q, text=t) for q, t in QUERIES.items()])
    return db


def pinned(db: sqlite_utils.Database, name: str = "p1", **overrides: object) -> PinnedProtocol:
    return pin_protocol(db, study_id="s", name=name, protocol=protocol(**overrides), actor="tester")
