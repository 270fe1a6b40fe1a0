"""The corpus fingerprint: one hash over exactly the documents a protocol may see.

``sha256:<hex>`` of the visible documents in ``doc_id`` order (code point order,
SQLite's BINARY collation), each fed to SHA-256 as::

    len(doc_id_utf8) as 8-byte big-endian || doc_id_utf8 || content_hash_ascii || "\\n"

The length prefix keeps the encoding unambiguous whatever characters an id
holds. ``content_hash`` is :func:`evalcore.store.hashing.content_hash` of the
title and text, so an edited document changes the fingerprint, and so does a
document that appears in or disappears from the visible set. Ownership is not
part of the hash: the pinned set records each document's owner and
revalidation compares it separately.
"""

import hashlib
from collections.abc import Iterable

import sqlite_utils

from evalcore.retrieval.visibility import Visibility

#: Rows fetched per round trip when streaming the visible set.
_BATCH = 5000


def fingerprint_pairs(pairs: Iterable[tuple[str, str]]) -> str:
    """Fingerprint of ``(doc_id, content_hash)`` pairs that are already in ``doc_id`` order."""
    digest = hashlib.sha256()
    update = digest.update
    for doc_id, chash in pairs:
        raw = doc_id.encode("utf-8")
        update(len(raw).to_bytes(8, "big"))
        update(raw)
        update(chash.encode("ascii"))
        update(b"\n")
    return "sha256:" + digest.hexdigest()


def visible_pairs(db: sqlite_utils.Database, visibility: Visibility) -> Iterable[tuple[str, str]]:
    """Stream ``(doc_id, content_hash)`` of the visible documents in ``doc_id`` order."""
    cursor = db.conn.execute(
        f"SELECT d.doc_id, d.content_hash FROM documents d WHERE {visibility.where} "
        "ORDER BY d.doc_id",
        visibility.params,
    )
    while True:
        rows = cursor.fetchmany(_BATCH)
        if not rows:
            return
        yield from rows


def corpus_fingerprint(db: sqlite_utils.Database, visibility: Visibility) -> str:
    """The fingerprint of the documents ``visibility`` lets through (see module docstring)."""
    return fingerprint_pairs(visible_pairs(db, visibility))
