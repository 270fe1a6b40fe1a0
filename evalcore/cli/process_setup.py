"""The command line's process-wide settings: the command line owns its process, the library never
changes them (docs/architecture.md, "Process-wide state").

Each is kept for a gain a user notices (benchmarks/bench_process_settings.py times them on
``evaluate`` from files):

* one BLAS thread: numpy's OpenBLAS starts a worker thread per core at ``import numpy``,
  and no command multiplies matrices (the measures are element-wise operations and
  sorts). OpenBLAS reads ``OPENBLAS_NUM_THREADS`` once, when it loads, so
  :func:`one_blas_thread` runs when this module is imported, first thing in
  :mod:`evalcore.cli`; a value the user set is kept.
* :func:`collector_paused`, around every command: reading a stored run builds an
  observation and its labels per query, hundreds of thousands of small objects with no
  reference cycles, and the cyclic collector's scans of them slow that down.
* :func:`skip_final_collection`: the interpreter's last collection at exit walks every
  object still alive (numpy, pydantic's schemas, the report) to finalise garbage in
  reference cycles. A command that leaves nothing to finalise (its output written
  through ``click.echo``, no store connection open: SQLite checkpoints its log when a
  connection closes) freezes every object at exit instead (``gc.freeze``, registered
  with ``atexit``, which runs before that collection).
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
