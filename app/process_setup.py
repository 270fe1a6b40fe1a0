"""The app server's process-wide work: import what the pages need before a page asks for it.

Importing the store, pydantic, pandas, pyarrow, plotly and scipy is most of a page's first
render in a new server process. The app owns its process (docs/architecture.md,
"Process-wide state"), so a background thread imports them: :func:`preload` (from the
launcher, what the first request needs) and :func:`warm_imports` (after the first page,
every page's modules). The module lists are read from the scripts themselves; afterwards
the thread freezes what the process holds (``gc.freeze``) so full collections skip it.
"""

import ast
import gc
import importlib
import threading
from functools import cache
from pathlib import Path

from app.components.navigation import APP_DIR, HOME, SECTIONS, view_file

#: The scripts of the first request: the entry script and the session module it calls
#: (imports at any depth: opening the store checks whether to build the demo).
FIRST_REQUEST = (APP_DIR / "streamlit_app.py", APP_DIR / "components" / "session.py")


def view_imports(path: Path, *, nested: bool = False) -> list[str]:
    """The modules the script at ``path`` imports at its top level (``import X``, ``from X
    import``); with ``nested``, inside its blocks and functions too."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree) if nested else tree.body:
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


def first_request_modules() -> list[str]:
    """What the first request imports: :data:`FIRST_REQUEST`'s modules and the home page's."""
    return [*(m for path in FIRST_REQUEST for m in view_imports(path, nested=True)),
            *view_imports(view_file(HOME))]


def every_page_modules() -> list[str]:
    """What every page's script imports, each module once, in navigation order."""
    return list(dict.fromkeys(m for views in SECTIONS.values() for view in views
                              for m in view_imports(view_file(view))))


def import_then_freeze(names: list[str]) -> None:
    """Import ``names`` (a module that fails is left to its page to report), then freeze
    every object the process holds."""
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the page itself reports a broken import when it runs
            continue
    gc.freeze()


def _in_background(names: list[str], thread_name: str) -> threading.Thread:
    thread = threading.Thread(target=import_then_freeze, args=(names,), name=thread_name,
                              daemon=True)
    thread.start()
    return thread


@cache
def preload() -> threading.Thread:
    """Import the first request's modules in the background (once per process)."""
    return _in_background(first_request_modules(), "rl-preload")


@cache
def warm_imports() -> threading.Thread:
    """Import every page's modules in the background (once per process)."""
    return _in_background(every_page_modules(), "rl-warm-imports")
