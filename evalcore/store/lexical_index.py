"""The execution index: a private FTS5 index of exactly the pinned documents.

FTS5's ``bm25()`` takes its statistics (document count, average length,
document frequencies) from the whole table it runs on. Ranking over the
store's shared index would make a run's scores depend on documents the
protocol may not see: other organisations, later documents, other corpora.
So each execution indexes the pinned documents, as they are in the revalidated
corpus, into a TEMP table of the connection and ranks there; the scores are a
function of the pinned content alone.

Snapshot rowids are assigned in ``doc_id`` order, so ``ORDER BY bm25, rowid
DESC`` *is* the documented tie rule (score best first, then ``doc_id``
descending, as trec_eval orders a run file) and a cut at ``top_k`` never
depends on FTS5's internal order. ``ties_descending=False`` keeps the old rule
(``doc_id`` ascending) for protocols pinned under it.

This module also holds the SQL of the impact index
(:mod:`evalcore.retrieval.impact_index`): the pinned documents' text
(:func:`pinned_document_texts`), FTS5's own tokenization of strings
(:class:`Fts5Tokenizer`) and the store's file (:func:`store_file`, where the
built index is cached).
"""

import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType

import sqlite_utils

from evalcore.store import dialect
from evalcore.store.document_imports import published
from evalcore.store.study_handle import Study

_names = itertools.count(1)
#: The pinned documents that still hold their pinned content, in ``doc_id`` order.
_PINNED_FROM = (
    " FROM protocol_documents pd "
    "JOIN documents d ON d.corpus_id = :corpus AND d.doc_id = pd.doc_id "
    "AND d.content_hash = pd.content_hash "
    f"AND {published('d')} "
    "WHERE pd.study_id = :study AND pd.protocol = :protocol ORDER BY pd.doc_id"
)


class LexicalIndex:
    """Context manager: build the pinned set's index on enter, drop it on exit.

    Call it inside a read transaction that has revalidated the pin, so the
    indexed content is the content that was checked. ``document_count`` is how
    many documents were indexed (all of the pinned set, or the caller refuses).
    ``tokenizer`` is the FTS5 tokenizer spec; ``weights`` the (title, text)
    column weights of ``bm25()``.
    """

    def __init__(
        self,
        db: sqlite_utils.Database,
        *,
        study_id: str,
        protocol_name: str,
        corpus_id: str,
        weights: tuple[float, float],
        tokenizer: str,
        ties_descending: bool = True,
    ) -> None:
        self.db = db
        self._ties = "DESC" if ties_descending else "ASC"
        self._key = {"study": study_id, "protocol": protocol_name, "corpus": corpus_id}
        self._tokenizer = tokenizer
        number = next(_names)
        self._ids = f"lexical_snapshot_ids_{number}"
        self._fts = f"lexical_snapshot_fts_{number}"
        self.document_count = 0
        self._weights = (float(weights[0]), float(weights[1]))

    def __enter__(self) -> "LexicalIndex":
        dialect.require_fts5(self.db, "lexical retrieval")
        conn = self.db.conn
        conn.execute(
            f"CREATE TEMP TABLE {self._ids} (rowid INTEGER PRIMARY KEY, doc_id TEXT NOT NULL)"
        )
        try:
            conn.execute(
                f"CREATE VIRTUAL TABLE temp.{self._fts} USING fts5("
                f"title, text, content='', tokenize='{self._tokenizer}')"
            )
            conn.execute(
                f"INSERT INTO temp.{self._ids} (doc_id) SELECT pd.doc_id" + _PINNED_FROM, self._key
            )
            conn.execute(
                f"INSERT INTO temp.{self._fts} (rowid, title, text) "
                # CROSS JOIN keeps the ids outside: the temp table has no doc_id index, and
                # the planner otherwise loops over the corpus with a scan of the ids inside
                # (100,000 documents: 639 s instead of seconds)
                f"SELECT i.rowid, d.title, d.text FROM temp.{self._ids} i "
                "CROSS JOIN documents d ON d.corpus_id = :corpus AND d.doc_id = i.doc_id "
                f"AND {published('d')}",
                {"corpus": self._key["corpus"]},
            )
            self.document_count = int(
                conn.execute(f"SELECT count(*) FROM temp.{self._ids}").fetchone()[0]
            )
        except BaseException:
            self._drop()
            raise
        return self

    def search_expression(self, expression: str, limit: int) -> list[tuple[str, float]]:
        """``(doc_id, score)`` for an FTS5 ``MATCH`` expression, best first, at most ``limit``;
        ``score = -bm25 >= 0``."""
        rows = self.db.conn.execute(
            f"SELECT i.doc_id, x.s FROM ("
            f"  SELECT rowid AS r, bm25({self._fts}, ?, ?) AS s FROM temp.{self._fts} "
            f"  WHERE {self._fts} MATCH ? ORDER BY s, rowid {self._ties} LIMIT ?"
            f") x JOIN temp.{self._ids} i ON i.rowid = x.r ORDER BY x.s, x.r {self._ties}",
            [*self._weights, expression, limit],
        ).fetchall()
        return [(doc_id, 0.0 - s) for doc_id, s in rows]

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._drop()

    def _drop(self) -> None:
        _drop_temp(self.db, self._fts, self._ids)


