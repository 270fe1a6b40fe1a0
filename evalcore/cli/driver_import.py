"""Importing the store's driver (sqlite_utils) without pandas, for callers that own the process.

``sqlite_utils.db`` tries ``import pandas`` (and pandas imports pyarrow) only to
map ``pandas.Timestamp`` to a TEXT column when it infers a new table's column
types. evalcore never lets sqlite_utils infer a type (every table comes from
:mod:`evalcore.store.schema`, every write is plain SQL), yet that import was
most of the store's start-up in every fresh ``evalcore`` process and at the
app's cold start.

:func:`driver_without_pandas` hides pandas while the block runs (a ``None``
entry in ``sys.modules`` makes ``import pandas`` fail, which sqlite_utils
treats as "not installed"), then removes the entry so that any later
``import pandas`` (a DataFrame the user asked for, an app page) works as usual.
It does nothing when sqlite_utils or pandas is already imported.

``sys.modules`` belongs to the whole process, so only a caller that owns the
process uses this, once, at start-up, before any thread imports pandas: the
command line around the import of a command's module, the app's entry script
before its first import of the store (or the launcher's preload thread, which the
entry script's first run waits for: app/components/cold_start.py). It lives with the command line, which no
library module may import (the layer order); docs/architecture.md, "Process-wide
state". ``tests/cli/test_cli_startup.py`` checks that nothing else asks for pandas
while it is hidden.
"""

import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: Imported by ``sqlite_utils.db`` only for an optional column type evalcore never uses.
HIDDEN = "pandas"


@contextmanager
def driver_without_pandas() -> Iterator[None]:
    """Inside the block, ``import sqlite_utils`` does not import pandas (see the module doc)."""
    if "sqlite_utils" in sys.modules or HIDDEN in sys.modules:
        yield
        return
    sys.modules[HIDDEN] = None  # type: ignore[assignment]  # "not installed", for this block
    try:
        yield
    finally:
        if HIDDEN in sys.modules and sys.modules[HIDDEN] is None:
            del sys.modules[HIDDEN]
