"""Content hashes: how the store and the corpus fingerprint see a document."""

import hashlib


def content_hash(title: str, text: str) -> str:
    """``sha256:<hex>`` of the document's title and text (UTF-8, joined by NUL)."""
    digest = hashlib.sha256()
    digest.update(title.encode("utf-8"))
    digest.update(b"\x00")
    digest.update(text.encode("utf-8"))
    return "sha256:" + digest.hexdigest()