def pinned_document_texts(
    study: Study, *, protocol_name: str, corpus_id: str
) -> Iterator[tuple[str, str, str]]:
    """``(doc_id, title, text)`` of the pinned documents that still hold their pinned
    content, in ``doc_id`` order (the rows :class:`LexicalIndex` indexes)."""
    key = {"study": study.study_id, "protocol": protocol_name, "corpus": corpus_id}
    yield from study.db.conn.execute(
        "SELECT pd.doc_id, coalesce(d.title, ''), coalesce(d.text, '')" + _PINNED_FROM, key
    )


def store_file(db: sqlite_utils.Database) -> Path | None:
    """The file of the store's main database, or None for an in-memory or PostgreSQL store."""
    path = dialect.main_file(db)
    return Path(path) if path else None


class Fts5Tokenizer:
    """FTS5's own tokenization of strings: the tokens an FTS5 index with ``tokenizer``
    stores for each string, in order (so nothing re-implements the tokenizer).

    Holds a TEMP contentless FTS5 table and its ``instance`` vocabulary; use it as a
    context manager (the tables are dropped on exit).
    """

    def __init__(self, db: sqlite_utils.Database, tokenizer: str) -> None:
        self.db = db
        self._tokenizer = tokenizer
        number = next(_names)
        self._fts = f"lexical_tokens_{number}"
        self._vocab = f"lexical_tokens_vocab_{number}"

    def __enter__(self) -> "Fts5Tokenizer":
        dialect.require_fts5(self.db, "tokenizing with FTS5")
        conn = self.db.conn
        conn.execute(
            f"CREATE VIRTUAL TABLE temp.{self._fts} USING fts5("
            f"x, content='', tokenize='{self._tokenizer}')"
        )
        try:
            conn.execute(
                f"CREATE VIRTUAL TABLE temp.{self._vocab} "
                f"USING fts5vocab(temp, '{self._fts}', 'instance')"
            )
        except BaseException:
            self._drop()
            raise
        return self

    def tokenize(self, strings: Sequence[str]) -> list[list[str]]:
        """The tokens of each string, in order."""
        conn = self.db.conn
        conn.executemany(
            f"INSERT INTO temp.{self._fts} (rowid, x) VALUES (?, ?)", enumerate(strings)
        )
        tokens: list[list[str]] = [[] for _ in strings]
        for doc, term in conn.execute(
            f"SELECT doc, term FROM temp.{self._vocab} ORDER BY doc, offset"
        ):
            tokens[doc].append(term)
        conn.execute(f"INSERT INTO temp.{self._fts} ({self._fts}) VALUES ('delete-all')")
        return tokens

    def __exit__(self, *exc: object) -> None:
        self._drop()

    def _drop(self) -> None:
        _drop_temp(self.db, self._vocab, self._fts)


def _drop_temp(db: sqlite_utils.Database, *tables: str) -> None:
    for table in tables:
        db.conn.execute(f"DROP TABLE IF EXISTS temp.{table}")
