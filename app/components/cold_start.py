"""The server process's first script run: imports and first page with the cyclic collector paused.

The first run of a server process imports most of what the app needs (the store,
pydantic models, pandas and pyarrow for the first page's tables): hundreds of
thousands of long-lived objects, whose allocation bursts trigger the cyclic
collector's scans -- one full collection and a dozen of the middle generation,
0.17-0.30 s of the cold start's ~1 s script CPU (measured with ``gc.callbacks``
on the demo study's home page). None of those objects is garbage.

The app owns its process (docs/architecture.md, "Process-wide state"), so its
entry script runs the first run inside :func:`first_run` (a no-op on every
later run, in any session), which ends by freezing what the run made
(``gc.freeze``: moved to the permanent generation, never scanned again); the
warm-up thread (:mod:`app.components.warmup`) freezes the other pages' modules
after importing them.
"""

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from evalcore.compute.gc_pause import gc_paused

_lock = threading.Lock()
_first = True


def _claim_first() -> bool:
    global _first
    with _lock:
        first, _first = _first, False
    return first


@contextmanager
def first_run() -> Iterator[None]:
    """The block runs with the collector paused if it is this process's first script run."""
    if not _claim_first():
        yield
        return
    with gc_paused():
        try:
            yield
        finally:
            # What the run made is nearly all long-lived (modules, caches): frozen before the
            # collector resumes, its first collection does not scan it all once (~0.1-0.2 s
            # measured). A first run's cyclic garbage stays, once per process.
            gc.freeze()
