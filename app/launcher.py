"""Relevance Ledger app launcher: ``streamlit run app/launcher.py`` (the README's start command).

Serves the entry script (``app/streamlit_app.py``, which builds the navigation) as
``streamlit run app/streamlit_app.py`` would, through Streamlit's ``st.App`` so that
the server can do one thing when it is up, before any browser asks for a page: start
importing what the first page needs (:func:`app.components.cold_start.start_preload`).
A browser spends 1-2 s loading Streamlit's JavaScript after the server is up, while
the server is idle; the first script run then finds its imports done (pandas and
pyarrow for the home page's tables, the store, the pydantic models;
``benchmarks/bench_app.py`` measures the cold start).

The launcher owns the process (docs/architecture.md, "Process-wide state"): the
preload thread pauses the cyclic collector and shortens the thread switch interval
while importing (both restored after), and freezes what it imported. ``streamlit run app/streamlit_app.py`` still works, without the preload.
"""

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

# Streamlit puts only this script's folder (app/) on the import path; the ``app``
# package's parent folder goes there too (as in the entry script).
_REPO_DIR = str(Path(__file__).resolve().parents[1])
if _REPO_DIR not in sys.path:
    sys.path.insert(0, _REPO_DIR)

import streamlit as st  # noqa: E402

from app.components.cold_start import start_preload  # noqa: E402


@asynccontextmanager
async def _server_up(_app: object) -> AsyncIterator[None]:
    """The server's lifespan: runs once it is up, before it serves any page."""
    start_preload()
    yield


#: Found by ``streamlit run`` (an ``st.App`` named ``app``); the entry script's path is
#: relative to this file.
app = st.App("streamlit_app.py", lifespan=_server_up)
