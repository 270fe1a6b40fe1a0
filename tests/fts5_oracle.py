"""FTS5's own ``bm25()`` ranking, on a private in-memory SQLite: the reference evalcore's
BM25 (:mod:`evalcore.retrieval.impact_index`) must equal (not a test module)."""

import sqlite3
from collections.abc import Iterable

from evalcore.retrieval.lexical_protocol import TOKENIZER
from evalcore.retrieval.query_syntax import query_terms


def quote_term(term: str) -> str:
    """``term`` as an FTS5 string literal."""
    return '"' + term.replace('"', '""') + '"'


def match_expression(text: str) -> str | None:
    """The FTS5 MATCH expression of the search's terms of ``text`` (each quoted, joined with
    ``OR``), or None when it holds no term."""
    terms = query_terms(text)
    if not terms:
        return None
    return " OR ".join(quote_term(t) for t in terms)


class Fts5Oracle:
    """An FTS5 table of ``(doc_id, title, text)`` rows, rowids in ``doc_id`` order, ranked with
    ``bm25(weights)``; equal scores by ``doc_id`` descending (or ascending)."""

    def __init__(self, rows: Iterable[tuple[str, str, str]], weights: tuple[float, float],
                 *, ties_descending: bool = True) -> None:
        rows = sorted(rows)
        self.doc_ids = [r[0] for r in rows]
        self.document_count = len(rows)
        self._weights = weights
        self._ties = "DESC" if ties_descending else "ASC"
        self._conn = sqlite3.connect(":memory:")
        self._conn.execute(
            f"CREATE VIRTUAL TABLE f USING fts5(title, text, tokenize='{TOKENIZER}')")
        self._conn.executemany("INSERT INTO f (rowid, title, text) VALUES (?, ?, ?)",
                               [(i, r[1], r[2]) for i, r in enumerate(rows)])

    def search_expression(self, expression: str, limit: int) -> list[tuple[str, float]]:
        """``(doc_id, -bm25)`` best first for an FTS5 ``MATCH`` expression, at most ``limit``."""
        rows = self._conn.execute(
            f"SELECT rowid, bm25(f, ?, ?) AS s FROM f WHERE f MATCH ? "
            f"ORDER BY s, rowid {self._ties} LIMIT ?",
            [*map(float, self._weights), expression, limit]).fetchall()
        return [(self.doc_ids[r], 0.0 - s) for r, s in rows]
