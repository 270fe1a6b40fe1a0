"""Import what the pages need once the first page is on screen, off the request path.

The entry script imports only what every run needs (Streamlit, the store and
the sign-in gate), so the first page of a fresh server comes fast. The pages'
heavy modules (pandas, plotly, scipy through the statistics, the analyses and
the reports) would otherwise be imported by the first click on each page, in
the user's wait. :func:`warm_up`, called after the first page has rendered,
imports them once per process in a background thread; a page that runs before
the thread got to its module imports it itself (imports are thread-safe).
"""

import importlib
import threading

import streamlit as st

#: The pages' heavy imports, roughly in the order the navigation lists the pages.
MODULES = (
    "pandas",
    "evalcore.annotation.progress",
    "evalcore.live.query_results",
    "evalcore.retrieval.workflow",
    "evalcore.analysis.inspector",
    "evalcore.live.dashboard",
    "evalcore.live.charts",
    "plotly.graph_objects",
    "evalcore.analysis.compare",
    "evalcore.report.charts",
    "evalcore.analysis.agreement",
    "evalcore.analysis.adjudication",
    "evalcore.report.from_store",
    "evalcore.report.html",
)


def _import_all() -> None:
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 -- the page that needs it imports it and reports
            continue


@st.cache_resource(show_spinner=False)
def _started() -> threading.Thread:
    thread = threading.Thread(target=_import_all, name="rl-warm-up", daemon=True)
    thread.start()
    return thread


def warm_up() -> None:
    """Start the background imports (once per server process)."""
    _started()
