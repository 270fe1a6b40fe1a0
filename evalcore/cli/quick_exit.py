"""Exit without the interpreter's last garbage collection, for a command that holds no store.

When Python exits it collects every container object still alive once more,
to finalise garbage in reference cycles: after ``evalcore evaluate`` on TREC
files (numpy, pydantic's schemas, the report) that walk is a visible part of
a short process. :func:`skip_final_collection` registers ``gc.freeze`` to
run at exit (atexit handlers run before that collection), which leaves every
object to the operating system.

What is skipped is the finalisers of objects in reference cycles at exit, so
only a command that leaves nothing to them calls this: one that writes its
output through ``click.echo`` (the standard streams are flushed at exit
anyway) and holds no store connection (SQLite checkpoints its write-ahead log
when a connection is closed). Today: ``evaluate`` from files, and ``retrieve`` once it
has stored the run and closed the store.
A process-wide setting: the command line's only (docs/architecture.md,
"Process-wide state").
"""

import atexit
import gc

_registered = False


def skip_final_collection() -> None:
    """Freeze every object at exit, so the interpreter's last collection has none to walk."""
    global _registered
    if not _registered:
        atexit.register(gc.freeze)
        _registered = True
