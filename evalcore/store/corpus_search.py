"""Ranking a corpus with the store's shared full-text index (``documents_fts``, FTS5 BM25).

The interactive search box (:mod:`evalcore.retrieval.search`) turns free text
into a ``MATCH`` expression and calls :func:`search_documents`. Order: score
best first (``bm25`` ascending), equal scores by ``doc_id`` descending: the
product's one tie rule (trec_eval's; see docs/lexical-retrieval.md).
"""

import sqlite_utils

from evalcore.store import dialect
from evalcore.store.scoping import ReadableFilter
from evalcore.store.visibility import Visibility


def search_documents(
    db: sqlite_utils.Database,
    *,
    expression: str,
    visibility: Visibility,
    readable: ReadableFilter | None,
    title_weight: float,
    text_weight: float,
    limit: int,
) -> list[tuple[str, str, str, str | None, str, float]]:
    """``(doc_id, title, text, owner_org, created_at, bm25)`` of the best ``limit`` documents.

    ``readable`` (None: no access filter) is applied in SQL before the ``LIMIT``.
    """
    dialect.require_fts5(db, "searching a corpus")
    return db.conn.execute(
        "SELECT d.doc_id, d.title, d.text, d.owner_org, d.created_at, "
        "bm25(documents_fts, :w_title, :w_text) AS s "
        "FROM documents_fts JOIN documents d ON d.rowid = documents_fts.rowid "
        f"WHERE documents_fts MATCH :expression AND {visibility.where} "
        f"AND {'1' if readable is None else readable.where} "
        "ORDER BY s, d.doc_id DESC LIMIT :limit",
        {
            **visibility.params,
            **({} if readable is None else readable.params),
            "w_title": float(title_weight),
            "w_text": float(text_weight),
            "expression": expression,
            "limit": limit,
        },
    ).fetchall()
