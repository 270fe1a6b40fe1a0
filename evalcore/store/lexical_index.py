"""The SQL of lexical retrieval: the texts the impact index (:mod:`evalcore.retrieval.impact_index`)
and the search box (:mod:`evalcore.retrieval.search`) rank, and FTS5's own tokenization.

The store only hands out texts: :func:`pinned_document_texts` (an execution's pinned
documents in ``doc_id`` order: a position is a rank among the ids, the tie rule an order of
positions), :func:`searchable_texts` (the visible documents the reader may read) and
:func:`searched_documents` (the rows of those a search returns); no engine's full-text
ranking is involved. Tokens come from :class:`Fts5Tokenizer` on a private in-memory
connection, the same whatever engine holds the store (:func:`term_tokens`: one per process)."""

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence

import sqlite_utils

from evalcore.store.document_imports import published
from evalcore.store.scoping import ReadableFilter
from evalcore.store.study_handle import Study
from evalcore.store.visibility import Visibility

#: The pinned documents that still hold their pinned content, in ``doc_id`` order.
_PINNED_FROM = (
    " FROM protocol_documents pd "
    "JOIN documents d ON d.corpus_id = :corpus AND d.doc_id = pd.doc_id "
    "AND d.content_hash = pd.content_hash "
    f"AND {published('d')} "
    "WHERE pd.study_id = :study AND pd.protocol = :protocol ORDER BY pd.doc_id"
)


def pinned_document_texts(
    study: Study, *, protocol_name: str, corpus_id: str
) -> Iterator[tuple[str, str, str]]:
    """``(doc_id, title, text)`` of the pinned documents that still hold their pinned
    content, in ``doc_id`` order (the rows an execution's impact index holds)."""
    key = {"study": study.study_id, "protocol": protocol_name, "corpus": corpus_id}
    yield from study.db.conn.execute(
        "SELECT pd.doc_id, coalesce(d.title, ''), coalesce(d.text, '')" + _PINNED_FROM, key
    )


class Fts5Tokenizer:
    """FTS5's own tokenization: the tokens an FTS5 index with ``tokenizer`` stores for each string,
    in order (nothing re-implements it), on a private in-memory connection of Python's SQLite it
    owns (a contentless FTS5 table and its ``instance`` vocabulary). A context manager."""

    def __init__(self, tokenizer: str) -> None:
        self._tokenizer = tokenizer
        self._conn: sqlite3.Connection | None = None

    def __enter__(self) -> "Fts5Tokenizer":
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        try:
            conn.execute(
                f"CREATE VIRTUAL TABLE tokens USING fts5(x, content='', tokenize='{self._tokenizer}')"
            )
            conn.execute("CREATE VIRTUAL TABLE tokens_vocab USING fts5vocab(tokens, 'instance')")
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        return self

    def tokenize(self, strings: Sequence[str]) -> list[list[str]]:
        """The tokens of each string, in order."""
        conn = self._conn
        assert conn is not None, "tokenize inside the with block"
        conn.execute("BEGIN")
        try:
            conn.executemany("INSERT INTO tokens (rowid, x) VALUES (?, ?)", enumerate(strings))
            tokens: list[list[str]] = [[] for _ in strings]
            for doc, term in conn.execute("SELECT doc, term FROM tokens_vocab ORDER BY doc, offset"):
                tokens[doc].append(term)
            conn.execute("INSERT INTO tokens (tokens) VALUES ('delete-all')")
        finally:
            conn.execute("COMMIT")
        return tokens

    def __exit__(self, *exc: object) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


#: How many distinct query terms' tokens :func:`term_tokens` remembers per tokenizer.
TERMS_KEPT = 10_000


class _TermTokens:
    """One tokenizer's tokens of query terms, remembered (the last :data:`TERMS_KEPT`), from
    one private tokenizer opened on first need and used under a lock."""

    def __init__(self, tokenizer: str) -> None:
        self._spec = tokenizer
        self._tokenizer: Fts5Tokenizer | None = None
        self._known: OrderedDict[str, list[str]] = OrderedDict()

    def of(self, terms: Sequence[str]) -> list[list[str]]:
        missing = [t for t in dict.fromkeys(terms) if t not in self._known]
        if missing:
            if self._tokenizer is None:
                self._tokenizer = Fts5Tokenizer(self._spec).__enter__()
            self._known.update(zip(missing, self._tokenizer.tokenize(missing), strict=True))
        for term in terms:
            self._known.move_to_end(term)
        out = [list(self._known[t]) for t in terms]
        while len(self._known) > TERMS_KEPT:
            self._known.popitem(last=False)
        return out


_term_tokenizers: dict[str, _TermTokens] = {}
_term_lock = threading.Lock()


def term_tokens(terms: Sequence[str], tokenizer: str) -> list[list[str]]:
    """FTS5's tokens of each query term with ``tokenizer`` (as :class:`Fts5Tokenizer` gives
    them), remembered process-wide: the same term is tokenized once per process."""
    with _term_lock:
        known = _term_tokenizers.get(tokenizer)
        if known is None:
            known = _term_tokenizers[tokenizer] = _TermTokens(tokenizer)
        return known.of(terms)


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
