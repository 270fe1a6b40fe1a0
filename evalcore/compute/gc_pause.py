"""Pausing the cyclic garbage collector while building many small objects.

Packing a batch or building a report creates hundreds of thousands of lists,
dicts and models with no reference cycles; each allocation burst otherwise
triggers full collections that walk the whole heap. :func:`gc_paused` disables the collector for the block and
restores its previous state.

The collector is process-wide state, so only a caller that owns the process
pauses it: the command line (around every command), the app, the benchmarks.
No library path does (a test walks evalcore to keep it so).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block (re-enable only if it was on)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
