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

from evalcore.store.pins import visible_documents
from evalcore.store.visibility import Visibility


def fingerprint_pairs(pairs: Iterable[tuple[str, str]]) -> str:
    """Fingerprint of ``(doc_id, content_hash)`` pairs that are already in ``doc_id`` order."""
    digest = hashlib.sha256()
    chunk: list[bytes] = []
    for doc_id, chash in pairs:
        raw = doc_id.encode("utf-8")
        chunk.append(b"".join((len(raw).to_bytes(8, "big"), raw, chash.encode("ascii"), b"\n")))
        if len(chunk) == 10_000:  # one update per chunk: the same bytes, fewer calls
            digest.update(b"".join(chunk))
            chunk.clear()
    digest.update(b"".join(chunk))
    return "sha256:" + digest.hexdigest()


def corpus_fingerprint(db: sqlite_utils.Database, visibility: Visibility) -> str:
    """The fingerprint of the documents ``visibility`` lets through (see module docstring)."""
    return fingerprint_pairs((doc, content) for doc, content, _ in visible_documents(db, visibility))
