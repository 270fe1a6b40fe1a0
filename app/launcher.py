"""Relevance Ledger app launcher: ``streamlit run app/launcher.py`` serves the entry script
through ``st.App`` and starts importing what the first request needs once the server is up
(:func:`app.process_setup.preload`).
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

from app.process_setup import preload  # noqa: E402


@asynccontextmanager
async def _server_up(_app: object) -> AsyncIterator[None]:
    """The server's lifespan: runs once it is up, before it serves any page."""
    preload()
    yield


#: Found by ``streamlit run`` (an ``st.App`` named ``app``); the entry script's path is
#: relative to this file.
app = st.App("streamlit_app.py", lifespan=_server_up)
