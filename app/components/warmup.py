"""Import every page's modules once per server process, in the background, after the first page.

A page's first render in a server process pays for importing what it needs
(the store's import readers on Data, the decision code on Annotate, plotly and
the comparison code on Compare, Dashboard and Agreement): a third to two
thirds of a second of CPU each, most of the first sidebar click. The first
page a session draws starts one background thread (:func:`warm_imports`) that
imports the modules every view script imports -- read from the view files
themselves, so the list never goes stale -- while the user reads that page.
Python's import lock makes a page that needs a module the thread is importing
wait for it rather than import it twice. Once all are imported, the thread
freezes what the process holds (``gc.freeze``): later full collections skip it.

While it imports, the interpreter switches threads every 0.5 ms instead of 5 ms
(:func:`short_switch_interval`, as the launcher's preload does): the thread starts as
the first page's run ends, when the browser is still fetching the JavaScript of that
page's widgets from the server, and each response waits for the server's event loop to
get the interpreter lock back from the importing thread (the scipy, plotly and
comparison modules of the other pages take long to import).
"""

import ast
import gc
import importlib
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import streamlit as st

from app.components.navigation import SECTIONS, view_file


def view_imports(path: Path, *, nested: bool = False) -> list[str]:
    """The modules the script at ``path`` imports at its top level (``import X``, ``from X import``);
    with ``nested``, inside its blocks and functions too."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree) if nested else tree.body:
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


@cache
def _modules() -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for views in SECTIONS.values():
        for view in views:
            seen.update(dict.fromkeys(view_imports(view_file(view))))
    return tuple(seen)


def import_all(names: tuple[str, ...]) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the page itself reports a broken import when it runs
            continue


#: The interpreter's thread switch interval while a background thread imports (default 5 ms):
#: the browser fetches Streamlit's JavaScript meanwhile, and each response waits for the
#: server's event loop to get the interpreter lock from the importing thread. Measured for the
#: launcher's preload (49 files, 6 connections, load ~2): 0.12-0.18 s with nothing importing,
#: 0.36-0.50 s beside the imports at 5 ms, 0.27-0.37 s at 0.5 ms.
IMPORT_SWITCH_INTERVAL = 0.0005


@contextmanager
def short_switch_interval() -> Iterator[None]:
    """The block runs with :data:`IMPORT_SWITCH_INTERVAL` (the app owns its process); the
    interval before is restored after."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(IMPORT_SWITCH_INTERVAL)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def _warm() -> None:
    with short_switch_interval():
        import_all(_modules())  # the view files are parsed here, not in the first page's run
    # The app owns its process: every module is imported now and lives as long as the server,
    # so the collector's full scans need not walk their objects again (gc.freeze moves what
    # exists now to the permanent generation).
    gc.freeze()


@st.cache_resource(show_spinner=False)
def _started() -> threading.Thread:
    thread = threading.Thread(target=_warm, name="rl-warm-imports", daemon=True)
    thread.start()
    return thread


def warm_imports() -> None:
    """Start importing every view's modules in the background (once per server process)."""
    _started()
