"""The SQL of the interactive search box (:mod:`evalcore.retrieval.search`): the texts of
the documents a search may rank and the rows of the documents it returns.

The ranking itself is evalcore's BM25 (:mod:`evalcore.retrieval.impact_index`) over
the documents :func:`searchable_texts` hands out, so no engine's own full-text
ranking is involved. Those documents are the corpus's visible ones
(:class:`~evalcore.store.visibility.Visibility`) that the reader may read
(:class:`~evalcore.store.scoping.ReadableFilter`, None: no reader's filter).
"""

import json
from collections.abc import Iterator, Sequence

import sqlite_utils

from evalcore.store.scoping import ReadableFilter
from evalcore.store.visibility import Visibility


def _scope(visibility: Visibility, readable: ReadableFilter | None) -> tuple[str, dict]:
    where = f"{visibility.where} AND {'1' if readable is None else readable.where}"
    return where, {**visibility.params, **({} if readable is None else readable.params)}


def searchable_texts(
    db: sqlite_utils.Database, visibility: Visibility, readable: ReadableFilter | None
) -> Iterator[tuple[str, str, str]]:
    """``(doc_id, title, text)`` of every document the search may rank, in ``doc_id``
    order (code point order, the order of the tie rule)."""
    where, params = _scope(visibility, readable)
    yield from db.conn.execute(
        "SELECT d.doc_id, coalesce(d.title, ''), coalesce(d.text, '') FROM documents d "
        f"WHERE {where} ORDER BY d.doc_id", params)


def searched_documents(
    db: sqlite_utils.Database,
    doc_ids: Sequence[str],
    visibility: Visibility,
    readable: ReadableFilter | None,
) -> dict[str, tuple[str, str, str | None, str]]:
    """``doc_id -> (title, text, owner_org, created_at)`` of those of ``doc_ids`` the search
    may still show (a document made invisible since the ranking is left out)."""
    where, params = _scope(visibility, readable)
    rows = db.conn.execute(
        "SELECT d.doc_id, d.title, d.text, d.owner_org, d.created_at FROM documents d "
        f"WHERE d.doc_id IN (SELECT value FROM json_each(:search_ids)) AND {where}",
        {**params, "search_ids": json.dumps(list(doc_ids))},
    ).fetchall()
    return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}
