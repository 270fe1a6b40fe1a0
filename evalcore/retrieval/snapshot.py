"""The execution index of a pin: its documents indexed privately, searched by query text.

The index itself (a TEMP FTS5 table of exactly the pinned documents, so BM25
statistics depend on nothing else) is :class:`evalcore.store.lexical_index.LexicalIndex`;
this binds it to a :class:`~evalcore.retrieval.pin.PinnedProtocol` and turns
free query text into a safe ``MATCH`` expression
(:mod:`evalcore.retrieval.query_syntax`).
"""

import sqlite_utils

from evalcore.retrieval.lexical_protocol import TOKENIZER
from evalcore.retrieval.pin import PinnedProtocol
from evalcore.retrieval.query_syntax import match_expression
from evalcore.store.lexical_index import LexicalIndex


class SnapshotIndex(LexicalIndex):
    """Context manager: build the pinned set's index on enter, drop it on exit.

    Call it inside a read transaction that has revalidated the pin, so the
    indexed content is the content that was checked. ``document_count`` is how
    many documents were indexed (all of the pinned set, or the caller refuses).
    """

    def __init__(self, db: sqlite_utils.Database, pinned: PinnedProtocol) -> None:
        assert pinned.protocol.corpus_id is not None
        super().__init__(
            db,
            study_id=pinned.study_id,
            protocol_name=pinned.name,
            corpus_id=pinned.protocol.corpus_id,
            weights=(pinned.protocol.weights.title, pinned.protocol.weights.text),
            tokenizer=TOKENIZER,
            ties_descending=pinned.protocol.tie_rule == "doc_id_descending",
        )
        self.pinned = pinned

    def __enter__(self) -> "SnapshotIndex":
        super().__enter__()
        return self

    def search(self, text: str, limit: int) -> list[tuple[str, float]]:
        """``(doc_id, score)`` best first, at most ``limit``; ``score = -bm25 >= 0``."""
        expression = match_expression(text)
        if expression is None:
            return []
        return self.search_expression(expression, limit)
