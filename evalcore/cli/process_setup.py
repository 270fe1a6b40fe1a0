"""The command line's process-wide settings (the library never changes them:
docs/architecture.md, "Process-wide state").

* one BLAS thread, set on import before numpy loads: no command multiplies matrices, and
  OpenBLAS would start a thread per core (a value the user set is kept);
* :func:`collector_paused` around every command: reading a stored run makes many small
  objects without cycles, which the cyclic collector's scans slow down;
* :func:`skip_final_collection`: a command that leaves nothing to finalise freezes every
  object at exit instead of the interpreter's last collection walking them all.
"""

import atexit
import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_frozen_at_exit = False


def one_blas_thread() -> bool:
    """Set ``OPENBLAS_NUM_THREADS=1`` unless the user set it or numpy is loaded; True if set."""
    if "OPENBLAS_NUM_THREADS" in os.environ or "numpy" in sys.modules:
        return False
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    return True


@contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block (re-enabled after only if it was on)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def skip_final_collection() -> None:
    """Freeze every object at exit, so the interpreter's last collection has none to walk."""
    global _frozen_at_exit
    if not _frozen_at_exit:
        atexit.register(gc.freeze)
        _frozen_at_exit = True


one_blas_thread()
