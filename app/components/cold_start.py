"""The server process's first script run: imports and first page with the cyclic collector paused.

The first run of a server process imports most of what the app needs (the store,
pydantic models, pandas and pyarrow for the first page's tables): hundreds of
thousands of long-lived objects, whose allocation bursts trigger the cyclic
collector's scans (a full collection and many of the middle generation), a large
share of the cold start's script time (benchmarks/bench_app.py). None of those
objects is garbage.

The app owns its process (docs/architecture.md, "Process-wide state"), so its
entry script runs the first run inside :func:`first_run` (a no-op on every
later run, in any session), which ends by freezing what the run made
(``gc.freeze``: moved to the permanent generation, never scanned again); the
warm-up thread (:mod:`app.components.warmup`) freezes the other pages' modules
after importing them.

Started by the launcher (``streamlit run app/launcher.py``, the README's start
command), the server does those imports before any browser asks for a page:
:func:`start_preload`, called once the server is up, imports in a thread what the
first run imports -- the entry script's modules (the store's driver without
pandas, as the entry script does) and the default page's (Home: pandas and pyarrow
for its tables) -- with the collector paused, then freezes them, while the
browser is still loading Streamlit's JavaScript (1-2 s in which the server is
otherwise idle). The first run waits for that thread before it starts, so the two
never import the same module at once (and never hide pandas from each other).
Started as ``streamlit run app/streamlit_app.py``, nothing is preloaded and the
first run imports as before.
"""

import gc
import inspect
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from app.components.navigation import APP_DIR, HOME, view_file
from app.components.warmup import (
    IMPORT_SWITCH_INTERVAL,
    import_all,
    short_switch_interval,
    view_imports,
)
from evalcore.cli.driver_import import driver_without_pandas
from evalcore.compute.gc_pause import gc_paused

#: The entry script (the launcher's page script).
ENTRY = APP_DIR / "streamlit_app.py"
SESSION = APP_DIR / "components" / "session.py"

_lock = threading.Lock()
_first = True
_preload: threading.Thread | None = None


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
    if _preload is not None:
        _preload.join()  # the launcher's import of the same modules (start_preload)
    with gc_paused():
        try:
            yield
        finally:
            # What the run made is nearly all long-lived (modules, caches): frozen before the
            # collector resumes, its first collection does not scan it all once. A first
            # run's cyclic garbage stays, once per process.
            gc.freeze()


def first_run_modules() -> list[str]:
    """The modules the first script run imports: the entry script's and its session module's
    (at any depth: opening the store checks whether to build the demo) and the default
    page's, read from the files themselves (the list never goes stale)."""
    return [*view_imports(ENTRY, nested=True), *view_imports(SESSION, nested=True),
            *view_imports(view_file(HOME))]


#: The interpreter's thread switch interval while the preload imports (the browser is
#: fetching Streamlit's ~50 JavaScript files meanwhile): :data:`app.components.warmup.IMPORT_SWITCH_INTERVAL`.
PRELOAD_SWITCH_INTERVAL = IMPORT_SWITCH_INTERVAL


def _import_first_run_modules() -> None:
    with short_switch_interval():  # the app owns its process; restored after
        _import_paused()


def _import_paused() -> None:
    with gc_paused():
        with driver_without_pandas():  # first, as the entry script does
            import sqlite_utils  # noqa: F401
        import_all(tuple(first_run_modules()))
        # The first element a process draws asks ``inspect.stack()`` whether it runs in a
        # REPL (Streamlit's "use streamlit run" warning), and inspect maps every imported
        # module to its file once (inspect.getmodule's cache): ~0.06 s quiet of the first
        # run's CPU, done here instead.
        inspect.getmodule(sys._getframe())
        gc.freeze()  # long-lived, as in first_run


def start_preload() -> None:
    """Import what the first script run needs in a background thread (once per process).

    For the process owner (the launcher, once its server is up); the first run waits for it.
    """
    global _preload
    with _lock:
        if _preload is not None or not _first:
            return
        _preload = threading.Thread(target=_import_first_run_modules, name="rl-preload",
                                    daemon=True)
        _preload.start()
