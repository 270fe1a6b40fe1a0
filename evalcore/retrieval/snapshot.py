"""The execution index of a pin: FTS5's BM25 over exactly the pinned documents
(:class:`~evalcore.retrieval.impact_index.ImpactIndex`, cached by
:mod:`evalcore.retrieval.index_cache`), searched by free query text."""


from evalcore.retrieval.impact_index import ImpactIndex
from evalcore.retrieval.index_cache import cache_path, cached_index
from evalcore.retrieval.lexical_protocol import TOKENIZER
from evalcore.retrieval.pin import PinnedProtocol
from evalcore.retrieval.query_syntax import query_terms
from evalcore.store.lexical_index import pinned_document_texts, term_tokens
from evalcore.store.study_handle import Study


class SnapshotIndex:
    """Context manager: load or build the pinned set's index on enter, release it on exit.

    Call it inside a read transaction that has revalidated the pin, so the
    indexed content is the content that was checked. ``document_count`` is how
    many documents were indexed (all of the pinned set, or the caller refuses).
    """

    def __init__(self, study: Study, pinned: PinnedProtocol) -> None:
        assert pinned.protocol.corpus_id is not None
        self.study = study
        self.pinned = pinned
        self.document_count = 0
        self.loaded_from_cache = False
        self._index: ImpactIndex | None = None

    def __enter__(self) -> "SnapshotIndex":
        pinned = self.pinned
        self._index, self.loaded_from_cache = cached_index(
            cache_path(self.study.db, pinned),
            lambda: pinned_document_texts(self.study, protocol_name=pinned.name,
                                          corpus_id=pinned.protocol.corpus_id or ""),
            pinned.document_count,
        )
        self.document_count = self._index.document_count
        return self

    def search(self, text: str, limit: int) -> list[tuple[str, float]]:
        """``(doc_id, score)`` best first, at most ``limit``; ``score = -bm25 >= 0``."""
        assert self._index is not None, "search inside the with block"
        terms = query_terms(text)
        if not terms:
            return []
        protocol = self.pinned.protocol
        weights = (float(protocol.weights.title), float(protocol.weights.text))
        return self._index.rank(term_tokens(terms, TOKENIZER), weights, limit,
                                ties_descending=protocol.tie_rule == "doc_id_descending")

    def __exit__(self, *exc: object) -> None:
        self._index = None
