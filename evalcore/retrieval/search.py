"""Interactive BM25 search over a corpus (the app's "find relevant units" box).

:func:`search_corpus` ranks the corpus's documents a viewer may read for a free-text query with
the store's full-text index (``documents_fts``, FTS5 ``bm25()``, porter
tokenizer). The text is made safe by :mod:`evalcore.retrieval.query_syntax`:
no input raises, a text without terms returns ``[]``.

Order: score descending (``score = -bm25``, so larger is better), equal scores
by ``doc_id`` descending (the product's one tie rule, trec_eval's). Scores are comparable within one result list only:
FTS5 takes its BM25 statistics from the whole index (every corpus and owner in
the store). Pinned runs (:mod:`evalcore.retrieval.workflow`) rank over an index
of exactly the pinned documents instead, so their scores depend on nothing else.
"""

from datetime import datetime

import sqlite_utils
from pydantic import BaseModel, ConfigDict

from evalcore.retrieval.lexical_protocol import MAX_TOP_K
from evalcore.retrieval.query_syntax import match_expression
from evalcore.store.corpus_search import search_documents
from evalcore.store.scoping import ReadableFilter, readable_filter
from evalcore.store.visibility import Visibility


class SearchHit(BaseModel):
    """One ranked document: plain text fields (no snippet markup) and its score."""

    model_config = ConfigDict(frozen=True)

    doc_id: str
    title: str
    text: str
    owner_org: str | None
    created_at: str
    score: float


def search_corpus(
    db: sqlite_utils.Database,
    corpus_id: str,
    text: str,
    *,
    viewer: str | None,
    organisations: list[str] | set[str] | tuple[str, ...] | None = None,
    cutoff: datetime | None = None,
    limit: int = 50,
    title_weight: float = 1.0,
    text_weight: float = 1.0,
) -> list[SearchHit]:
    """The best ``limit`` (1..1000) documents of ``corpus_id`` for ``text`` that ``viewer``
    may read.

    ``viewer`` is who asks (None or ``""``: nobody signed in): the documents they may
    read (:func:`evalcore.store.scoping.readable_filter`, the same rule as showing one
    document) are filtered in SQL, before the ``LIMIT``, so documents they may not read
    never crowd out ones they may. Everything in a local-mode corpus; nothing of a
    team-mode corpus for nobody. ``organisations`` restricts further to documents owned
    by one of them (None: any owner, including none); ``cutoff`` to documents created at
    or before it (None: no cutoff; a naive datetime is UTC).
    """
    return search_corpus_unscoped(
        db,
        corpus_id,
        text,
        organisations=organisations,
        cutoff=cutoff,
        limit=limit,
        title_weight=title_weight,
        text_weight=text_weight,
        readable=readable_filter(db, viewer, corpus_id),
    )


def search_corpus_unscoped(
    db: sqlite_utils.Database,
    corpus_id: str,
    text: str,
    *,
    organisations: list[str] | set[str] | tuple[str, ...] | None = None,
    cutoff: datetime | None = None,
    limit: int = 50,
    title_weight: float = 1.0,
    text_weight: float = 1.0,
    readable: ReadableFilter | None = None,
) -> list[SearchHit]:
    """:func:`search_corpus` with no reader's filter unless ``readable`` is given: for
    callers that decided what may be searched themselves (a benchmark timing the ranking,
    a test of the ranking rules). Never for text shown to a person."""
    if not 1 <= limit <= MAX_TOP_K:
        raise ValueError(f"limit must be between 1 and {MAX_TOP_K}, got {limit}")
    expression = match_expression(text)
    if expression is None:
        return []
    visibility = Visibility.of(corpus_id, organisations, cutoff)
    rows = search_documents(
        db,
        expression=expression,
        visibility=visibility,
        readable=readable,
        title_weight=title_weight,
        text_weight=text_weight,
        limit=limit,
    )
    return [
        SearchHit(
            doc_id=r[0], title=r[1], text=r[2], owner_org=r[3], created_at=r[4], score=0.0 - r[5]
        )
        for r in rows
    ]
