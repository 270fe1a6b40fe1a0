"""Relevance Ledger app entry script: builds the navigation, nothing else.

Run with ``streamlit run app/streamlit_app.py``. The store is
``$RELEVANCE_LEDGER_DB`` (default: a per-user demo file created on first start).
Every page address runs this script first; the view scripts live in
``app/views/`` (see :mod:`app.components.navigation` for why not ``pages/``).
"""

import sys
from pathlib import Path

# Streamlit puts only this script's folder (app/) on the import path; the views
# import the ``app`` package, so its parent folder goes there too.
_REPO_DIR = str(Path(__file__).resolve().parents[1])
if _REPO_DIR not in sys.path:
    sys.path.insert(0, _REPO_DIR)

import streamlit as st  # noqa: E402

from evalcore.cli.driver_import import driver_without_pandas  # noqa: E402

# The app owns its process: the store's driver is imported without pandas (~0.3-0.5 s CPU of
# the cold start; a page that draws a DataFrame imports pandas itself). First run only: later
# runs find sqlite_utils imported and change nothing.
with driver_without_pandas():
    import sqlite_utils  # noqa: E402, F401

from app.components.auth import identity_gate  # noqa: E402
from app.components.navigation import navigation_pages  # noqa: E402
from app.components.session import annotator_picker, get_db, study_picker  # noqa: E402
from app.components.warmup import warm_imports  # noqa: E402
from evalcore.access.channel import audit_channel  # noqa: E402

# An emoji icon: Streamlit draws it as an inline SVG. A ":material/...:" page icon would be
# fetched from fonts.gstatic.com, and nothing may leave the machine
# (tests/browser/test_browser_offline.py).
st.set_page_config(page_title="Relevance Ledger", page_icon="📋", layout="wide")

db = get_db()
identity = identity_gate(db)  # team mode: sign-in required; the identity is not editable
study_picker(db)
if identity is None:
    annotator_picker()

with audit_channel("app"):  # audit rows of this run record the app channel
    try:
        st.navigation(navigation_pages()).run()
    finally:  # the page is drawn (or stopped): import the other pages' modules meanwhile
        warm_imports()
