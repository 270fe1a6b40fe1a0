"""The pinned lexical retrieval workflow.

A :class:`~evalcore.retrieval.lexical_protocol.LexicalProtocol` says which documents a
run may see (owner organisations, historical cutoff) and how it ranks them
(SQLite FTS5 BM25, porter tokenizer). Pinning it (:mod:`evalcore.retrieval.pin`)
records the visible document set and its corpus fingerprint; every execution
(:mod:`evalcore.retrieval.workflow`) first revalidates the corpus against the pin
(:mod:`evalcore.retrieval.revalidation`) and refuses to run on a changed corpus or
changed access rules, so a stored run is always comparable evidence.
"""
