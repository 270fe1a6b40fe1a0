"""The pinned lexical retrieval workflow.

A :class:`~evalcore.lexical.protocol.LexicalProtocol` says which documents a
run may see (owner organisations, historical cutoff) and how it ranks them
(SQLite FTS5 BM25, porter tokenizer). Pinning it (:mod:`evalcore.lexical.pin`)
records the visible document set and its corpus fingerprint; every execution
(:mod:`evalcore.lexical.workflow`) first revalidates the corpus against the pin
(:mod:`evalcore.lexical.revalidation`) and refuses to run on a changed corpus or
changed access rules, so a stored run is always comparable evidence.
"""
