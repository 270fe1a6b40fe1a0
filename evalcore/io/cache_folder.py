"""Where evalcore keeps files it can always rebuild: the cache folder.

``$RELEVANCE_LEDGER_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/relevance-ledger/<kind>``
(``~/.cache`` when ``XDG_CACHE_HOME`` is unset). Its files are the owner's only: the
folder is created 0700 by whoever writes into it.
"""

import os
from pathlib import Path

#: The environment variable naming the cache folder.
CACHE_DIR_ENV = "RELEVANCE_LEDGER_CACHE_DIR"


def cache_folder(kind: str) -> Path:
    """The folder of the cached files of ``kind`` (a subfolder name; not used when
    ``$RELEVANCE_LEDGER_CACHE_DIR`` names the folder)."""
    chosen = os.environ.get(CACHE_DIR_ENV)
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "relevance-ledger" / kind
