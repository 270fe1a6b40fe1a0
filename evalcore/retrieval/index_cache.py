"""Where an impact index is kept between executions and searches: a file in the cache folder.

The folder is :func:`evalcore.io.cache_folder.cache_folder`'s ``lexical-index`` (no file
beside the store is assumed: a store on a database server has none). A file is named
``<owner>-<content>.index``: ``<owner>`` hashes the store's identity and the pin (study and
protocol name) or the search scope; ``<content>`` everything the index is a function of:
the pin's corpus fingerprint (revalidated before any use) or the scope's corpus generation
(any write of the corpus moves it), the tokenizer, the SQLite version whose tokenizer made
the tokens and the file format. So a stale file is never read, and writing an index
removes its owner's older files.

The folder is the owner's only (0700) and each file 0600: an index holds the documents'
terms. Files are written to a temporary name and renamed, and never change once renamed,
so an index may map its file (:meth:`ImpactIndex.load`); a file that cannot be read is
ignored and rebuilt. The last :data:`KEPT_IN_MEMORY` indexes read stay in memory, keyed by
their file's name, size and modification time.
"""

import hashlib
import sqlite3
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path

import sqlite_utils

from evalcore.io.atomic import PRIVATE, atomic_binary_writer
from evalcore.io.cache_folder import cache_folder
from evalcore.retrieval.impact_index import ImpactIndex
from evalcore.retrieval.lexical_protocol import TOKENIZER
from evalcore.retrieval.pin import PinnedProtocol
from evalcore.store.lexical_index import Fts5Tokenizer
from evalcore.store.store_identity import store_identity

#: Bumped whenever the saved arrays change meaning.
FORMAT = "impact-index-3"
#: How many indexes stay in memory between executions (process-wide).
KEPT_IN_MEMORY = 2


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:24]


def cache_path(db: sqlite_utils.Database, pinned: PinnedProtocol) -> Path:
    """The cache file of ``pinned``'s index in this store."""
    return _path(db, ("pin", pinned.study_id, pinned.name),
                 (pinned.corpus_fingerprint, pinned.protocol.tokenizer))


def search_cache_path(
    db: sqlite_utils.Database, scope: tuple[str, ...], generation: int, tokenizer: str
) -> Path:
    """The cache file of the search box's index of ``scope`` (the corpus, the search's
    restrictions and the reader's filter, as strings) at the corpus's ``generation``."""
    return _path(db, ("search", *scope), (str(generation), tokenizer))


def _path(db: sqlite_utils.Database, owner: tuple[str, ...], content: tuple[str, ...]) -> Path:
    """``<store + owner>-<content>.index``: an owner's files share the part before the dash."""
    return cache_folder("lexical-index") / (f"{_digest(store_identity(db), *owner)}-"
                             f"{_digest(*content, sqlite3.sqlite_version, FORMAT)}.index")


def load_cached(path: Path | None) -> ImpactIndex | None:
    """The index saved at ``path``, or None when there is none or it cannot be read."""
    try:
        stat = path.stat() if path is not None and path.is_file() else None
    except OSError:
        return None
    return None if stat is None else _load(path, stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=KEPT_IN_MEMORY)
def _load(path: Path, size: int, mtime_ns: int) -> ImpactIndex | None:
    """The index in the file at ``path`` of that size and modification time (the cache key)."""
    try:
        return ImpactIndex.load(path)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def cached_index(
    path: Path, documents: Callable[[], Iterable[tuple[str, str, str]]], expected: int | None = None
) -> tuple[ImpactIndex, bool]:
    """The index saved at ``path`` and True; else one built from ``documents()`` (``(doc_id,
    title, text)`` rows) with FTS5's tokens and False, saved unless it does not hold the
    ``expected`` number of documents."""
    index = load_cached(path)
    if index is not None:
        return index, True
    with Fts5Tokenizer(TOKENIZER) as tokenizer:
        index = ImpactIndex.build(documents(), tokenizer.tokenize)
    if expected is None or index.document_count == expected:
        _save(path, index)
    return index, False


def _save(path: Path, index: ImpactIndex) -> None:
    """Save ``index`` at ``path`` (whole or not at all) and drop its owner's older files. A
    cache that cannot be written (read-only folder, full disk) only costs a rebuild later,
    so the failure is not raised."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with atomic_binary_writer(path, mode=PRIVATE) as stream:
            index.save(stream)
        owner = path.name.split("-", 1)[0]
        for old in path.parent.glob(f"{owner}-*"):  # older contents and formats
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        return
