"""Interactive BM25 search over a corpus (the app's "find relevant units" box).

:func:`search_corpus` ranks the corpus's documents a viewer may read for a free-text
query with the :class:`~evalcore.retrieval.impact_index.ImpactIndex` (FTS5's ``bm25()``
whatever engine holds the store, so a search ranks the same on every engine). No input
raises (:mod:`evalcore.retrieval.query_syntax`); a text without terms returns ``[]``.

The statistics are those of the searched documents only (the scope that the viewer may
read), so a score depends on nothing the viewer may not see. The scope's index is cached
(:mod:`evalcore.retrieval.index_cache`) and the last :data:`KEPT_IN_MEMORY` stay in memory,
keyed by the store, the corpus's generation, the scope and the reader's filter.

Order: score descending (``score = -bm25``), equal scores by ``doc_id`` descending (the
product's one tie rule, trec_eval's).
"""

import json
import threading
from collections import OrderedDict
from contextlib import nullcontext
from datetime import datetime

import sqlite_utils

from evalcore.contract.frozen import FrozenModel
from evalcore.retrieval.impact_index import ImpactIndex
from evalcore.retrieval.index_cache import cached_index, search_cache_path
from evalcore.retrieval.lexical_protocol import MAX_TOP_K, TOKENIZER
from evalcore.retrieval.query_syntax import query_terms
from evalcore.store.corpus_generations import current_generation
from evalcore.store.lexical_index import searchable_texts, searched_documents, term_tokens
from evalcore.store.scoping import ReadableFilter, readable_filter
from evalcore.store.store_identity import store_identity
from evalcore.store.transaction import in_transaction, read_snapshot
from evalcore.store.visibility import Visibility

#: How many scopes' indexes stay in memory (process-wide), the least recently used
#: dropped first.
KEPT_IN_MEMORY = 4

_kept: "OrderedDict[tuple[str | int, ...], ImpactIndex]" = OrderedDict()
_kept_lock = threading.Lock()


class SearchHit(FrozenModel):
    """One ranked document: plain text fields (no snippet markup) and its score."""

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

    ``viewer`` is who asks (None or ``""``: nobody signed in): only the documents they
    may read (:func:`evalcore.store.scoping.readable_filter`, the same rule as showing
    one document) are indexed, so documents they may not read neither crowd out ones
    they may nor weigh in the scores. Everything in a local-mode corpus; nothing of a
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
    terms = query_terms(text)
    if not terms:
        return []
    visibility = Visibility.of(corpus_id, organisations, cutoff)
    tokens = term_tokens(terms, TOKENIZER)
    with nullcontext() if in_transaction(db) else read_snapshot(db):
        index = _scope_index(db, visibility, readable)
        ranked = index.rank(tokens, (float(title_weight), float(text_weight)), limit)
        rows = searched_documents(db, [doc_id for doc_id, _ in ranked], visibility, readable)
    return [
        SearchHit(doc_id=doc_id, title=rows[doc_id][0], text=rows[doc_id][1],
                  owner_org=rows[doc_id][2], created_at=rows[doc_id][3], score=score)
        for doc_id, score in ranked if doc_id in rows
    ]


def _scope_index(
    db: sqlite_utils.Database, visibility: Visibility, readable: ReadableFilter | None
) -> ImpactIndex:
    """The index of the documents in scope, kept or built (inside one read view)."""
    scope = (visibility.corpus_id, json.dumps(sorted(visibility.params.items())),
             "" if readable is None else readable.where,
             "" if readable is None else json.dumps(sorted(readable.params.items())))
    generation = current_generation(db, visibility.corpus_id)
    key = (store_identity(db), generation, *scope)
    with _kept_lock:
        index = _kept.get(key)
        if index is not None:
            _kept.move_to_end(key)
            return index
    index, _ = cached_index(search_cache_path(db, scope, generation, TOKENIZER),
                            lambda: searchable_texts(db, visibility, readable))
    with _kept_lock:
        _kept[key] = index
        while len(_kept) > KEPT_IN_MEMORY:
            _kept.popitem(last=False)
    return index

