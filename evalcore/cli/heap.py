"""glibc's heap kept for reuse while a command runs (the command line owns its process).

The TREC reader and the metric computer make and drop numpy arrays of 1-50 MB
block after block. glibc serves an allocation above its mmap threshold with a
fresh mapping from the kernel and unmaps it when it is freed, and it trims the
top of its heap past its trim threshold (128 KiB): either way the next block's
arrays are new pages again, each one a page fault (the threshold rises after
the first freed mapping, but only to that size, and the trim stays). Kept for
reuse, the freed blocks cost a little peak memory and save those faults
(benchmarks/bench_trec_files.py).

:func:`keep_heap_for_reuse` sets both thresholds (``mallopt``): arrays under
:data:`MMAP_THRESHOLD` come from the heap, and up to :data:`TRIM_THRESHOLD` of free
memory at its top is kept. Only on glibc, and not when the user tuned the
allocator (``MALLOC_*_`` or ``GLIBC_TUNABLES`` in the environment).

The allocator belongs to the whole process, so only the command line calls this,
when a command runs (:class:`evalcore.cli._LazyGroup`); never the library, nor the
app (docs/architecture.md, "Process-wide state").
"""

import os
import sys

#: Allocations below this many bytes come from the heap (glibc's M_MMAP_THRESHOLD).
MMAP_THRESHOLD = 64 << 20
#: Free memory at the heap's top kept for reuse, up to this many bytes (M_TRIM_THRESHOLD).
TRIM_THRESHOLD = 128 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: Environment variables through which a user tunes glibc's allocator themselves.
USER_TUNING = ("GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
               "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_", "MALLOC_ARENA_MAX")

_done = False


def keep_heap_for_reuse() -> bool:
    """Set glibc's mmap and trim thresholds (once per process); True if they were set."""
    global _done
    if _done or not sys.platform.startswith("linux") or any(v in os.environ for v in USER_TUNING):
        return False
    _done = True
    import ctypes  # only here: the command line's start-up of other platforms skips it

    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  # glibc (musl has no mallopt worth setting)
        mallopt = libc.mallopt
    except (AttributeError, OSError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    # The mmap threshold first: setting the trim threshold alone would freeze the mmap
    # threshold at its 128 KiB start (every array then mapped afresh).
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
