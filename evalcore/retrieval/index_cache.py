"""Where a pin's impact index is kept between executions: a file beside the store.

``<store file>.lexical-index/<pin>-<content>.index`` where ``<pin>`` hashes the
study and protocol name and ``<content>`` hashes everything the index is a
function of: the corpus fingerprint of the pin (revalidated before any use),
the tokenizer, the SQLite version (whose tokenizer made the tokens) and the
file format. A changed corpus means a new pin and a new fingerprint, so a stale
file is never read; writing a pin's index removes that pin's older files.
An in-memory store has no file, so nothing is cached.

The folder is the owner's only (0700) and each file gets the store file's
permission bits or 0600, whichever is stricter: an index holds the pinned
documents' terms, so it is never readable by more people than the store.
Files are written to a temporary name and renamed, so a reader sees a whole
file or none, and never change once renamed (a new index is a new file), so
an index may map its file (:meth:`ImpactIndex.load`); a file that cannot be
read is ignored and rebuilt. The last :data:`KEPT_IN_MEMORY` indexes read stay
in memory (``functools.lru_cache``), keyed by their file (its name holds the
fingerprint) and the file's size and modification time, so a process that
executes a pin again (the app) skips the file read.
"""

import hashlib
import sqlite3
from functools import lru_cache
from pathlib import Path

import sqlite_utils

from evalcore.io.atomic import atomic_binary_writer, private_mode
from evalcore.retrieval.impact_index import ImpactIndex
from evalcore.retrieval.pin import PinnedProtocol
from evalcore.store.lexical_index import store_file

#: Bumped whenever the saved arrays change meaning.
FORMAT = "impact-index-2"
#: How many indexes stay in memory between executions (process-wide).
KEPT_IN_MEMORY = 2

def _file_key(path: Path) -> tuple[Path, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (path, stat.st_size, stat.st_mtime_ns)


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:24]


def cache_path(db: sqlite_utils.Database, pinned: PinnedProtocol) -> Path | None:
    """The cache file of ``pinned``'s index, or None when the store has no file."""
    store = store_file(db)
    if store is None:
        return None
    pin = _digest(pinned.study_id, pinned.name)
    content = _digest(
        pinned.corpus_fingerprint, pinned.protocol.tokenizer, sqlite3.sqlite_version, FORMAT
    )
    return store.parent / f"{store.name}.lexical-index" / f"{pin}-{content}.index"


def load_cached(path: Path | None) -> ImpactIndex | None:
    """The index saved at ``path``, or None when there is none or it cannot be read."""
    key = None if path is None or not path.is_file() else _file_key(path)
    return None if key is None else _load(*key)


@lru_cache(maxsize=KEPT_IN_MEMORY)
def _load(path: Path, size: int, mtime_ns: int) -> ImpactIndex | None:
    """The index in the file at ``path`` of that size and modification time (the cache key)."""
    try:
        return ImpactIndex.load(path)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save_cached(path: Path | None, index: ImpactIndex) -> None:
    """Save ``index`` at ``path`` (whole or not at all) and drop the pin's older files.

    A cache that cannot be written (read-only directory, full disk) only costs
    the next execution a rebuild, so the failure is not raised.
    """
    if path is None:
        return
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        store = path.parent.with_name(path.parent.name.removesuffix(".lexical-index"))
        with atomic_binary_writer(path, mode=private_mode(store)) as stream:
            index.save(stream)
        pin = path.name.split("-", 1)[0]
        for old in path.parent.glob(f"{pin}-*"):  # older contents and formats
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        return
